#!/usr/bin/env python3
"""jax-healthy.py — a small JAX training loop that runs within its memory.

XLA's BFC allocator takes its pool (75 % of the GPU by default) at the
first allocation; the loop's live buffers — parameters, a batch, the
gradients and the activations of one step — are a small part of it, and
the same every step.  The program ends with every buffer it made still
referenced by nothing but the pool: nothing leaks.  Its ground truth is
JAX's own memory_stats() (framework_truth.py).

  python3 jax-healthy.py [--steps N]
"""
import argparse
import time

import jax
import jax.numpy as jnp

import framework_truth

# After importing jax: the truth is printed before JAX tears its backend down.
framework_truth.install("jax-healthy", "jax")

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--batch", type=int, default=4096)
args = parser.parse_args()

WIDTH = 4096


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"w1": jax.random.normal(k1, (WIDTH, WIDTH)) * 0.01,
            "w2": jax.random.normal(k2, (WIDTH, WIDTH)) * 0.01,
            "w3": jax.random.normal(k3, (WIDTH, 16)) * 0.01}


def loss(params, x, y):
    h = jax.nn.relu(x @ params["w1"])
    h = jax.nn.relu(h @ params["w2"])
    return jnp.mean((h @ params["w3"] - y) ** 2)


@jax.jit
def step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


params = init(jax.random.PRNGKey(0))
key = jax.random.PRNGKey(1)
t0 = None
for i in range(args.steps):
    if i == 1:  # after the first step, which compiles
        jax.block_until_ready(params)
        t0 = time.perf_counter_ns()
    key, kx = jax.random.split(key)
    x = jax.random.normal(kx, (args.batch, WIDTH))
    y = jnp.zeros((args.batch, 16))
    params = step(params, x, y)
jax.block_until_ready(params)
if t0 is not None:
    # For bench/framework-bench.sh: the steps' time, not part of the truth.
    print("STEPS_NS %d %d" % (args.steps - 1, time.perf_counter_ns() - t0), flush=True)
framework_truth.note("steps", args.steps)
# SPDX-License-Identifier: MIT
