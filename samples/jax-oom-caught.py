#!/usr/bin/env python3
"""jax-oom-caught.py — a JAX program that catches RESOURCE_EXHAUSTED and goes on.

It keeps 2 GiB buffers in a list until XLA's BFC allocator has no room for
the next one, catches the error, lets the buffers go and finishes its work
with exit status 0.  The failure happened inside XLA's pool (no CUDA call
failed) and the program survived it: a profiler must still show the failed
request, with its text and the program's line.  Its ground truth is JAX's
memory_stats() at the failure and at exit, and the error's text
(notes.caught_error).

  python3 jax-oom-caught.py
"""
import jax.numpy as jnp

import framework_truth

# After importing jax: the truth is printed before JAX tears its backend down.
framework_truth.install("jax-oom-caught", "jax")

CHUNK = 2 << 30  # bytes per kept buffer


def fill_until_refused():
    kept = []
    while True:
        try:
            kept.append(jnp.ones((CHUNK // 4,), dtype=jnp.float32))
            kept[-1].block_until_ready()
        except Exception as e:  # RESOURCE_EXHAUSTED: caught, the program goes on
            framework_truth.note("stats_at_failure", framework_truth.jax_stats())
            framework_truth.note("kept_buffers", len(kept))
            framework_truth.note("request_bytes", CHUNK)
            framework_truth.note("caught", 1)
            framework_truth.note("caught_error", "%s: %s" % (type(e).__name__,
                                                             str(e).splitlines()[0]))
            return


fill_until_refused()
# The buffers are gone: the rest of the work fits.
x = jnp.ones((1024, 1024), dtype=jnp.float32)
print("sum", float((x @ x).sum()))
# SPDX-License-Identifier: MIT
