#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-frameworks.py — a JAX or CuPy trace against the framework's own account.

Usage: check-frameworks.py TRACE GROUND_TRUTH_JSON_OR_FILE [blocks|flushed]

With `blocks`, the trace must hold the pool's own blocks (the allocator
level `record` keeps of CuPy's pool and XLA's BFC allocator); with
`flushed`, too, and XLA's profiler must have been flushed while the
program ran (xla.flushes).

The ground truth is what a sample printed (samples/jax-*.py,
samples/cupy-*.py through samples/framework_truth.py): JAX's
memory_stats(), CuPy's pool figures, the error that ended the program.
The pool's row is derived when the trace is read, so the checks read
what `vramscope report` prints ($VRAMSCOPE, default build/cli/vramscope):

  * the pool's `summary` row (xla, cupy) equals the framework's figures
    exactly: reserved = the pool's size (pool_bytes; CuPy's total_bytes
    and its high-water mark), allocated = bytes in use (peak and final),
    allocations = the framework's count; failures = the errors raised;
  * `all` does not count the pool as allocated (with the pool's own
    blocks: it counts those in use and what lies outside the pool);
  * with the pool's own blocks: those live at the peak sum to the
    framework's peak, the program's line is reached (CuPy: by every one);
    XLA's running sum never left its allocator's bytes_in_use;
  * a healthy run has no finding (no leak at exit for what the pool
    keeps, nothing outside the allocators, no failure); a failed run has
    one out-of-memory finding of the pool, for the request the error
    named, at the program's own line, with the framework's remedies;
  * iterations are not the libraries' NVTX ranges.

TAP output; exit status 1 when a check failed.  Standard library only.
"""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_gpu_check  # noqa: E402
from vs_gpu_check import tap as check  # noqa: E402


def vramscope():
    return os.environ.get("VRAMSCOPE") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "cli", "vramscope")


def report(trace, *args):
    r = subprocess.run([vramscope(), "report", trace] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        check("vramscope report %s" % " ".join(args), False, r.stderr.strip())
        return ""
    return r.stdout


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def num(v):
    return None if v in (None, "") else int(v)


def meta(trace, key):
    """meta's value of key in the trace, None if absent."""
    import sqlite3
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


# leaf stack id -> its frames ("file:function", innermost first), for the
# messages of the checks on xla_stacks().
frames_of = {}

# The labels of the blocks a flush of the profiler hid the call of
# (collector/python/vs_xla_replay.py): no Python line is known for them.
FLUSH_LABELS = ("blocks not seen (profiler flush)", "a run cut by a profiler flush",
                "a block made in a profiler flush")


def xla_stacks(trace, sample):
    """{leaf stack id: (blocks, its labels, whether it has a frame of the
    sample)} for the stacks of the xla blocks (leaf 0: those with none)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import vs_trace_db
    db = vs_trace_db.connect(trace, vramscope(), readonly=True)
    try:
        blocks = dict(db.execute(
            "SELECT coalesce(e.stack_id, 0), count(*) FROM alloc_event e"
            " JOIN allocator a ON a.id = e.allocator_id"
            " WHERE a.kind = 'xla' AND e.op = 1 GROUP BY 1").fetchall())
        rows = db.execute(
            "WITH RECURSIVE up(leaf, id) AS ("
            " SELECT DISTINCT e.stack_id, e.stack_id FROM alloc_event e"
            " JOIN allocator a ON a.id = e.allocator_id WHERE a.kind = 'xla' AND e.stack_id > 0"
            " UNION ALL SELECT up.leaf, s.parent_id FROM up JOIN stack s ON s.id = up.id"
            " WHERE s.parent_id != 0)"
            " SELECT up.leaf, f.kind, f.function, f.file FROM up"
            " JOIN stack s ON s.id = up.id JOIN frame f ON f.id = s.frame_id").fetchall()
    finally:
        db.close()
    labels, lines = {}, {}
    for leaf, kind, function, path in rows:
        frames_of.setdefault(leaf, []).append("%s:%s" % (os.path.basename(path or ""), function))
        if kind == 4 and function:
            labels.setdefault(leaf, set()).add(function)
        if path and path.endswith("samples/%s.py" % sample):
            lines[leaf] = True
    return {leaf: (n, labels.get(leaf, set()), lines.get(leaf, False))
            for leaf, n in blocks.items()}


def compiler_stacks(stacks):
    """{stack id: whether it has a frame of the sample} for the stacks of
    xla blocks taken while compiling (a label of the compiler's spans or
    of a compilation)."""
    return {leaf: line for leaf, (n, labels, line) in stacks.items()
            if any(l.startswith("compile") or l in ("Build buffer allocations",
                                                     "create redzone buffers")
                   for l in labels)}


def equal(name, got, want):
    check("%s = %s" % (name, want), got == want, "trace %s" % got)


def main():
    trace, truth = sys.argv[1], sys.argv[2]
    t = json.load(open(truth)) if os.path.isfile(truth) else json.loads(truth)
    fw = t["framework"]
    st = t["stats"]
    notes = t.get("notes", {})
    summary = rows(report(trace, "--format", "csv", "summary"))
    name = "xla" if fw == "jax" else "cupy"
    pool = [r for r in summary if r["allocator"] == name]
    check("one %s row" % name, len(pool) == 1, "%d" % len(pool))
    if len(pool) != 1:
        return
    p = pool[0]
    everything = [r for r in summary if r["allocator"] == "all" and r["device"] == p["device"]][0]
    # An error the program died of, or one it caught and survived.
    failures = 1 if t.get("error") else int(notes.get("caught", 0))
    # Flushed (XLA): events lost between two chunks that could not be
    # found again stand as blocks of their own (xla.unseen_blocks), so the
    # figures stay the pool's own.
    flushed = len(sys.argv) > 3 and sys.argv[3] == "flushed"
    if fw == "jax":
        equal("xla peak_reserved_bytes (pool_bytes)", num(p["peak_reserved_bytes"]), st["pool_bytes"])
        equal("xla peak_allocated_bytes (peak_bytes_in_use)", num(p["peak_allocated_bytes"]),
              st["peak_bytes_in_use"])
        equal("xla final_allocated_bytes (bytes_in_use)", num(p["final_allocated_bytes"]),
              st["bytes_in_use"])
        if flushed:
            # Blocks made and freed between a stop and a start of the
            # profiler are not seen: a few a flush at most.  The stand-ins
            # for blocks not found again are blocks of the trace too.
            flushes = int(meta(trace, "xla.flushes") or 0)
            unseen = int(meta(trace, "xla.unseen_blocks") or 0)
            check("xla alloc_count less its stand-ins (num_allocs, less at most 8 a flush)",
                  st["num_allocs"] - 8 * flushes <= num(p["alloc_count"]) - unseen
                  <= st["num_allocs"],
                  "trace %s, %d stand-ins, num_allocs %d, %d flushes"
                  % (p["alloc_count"], unseen, st["num_allocs"], flushes))
        else:
            equal("xla alloc_count (num_allocs)", num(p["alloc_count"]), st["num_allocs"])
        pool_size = st["pool_bytes"]
    else:
        equal("cupy peak_reserved_bytes (total_bytes' peak)", num(p["peak_reserved_bytes"]),
              st["peak_total_bytes"])
        equal("cupy final_reserved_bytes (total_bytes)", num(p["final_reserved_bytes"]),
              st["total_bytes"])
        equal("cupy peak_allocated_bytes (used_bytes' peak)", num(p["peak_allocated_bytes"]),
              st["peak_used_bytes"])
        equal("cupy final_allocated_bytes (used_bytes)", num(p["final_allocated_bytes"]),
              st["used_bytes"])
        pool_size = st["peak_total_bytes"]
    equal("%s failed_alloc_count" % name, num(p["failed_alloc_count"]), failures)
    blocks = meta(trace, "%s.allocator_level" % name) == "events"
    if len(sys.argv) > 3 and sys.argv[3] in ("blocks", "flushed"):
        check("the allocator level was recorded (%s.allocator_level)" % name, blocks,
              str(meta(trace, "%s.allocator_level" % name)))
    if flushed:
        check("the profiler was flushed while the program ran (xla.flushes)",
              int(meta(trace, "xla.flushes") or 0) > 1, str(meta(trace, "xla.flushes")))
    if blocks:
        # With the pool's own blocks, `all` counts the bytes they hold in
        # use (never its cached segments) and what lies outside the pool.
        outside = num(everything["peak_reserved_bytes"]) - num(p["peak_reserved_bytes"])
        check("all counts the pool's blocks in use, not its cached segments",
              num(p["peak_allocated_bytes"]) <= num(everything["peak_allocated_bytes"])
              <= num(p["peak_allocated_bytes"]) + outside,
              "all peak allocated %s, pool in use %s, outside the pool %d"
              % (everything["peak_allocated_bytes"], p["peak_allocated_bytes"], outside))
    else:
        check("all does not count the pool as allocated",
              num(everything["peak_allocated_bytes"]) < pool_size,
              "all peak allocated %s, pool %d" % (everything["peak_allocated_bytes"], pool_size))

    if blocks and fw == "cupy":
        # The allocator level: every block with the Python stack that
        # asked for it, so the bytes live at the peak sum to the pool's
        # own peak and the largest of them is the program's line.
        live = rows(report(trace, "--format", "csv", "--allocator", "cupy", "peak"))
        equal("cupy blocks live at the peak sum to used_bytes' peak",
              sum(int(r["bytes"]) for r in live), st["peak_used_bytes"])
        check("each block has a stack reaching the program",
              live != [] and all(r["site"].startswith("samples/%s.py" % t["sample"])
                                 for r in live), ",".join(r["site"] for r in live))
        equal("the pool's segments never failed to match total_bytes()",
              meta(trace, "cupy.segment_mismatch"), "0")
    if blocks and fw == "jax":
        # XLA's blocks from its allocator's own events: the bytes live at
        # the peak sum to peak_bytes_in_use, the running sum never left the
        # allocator's bytes_in_use, and the buffers the program holds at
        # the peak (its parameters, the step's outputs) reach its line.
        live = rows(report(trace, "--format", "csv", "--allocator", "xla", "peak"))
        equal("xla blocks live at the peak sum to peak_bytes_in_use",
              sum(int(r["bytes"]) for r in live), st["peak_bytes_in_use"])
        if flushed:
            # Flushed: where the events lost between a stop and a start
            # could not all be put back, the stand-ins are counted, never
            # hidden (record says so on its terminal when there are any).
            check("the events whose running sum was put right are counted, with the stand-ins",
                  meta(trace, "xla.event_mismatch") is not None
                  and meta(trace, "xla.unseen_blocks") is not None,
                  "%s of %s events, %s stand-ins" % (meta(trace, "xla.event_mismatch"),
                                                     meta(trace, "xla.event_count"),
                                                     meta(trace, "xla.unseen_blocks")))
        else:
            equal("the blocks' running sum always equals the allocator's bytes_in_use",
                  meta(trace, "xla.event_mismatch"), "0")
        mine = [r for r in live if r["site"].startswith("samples/%s.py" % t["sample"])]
        check("blocks live at the peak reach the program's line",
              mine != [], ",".join(r["site"] for r in live))
        # The blocks XLA's compiler took (autotuning, its buffer
        # assignment) have the program's call that compiled.
        # (Traces of a hook that follows compilations: it writes
        # xla.flushes.)
        stacks = xla_stacks(trace, t["sample"])
        if meta(trace, "xla.flushes") is not None:
            compiled = compiler_stacks(stacks)
            check("blocks the compiler took reach the program's line",
                  all(compiled.values()) and (compiled or "oom" in t["sample"]),
                  "%d stacks, without the line: %s" % (
                      len(compiled), [(k, frames_of.get(k)) for k, v in compiled.items()
                                       if not v][:5]))
        if meta(trace, "xla.unsampled_runs") is not None:
            # Every block: a run none of whose arrays was sampled has its
            # compilation's call, a block outside every run that of its
            # thread's next run; only those a flush hid say so instead.
            # (Traces of a hook that does so: it writes
            # xla.unsampled_runs.)
            hidden = sum(n for n, labels, line in stacks.values() if labels & set(FLUSH_LABELS))
            without = [(k, n, frames_of.get(k, [])[:3]) for k, (n, labels, line) in stacks.items()
                       if not line and not labels & set(FLUSH_LABELS)]
            check("every block reaches the program's line, but those a flush hid",
                  without == [] and (flushed or hidden == 0),
                  "%d of %d blocks without it: %s; %d hidden by a flush" % (
                      sum(n for k, n, f in without), sum(n for n, l, x in stacks.values()),
                      without[:5], hidden))
    findings = rows(report(trace, "--format", "csv", "diagnose"))
    kinds = [f["finding"] for f in findings]
    check("no leak-at-exit", "leak-at-exit" not in kinds, ",".join(kinds))
    check("no outside-allocator", "outside-allocator" not in kinds, ",".join(kinds))
    text = report(trace, "diagnose")
    if failures and not t.get("error"):
        # Caught and survived: the failure is in the trace with its text.
        equal("the error's text is kept", meta(trace, "program.last_oom"), notes["caught_error"])
    if not failures:
        check("a healthy run has no finding", findings == [], ",".join(kinds))
        check("it says no problem was found", "No problem found" in text)
    else:
        ooms = [f for f in findings if f["finding"].startswith("oom-")]
        check("one out-of-memory finding", len(ooms) == 1, ",".join(kinds))
        check("never 'No problem found' after an OOM", "No problem found" not in text)
        if ooms:
            o = ooms[0]
            equal("its allocator", o["allocator"], name)
            equal("its bytes (the request)", num(o["bytes"]), notes["request_bytes"])
            check("its site is the program's line", o["site"].startswith("samples/%s" % t["sample"]),
                  o["site"])
            want = ["XLA_PYTHON_CLIENT_MEM_FRACTION", "jax.checkpoint", "donate"] if fw == "jax" \
                else ["set_limit", "free_all_blocks", "MemoryAsyncPool"]
            for w in want:
                check("its remedy names %s" % w, w in o["remedy"], o["remedy"])
            if "limit_bytes" in notes or fw == "jax":
                equal("the cause", o["finding"], "oom-allocator-limit")
    check("iterations are not a library's ranges",
          "XlaModule" not in text and "cub::" not in text)


main()
vs_gpu_check.plan()
sys.exit(vs_gpu_check.status())
