#!/bin/bash
# SPDX-License-Identifier: MIT
# stream-stacks.sh — the allocator stream's own Python stacks on a GPU
# machine: builds the hook's stream library (its build log kept), checks
# its stacks against PyTorch's history event by event
# (tests/gpu/stream-stacks-check.py under `vramscope record` with
# VRAMSCOPE_TORCH_HISTORY=1), runs the same program with the history off
# (the default) and checks the trace record made of its stream and
# stacks (tests/gpu/check-stream-trace.py), reports on both traces; then
# the allocator tests against memory_stats() (tests/gpu/run-alloc-tests.sh),
# the endings matrix (tests/gpu/run-endings.sh) and the whole-run table
# (tests/gpu/record-bench.sh: ResNet-18, batch 32, 800 steps; BENCH=0
# skips it), each within what is left of the budget.
#
# Usage: bash tests/gpu/stream-stacks.sh OUTDIR
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope)
#   BUDGET     seconds for the whole script (default 570)
# Writes OUTDIR/summary.txt (each step's status and seconds), a log per
# step, OUTDIR/env.txt, the check's JSON and files (check-history.*:
# stream, stacks and snapshot of one process, fixtures for the tests
# without a GPU; check-default.*), alloc/, endings/ and bench/.
set -u
out=${1:?usage: stream-stacks.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
export VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
BUDGET=${BUDGET:-570}
t0=$(date +%s)
export VRAMSCOPE_CACHE_DIR="$out/cache"
summary="$out/summary.txt"
: >"$summary"

left() { echo $((BUDGET - ($(date +%s) - t0))); }

# step NAME LIMIT COMMAND...: runs it with its output in OUTDIR/NAME.log,
# within LIMIT seconds and what is left of the budget.
step() {
  local name=$1 limit=$2
  shift 2
  local l
  l=$(left)
  [ "$l" -lt "$limit" ] && limit=$l
  if [ "$limit" -le 5 ]; then
    echo "$name skipped (budget)" | tee -a "$summary"
    return 1
  fi
  local s e rc
  s=$(date +%s.%N)
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  e=$(date +%s.%N)
  awk -v n="$name" -v rc="$rc" -v s="$s" -v e="$e" 'BEGIN { printf "%s rc=%d wall_s=%.2f\n", n, rc, e - s }' | tee -a "$summary"
  tail -n 15 "$out/$name.log"
  return $rc
}

{
  date -u
  nvidia-smi -L
  python3 -c 'import sys, sysconfig, os, torch
inc = sysconfig.get_paths()["include"]
print("python", sys.version.replace("\n", " "))
print("python include", inc, "Python.h", os.path.isfile(os.path.join(inc, "Python.h")))
print("torch", torch.__version__, torch.version.cuda)'
  ${CXX:-g++} --version | head -n 1
  "$VRAMSCOPE" --version
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

# 1. Both on: the stacks compared with PyTorch's own (builds the library).
VRAMSCOPE_TORCH_HISTORY=1 step check-history 150 \
  "$VRAMSCOPE" record -o "$out/check-history.db" -- \
  python3 "$root/tests/gpu/stream-stacks-check.py" "$out/check-history"
cp "$out"/cache/*.log "$out/" 2>/dev/null
ls -la "$out/cache" >"$out/cache-listing.txt" 2>&1
step report-history 20 "$VRAMSCOPE" report "$out/check-history.db" peak

# 2. The default: the stream's stacks, no history.
step check-default 60 "$VRAMSCOPE" record -o "$out/check-default.db" -- \
  python3 "$root/tests/gpu/stream-stacks-check.py" "$out/check-default"
# The trace record made from the stream and its stacks, against them.
step trace-default 30 python3 "$root/tests/gpu/check-stream-trace.py" "$out/check-default.db" \
  "$out/check-default.stream" "$out/check-default.stacks"
step report-default 20 "$VRAMSCOPE" report "$out/check-default.db" peak
step report-default-leaks 20 "$VRAMSCOPE" report "$out/check-default.db" leaks

# 3. The allocator level against memory_stats(), exactly, then every way
# a run ends (the stacks file must survive them too), in what time is
# left.
step alloc-tests 90 bash "$root/tests/gpu/run-alloc-tests.sh" "$out/alloc"
grep -E "^(not ok|FAILED)" "$out/alloc-tests.log" | tee -a "$summary"
ENDINGS_BENCH=0 step endings 150 bash "$root/tests/gpu/run-endings.sh" "$out/endings"
cat "$out/endings/summary.txt" 2>/dev/null | tee -a "$summary"

# 4. The whole-run table (ResNet-18, batch 32, 800 steps, medians of 2,
# with the probes) in what time is left; BENCH=0 skips it.
if [ "${BENCH:-1}" = 1 ]; then
  step record-bench "$(left)" env BUDGET=$(($(left) - 45)) BENCH_TIMEOUT=$(($(left) - 10)) \
    bash "$root/tests/gpu/record-bench.sh" "$out/bench"
  cat "$out/bench/table.md" 2>/dev/null | tee -a "$summary"
fi

# Traces stay small; the library's cache goes.
find "$out" -name '*.db' -size +8M -delete
rm -rf "$out/cache" "$out/endings/cache"
find "$out/alloc" "$out/endings" -maxdepth 1 -type f -name '*sample*' ! -name '*.*' -delete 2>/dev/null
echo "total $(($(date +%s) - t0)) s" | tee -a "$summary"
