#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hostile-readers.py VRAMSCOPE DATA_DIR — readers given hostile traces and
# arguments: a series seq no replay writes, chunk tables that are views,
# the what-if model fed sizes at and past its range, one file named twice as two ranks, a stream id at
# the top of its range.  Each gets exit status 1 and one clear line on
# stderr, or a correct answer — never a crash.  TAP output.
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vs_trace_edit import apply_sql, edited_copy  # noqa: E402

VRAMSCOPE, DATA = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([VRAMSCOPE] + list(args), capture_output=True, text=True,
                          errors="replace", timeout=120)


def one_line_error(p, want):
    """None when p exited 1 with one stderr line holding want."""
    err = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(err) != 1 or want not in err[0]:
        return "exit %d, stderr %r" % (p.returncode, err[:3])
    return None


def mutated(tmp, name, fixture, *sqls):
    return edited_copy(os.path.join(DATA, fixture), os.path.join(tmp, name), *sqls)


def negative_seq(tmp):
    """A negative series.seq is said, not dereferenced as a missing error."""
    problems = []
    for fixture in ("sample-oom.db", "torch-train.db"):
        path = mutated(tmp, "seq-" + fixture, fixture, "UPDATE series SET seq = -5 - seq")
        for args in (["report", path, "diagnose"], ["report", path, "ranges"],
                     ["report", path, "oom"], ["report", path, "fragmentation"],
                     ["report", path, "growth"], ["diff", path, path]):
            p = run(*args)
            if p.returncode == 0:
                continue  # this report on this trace does not look up a time
            problem = one_line_error(p, "has a seq that is not a non-negative integer")
            if problem:
                problems.append("%s %s: %s" % (fixture, args[-1], problem))
    return "; ".join(problems) or None


def event(action, addr, size, t):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "frames": []}


def imported(tmp, name, entries, plain=False):
    """A trace imported from a snapshot of entries; plain: expanded back
    into plain tables (export --format sqlite) so that SQL can edit it."""
    pickle_path = os.path.join(tmp, name + ".pickle")
    with open(pickle_path, "wb") as f:
        pickle.dump({"segments": [], "device_traces": [entries], "allocator_settings": {}}, f,
                    protocol=4)
    path = os.path.join(tmp, name + ".db")
    p = run("import", "-q", pickle_path, "-o", path)
    if p.returncode != 0:
        raise RuntimeError("import: " + p.stderr)
    if not plain:
        return path
    out = os.path.join(tmp, name + "-plain.db")
    p = run("export", path, "--format", "sqlite", "-o", out)
    if p.returncode != 0:
        raise RuntimeError("export: " + p.stderr)
    return out


GIB = 1 << 30


def failed_200_gib(tmp, plain=False):
    """One 1 MiB block, then a failed request of 200 GiB (the device's
    capacity unknown: the model takes 80 GiB, expandable segments 90)."""
    return imported(tmp, "fail200-%d" % len(os.listdir(tmp)), [
        event("segment_alloc", 1 << 40, 20 << 20, 1), event("alloc", 1 << 40, 1 << 20, 2),
        {"action": "oom", "size": 200 * GIB, "stream": 0, "time_us": 3, "device_free": GIB,
         "frames": []}], plain)


def request_past_segment(tmp):
    """A request larger than an expandable segment's address space fails:
    the whole 90 GiB (and the small pool's 2 MiB page) mapped, then given
    up, never a walk past the segment's last block."""
    trace = failed_200_gib(tmp)
    p = run("whatif", trace, "--format", "csv", "--alloc-conf", "expandable_segments:True",
            "--limit", "300000000000")
    want = "0,pytorch,expandable_segments:True,300000000000,%d,1048576,1,2000" % (
        90 * GIB + (2 << 20))
    if p.returncode != 0 or p.stdout.strip().splitlines()[-1:] != [want]:
        return "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout[-300:], p.stderr[-300:])
    return None


RANGE = "beyond the what-if model's range"


def past_range_either_way(trace):
    """None when whatif refuses trace as past the model's range, with
    expandable segments and without."""
    problems = []
    for conf in ("expandable_segments:True", "expandable_segments:False"):
        problem = one_line_error(run("whatif", trace, "--alloc-conf", conf), RANGE)
        if problem:
            problems.append(conf + ": " + problem)
    return "; ".join(problems) or None


def capacity_near_int64_max(tmp):
    trace = failed_200_gib(tmp)
    apply_sql(trace, "UPDATE device SET total_bytes = 9223372036854775000")
    return past_range_either_way(trace)


def live_sizes_past_int64(tmp):
    """12,000 blocks of 1 PiB live at once (a finalized trace edited): the
    reserved and requested totals would pass 2^63."""
    entries = [event("segment_alloc", 1 << 40, GIB, 0)]
    entries += [event("alloc", (1 << 40) + 512 * i, 512, i + 1) for i in range(12000)]
    trace = imported(tmp, "live12k", entries, plain=True)
    apply_sql(trace, "UPDATE alloc_event SET requested_bytes = 1 << 50 WHERE op = 1")
    return past_range_either_way(trace)


def request_past_range(tmp):
    """A request of 2^62 + 1 bytes is past the model's range: refused, not
    clamped."""
    trace = failed_200_gib(tmp, plain=True)
    apply_sql(trace, "UPDATE failed_alloc SET requested_bytes = (1 << 62) + 1")
    return one_line_error(run("whatif", trace), RANGE)


CHUNKED = "is missing, is a view or is not keyed by seq"


def chunk_views(tmp):
    """A chunk table of a compacted trace replaced by a view listing each
    chunk twice, or by a copy without its key: refused, as plain tables
    that are views are, never read with every row twice."""
    trace = os.path.join(tmp, "chunks.db")
    p = run("import", "-q", os.path.join(DATA, "snapshots", "train.pickle"), "-o", trace)
    if p.returncode != 0:
        return "import: " + p.stderr
    problems = []
    for n, (table, args) in enumerate((
            ("block", ["report", "-", "leaks"]),
            ("block", ["export", "-", "--format", "snapshot", "-o", "-out"]),
            ("alloc_event", ["whatif", "-"]),
            ("series", ["report", "-", "timeline"]))):
        for how in ("view", "unkeyed"):
            path = os.path.join(tmp, "chunks-%d-%s.db" % (n, how))
            if how == "view":
                replace = ("CREATE VIEW %s_chunk AS SELECT * FROM c UNION ALL SELECT * FROM c"
                           " ORDER BY seq" % table)
            else:
                replace = "CREATE TABLE %s_chunk AS SELECT * FROM c" % table
            edited_copy(trace, path, "ALTER TABLE %s_chunk RENAME TO c" % table, replace)
            argv = [path if a == "-" else path + a if a == "-out" else a for a in args]
            problem = one_line_error(run(*argv), "its %s_chunk table %s" % (table, CHUNKED))
            if problem:
                problems.append("%s %s %s: %s" % (table, how, args[0], problem))
            if os.path.exists(path + "-out"):
                problems.append("%s %s: an export was written" % (table, how))
    return "; ".join(problems) or None


def one_file_two_ranks(tmp):
    """One trace named twice — as it is, through a link, as a copy — is
    refused, for ranks and for the diagnosis of several traces; two ranks'
    traces are not."""
    ranks = os.path.join(DATA, "ranks", "per-rank")
    a, b = os.path.join(ranks, "run-0.db"), os.path.join(ranks, "run-1.db")
    link, copy = os.path.join(tmp, "link.db"), os.path.join(tmp, "copy.db")
    os.symlink(os.path.abspath(a), link)
    shutil.copy(a, copy)
    problems = []
    for other, want in ((a, "are the same file"), (link, "are the same file"),
                        (copy, "are copies of one trace")):
        for report in ("ranks", "diagnose"):
            problem = one_line_error(run("report", a, other, report), want)
            if problem:
                problems.append("%s %s: %s" % (os.path.basename(other), report, problem))
    p = run("report", a, b, "ranks", "--format", "csv")
    if p.returncode != 0 or len(p.stdout.strip().splitlines()) != 3:
        problems.append("two ranks: exit %d, %r" % (p.returncode, p.stdout[-200:]))
    return "; ".join(problems) or None


def stream_at_int64_max(tmp):
    """Kernels on stream INT64_MAX (and on a negative one) go on the
    "stream ?" thread of the Perfetto export: no tid wraps around."""
    import json
    path = mutated(tmp, "stream.db", "sample-leak.db",
                   "UPDATE kernel SET stream = 9223372036854775807 WHERE id % 2 = 0",
                   "UPDATE kernel SET stream = -9223372036854775807 WHERE id % 2 = 1",
                   "UPDATE device SET idx = 9223372036854775807")
    out = os.path.join(tmp, "stream.json")
    p = run("export", path, "--format", "perfetto", "-o", out)
    if p.returncode != 0:
        return "export: exit %d: %s" % (p.returncode, p.stderr)
    with open(out) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    kernels = [e for e in events if e.get("ph") == "X" and e.get("pid", 0) >= 1 << 29]
    bad = [e for e in events if e.get("tid", 0) < 0 or e.get("pid", 0) < 0]
    names = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("tid") == 1}
    if bad or len(kernels) != 10 or any(e["tid"] != 1 for e in kernels) or names != {"stream ?"}:
        return "negative ids %r, kernels %r, tid 1 named %r" % (bad[:2], kernels[:2], names)
    return None


CASES = [
    ("a negative series seq is one line, for every report and diff", negative_seq),
    ("perfetto: kernels on stream INT64_MAX get no wrapped tid", stream_at_int64_max),
    ("one trace named twice is not two ranks", one_file_two_ranks),
    ("a chunk table that is a view or has no key is refused in one line", chunk_views),
    ("whatif: a request past an expandable segment's address space fails",
     request_past_segment),
    ("whatif: a device capacity near 2^63 is refused in one line", capacity_near_int64_max),
    ("whatif: 12,000 live 1 PiB blocks are refused in one line", live_sizes_past_int64),
    ("whatif: a request past 2^62 bytes is refused in one line", request_past_range),
]


def main():
    print("1..%d" % len(CASES))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, case) in enumerate(CASES, 1):
            problem = case(tmp)
            if problem is None:
                print("ok %d - %s" % (n, name))
            else:
                failed = 1
                print("not ok %d - %s: %s" % (n, name, problem))
    return failed


sys.exit(main())
