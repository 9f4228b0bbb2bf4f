#!/bin/sh
# SPDX-License-Identifier: MIT
# run-framework-tests.sh — JAX/XLA's and CuPy's allocators on a real GPU:
# each sample (samples/jax-*.py, samples/cupy-*.py) recorded with
# `vramscope record`, its ground truth (the framework's own statistics,
# framework_truth.py) saved beside the trace, and the trace checked
# against it by check-frameworks.py: allocator rows, the failure inside
# the pool, no false finding on the healthy runs.
#
# Usage: tests/gpu/run-framework-tests.sh [OUTDIR]
#   VRAMSCOPE  command that records (default: build/cli/vramscope)
# Exits 77 (skipped) without a GPU or without JAX and CuPy, 1 when a check
# failed.
. "$(dirname "$0")/lib.sh"
ran=0
failed=0
run() { # name, expected exit status, sample[, blocks: the pool's own blocks must be there;
  # flushed: and the profiler was flushed while it ran]; ARGS: the sample's arguments
  blocks=${4:-any}
  ran=1
  # shellcheck disable=SC2086
  vs_record_truth "$1" "$2" python3 "$root/samples/$3" ${ARGS:-} || return
  "$VRAMSCOPE" report "$out/$name.db" --format csv summary
  "$VRAMSCOPE" report "$out/$name.db"
  python3 "$here/check-frameworks.py" "$out/$name.db" "$out/$name.json" "$blocks" || failed=1
}
if python3 -c 'import jax; assert any(d.platform == "gpu" for d in jax.devices())' 2>/dev/null; then
  # XLA's BFC allocator's own blocks are recorded (vs_xla_events.py), and
  # checked exactly against memory_stats().
  run jax-healthy 0 jax-healthy.py blocks
  run jax-oom 1 jax-oom.py blocks
  run jax-oom-caught 0 jax-oom-caught.py blocks
  # Without preallocation XLA's pool grows in chunks as the program needs.
  XLA_PYTHON_CLIENT_PREALLOCATE=false run jax-healthy-grow 0 jax-healthy.py blocks
  # The profiler flushed while the program runs (compilations and steps
  # cut into chunks): the events lost between chunks are put back, so the
  # figures are still the allocator's own.
  VRAMSCOPE_XLA_FLUSH_S=1 ARGS="--steps 3000" run jax-healthy-flushed 0 jax-healthy.py flushed
  VRAMSCOPE_XLA_FLUSH_S=0.2 run jax-oom-flushed 1 jax-oom.py flushed
  VRAMSCOPE_XLA_FLUSH_S=0.5 XLA_PYTHON_CLIENT_PREALLOCATE=false ARGS="--steps 1000" \
    run jax-healthy-grow-flushed 0 jax-healthy.py flushed
  # Without the allocator level: the pool's figures at exit only.
  VRAMSCOPE_XLA_EVENTS=0 run jax-healthy-figures 0 jax-healthy.py
fi
if python3 -c 'import cupy; cupy.zeros(1)' 2>/dev/null; then
  run cupy-healthy 0 cupy-healthy.py blocks
  run cupy-oom 1 cupy-oom.py blocks
  run cupy-oom-caught 0 cupy-oom-caught.py
fi
if [ $ran = 0 ]; then
  echo "neither JAX with a GPU nor CuPy: skipped"
  exit 77
fi
exit $failed
