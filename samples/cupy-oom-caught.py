#!/usr/bin/env python3
"""cupy-oom-caught.py — a CuPy program that catches OutOfMemoryError and goes on.

With its memory pool limited to 1 GiB (set_limit), it keeps 256 MiB arrays
until the pool refuses the next one, catches the error, lets the arrays
go and finishes its work with exit status 0.  The pool refused the
request itself (no CUDA call failed) and the program survived it: a
profiler must still show the failed request, with its text and the
program's line.  Its ground truth is the pool's own figures and their
high-water marks (framework_truth.py), and the error's text
(notes.caught_error).

  python3 cupy-oom-caught.py
"""
import framework_truth

peak = {"used": 0, "total": 0}
framework_truth.install("cupy-oom-caught", "cupy", lambda: framework_truth.cupy_stats(peak))

import cupy  # noqa: E402

LIMIT = 1 << 30
CHUNK = 256 << 20

pool = cupy.get_default_memory_pool()
pool.set_limit(size=LIMIT)


def fill_until_refused():
    kept = []
    while True:
        try:
            kept.append(cupy.ones((CHUNK // 4,), dtype=cupy.float32))
        except cupy.cuda.memory.OutOfMemoryError as e:  # caught: the program goes on
            framework_truth.note("kept_buffers", len(kept))
            framework_truth.note("request_bytes", CHUNK)
            framework_truth.note("limit_bytes", LIMIT)
            framework_truth.note("caught", 1)
            framework_truth.note("caught_error", "%s: %s" % (type(e).__name__,
                                                             str(e).splitlines()[0]))
            return


with framework_truth.cupy_peak_hook(peak):
    fill_until_refused()
    # The arrays are gone (back in the pool's cache): the rest fits.
    x = cupy.ones((1024, 1024), dtype=cupy.float32)
    print("sum", float((x @ x).sum()))
# SPDX-License-Identifier: MIT
