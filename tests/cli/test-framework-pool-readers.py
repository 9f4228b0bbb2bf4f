#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-framework-pool-readers.py VRAMSCOPE DATA_DIR — on a device holding
a framework pool seen only from the device level (the JAX and CuPy runs
recorded on a GPU, tests/data/frameworks/), every command gives `all` the
allocated memory `summary` gives, the pool's segments counted as reserved
only:

  * `growth` on the CuPy run with iterations marked (NVTX ranges "step N"
    added to a plain copy, each starting just after one of the pool's
    segments): each iteration's allocated memory is what the blocks
    outside the pool hold then (summed here with SQL from the trace's own
    blocks), so the pool taking a segment every iteration is no growth of
    allocated memory and `diagnose` finds no growth-per-iteration of
    `all`; the pool's segments are still there, as its reserved memory,
    which grows at every iteration: a growth-per-iteration of the pool
    (`cupy`), by the median segment taken;
  * `ranges`, `fragmentation`, `timeline` and the Perfetto export never
    exceed summary's peak, and meet it where they cover it;
  * `oom`: a failure inside the pool gives the pool's reserved at the
    failure — the framework's own figure at the failure, kept in meta —
    and leaves its allocated empty (unknown), never the pool's size.

TAP output.
"""
import json
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_trace_db import stacks_under  # noqa: E402
from vs_cli import bound  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
run, table = bound(vramscope)
frameworks = os.path.join(data, "frameworks")


def all_rows(rows):
    return [r for r in rows if r["allocator"] == "all"]


def summary_all(trace):
    return all_rows(table(trace, "summary"))[0]


def num(v):
    return int(v) if v != "" else None


# --------------------------------------------------------------- readers

def check_readers(name):
    trace = os.path.join(frameworks, name + ".db")
    s = summary_all(trace)
    peak = int(s["peak_allocated_bytes"])

    timeline = all_rows(table(trace, "timeline", "--buckets", "400"))
    top = max(num(r["max_allocated_bytes"]) or 0 for r in timeline)
    ok(top == peak, "%s: timeline's top is summary's peak allocated %d" % (name, peak), top)

    frag = all_rows(table(trace, "fragmentation"))
    ok(all(num(r["allocated_bytes"]) <= peak for r in frag)
       and all(int(r["free_bytes"]) == int(r["reserved_bytes"]) - int(r["allocated_bytes"])
               for r in frag),
       "%s: fragmentation's allocated never above summary's peak, free = reserved - allocated"
       % name, frag)
    at_peak = [r for r in frag if r["instant"] == "peak_allocated"]
    ok(s["peak_allocated_time_ns"] == "" or (len(at_peak) == 1 and
                                              int(at_peak[0]["allocated_bytes"]) == peak),
       "%s: fragmentation at the peak allocated holds summary's peak" % name, at_peak)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        run("export", trace, "--format", "perfetto", "-o", out)
        with open(out) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        counters = [e["args"]["allocated_bytes"] for e in events
                    if e.get("ph") == "C" and e.get("name") == "all"]
        ok(counters and max(counters) == peak,
           "%s: the Perfetto export's all counter tops out at summary's peak" % name,
           max(counters, default=None))

    if name in ("jax-healthy", "jax-healthy-grow"):
        return  # ranges: XLA's 14904 ranges take a minute; jax-oom has them too
    ranges = all_rows(table(trace, "ranges"))
    ok(all(int(r[c]) <= peak for r in ranges
           for c in ("allocated_at_start_bytes", "allocated_at_end_bytes",
                     "peak_allocated_bytes")),
       "%s: no range's allocated memory above summary's peak (%d ranges)" % (name, len(ranges)))


for name in ("jax-healthy", "jax-healthy-grow", "jax-oom", "cupy-healthy", "cupy-oom"):
    check_readers(name)


# ------------------------------------------------------------------- oom

def meta(trace, key):
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    db.close()
    return int(row[0]) if row else None


for name, pool, key in (("jax-oom", "xla", "xla.pool_bytes.0.at_failure"),
                        ("cupy-oom", "cupy", "cupy.total_bytes.0.at_failure")):
    trace = os.path.join(frameworks, name + ".db")
    rows = table(trace, "oom")
    truth = meta(trace, key)
    ok(truth is not None and len(rows) == 1 and rows[0]["allocator"] == pool
       and int(rows[0]["reserved_bytes"]) == truth and rows[0]["allocated_bytes"] == ""
       and rows[0]["free_bytes"] == "",
       "%s: the failure's %s row holds the pool's reserved, %s = %s, allocated unknown"
       % (name, pool, key, truth), rows)


# ---------------------------------------------------------------- growth

POOL_STACKS = stacks_under("%SingleDeviceMemoryPool%")

# What `all` counts as allocated (level-1 device allocations of no
# allocator: plain, async and VMM), outside the pool, live after ts.
OUTSIDE_AT = """
SELECT coalesce(sum(bytes), 0) FROM block
WHERE level = 1 AND allocator_id IS NULL AND kind IN (1, 5, 6)
  AND (alloc_ts IS NULL OR alloc_ts <= ?1) AND (free_ts IS NULL OR free_ts > ?1)
  AND ifnull(stack_id, 0) NOT IN (SELECT id FROM pool_stacks)"""

with tempfile.TemporaryDirectory() as tmp:
    plain = os.path.join(tmp, "cupy-steps.db")
    run("export", os.path.join(frameworks, "cupy-healthy.db"), "--format", "sqlite", "-o", plain)
    db = sqlite3.connect(plain)
    db.execute("CREATE TEMP TABLE pool_stacks AS " + POOL_STACKS)
    segments = [r[0] for r in db.execute(
        "SELECT alloc_ts FROM block WHERE level = 1 AND allocator_id IS NULL"
        " AND stack_id IN (SELECT id FROM pool_stacks) AND alloc_ts IS NOT NULL"
        " ORDER BY alloc_seq")]
    pool_bytes = db.execute(
        "SELECT sum(bytes) FROM block WHERE level = 1 AND allocator_id IS NULL"
        " AND stack_id IN (SELECT id FROM pool_stacks)").fetchone()[0]
    end = db.execute("SELECT max(ts) FROM series").fetchone()[0]
    # One iteration from just after each of the pool's segments.
    starts = [t + 1 for t in segments]
    for i, t in enumerate(starts):
        db.execute("INSERT INTO nvtx_range (process_id, tid, domain, name, start_ns, end_ns, depth)"
                   " VALUES ((SELECT min(id) FROM process), 1, NULL, ?, ?, ?, 0)",
                   ("step %d" % i, t, starts[i + 1] - 1 if i + 1 < len(starts) else end))
    db.commit()
    truth = [db.execute(OUTSIDE_AT, (t,)).fetchone()[0] for t in starts]
    db.close()

    ok(len(segments) >= 5 and pool_bytes == 268452352,
       "cupy-healthy: the pool's %d segments sum to CuPy's total_bytes 268452352" % len(segments),
       pool_bytes)
    rows = all_rows(table(plain, "growth"))
    got = [int(r["allocated_bytes"]) for r in rows]
    ok(len(rows) == len(starts) and got == truth,
       "growth: one iteration per step, each at the allocated memory outside the pool",
       "growth %s, blocks %s" % (got, truth))
    ok([num(r["growth_bytes"]) for r in rows[1:]] == [b - a for a, b in zip(truth, truth[1:])],
       "growth: from one iteration to the next, only what was allocated outside the pool",
       [r["growth_bytes"] for r in rows])
    diagnosis = table(plain, "diagnose")
    findings = [(f["finding"], f["allocator"]) for f in diagnosis]
    ok(("growth-per-iteration", "all") not in findings
       and not any(f == "leak-at-exit" for f, _ in findings),
       "diagnose: no growth-per-iteration of allocated memory or leak from the pool taking"
       " segments", findings)
    # The pool's own reserved memory does grow at every iteration: its
    # growth is the segment taken just before each iteration, judged from
    # the third on (the median).
    sizes = [r[0] for r in sqlite3.connect(plain).execute(
        "SELECT bytes FROM block WHERE level = 1 AND allocator_id IS NULL AND alloc_ts IS NOT NULL"
        " AND stack_id IN (%s) ORDER BY alloc_seq" % POOL_STACKS)]
    judged = sorted(sizes[2:])
    pool_growth = [f for f in diagnosis if f["finding"] == "growth-per-iteration"
                   and f["allocator"] == "cupy"]
    ok(len(pool_growth) == 1 and int(pool_growth[0]["bytes"]) == judged[len(judged) // 2]
       and int(pool_growth[0]["count"]) == len(sizes) - 2
       and "CuPy's memory pool: its reserved memory" in pool_growth[0]["evidence"]
       and "free_all_blocks()" in pool_growth[0]["remedy"],
       "diagnose: the cupy pool's reserved memory grows per iteration by the median segment"
       " taken, %d B over %d iterations" % (judged[len(judged) // 2], len(sizes) - 2), pool_growth)
    pools = [r for r in table(plain, "summary") if r["allocator"] == "cupy"]
    ok(len(pools) == 1 and int(pools[0]["peak_reserved_bytes"]) == pool_bytes,
       "summary: the segments are the cupy pool's reserved memory", pools)
    own = table(plain, "growth", "--allocator", "cupy")
    ok(len(own) == len(starts) and all(r["allocated_bytes"] == "" and r["growth_bytes"] == ""
                                       for r in own),
       "growth --allocator cupy: the pool's iterations, what it handed out unknown", own)
    # The pool's reserved memory over time, its own figure: one bucket per
    # iteration (from the first step's start), rising at each.
    first = int(rows[0]["start_time_ns"])
    last_end = int(table(plain, "timeline", "--buckets", "1")[0]["to_ns"])
    buckets = table(plain, "timeline", "--allocator", "cupy", "--from", str(first),
                    "--to", str(last_end), "--buckets", "200")
    held = [int(b["last_reserved_bytes"]) for b in buckets]
    ok(max(int(b["max_reserved_bytes"]) for b in buckets) == pool_bytes
       and held == sorted(held) and held[0] < held[-1]
       and all(b["max_allocated_bytes"] == "" for b in buckets),
       "timeline --allocator cupy: the pool's reserved memory grows to CuPy's total_bytes,"
       " its allocated unknown", held[:3] + held[-3:])

# The pool's reserved memory over time tops out at the framework's own
# pool size (XLA's pool_bytes, growing without preallocation).
for name, pool in (("jax-healthy-grow", "xla"), ("jax-healthy", "xla"), ("cupy-healthy", "cupy")):
    with open(os.path.join(frameworks, name + ".json")) as f:
        stats = json.load(f)["stats"]
    truth = stats["pool_bytes"] if pool == "xla" else stats["peak_total_bytes"]
    buckets = table(os.path.join(frameworks, name + ".db"), "timeline", "--allocator", pool,
                    "--buckets", "300")
    top = max(int(b["max_reserved_bytes"]) for b in buckets if b["max_reserved_bytes"])
    ok(top == truth, "%s: timeline --allocator %s tops out at the framework's pool size %d"
       % (name, pool, truth), top)
done()
