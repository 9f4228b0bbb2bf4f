#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-framework-pool-growth.py VRAMSCOPE MAKE_FIXTURE DATA_DIR — a
framework's pool whose reserved memory grows every iteration while what
it hands out does not is a `growth-per-iteration` of the pool's
allocator (`xla`, `cupy`), with the growth per iteration in bytes, the
iterations judged and its framework's remedies; a pool that grows only
while the program starts, and every healthy run, get no finding:

  * the pool loops of make-fixture (10 steps, a 64 MiB segment before
    them, one segment of 32 or 48 MiB per step): the growth is the
    segment, exactly, over the 8 iterations judged (from the third);
    with the allocator level `record` keeps, the pool's allocated memory
    is known: flat, the finding says so; kept (the blocks live on), it is
    the program's growth of allocated memory (`all`), not the pool's;
  * the JAX run without preallocation (tests/data/frameworks/
    jax-healthy-grow, XLA's pool growing from 2 MiB to 1 GiB while the
    program starts) with its 20 loop steps marked (NVTX ranges "step N" at
    each step's first launch, the key's split): no finding, the pool's
    reserved memory (its segments, summed here with SQL) the same at
    every step judged; the same run with a step marked after each of the
    pool's segments: the pool grows at every step, by the median segment;
  * every healthy run recorded on the GPU: no finding.

TAP output.
"""
import csv
import glob
import io
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_trace_db import stacks_under  # noqa: E402

vramscope, make_fixture, data = sys.argv[1], sys.argv[2], sys.argv[3]
frameworks = os.path.join(data, "frameworks")
MiB = 1 << 20


def run(*args):
    p = subprocess.run([vramscope, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("vramscope %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def table(trace, report, *extra):
    return list(csv.DictReader(io.StringIO(run("report", trace, "--format", "csv", report,
                                               *extra))))


def findings(trace):
    return table(trace, "diagnose")


# ------------------------------------------------------------- fixtures

def fixture(tmp, name):
    path = os.path.join(tmp, name + ".db")
    subprocess.run([make_fixture, name, path], check=True)
    return path


with tempfile.TemporaryDirectory() as tmp:
    for name, pool, grow, words in (
            ("pool-grow-cupy", "cupy", 32 * MiB,
             ("free_all_blocks()", "set_limit", "CUPY_GPU_MEMORY_LIMIT", "MemoryAsyncPool")),
            ("pool-grow-xla", "xla", 48 * MiB,
             ("XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE",
              "XLA_PYTHON_CLIENT_ALLOCATOR=platform"))):
        f = findings(fixture(tmp, name))
        first, last = 64 * MiB + grow, 64 * MiB + 9 * grow
        ok(len(f) == 1 and f[0]["finding"] == "growth-per-iteration" and f[0]["allocator"] == pool
           and int(f[0]["bytes"]) == grow and int(f[0]["count"]) == 8
           and int(f[0]["time_ns"]) == 2010 and f[0]["site"] == "/home/user/proj/train.py:20 step",
           "%s: one growth-per-iteration of the %s pool, %d B per iteration over 8, from step 1"
           % (name, pool, grow), f)
        if not f:
            continue
        ok("its reserved memory at the start of each iteration" in f[0]["evidence"]
           and "from %.2f MiB to %.2f MiB in 8 segments" % (first / MiB, last / MiB)
           in f[0]["evidence"]
           and "unknown over time" in f[0]["evidence"],
           "%s: the evidence gives the pool's reserved memory at the first and last step judged,"
           " the segments, and that its allocated memory is unknown" % name, f[0]["evidence"])
        ok(all(w in f[0]["remedy"] for w in words),
           "%s: the remedies are the framework's own (%s)" % (name, ", ".join(words)),
           f[0]["remedy"])

    f = findings(fixture(tmp, "pool-flat-xla"))
    ok(f == [], "pool-flat-xla: a pool that does not grow, no finding", f)

    f = findings(fixture(tmp, "pool-grow-cupy-level"))
    ok(len(f) == 1 and f[0]["allocator"] == "cupy" and int(f[0]["bytes"]) == 32 * MiB
       and int(f[0]["count"]) == 8
       and "what it handed out did not grow (0 B, then 0 B)" in f[0]["evidence"],
       "pool-grow-cupy-level: with the allocator level, the pool's flat allocated memory is"
       " the evidence", f)

    f = findings(fixture(tmp, "pool-kept-cupy-level"))
    ok([(x["finding"], x["allocator"], x["bytes"]) for x in f]
       == [("growth-per-iteration", "all", str(32 * MiB))],
       "pool-kept-cupy-level: blocks kept make the program's growth of allocated memory, not the"
       " pool's", f)


# ------------------------------------------------- XLA's pool, recorded

POOL_STACKS = stacks_under("%BFCAllocator%")


def with_steps(tmp, name, starts_sql):
    """A plain copy of the trace with a range "step N" from each start
    starts_sql selects (absolute ns) to the next; returns (path, starts,
    the pool's segments as (alloc_ts, free_ts, bytes): device memory
    allocated under the BFC allocator — its pinned host memory, kind 2,
    is another pool)."""
    path = os.path.join(tmp, name + "-steps.db")
    run("export", os.path.join(frameworks, "jax-healthy-grow.db"), "--format", "sqlite",
        "-o", path)
    db = sqlite3.connect(path)
    db.execute("CREATE TEMP TABLE pool_stacks AS " + POOL_STACKS)
    segments = db.execute(
        "SELECT alloc_ts, free_ts, bytes FROM block WHERE level = 1 AND allocator_id IS NULL"
        " AND kind IN (1, 6) AND stack_id IN (SELECT id FROM pool_stacks) ORDER BY alloc_seq").fetchall()
    starts = [r[0] for r in db.execute(starts_sql)]
    end = db.execute("SELECT max(ts) FROM series").fetchone()[0]
    for i, t in enumerate(starts):
        db.execute("INSERT INTO nvtx_range (process_id, tid, domain, name, start_ns, end_ns, depth)"
                   " VALUES ((SELECT min(id) FROM process), 1, NULL, ?, ?, ?, 0)",
                   ("step %d" % i, t, starts[i + 1] - 1 if i + 1 < len(starts) else end))
    db.commit()
    db.close()
    return path, starts, segments


def held_at(segments, t):
    """The pool's segments live at t (the state at t: changes at t
    included)."""
    return sum(b for a, f, b in segments if a <= t and (f is None or f > t))


with tempfile.TemporaryDirectory() as tmp:
    # The program's loop: each step begins by splitting the key, XLA's
    # module jit__threefry_split of that program (the one launched 20
    # times).
    trace, starts, segments = with_steps(
        tmp, "loop",
        "SELECT start_ns FROM nvtx_range WHERE name IN (SELECT name FROM nvtx_range"
        " WHERE name LIKE 'XlaModule:#hlo_module=jit__threefry_split,%'"
        " GROUP BY name HAVING count(*) = 20) ORDER BY start_ns")
    held = [held_at(segments, t) for t in starts]
    iterations = table(trace, "growth", "--allocator", "xla")
    ok(len(starts) == 20 and len(iterations) == 20,
       "jax-healthy-grow: its 20 loop steps are the iterations", (len(starts), len(iterations)))
    ok(held[0] < held[1] and len(set(held[1:])) == 1 and held[1] == 1075838976,
       "jax-healthy-grow: the pool grows while the program starts (%d B at the first step), then"
       " holds XLA's pool_bytes 1075838976 at every later step" % held[0], held)
    f = findings(trace)
    ok(f == [], "jax-healthy-grow with its loop's steps: no finding", f)

    # One step after each of the pool's segments: it grows at every step.
    trace, starts, segments = with_steps(
        tmp, "segments", "SELECT alloc_ts + 1 FROM block WHERE level = 1 AND allocator_id IS NULL"
        " AND kind IN (1, 6) AND alloc_ts IS NOT NULL AND stack_id IN (SELECT id FROM pool_stacks) ORDER BY alloc_seq")
    held = [held_at(segments, t) for t in starts]
    growth = sorted(b - a for a, b in zip(held[1:], held[2:]))
    f = findings(trace)
    ok(len(starts) == len(segments) and len(f) == 1 and f[0]["allocator"] == "xla"
       and f[0]["finding"] == "growth-per-iteration"
       and int(f[0]["bytes"]) == growth[len(growth) // 2] and int(f[0]["count"]) == len(held) - 2,
       "jax-healthy-grow with a step after each segment: the xla pool grows by the median"
       " segment, %d B, over %d steps" % (growth[len(growth) // 2], len(held) - 2), f)


# -------------------------------------------------------- healthy runs

for trace in sorted(glob.glob(os.path.join(frameworks, "*-healthy*.db"))):
    f = findings(trace)
    ok(f == [], "%s: no finding" % os.path.basename(trace), f)
done()
