#!/bin/sh
# SPDX-License-Identifier: MIT
# run-endings.sh — every way a run ends, on a real GPU: a small PyTorch
# training loop (endings-train.py) and a CUDA C program (endings-sample.cu),
# recorded with `vramscope record`, each ended after it printed its ground
# truth and READY in one of these ways:
#
#   the program returns · raises (PyTorch) · hits an uncaught OOM (PyTorch)
#   SIGKILL to itself (the OOM killer) · SIGKILL to it from outside
#   SIGTERM to itself · SIGTERM to record · SIGHUP to record
#   abort() · a segmentation fault · os._exit(3) / _exit(3)
#   SIGKILL to record itself, then to the program (a job killed whole):
#   the spool is then turned into a trace by `vramscope recover`
#
# Each trace is checked by check-endings.py: it opens, the device level
# and (PyTorch) the allocator level are there, and their counts equal what
# the program printed at READY (it waits 1.2 s after READY, past the loss
# bound of a SIGKILL, so nothing before READY may be missing).  Then the
# stream's cost on a training step (bench/torch-stream-bench.sh;
# ENDINGS_BENCH=0 skips it).
#
# Usage: tests/gpu/run-endings.sh [OUTDIR]
#   VRAMSCOPE  command that records (default: build/cli/vramscope)
#   NVCC       nvcc for the C program (default: nvcc, /usr/local/cuda/bin/nvcc)
# Writes per case NAME/ (trace.db, log, check) and summary.txt to OUTDIR.
# Exits 77 (skipped) without a GPU, 1 when a check failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU: skipped"
  exit 77
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# The allocator stream is built once into this cache (unless one is given),
# kept with the results.
export VRAMSCOPE_CACHE_DIR=${VRAMSCOPE_CACHE_DIR:-$out/cache}
summary="$out/summary.txt"
: >"$summary"
have_torch=0
python3 -c 'import torch, torchvision' 2>/dev/null && have_torch=1
timeout 120 "$NVCC" -O2 -o "$out/endings-sample" "$here/endings-sample.cu" >"$out/nvcc.log" 2>&1 \
  || echo "FAIL nvcc: $(tail -n 3 "$out/nvcc.log")" >>"$summary"

# wait_for FILE PATTERN SECONDS
wait_for() {
  i=0
  while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt $(($3 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
  grep -q "$2" "$1" 2>/dev/null
}

# run_case NAME KIND HOW HOW_ENDED WANT_RC [SOURCE]
#   KIND torch|c; HOW what the program does after READY (endings-train.py);
#   HOW_ENDED self (the program ends itself), or SIG:program / SIG:record
#   (that signal sent from outside after READY), or kill-record (SIGKILL to
#   record, then to the program, then recover).  SOURCE: where PyTorch's
#   allocator level must come from, snapshot or stream (check-endings.py).
run_case() {
  name=$1 kind=$2 how=$3 ended=$4 want=$5 source=${6:--}
  stacks=-
  [ "$kind" = torch ] && stacks=stacks
  d="$out/$name"
  mkdir -p "$d"
  if [ "$kind" = torch ]; then
    set -- python3 "$here/endings-train.py" "$how"
  else
    set -- "$out/endings-sample" "$how"
  fi
  if [ "$ended" = self ]; then
    timeout 300 "$VRAMSCOPE" record -q --no-kernels -o "$d/trace.db" -- "$@" >"$d/log" 2>&1
    rc=$?
  else
    "$VRAMSCOPE" record -q --no-kernels -o "$d/trace.db" -- "$@" >"$d/log" 2>&1 &
    rpid=$!
    if ! wait_for "$d/log" READY 240; then
      echo "never READY" >>"$d/log"
    fi
    sleep 0.3
    ppid=$(sed -n 's/^GROUND_TRUTH .*"pid": \([0-9]*\).*/\1/p' "$d/log" | tail -n 1)
    case "$ended" in
      *:program) kill -"${ended%%:*}" "$ppid" ;;
      *:record) kill -"${ended%%:*}" "$rpid" ;;
      kill-record)
        kill -KILL "$rpid"
        sleep 0.5
        kill -KILL "$ppid"
        ;;
    esac
    wait "$rpid"
    rc=$?
    if [ "$ended" = kill-record ]; then
      rc=-
      sleep 0.5
      spool=$(ls -d "$d"/.vramscope-spool-* 2>/dev/null | head -n 1)
      # A copy of what the killed record left, for tests without a GPU
      # (streams cut after their last record: the rest is zeros).
      cp -r "$spool" "$d/spool"
      for f in "$d"/spool/*.stream; do
        [ -f "$f" ] && python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
n = 4096
while n + 48 <= len(d) and d[n + 44:n + 48] != b"\0\0\0\0":
    n += 48
open(sys.argv[1], "wb").write(d[:n])
' "$f"
      done
      timeout 300 "$VRAMSCOPE" recover "$spool" -o "$d/trace.db" >>"$d/log" 2>&1 \
        || echo "recover failed" >>"$d/log"
    fi
  fi
  if timeout 300 python3 "$here/check-endings.py" "$VRAMSCOPE" "$d/trace.db" "$d/log" "$kind" \
    "$rc" "$want" "$source" "$stacks" >"$d/check" 2>&1; then
    echo "PASS $name" >>"$summary"
  else
    echo "FAIL $name: $(grep -v '^ok' "$d/check" | tr '\n' ' ')" >>"$summary"
  fi
}

if [ $have_torch = 1 ]; then
  # Where the allocator level of a run that ends by itself or at a signal
  # the hook sees comes from: the stream (with its own stacks), or with
  # VRAMSCOPE_TORCH_HISTORY=1 PyTorch's final snapshot.
  final=stream
  [ "${VRAMSCOPE_TORCH_HISTORY:-}" = 1 ] && final=snapshot
  # The first run builds the allocator stream for this torch (once).
  run_case torch-exit torch exit self 0 $final
  grep -i "vramscope" "$out/torch-exit/log" | head -n 5
  # ENDINGS_STOP_IF_NO_STREAM=1: stop here when the stream could not start
  # (every case after depends on it), to save the GPU's time.
  if [ "${ENDINGS_STOP_IF_NO_STREAM:-0}" = 1 ] \
    && grep -q "event stream could not start" "$out/torch-exit/log"; then
    cat "$out"/cache/*.log 2>/dev/null | tail -n 40
    echo "FAIL the allocator stream could not start: stopped" >>"$summary"
    cat "$summary"
    exit 1
  fi
  run_case torch-exception torch exception self 1 $final &
  run_case torch-oom torch oom self 1 $final &
  run_case torch-sigkill torch sigkill self 137 stream &
  run_case torch-sigkill-outside torch wait KILL:program 137 stream &
  run_case torch-sigterm torch sigterm self 143 $final &
  run_case torch-sigterm-record torch wait TERM:record 143 $final &
  wait
  run_case torch-sighup-record torch wait HUP:record 129 $final &
  run_case torch-abort torch abort self 134 stream &
  run_case torch-segv torch segv self 139 stream &
  run_case torch-exit3 torch exit3 self 3 stream &
  run_case torch-kill-record torch wait kill-record - stream &
  wait
else
  echo "SKIP torch: no torch/torchvision" >>"$summary"
fi
if [ -x "$out/endings-sample" ]; then
  run_case c-exit c exit self 0 &
  run_case c-sigkill c sigkill self 137 &
  run_case c-sigterm c sigterm self 143 &
  run_case c-sigkill-outside c wait KILL:program 137 &
  run_case c-sigterm-record c wait TERM:record 143 &
  run_case c-sighup-record c wait HUP:record 129 &
  run_case c-abort c abort self 134 &
  run_case c-segv c segv self 139 &
  run_case c-exit3 c exit3 self 3 &
  run_case c-kill-record c wait kill-record - &
  wait
fi

# The stream's cost on a training step (bench/torch-stream-bench.sh).
if [ $have_torch = 1 ] && [ "${ENDINGS_BENCH:-1}" = 1 ]; then
  VRAMSCOPE=$VRAMSCOPE sh "$root/bench/torch-stream-bench.sh" "$out/bench" 2>&1 \
    | sed 's/^/BENCH /' >>"$summary"
fi
cat "$summary"
! grep -q '^FAIL' "$summary"
