#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-follow-locked.py — `record --window` keeps following a PyTorch
allocator stream whose import another connection holds locked for longer
than the import waits, without a GPU.

A program writes its stream over time (write-stream-slowly.py, gated after
its first batch); record follows it with a window.  Once the first batch is
imported, the test takes the import file's write lock (BEGIN IMMEDIATE,
its journal a write-ahead log) and lets the program write the rest; it
keeps the lock until record says a step found the file locked (so past the
import's busy timeout, whatever the machine's speed).  Proved:
  - the step that found the file locked kept nothing (the import's
    checkpoint still at the first batch) and the import is not given up;
  - once the lock is released the import goes on while the program still
    runs, to every record written;
  - the final trace's allocator tables equal, row for row (ids included),
    those of the same run without the lock, and what the records say
    (write-stream-slowly.py --expect).
The test reads where the import stands (its checkpoint in meta) through a
read-only connection closed after each read, so that it never holds the
file's lock itself; its waits last as long as the recording moves, however
slowly (they count only the polls that found nothing written or imported
since the one before), and end when record does.

Usage: test-follow-locked.py VRAMSCOPE WRITE_STREAM   (TAP output)
"""
import contextlib
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

vramscope, write = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.environ["VRAMSCOPE"] = vramscope
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect
BATCHES, PER = 4, 300
n_tests, failed = 0, False


def ok(cond, what, why=""):
    global n_tests, failed
    n_tests += 1
    print("%sok %d - %s%s" % ("" if cond else "not ", n_tests, what,
                              "" if cond or not why else " (%s)" % why))
    failed = failed or not cond


def wait(d, rec, pred, polls=int(os.environ.get("POLLS", "1200"))):
    """Whether pred() came true while record rec runs.  Waits as long as
    the recording moves (records written or imported), however slowly; only
    polls (0.1 s apart) that found it as the one before are counted, at most
    polls of them."""
    quiet, last = 0, None
    while not pred():
        if rec.poll() is not None:
            return pred()
        now = (written(d), imported(d))
        quiet = quiet + 1 if now == last else 0
        if quiet >= polls:
            return False
        last = now
        time.sleep(0.1)
    return True


def import_file(d):
    f = [p for p in glob.glob(os.path.join(d, ".vramscope-spool-*", "torch-*.db"))]
    return f[0] if f else None


def imported(d):
    """The records the kept import's last step committed (its checkpoint),
    -1 before there is one."""
    f = import_file(d)
    if f is None:
        return -1
    # Read-only, and closed whatever the query gives: while open, a
    # connection holds a shared lock on the import (its journal a
    # write-ahead log), and one merely dropped lives on (a sqlite3
    # connection and its statement cache refer to each other) until the
    # garbage collector runs, its lock with it.
    uri = "file:%s?mode=ro" % urllib.request.pathname2url(f)
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=0.05)) as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'follow_read'").fetchone()
        return int(row[0]) if row else -1
    except sqlite3.Error:
        return -1


def written(d):
    f = glob.glob(os.path.join(d, "*.done"))
    try:
        return int(open(f[0]).read()) if f else 0
    except (OSError, ValueError):
        return 0


def run(d, lock):
    """Records the program in d, the import locked a while with lock.
    (rc, stderr, what the lock proved, whether the import went on)."""
    os.makedirs(d)
    env = dict(os.environ, VRAMSCOPE_TORCH_FOLLOW_MS="40")
    prog = ('python3 "%s" "%s" --batches %d --per-batch %d --sleep 0.05 --gate "%s/gate"; '
            'while [ ! -e "%s/stop" ]; do sleep 0.05; done' % (write, d, BATCHES, PER, d, d))
    err_path = os.path.join(d, "err")
    with open(err_path, "w") as err:
        rec = subprocess.Popen([vramscope, "record", "-q", "--window", "10s", "-o",
                                os.path.join(d, "t.db"), "--", "sh", "-c", prog], cwd=d,
                               env=env, stderr=err)
    held = None
    first = wait(d, rec, lambda: imported(d) == PER)
    if not first:
        print("# the first batch never imported: %d records written, %d imported"
              % (written(d), imported(d)))
    if first and lock:
        with contextlib.closing(sqlite3.connect(import_file(d), timeout=600,
                                                isolation_level=None)) as con:
            con.execute("BEGIN IMMEDIATE")
            open(os.path.join(d, "gate"), "w").close()
            said = wait(d, rec, lambda: "tried again on the next pass" in open(err_path).read())
            kept = con.execute("SELECT value FROM meta WHERE key = 'follow_read'").fetchone()
            held = (said, int(kept[0]) if kept else -1, written(d))
            con.execute("ROLLBACK")
    open(os.path.join(d, "gate"), "w").close()
    went_on = first and wait(
        d, rec, lambda: written(d) == BATCHES * PER and imported(d) == BATCHES * PER)
    if first and not went_on:
        print("# %d records written, %d imported" % (written(d), imported(d)))
    open(os.path.join(d, "stop"), "w").close()
    rc = rec.wait()
    return rc, open(err_path).read(), held, went_on


def tables(path):
    """The trace's allocator tables, every column, in id order."""
    db = connect(path)
    out = {}
    for t in ("alloc_event", "failed_alloc", "frame", "stack", "allocator", "device"):
        cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % t)]
        out[t] = db.execute("SELECT * FROM %s ORDER BY id" % t).fetchall() if cols else []
    return out


def as_records(path):
    """The pytorch events as write-stream-slowly.py --expect writes them."""
    db = connect(path)

    def frames(sid):
        got = []
        while sid:
            sid, fr = db.execute("SELECT parent_id, frame_id FROM stack WHERE id = ?",
                                 (sid,)).fetchone()
            got.append(list(db.execute("SELECT file, function, line FROM frame WHERE id = ?",
                                       (fr,)).fetchone()))
        return got

    alloc = [[r[0], r[1], r[2], r[3], frames(r[4])] for r in db.execute(
        "SELECT e.ts, e.op, e.address, e.requested_bytes, e.stack_id FROM alloc_event e"
        " JOIN allocator a ON a.id = e.allocator_id WHERE a.kind = 'pytorch' ORDER BY e.id")]
    oom = [[r[0], r[1], r[2], frames(r[3])] for r in db.execute(
        "SELECT ts, requested_bytes, device_free_bytes, stack_id FROM failed_alloc ORDER BY id")]
    return alloc, oom


root = tempfile.mkdtemp()
try:
    rc0, err0, _, on0 = run(os.path.join(root, "free"), False)
    for line in err0.splitlines():
        print("# record said (no lock): %s" % line)
    ok(rc0 == 0 and on0, "record --window follows the stream to its end",
       "rc %d, %s" % (rc0, on0))
    rc, err, held, went_on = run(os.path.join(root, "locked"), True)
    said, kept, wrote = held if held else (False, -1, 0)
    if held is None:
        print("# the import never held the first batch: %d records" % imported(
            os.path.join(root, "locked")))
    for line in err.splitlines():
        print("# record said: %s" % line)
    ok(said, "a step that found the import locked past its wait says so once, on stderr",
       err.strip())
    ok(kept == PER,
       "while locked, the import kept nothing of the undone step (%d records committed, %d "
       "written then)" % (kept, wrote))
    ok("no longer followed" not in err and err.count("tried again") == 1,
       "the locked import is not given up", err.strip())
    ok(rc == 0 and went_on,
       "once released, the import goes on while the program runs, to every record (rc %d)" % rc)
    a, b = os.path.join(root, "free", "t.db"), os.path.join(root, "locked", "t.db")
    ta, tb = tables(a), tables(b)
    diff = next((t for t in ta if ta[t] != tb[t]), None)
    ok(diff is None, "the trace equals the one without the lock, row for row",
       "%s differs" % diff)
    want = json.loads(subprocess.run([sys.executable, write, "--expect", str(BATCHES * PER)],
                                     capture_output=True, text=True, check=True).stdout)
    st = want["stacks"]
    want_a = [[r[0], r[1], r[2], r[3], [list(f) for f in st[str(r[4])]] if r[4] else []]
              for r in want["alloc"]]
    want_o = [[r[0], r[1], r[2], [list(f) for f in st[str(r[3])]] if r[3] else []]
              for r in want["oom"]]
    got_a, got_o = as_records(b)
    ok(got_a == want_a and got_o == want_o,
       "the trace holds what the records say (%d events, %d ooms; want %d, %d)"
       % (len(got_a), len(got_o), len(want_a), len(want_o)))
finally:
    shutil.rmtree(root, ignore_errors=True)
print("1..%d" % n_tests)
sys.exit(1 if failed else 0)
