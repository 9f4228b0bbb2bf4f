#!/bin/bash
# SPDX-License-Identifier: MIT
# record-bench.sh — the whole-run cost of recording on a GPU machine:
# bench/record-run-bench.sh (ResNet-18, batch 32, 800 steps: plain,
# PyTorch's own history, record --no-kernels, record; median of 2, each
# recorded run with --timings; and the collector alone, --torch=off, with
# and without kernels, and record with PyTorch's history as well) within
# 520 s, keeping one 100-step trace
# with kernels (OUTDIR/resnet18-keep.db).  A run predicted to end past the
# budget is not started; OUTDIR/table.md says how many runs each median
# has.  The hook's stream library is built into OUTDIR/cache, removed
# at the end.
#
# Usage: bash tests/gpu/record-bench.sh OUTDIR
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope)
#   VRAMSCOPE_CACHE_DIR  a cache holding the stream library built already
#   BUDGET, BENCH_TIMEOUT  seconds for the runs (480), for it all (530)
set -u
out=${1:?usage: record-bench.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
export STEPS=${STEPS:-800} BATCH=${BATCH:-32} REPS=${REPS:-2} STEPS_KEEP=${STEPS_KEEP:-100}
export BUDGET=${BUDGET:-480} RUN_TIMEOUT=${RUN_TIMEOUT:-150} PROBES=${PROBES:-1}
# The hook's allocator-stream library is built once (the first recorded
# run, the kept one) into a cache here, not in the home folder (unless a
# cache is given: one built already).
own_cache=0
if [ -z "${VRAMSCOPE_CACHE_DIR:-}" ]; then
  export VRAMSCOPE_CACHE_DIR="$out/cache"
  own_cache=1
fi
timeout "${BENCH_TIMEOUT:-530}" bash "$root/bench/record-run-bench.sh" "$out" >"$out/record-bench.out" 2>&1
rc=$?
[ $own_cache = 1 ] && rm -rf "$out/cache"
cat "$out/record-bench.out"
echo "record-run-bench.sh exit $rc" | tee -a "$out/record-bench.out"
exit $rc
