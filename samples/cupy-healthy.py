#!/usr/bin/env python3
"""cupy-healthy.py — a CuPy loop that runs within its memory.

Each step makes a few arrays, multiplies them and drops them: CuPy's
memory pool keeps the freed blocks cached for the next step, so the pool
(`total_bytes()`) stays far above what is in use (`used_bytes()`) and
holds all of it at exit — memory the pool keeps, not a leak.  Its ground
truth is the pool's own figures, at exit and their high-water marks
(framework_truth.py).

  python3 cupy-healthy.py [--steps N]
"""
import argparse
import time

import framework_truth

peak = {"used": 0, "total": 0}
framework_truth.install("cupy-healthy", "cupy", lambda: framework_truth.cupy_stats(peak))

import cupy  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--size", type=int, default=4096)
args = parser.parse_args()

pool = cupy.get_default_memory_pool()
with framework_truth.cupy_peak_hook(peak):
    weights = cupy.random.standard_normal((args.size, args.size), dtype=cupy.float32)
    t0 = None
    for i in range(args.steps):
        if i == 1:  # after the first step, which loads the kernels
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter_ns()
        x = cupy.random.standard_normal((args.size, args.size), dtype=cupy.float32)
        h = cupy.maximum(x @ weights, 0)
        y = (h @ weights).sum(axis=1)
        del x, h, y
    cupy.cuda.Device().synchronize()
if t0 is not None:
    # For bench/framework-bench.sh: the steps' time, not part of the truth.
    print("STEPS_NS %d %d" % (args.steps - 1, time.perf_counter_ns() - t0), flush=True)
framework_truth.note("steps", args.steps)
# SPDX-License-Identifier: MIT
