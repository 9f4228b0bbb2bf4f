#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hostile-traces.py VRAMSCOPE DATA_DIR — damaged and hostile traces: each
# mutation of a committed trace (made through SQLite: values, types, rows,
# tables turned into views, triggers) gets exit status 1 and one clear line
# on stderr naming what is wrong, or a correct report — never a crash, a
# hang or a file changed behind the user's back.  TAP output.
import os
import pickle
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vs_trace_edit import edited_copy  # noqa: E402

VRAMSCOPE, DATA = sys.argv[1], sys.argv[2]
UNFINALIZE = "UPDATE meta SET value = 0 WHERE key = 'finalized'"

# name, fixture, SQL run on a copy, report arguments, expected exit status,
# text stderr must contain (exit 1) or stdout must contain (exit 0).
CASES = [
    ("allocator id -1 while finalizing", "torch-allocator.db",
     [UNFINALIZE, "INSERT INTO allocator (id, device_id, process_id, kind, name)"
      " VALUES (-1, 1, 1, 'pool', 'p')"], ["summary"], 1, "id is not 1..1048576"),
    ("allocator id 2^32-1 while finalizing", "torch-allocator.db",
     [UNFINALIZE, "INSERT INTO allocator (id, device_id, process_id, kind, name)"
      " VALUES (4294967295, 1, 1, 'pool', 'p')"], ["summary"], 1, "id is not 1..1048576"),
    ("sparse device and allocator ids", "torch-allocator.db",
     [UNFINALIZE, "INSERT INTO device (id, idx) VALUES (5000, 9)",
      "INSERT INTO allocator (id, device_id, process_id, kind, name)"
      " VALUES (5000, 5000, 1, 'pool', 'p')"], ["summary"], 1, "too sparse"),
    ("device id 2^32-1", "torch-allocator.db",
     [UNFINALIZE, "UPDATE device SET id = 4294967295", "UPDATE allocator SET device_id = 4294967295"],
     ["summary"], 1, "id is not 1..65536"),
    ("event naming an undefined device", "torch-allocator.db",
     [UNFINALIZE, "UPDATE alloc_event SET device_id = 4294967297 WHERE id = 3"],
     ["summary"], 1, "alloc_event row 3 names a device"),
    ("trigger on summary", "torch-allocator.db",
     [UNFINALIZE, "CREATE TRIGGER wipe AFTER INSERT ON summary BEGIN DELETE FROM alloc_event; END"],
     ["summary"], 1, "carries 1 triggers"),
    ("sizes overflowing 64 bits", "torch-allocator.db",
     [UNFINALIZE, "UPDATE alloc_event SET requested_bytes = 4611686018427387903,"
      " block_bytes = 4611686018427387903"], ["summary"], 1, "more than 2^63 bytes"),
    ("negative size", "torch-allocator.db",
     [UNFINALIZE, "UPDATE mem_event SET bytes = -5 WHERE id = (SELECT min(id) FROM mem_event)"],
     ["summary"], 1, "negative size"),
    ("series.ts not numeric", "torch-allocator.db",
     ["UPDATE series SET ts = 'x' || ts"], ["fragmentation"], 1, "not an integer"),
    ("series_level.shift not numeric", "torch-allocator.db",
     ["UPDATE series_level SET shift = 'x' || shift"], ["timeline"], 1, "not an integer"),
    ("stack table without its key, rows duplicated", "torch-allocator.db",
     ["CREATE TABLE s2 AS SELECT * FROM stack", "DROP TABLE stack",
      "CREATE TABLE stack (id, parent_id, frame_id)", "INSERT INTO stack SELECT * FROM s2",
      "INSERT INTO stack SELECT * FROM s2", "INSERT INTO stack SELECT * FROM s2"],
     ["peak"], 1, "its stack table"),
    ("live blocks whose sizes overflow 64 bits", "torch-allocator.db",
     ["UPDATE block SET bytes = 4611686018427387903, block_bytes = 4611686018427387903"],
     ["peak"], 1, "add up to more than 2^63 bytes"),
    ("a block ending past 2^63", "torch-allocator.db",
     ["UPDATE block SET address = 9223372036854775807 - id"], ["fragmentation"], 1,
     "ends past 2^63"),
    ("a negative start time", "torch-allocator.db",
     ["UPDATE meta SET value = -9223372036854775807 WHERE key = 'start_ns'"], ["summary"], 1,
     "start time is negative"),
    ("an NVTX range lasting more than 2^63 ns", "sample-nvtx-pool.db",
     ["UPDATE nvtx_range SET start_ns = -9223372036854775807, end_ns = 9223372036854775807"],
     ["ranges"], 1, "lasts more than 2^63 ns"),
    ("control characters in frame names, text output", "torch-allocator.db",
     ["UPDATE frame SET function = 'f' || char(27) || '[31mRED' || char(7) || char(13) || 'x'"
      " || char(10) || 'y' || char(155) || 'z'"], ["peak"], 0, "f\\e[31mRED\\x07\\rx\\ny\\u009bz"),
    ("a finalized trace carrying a view that recurses forever and a trigger", "torch-allocator.db",
     ["CREATE VIEW loop AS WITH RECURSIVE r (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
      " SELECT x FROM r",
      "CREATE TRIGGER t AFTER INSERT ON meta BEGIN INSERT INTO meta VALUES ('k', 1); END"],
     ["--format", "csv", "summary"], 0, "0,pytorch,"),
    ("summary replaced by a view that recurses forever", "torch-allocator.db",
     ["DROP TABLE summary", "CREATE VIEW summary AS WITH RECURSIVE r (x) AS (SELECT 1"
      " UNION ALL SELECT x + 1 FROM r) SELECT x AS device_id, x AS allocator_id FROM r"],
     ["summary"], 1, "its summary table"),
    ("schema 3 without the kernel view", "torch-allocator.db",
     ["CREATE TABLE kernel_config (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
      "CREATE TABLE kernel_exec (start_ns INTEGER NOT NULL, id INTEGER NOT NULL,"
      " duration_ns INTEGER NOT NULL, process_id, device_id, context, stream, correlation,"
      " config_id INTEGER NOT NULL, PRIMARY KEY (start_ns, id)) WITHOUT ROWID",
      "DROP TABLE kernel", "PRAGMA user_version = 3"],
     ["summary"], 1, "no such table: kernel"),
    ("schema 3 with kernel_exec keyed by id alone", "torch-allocator.db",
     ["CREATE TABLE kernel_config (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
      "CREATE TABLE kernel_exec (id INTEGER PRIMARY KEY, start_ns INTEGER NOT NULL,"
      " duration_ns INTEGER NOT NULL, process_id, device_id, context, stream, correlation,"
      " config_id INTEGER NOT NULL)",
      "DROP TABLE kernel", "CREATE VIEW kernel AS SELECT e.id, e.start_ns,"
      " e.start_ns + e.duration_ns AS end_ns, c.name FROM kernel_exec e"
      " LEFT JOIN kernel_config c ON c.id = e.config_id", "PRAGMA user_version = 3"],
     ["summary"], 1, "its kernel_exec table"),
]




def snapshot(entries):
    return {"segments": [], "device_traces": [entries], "allocator_settings": {}}


def event(action, addr, size, t, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "frames": list(frames)}


def deep_snapshot():
    frames = [{"filename": "f%d.py" % i, "line": i + 1, "name": "g"} for i in range(300000)]
    return snapshot([event("segment_alloc", 1 << 30, 1 << 20, 1),
                     event("alloc", 1 << 30, 512, 2, frames)])


def huge_snapshot():
    big = (1 << 62) - 1
    entries = []
    for k in range(3):
        entries += [event("segment_alloc", 1 << (40 + k), big, 2 * k + 1),
                    event("alloc", 1 << (40 + k), big, 2 * k + 2)]
    return snapshot(entries)


def history(n):
    entries = [event("segment_alloc", 1 << 30, 1 << 30, 0)]
    for i in range(n):
        addr = (1 << 30) + 512 * i
        entries += [event("alloc", addr, 512, 2 * i + 1),
                    event("free_completed", addr, 512, 2 * i + 2)]
    return entries


def shared_lists_snapshot():
    return {"segments": [], "device_traces": [history(1000)] * 50}


def shared_entries_snapshot():
    return snapshot([event("alloc", 1 << 30, 512, 1)] * 200000)


# Snapshots: name, builder, then the report run on the imported trace (or
# None when the import must fail), expected exit status and text.
IMPORT_CASES = [
    ("a 300,000-frame stack imports and reads", deep_snapshot, ["--format", "csv", "peak"], 0,
     "0,all,512,1,f0.py:1 g"),
    ("three blocks of 2^62-1 bytes are refused", huge_snapshot, None, 1,
     "sizes add up to more than 2^63 bytes"),
    ("one history shared by 50 devices through the memo is refused", shared_lists_snapshot, None,
     1, "device_traces[1] is the same list as device_traces[0]"),
    ("one entry shared 200,000 times through the memo is refused", shared_entries_snapshot, None,
     1, "more entries (200000) than a file of"),
]


def run_import_case(i, tmp, case):
    name, build, args, want_rc, want_text = case
    pickle_path = os.path.join(tmp, "snap%d.pickle" % i)
    trace = os.path.join(tmp, "snap%d.db" % i)
    with open(pickle_path, "wb") as f:
        pickle.dump(build(), f, protocol=4)
    p = subprocess.run([VRAMSCOPE, "import", "-q", pickle_path, "-o", trace],
                       capture_output=True, text=True, timeout=120)
    if args is None:
        err = p.stderr.strip().splitlines()
        if p.returncode != want_rc or len(err) != 1 or want_text not in err[0]:
            return "import: exit %d, stderr %r" % (p.returncode, err)
        if os.path.exists(trace):
            return "a trace was written"
        return None
    if p.returncode != 0:
        return "import: exit %d: %s" % (p.returncode, p.stderr.strip())
    p = subprocess.run([VRAMSCOPE, "report", trace] + args, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != want_rc or want_text not in p.stdout:
        return "report: exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout[:200],
                                                          p.stderr.strip()[:200])
    return None


def run_case(i, tmp, case):
    name, fixture, sqls, args, want_rc, want_text = case
    path = edited_copy(os.path.join(DATA, fixture), os.path.join(tmp, "case%d.db" % i), *sqls)
    with open(path, "rb") as f:
        before = f.read()
    env = dict(os.environ, VRAMSCOPE_QUERY_LIMIT_S="10")
    try:
        p = subprocess.run([VRAMSCOPE, "report", path] + args, capture_output=True,
                           text=True, errors="replace", timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return "timed out after 60 s"
    err = p.stderr.strip().splitlines()
    if p.returncode != want_rc:
        return "exit %d, want %d: %s" % (p.returncode, want_rc, p.stderr.strip()[:300])
    if want_rc == 1 and (len(err) != 1 or want_text not in err[0] or p.stdout):
        return "want one stderr line with %r, got %r" % (want_text, err)
    if "finalize" in p.stderr and p.stderr.count("finaliz") > 2:
        return "the message repeats itself: %r" % p.stderr
    if want_rc == 0 and want_text not in p.stdout:
        return "stdout lacks %r" % want_text
    raw = [c for c in p.stdout if (ord(c) < 32 and c != "\n") or 127 <= ord(c) < 160]
    if raw:
        return "stdout holds control characters %r" % sorted(set(raw))
    with open(path, "rb") as f:
        if want_rc == 1 and f.read() != before:
            return "the refused trace was changed"
    leftovers = [f for f in os.listdir(tmp) if f.startswith("case%d.db-" % i)]
    if leftovers:
        return "left %s behind" % leftovers
    return None


def main():
    print("1..%d" % (len(CASES) + len(IMPORT_CASES)))
    failed = 0
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for runner, cases in ((run_case, CASES), (run_import_case, IMPORT_CASES)):
            for case in cases:
                n += 1
                problem = runner(n, tmp, case)
                if problem is None:
                    print("ok %d - %s" % (n, case[0]))
                else:
                    failed = 1
                    print("not ok %d - %s: %s" % (n, case[0], problem))
    return failed


sys.exit(main())
