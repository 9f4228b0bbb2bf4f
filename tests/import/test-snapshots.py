#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-snapshots.py — imported real snapshots reproduce the run's own
# torch.cuda.memory_stats() exactly, and an independent replay of the
# snapshot in Python (snapshot_replay.py).
#
# For each NAME.pickle / NAME.json pair (tests/data/snapshots, recorded by
# make-snapshots.py and tests/gpu/make-snapshot-corpus.sh on a GPU machine)
# the snapshot is imported and the pytorch row of the trace's summary is
# compared with the stats taken at the same instant:
#   final_reserved_bytes  == reserved_bytes.all.current
#   final_allocated_bytes == requested_bytes.all.current
#   peak_reserved_bytes   == reserved_bytes.all.peak     (<= when the ring
#   peak_allocated_bytes  == requested_bytes.all.peak     buffer wrapped:
#   failed_alloc_count    == num_ooms                     the start is lost)
#   alloc_count           == allocation.all.allocated when the history is
#                            complete; when recording started late, that
#                            minus its value when recording started (the
#                            JSON's memory_stats_at_record_start); else
#                            fewer, and the trace must say the history is
#                            incomplete (meta history_overflow = 1);
#   free_count            == allocation.all.freed, complete histories
#                            without blocks still pending free;
#   before_trace_*        == 0 for complete histories.
# Every column, peak times included, must also equal the replay.  With
# --vramscope, `vramscope report --format csv summary` must print the same
# numbers.  TAP output.
# Usage: test-snapshots.py VS_IMPORT_TOOL SNAPSHOT_DIR [--vramscope PATH]
import csv
import glob
import io
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_replay  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402
import vs_trace_db  # noqa: E402

QUERY = """
SELECT d.idx, s.peak_reserved_bytes, s.peak_allocated_bytes,
       s.final_reserved_bytes, s.final_allocated_bytes, s.alloc_count,
       s.failed_alloc_count, s.free_count, s.before_trace_bytes,
       s.before_trace_count
FROM summary s JOIN allocator a ON a.id = s.allocator_id
JOIN device d ON d.id = s.device_id
WHERE a.kind = 'pytorch'"""

FIELDS = ["peak_reserved_bytes", "peak_allocated_bytes", "final_reserved_bytes",
          "final_allocated_bytes", "alloc_count", "failed_alloc_count", "free_count",
          "before_trace_bytes", "before_trace_count"]
REPLAYED = FIELDS + ["peak_reserved_time_ns", "peak_allocated_time_ns"]


def expected(stats):
    return {
        "peak_reserved_bytes": stats["reserved_bytes.all.peak"],
        "peak_allocated_bytes": stats["requested_bytes.all.peak"],
        "final_reserved_bytes": stats["reserved_bytes.all.current"],
        "final_allocated_bytes": stats["requested_bytes.all.current"],
        "alloc_count": stats["allocation.all.allocated"],
        "failed_alloc_count": stats["num_ooms"],
        "free_count": stats["allocation.all.freed"],
        "before_trace_bytes": 0,
        "before_trace_count": 0,
    }


def check_stacks(db, kwargs):
    """The stacks the options recorded are the stacks the trace has:
    context None, none (but the label of memory from before the history);
    "state", on the allocations of blocks still live at the end only;
    "alloc", on allocations, and a free carries its block's allocation
    stack (what PyTorch 2.11 writes); "all", frees with their own stacks
    too; stacks "all"
    adds C++ frames (native), "python" has none.  (Not every allocation
    has Python frames: backward runs on autograd's own thread.)"""
    if kwargs is None or kwargs.get("enabled", "all") != "all":
        return []
    context = kwargs.get("context", "all")
    stacks = kwargs.get("stacks", "all")
    con = vs_trace_db.connect(db)
    q = lambda sql: con.execute(sql).fetchone()[0]
    real = "before_trace IS NULL"
    allocs = q("SELECT count(*) FROM alloc_event WHERE op = 1 AND " + real)
    with_stack = q("SELECT count(*) FROM alloc_event WHERE op = 1 AND stack_id IS NOT NULL AND " + real)
    live_with_stack = q("SELECT count(*) FROM alloc_event a JOIN block b ON b.alloc_event_id = a.id"
                        " AND b.level = 2 WHERE a.op = 1 AND a.stack_id IS NOT NULL"
                        " AND b.free_seq IS NULL AND a." + real)
    live = q("SELECT count(*) FROM block b JOIN alloc_event a ON b.alloc_event_id = a.id"
             " WHERE b.level = 2 AND b.free_seq IS NULL AND a." + real)
    frees_with_stack = q("SELECT count(*) FROM alloc_event WHERE op = 3 AND stack_id IS NOT NULL")
    frees = q("SELECT count(*) FROM alloc_event WHERE op = 3")
    # Frees whose stack is not their block's allocation stack.
    own_free_stacks = q("SELECT count(*) FROM block WHERE level = 2 AND free_stack_id IS NOT NULL"
                        " AND free_stack_id IS NOT stack_id")
    native = q("SELECT count(*) FROM frame WHERE kind = 1")
    python = q("SELECT count(*) FROM frame WHERE kind = 2")
    con.close()
    problems = []
    if context is None:
        if with_stack or frees_with_stack or native or python:
            problems.append("context None but stacks in the trace")
        return problems
    if context == "state":
        if with_stack != live_with_stack or (live and not live_with_stack):
            problems.append("context state: %d allocations with stacks, %d of them of the %d"
                            " live at the end" % (with_stack, live_with_stack, live))
        if frees_with_stack:
            problems.append("context state: %d frees with stacks" % frees_with_stack)
    else:
        if allocs and not with_stack:
            problems.append("context %s: none of %d allocations with stacks" % (context, allocs))
        if context == "alloc" and own_free_stacks:
            problems.append("context alloc: %d frees with stacks of their own" % own_free_stacks)
        if context == "all" and frees and not own_free_stacks:
            problems.append("context all: none of %d frees with a stack of its own" % frees)
    if stacks == "all" and not native:
        problems.append("stacks all but no native frames")
    if stacks == "python" and native:
        problems.append("stacks python but %d native frames" % native)
    if not python:
        problems.append("no Python frames")
    return problems


def check(tool, vramscope, pickle_path, json_path, tmp):
    problems = []
    info = json.load(open(json_path))
    want = expected(info["memory_stats"])
    db = os.path.join(tmp, os.path.basename(pickle_path) + ".db")
    res = subprocess.run([tool, pickle_path, "-o", db, "-q"], capture_output=True)
    if res.returncode != 0:
        return ["import failed: " + res.stderr.decode().strip()]
    con = vs_trace_db.connect(db)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    rows = con.execute(QUERY).fetchall()
    # A snapshot says nothing of device-level memory: unknown, not 0 B.
    known = con.execute(
        "SELECT (SELECT count(*) FROM summary WHERE allocator_id = 0 AND"
        "  (peak_device_bytes IS NOT NULL OR static_bytes IS NOT NULL"
        "   OR peak_pinned_bytes IS NOT NULL OR peak_managed_bytes IS NOT NULL))"
        " + (SELECT count(*) FROM series WHERE device_bytes IS NOT NULL"
        "  OR static_bytes IS NOT NULL OR pinned_bytes IS NOT NULL"
        "  OR managed_bytes IS NOT NULL)"
        " + (SELECT count(*) FROM series_level WHERE max_device IS NOT NULL)").fetchone()[0]
    # Its one allocator's series is the device's, stored once.
    own_series = con.execute(
        "SELECT count(*) FROM summary WHERE allocator_id != 0"
        " AND series_allocator_id != 0").fetchone()[0]
    con.close()
    if known:
        problems.append("%d device-level values known in an import" % known)
    if own_series:
        problems.append("%d allocator series stored apart from `all`" % own_series)
    if len(rows) != 1:
        return ["expected one pytorch summary row, got %d" % len(rows)]
    got = dict(zip(FIELDS, rows[0][1:]))
    complete = str(meta.get("history_overflow")) != "1"
    with open(pickle_path, "rb") as f:
        snap = pickle.load(f)  # our own committed fixture
    entries = sum(len(t) for t in snap.get("device_traces") or [])
    wrapped = bool(info.get("max_entries")) and entries >= info["max_entries"]
    pending = any(b["state"] == "active_pending_free"
                  for seg in snap["segments"] for b in seg["blocks"])
    start = info.get("memory_stats_at_record_start")
    for k in FIELDS:
        if k == "alloc_count" and not complete:
            if start is not None and not wrapped:
                w = want[k] - start.get("allocation.all.allocated", 0)
                if got[k] != w:
                    problems.append("alloc_count %s != allocations after recording began %s"
                                    % (got[k], w))
            elif not got[k] < want[k]:
                problems.append("incomplete history but alloc_count %d >= %d" % (got[k], want[k]))
            continue
        if k == "free_count" and (not complete or pending):
            continue
        if k.startswith("before_trace") and not complete:
            continue
        if wrapped and k in ("peak_reserved_bytes", "peak_allocated_bytes",
                             "failed_alloc_count"):
            if got[k] > want[k]:
                problems.append("%s %s > memory_stats %s" % (k, got[k], want[k]))
            continue
        if got[k] != want[k]:
            problems.append("%s %s != memory_stats %s" % (k, got[k], want[k]))
    # The history covers the run exactly when it did not wrap and recording
    # began with nothing allocated; the trace must say which.
    if start is not None:
        covers = not wrapped and start.get("reserved_bytes.all.current", 0) == 0
    else:
        covers = not wrapped and info["workload"] != "late"
    if complete != covers:
        problems.append("history_overflow %s for a history that %s the run"
                        % (meta.get("history_overflow"), "covers" if covers else "does not cover"))
    if str(meta.get("history_reconstructed")) != ("0" if covers else "1"):
        problems.append("history_reconstructed %s" % meta.get("history_reconstructed"))
    problems += check_stacks(db, info.get("record_kwargs"))
    # A raw import (for merging; `record` makes them) is finalized by the
    # first reader and then reports the same.
    raw = db + ".raw.db"
    res = subprocess.run([tool, "--no-finalize", pickle_path, "-o", raw, "-q"],
                         capture_output=True)
    if res.returncode != 0:
        problems.append("--no-finalize import failed: " + res.stderr.decode().strip())
    else:
        con = sqlite3.connect(raw)
        if con.execute("SELECT count(*) FROM meta WHERE key = 'finalized' AND value = '1'").fetchone()[0]:
            problems.append("--no-finalize import is finalized")
        if con.execute("SELECT count(*) FROM series").fetchone()[0]:
            problems.append("--no-finalize import has a series")
        con.close()
        if vramscope:
            outs = [subprocess.run([vramscope, "report", f, "--format", "csv", "summary"],
                                   capture_output=True) for f in (db, raw)]
            if outs[1].returncode != 0 or outs[0].stdout != outs[1].stdout:
                problems.append("the raw import reports differently once finalized: %r"
                                % outs[1].stderr.decode().strip())
    if vramscope:
        res = subprocess.run([vramscope, "report", db, "--format", "csv", "--buckets", "8",
                              "timeline"], capture_output=True)
        shown = [r["max_device_bytes"] for r in csv.DictReader(io.StringIO(res.stdout.decode()))
                 if r["max_device_bytes"] != ""]
        if res.returncode != 0 or shown:
            problems.append("timeline shows device bytes of an import: %r %s"
                            % (shown, res.stderr.decode().strip()))
        res = subprocess.run([vramscope, "report", db, "--format", "csv", "summary"],
                             capture_output=True)
        if res.returncode != 0:
            problems.append("vramscope report failed: " + res.stderr.decode().strip())
        else:
            rows = [r for r in csv.DictReader(io.StringIO(res.stdout.decode()))
                    if r.get("allocator") == "pytorch"]
            if len(rows) != 1:
                problems.append("report: expected one pytorch row, got %d" % len(rows))
            else:
                for k in FIELDS:
                    if rows[0].get(k) != str(got[k]):
                        problems.append("report %s %r != summary %r" % (k, rows[0].get(k), got[k]))
                r = snapshot_replay.replay(snap, snapshot_replay.devices(snap)[0])
                for k in REPLAYED:
                    exp = "" if r[k] is None else str(r[k])
                    if rows[0].get(k) != exp:
                        problems.append("report %s %r != replay %r" % (k, rows[0].get(k), exp))
        # --timings: the stages, then each of them and the finalizer's
        # passes, through the same recorder record uses.
        timed = os.path.join(tmp, "timed.db")
        res = subprocess.run([vramscope, "import", "--timings", "-q", "-f", pickle_path,
                              "-o", timed], capture_output=True, text=True)
        phases = [line.split("  ")[1].strip() for line in res.stderr.splitlines()
                  if line.startswith("  ")]
        want = ["reading the snapshot", "importing the history", "finalize: loading events",
                "finalize: indexes", "finalize: commit"]
        if (res.returncode != 0 or "vramscope import: reading" not in res.stderr
                or any(w not in phases for w in want)):
            problems.append("import --timings: %r" % res.stderr)
    return problems


def main():
    tool, snapdir = sys.argv[1], sys.argv[2]
    vramscope = None
    if "--vramscope" in sys.argv:
        vramscope = sys.argv[sys.argv.index("--vramscope") + 1]
    pairs = sorted(p for p in glob.glob(os.path.join(snapdir, "*.pickle"))
                   if os.path.exists(p[:-len(".pickle")] + ".json"))
    print("1..%d" % max(len(pairs), 1))
    if not pairs:
        print("not ok 1 - no snapshot fixtures in " + snapdir)
        sys.exit(1)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, p in enumerate(pairs, 1):
            problems = check(tool, vramscope, p, p[:-len(".pickle")] + ".json", tmp)
            name = os.path.basename(p)
            failed += tap.case(n, name, problems)
    sys.exit(1 if failed else 0)


main()
