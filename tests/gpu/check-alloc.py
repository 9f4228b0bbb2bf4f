#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-alloc.py — a trace's allocator level against the program's own account.

Usage: check-alloc.py TRACE GROUND_TRUTH_JSON_OR_FILE

The ground truth is what a sample printed (samples/torch-alloc.py,
torch-oom.py, sample-nvtx-pool.cu, sample-frag.cu, sample-kinds.cu):
PyTorch's memory_stats(), cudaMemPoolGetAttribute's high-water marks, or a
sub-allocator's own counts.  Every check compares the trace's `summary`
rows (what `vramscope report summary` prints) exactly.  TAP output; exit
status 1 when a check failed.  Standard library only (runs on a bare GPU
server and on CI, on the committed traces).
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_gpu_check  # noqa: E402
from vs_gpu_check import tap as check  # noqa: E402

def summary(db, allocator_id):
    row = db.execute(
        "SELECT peak_reserved_bytes, peak_allocated_bytes, final_reserved_bytes,"
        " final_allocated_bytes, alloc_count, free_count, failed_alloc_count,"
        " peak_device_bytes FROM summary WHERE allocator_id = ?", (allocator_id,)).fetchone()
    keys = ["peak_reserved", "peak_allocated", "final_reserved", "final_allocated",
            "alloc_count", "free_count", "failed", "peak_device"]
    return dict(zip(keys, row)) if row else None


def compare(name, got, want, pairs):
    if got is None:
        check("%s has a summary row" % name, False)
        return
    for gk, wk in pairs:
        if want.get(wk) is None:
            continue
        check("%s %s" % (name, gk), got[gk] == want[wk], "trace %s, expected %s" % (got[gk], want[wk]))


def check_pytorch(db, t):
    rows = db.execute("SELECT id, device_id, process_id FROM allocator WHERE kind = 'pytorch'").fetchall()
    check("one pytorch allocator", len(rows) == 1, "%d" % len(rows))
    if len(rows) != 1:
        return
    aid, dev, proc = rows[0]
    compare("pytorch", summary(db, aid), t, [
        ("peak_reserved", "peak_reserved"), ("peak_allocated", "peak_allocated"),
        ("final_reserved", "final_reserved"), ("final_allocated", "final_allocated"),
        ("alloc_count", "alloc_count"), ("failed", "failed")])
    cupti = db.execute("SELECT DISTINCT process_id, device_id FROM mem_event WHERE kind = 1").fetchall()
    check("pytorch rows are on the process and device of the CUPTI events",
          (proc, dev) in cupti, "pytorch %r, CUPTI %r" % ((proc, dev), cupti))
    pids = db.execute("SELECT count(*), count(DISTINCT pid) FROM process").fetchone()
    check("one process row per process", pids[0] == pids[1], "%r" % (pids,))
    segs, owned = db.execute(
        "SELECT count(*), sum(EXISTS (SELECT 1 FROM block d WHERE d.level = 1 AND d.owner_id = s.id))"
        " FROM block s WHERE s.level = 3 AND s.allocator_id = ?", (aid,)).fetchone()
    check("every PyTorch segment's cudaMalloc is owned by it", segs > 0 and segs == owned,
          "%s segments, %s owned" % (segs, owned))
    skew = db.execute(
        "SELECT max(abs(s.alloc_ts - d.alloc_ts)) FROM block s JOIN block d"
        " ON d.owner_id = s.id AND d.level = 1 WHERE s.level = 3 AND s.allocator_id = ?"
        " AND s.alloc_seq > 0", (aid,)).fetchone()[0]
    check("segment times agree with CUPTI's cudaMalloc within 50 ms", skew is not None and skew < 50_000_000,
          "largest difference %s ns" % skew)
    allrow = summary(db, 0)
    check("the `all` row holds PyTorch and what else the process holds",
          allrow is not None and allrow["peak_reserved"] >= t["peak_reserved"]
          and allrow["final_reserved"] >= t["final_reserved"],
          "all %s / pytorch %s reserved at peak" % (allrow and allrow["peak_reserved"], t["peak_reserved"]))
    if "oom_request" in t:
        oom = db.execute("SELECT ts, requested_bytes FROM failed_alloc WHERE allocator_id = ?",
                         (aid,)).fetchall()
        check("the OOM is in the trace", len(oom) == t["failed"] and oom and oom[0][1] == t["oom_request"],
              "%r" % oom)
        if oom:
            live = db.execute(
                "SELECT count(*), coalesce(sum(bytes), 0) FROM block WHERE level = 2 AND allocator_id = ?"
                " AND alloc_ts <= ? AND (free_ts IS NULL OR free_ts > ?)", (aid, oom[0][0], oom[0][0])).fetchone()
            check("the state at the OOM: live blocks", live[1] == t["final_allocated"],
                  "%d blocks, %d bytes, expected %d bytes" % (live[0], live[1], t["final_allocated"]))


def check_async_torch(db, t, time_ns):
    """The pool's peaks, and its state at the instant memory_stats() was read:
    Python's teardown then frees tensors, which a stream-ordered pool (unlike
    the caching allocator) hands back, so the trace's finals are lower."""
    pools = db.execute("SELECT a.id, count(*) FROM allocator a JOIN mem_event m ON m.pool_id = a.id"
                       " WHERE a.kind = 'pool' GROUP BY a.id ORDER BY 2 DESC").fetchall()
    check("a stream-ordered pool", len(pools) >= 1)
    if not pools:
        return
    pid = pools[0][0]
    compare("pool (backend:cudaMallocAsync)", summary(db, pid), t, [
        ("peak_reserved", "peak_reserved"), ("peak_allocated", "peak_allocated_bytes")])
    # The pool's series is stored under summary.series_allocator_id.
    at = db.execute("SELECT reserved_bytes, allocated_bytes FROM series WHERE allocator_id ="
                    " (SELECT series_allocator_id FROM summary WHERE allocator_id = ?)"
                    " AND ts <= ? ORDER BY ts DESC, seq DESC LIMIT 1", (pid, time_ns)).fetchone()
    check("pool reserved when memory_stats() was read", at is not None and at[0] == t["final_reserved"],
          "trace %s, expected %s" % (at and at[0], t["final_reserved"]))
    check("pool allocated when memory_stats() was read",
          at is not None and at[1] == t["final_allocated_bytes"],
          "trace %s, expected %s" % (at and at[1], t["final_allocated_bytes"]))


def main():
    db = vs_trace_db.connect(sys.argv[1], readonly=True)
    arg = sys.argv[2]
    truth = json.load(open(arg)) if os.path.exists(arg) else json.loads(arg)
    fin = db.execute("SELECT value FROM meta WHERE key = 'finalized'").fetchone()
    check("trace is finalized", fin is not None and str(fin[0]) == "1")
    if "pytorch" in truth:
        if truth.get("backend", "native") == "native":
            check_pytorch(db, truth["pytorch"])
        else:
            check_async_torch(db, truth["pytorch"], truth["time_ns"])
    if "pools" in truth:
        pools = db.execute("SELECT id, name FROM allocator WHERE kind = 'pool' ORDER BY id").fetchall()
        for (pid, name), t in zip(pools, truth["pools"]):
            compare(name, summary(db, pid), t, [
                ("peak_reserved", "reserved_high"), ("peak_allocated", "used_high"),
                ("final_reserved", "reserved_final"), ("final_allocated", "used_final")])
    if "nvtx" in truth:
        for t in truth["nvtx"]:
            row = db.execute("SELECT id FROM allocator WHERE kind = 'nvtx' AND name = ?",
                             (t["name"],)).fetchone()
            check("allocator %s" % t["name"], row is not None)
            if row:
                compare(t["name"], summary(db, row[0]), t, [
                    ("peak_reserved", "reserved_peak"), ("peak_allocated", "allocated_peak"),
                    ("final_reserved", "reserved_final"), ("final_allocated", "allocated_final"),
                    ("alloc_count", "alloc_count"), ("free_count", "free_count")])
        if "all" in truth:
            compare("all", summary(db, 0), truth["all"], [
                ("peak_reserved", "reserved_peak"), ("peak_allocated", "allocated_peak"),
                ("final_reserved", "reserved_final"), ("final_allocated", "allocated_final")])
        if "ranges" in truth:
            r = db.execute("SELECT count(*) FROM nvtx_range").fetchone()[0]
            check("NVTX ranges keep working", r == truth["ranges"], "%d, expected %d" % (r, truth["ranges"]))
    vs_gpu_check.plan()
    sys.exit(vs_gpu_check.status())


main()
