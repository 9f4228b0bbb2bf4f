#!/usr/bin/env python3
"""cupy-oom.py — a CuPy program that dies of OutOfMemoryError at its pool's limit.

The pool is limited to 1 GiB (`set_limit`, as CUPY_GPU_MEMORY_LIMIT
would), and the program keeps 256 MiB arrays in a list until the pool
refuses the next one: the failure happens inside the pool, and no CUDA
call fails.  The error is not caught: Python prints it and exits with
status 1.  Its ground truth is the pool's figures at the failure and the
error's text (framework_truth.py).

  python3 cupy-oom.py
"""
import framework_truth

peak = {"used": 0, "total": 0}
framework_truth.install("cupy-oom", "cupy", lambda: framework_truth.cupy_stats(peak))

import cupy  # noqa: E402

LIMIT = 1 << 30
CHUNK = 256 << 20

pool = cupy.get_default_memory_pool()
pool.set_limit(size=LIMIT)


def keep_growing():
    kept = []
    while True:
        try:
            kept.append(cupy.ones((CHUNK // 4,), dtype=cupy.float32))
        except cupy.cuda.memory.OutOfMemoryError:
            framework_truth.note("kept_buffers", len(kept))
            framework_truth.note("request_bytes", CHUNK)
            framework_truth.note("limit_bytes", LIMIT)
            raise


with framework_truth.cupy_peak_hook(peak):
    keep_growing()
# SPDX-License-Identifier: MIT
