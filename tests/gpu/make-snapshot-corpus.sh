#!/bin/bash
# SPDX-License-Identifier: MIT
# make-snapshot-corpus.sh — records the snapshot corpus on a machine with a
# GPU and PyTorch: one snapshot per option combination the installed PyTorch
# offers (tests/import/make-snapshot-corpus.py --list), each with its own
# memory_stats() JSON, plus a log per case.
#
# Usage: bash tests/gpu/make-snapshot-corpus.sh OUTDIR
#   Runs from the root of a source tree.  Writes only under OUTDIR (caches
#   and temporary files of PyTorch included, removed at the end).  Cases run
#   a few at a time, each in a fresh interpreter under its own time limit, so
#   the whole run ends within about 150 s; a case that fails is logged and
#   the others go on.  $VRAMSCOPE, when set, imports each snapshot as a check
#   (logged, never fatal).
# Exits 77 when there is no GPU or no PyTorch, 1 when a case failed.
set -u
out=${1:?usage: make-snapshot-corpus.sh OUTDIR}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
root=$(pwd)
corpus=$root/tests/import/make-snapshot-corpus.py
log=$out/corpus.log
start=$(date +%s)
say() { echo "$*" | tee -a "$log"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no GPU: skipped"
  exit 77
fi
if ! timeout 60 python3 -c 'import torch; assert torch.cuda.is_available()' \
     >>"$log" 2>&1; then
  say "no PyTorch with CUDA: skipped"
  exit 77
fi
timeout 30 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
  2>&1 | tee -a "$log"
nvidia-smi -L 2>&1 | tee -a "$log"

# Everything PyTorch writes goes under OUTDIR, and is removed at the end.
scratch=$out/scratch
mkdir -p "$scratch"
export TMPDIR=$scratch TORCHINDUCTOR_CACHE_DIR=$scratch/inductor \
  TRITON_CACHE_DIR=$scratch/triton XDG_CACHE_HOME=$scratch/cache \
  PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
unset PYTORCH_CUDA_ALLOC_CONF

# Each case gets its own limit, cut to what is left of the whole run's
# 140 s (a case that would start with less than 10 s left is skipped).
run_case() { # name, seconds
  name=$1
  t0=$(date +%s)
  left=$((start + 140 - t0))
  limit=$(($2 < left ? $2 : left))
  if [ "$limit" -lt 10 ]; then
    echo "case $name skipped: out of time" >"$out/$name.log"
    echo "$name rc=skipped 0s"
    return
  fi
  timeout -k 5 "$limit" python3 "$corpus" "$out" "$name" >"$out/$name.log" 2>&1
  rc=$?
  echo "case $name rc=$rc $(($(date +%s) - t0))s" >>"$out/$name.log"
  echo "$name rc=$rc $(($(date +%s) - t0))s"
}

cases=$(python3 "$corpus" --list) || { say "cannot list the cases"; exit 1; }
# torch.compile is the slow one: it starts first and gets the most time.
run_case compile 125 >"$out/compile.status" &
compile_pid=$!
for c in $cases; do
  [ "$c" = compile ] && continue
  echo "$c"
done | xargs -P 7 -I{} bash -c "$(declare -f run_case); start=$start out='$out' corpus='$corpus' run_case {} 55" \
  >"$out/cases.status" 2>&1
wait "$compile_pid"
cat "$out/cases.status" "$out/compile.status" | tee -a "$log"

# A check that the branch's importer reads every snapshot (never fatal).
if [ -n "${VRAMSCOPE:-}" ] && [ -x "$VRAMSCOPE" ]; then
  mkdir -p "$scratch/db"
  for p in "$out"/*.pickle; do
    [ -e "$p" ] || continue
    n=$(basename "$p" .pickle)
    if timeout 20 "$VRAMSCOPE" import -q "$p" -o "$scratch/db/$n.db" >>"$log" 2>&1 &&
       timeout 20 "$VRAMSCOPE" report "$scratch/db/$n.db" --format csv summary \
         >"$out/$n.summary.csv" 2>>"$log"; then
      say "import $n ok"
    else
      say "import $n FAILED"
    fi
  done
fi

rm -rf "$scratch"
failed=$(grep -c -v ' rc=0 ' "$out/cases.status" "$out/compile.status" | awk -F: '{s+=$2} END {print s+0}')
say "done in $(($(date +%s) - start))s; $failed case(s) failed"
ls -l "$out" >>"$log"
[ "$failed" = 0 ]
