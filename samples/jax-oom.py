#!/usr/bin/env python3
"""jax-oom.py — a JAX program that dies of RESOURCE_EXHAUSTED inside XLA's pool.

It keeps 2 GiB buffers in a list until XLA's BFC allocator has no room for
the next one.  The failure happens inside the pool that XLA took at start
(75 % of the GPU): no CUDA call fails, so only the error Python raises
tells of it.  The error is not caught: Python prints it and exits with
status 1.  Its ground truth is JAX's memory_stats() at the failure
(notes.stats_at_failure) and at exit, and the error's text.

  python3 jax-oom.py
"""
import jax.numpy as jnp

import framework_truth

# After importing jax: the truth is printed before JAX tears its backend down.
framework_truth.install("jax-oom", "jax")

CHUNK = 2 << 30  # bytes per kept buffer


def keep_growing():
    kept = []
    while True:
        try:
            kept.append(jnp.ones((CHUNK // 4,), dtype=jnp.float32))
            kept[-1].block_until_ready()
        except Exception:
            framework_truth.note("stats_at_failure", framework_truth.jax_stats())
            framework_truth.note("kept_buffers", len(kept))
            framework_truth.note("request_bytes", CHUNK)
            raise


keep_growing()
# SPDX-License-Identifier: MIT
