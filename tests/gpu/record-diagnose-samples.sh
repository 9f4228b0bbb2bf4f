#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record-diagnose-samples.sh — records the PyTorch diagnosis samples on a GPU.
#
# Usage: VRAMSCOPE=path/to/vramscope tests/gpu/record-diagnose-samples.sh OUTDIR
# Run from the root of the source tree.  For each sample of samples/ that
# reproduces one classic cause (a batch too large, outputs kept with their
# graph, validation without no_grad, fragmentation from mixed sizes — also
# with expandable segments on —, optimizer state dominating, fp32 vs bf16
# autocast, a healthy loop, the bundled evaluation leak) it writes
#   OUTDIR/NAME.db    the trace (`vramscope record --no-kernels`)
#   OUTDIR/NAME.json  the sample's own ground truth (torch.cuda.memory_stats)
#   OUTDIR/NAME.log   what the program and vramscope printed, its exit status
#   OUTDIR/NAME.summary.csv  `report summary` of the trace
#   OUTDIR/NAME.oom.txt  for a program that died of OOM, the exception text
#                     PyTorch printed ("CUDA out of memory. Tried to ..."),
#                     committed beside the trace (tests/cli/test-oom-message.py)
# and OUTDIR/stacks-all.pickle + .json: a snapshot taken with PyTorch's
# default stacks="all" (samples/torch-stacks-all.py, run without record),
# and OUTDIR/steps.log with one line per step.  Each step has its own time
# limit and a failed step does not stop the others; the whole run stays
# within 200 s (steps that would start after 170 s are skipped and say so).
# Writes only under OUTDIR.  Exits 77 without a GPU, 1 when a step failed.
set -u
out=${1:?usage: record-diagnose-samples.sh OUTDIR}
mkdir -p "$out"
VRAMSCOPE=${VRAMSCOPE:-build/cli/vramscope}
steps="$out/steps.log"
: >"$steps"
say() { echo "$*" | tee -a "$steps"; }

{
  date -u
  nvidia-smi 2>&1 | head -n 15
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)' 2>&1
  "$VRAMSCOPE" --version 2>&1
} >"$out/environment.txt"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no GPU: skipped"
  exit 77
fi
if ! python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' >/dev/null 2>&1; then
  say "no PyTorch with CUDA: skipped"
  exit 77
fi

start=$(date +%s)
failed=0
# record NAME EXPECTED_STATUS [VAR=VALUE...] -- SCRIPT ARGS...
record() {
  local name=$1 want=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local now=$(( $(date +%s) - start ))
  if [ "$now" -ge 170 ]; then
    say "SKIPPED $name: ${now}s already spent"
    failed=1
    return
  fi
  local t0=$(date +%s%N)
  env ${envs[@]+"${envs[@]}"} timeout -k 5 45 "$VRAMSCOPE" record --no-kernels -q -o "$out/$name.db" -- \
    python3 "$@" --truth "$out/$name.json" >"$out/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "exit status $rc (expected $want), ${ms} ms, env: ${envs[*]:-none}" >>"$out/$name.log"
  if [ "$rc" != "$want" ]; then
    say "FAILED $name: exit status $rc, expected $want (${ms} ms)"
    failed=1
  else
    say "ok $name (${ms} ms)"
  fi
  # The last out-of-memory message the program printed: the one that ended it
  # (not the copy in its GROUND_TRUTH line's "error").
  grep -h 'OutOfMemoryError: CUDA out of memory' "$out/$name.log" | grep -v '^GROUND_TRUTH ' | tail -n 1 |
    sed 's/^.*OutOfMemoryError: //' >"$out/$name.oom.txt"
  [ -s "$out/$name.oom.txt" ] || rm -f "$out/$name.oom.txt"
  if [ -f "$out/$name.db" ]; then
    timeout 30 "$VRAMSCOPE" report --format csv "$out/$name.db" summary \
      >"$out/$name.summary.csv" 2>>"$out/$name.log" || say "FAILED $name: report summary"
    say "  $name.db: $(stat -c %s "$out/$name.db") bytes"
  else
    say "FAILED $name: no trace written"
    failed=1
  fi
}

record batch-too-large 1 -- samples/torch-batch-too-large.py
record kept-outputs 0 -- samples/torch-kept-outputs.py
record eval-no-grad 0 -- samples/torch-eval-no-grad.py
record frag-mixed 1 -- samples/torch-frag-mixed.py
record frag-mixed-expandable 0 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- \
  samples/torch-frag-mixed.py
record optimizer-state 0 -- samples/torch-optimizer-state.py
record amp-fp32 0 -- samples/torch-amp.py --amp off
record amp-bf16 0 -- samples/torch-amp.py --amp bf16
record healthy 0 -- samples/torch-healthy.py
record eval-leak 1 -- samples/torch-eval-leak.py

# A snapshot with PyTorch's default stacks="all" (not recorded: imported).
now=$(( $(date +%s) - start ))
if [ "$now" -lt 180 ]; then
  timeout -k 5 30 python3 samples/torch-stacks-all.py "$out/stacks-all" >"$out/stacks-all.log" 2>&1
  rc=$?
  echo "exit status $rc" >>"$out/stacks-all.log"
  if [ "$rc" = 0 ] && [ -f "$out/stacks-all.pickle" ]; then
    say "ok stacks-all ($(stat -c %s "$out/stacks-all.pickle") bytes)"
  else
    say "FAILED stacks-all: exit status $rc"
    failed=1
  fi
else
  say "SKIPPED stacks-all: ${now}s already spent"
fi

say "total $(( $(date +%s) - start )) s, failed=$failed"
exit $failed
