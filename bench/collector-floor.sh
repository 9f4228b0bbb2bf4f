#!/bin/bash
# SPDX-License-Identifier: MIT
# collector-floor.sh — the collector's in-run cost against CUPTI's own floor.
#
# Runs, interleaved, ROUNDS times each:
#   kernel launches (bench/launch-rate.cu, LAUNCHES empty kernels): plain;
#     injected with a CUPTI tracer that enables nothing (FLOOR_NONE=1) and
#     one that enables the kernel activity kinds and only counts records
#     (bench/cupti-floor.c); `record --torch=off --no-kernels`;
#     `record --torch=off`
#   a training loop (samples/torch-train.py --batch BATCH --steps STEPS,
#     TORCH_ROUNDS times): plain; the CUPTI floor; `record` with
#     --torch=off --no-kernels, --torch=off, --no-kernels, and as is
# and prints ns per launch and ms per step for each (median of the rounds).
#
# Usage: bench/collector-floor.sh OUTDIR
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope)
#   CUDA_HOME  the CUDA toolkit (default /usr/local/cuda): nvcc, cupti.h
#   LAUNCHES (300000) ROUNDS (3) STEPS (300) BATCH (32) TORCH_ROUNDS (2)
set -u
out=${1:?usage: collector-floor.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LAUNCHES=${LAUNCHES:-300000}
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-300}
BATCH=${BATCH:-32}
TORCH_ROUNDS=${TORCH_ROUNDS:-2}
log=$out/floor.log

"$CUDA_HOME/bin/nvcc" -O2 -o "$out/launch-rate" "$here/launch-rate.cu" || exit 1
gcc -O2 -shared -fPIC -I"$CUDA_HOME/include" -o "$out/cupti-floor.so" "$here/cupti-floor.c" \
  -L"$CUDA_HOME/lib64" -lcupti -Wl,-rpath,"$CUDA_HOME/lib64" || exit 1
floor=$out/cupti-floor.so

# run MODE FIELD COMMAND...: appends "MODE VALUE" to the log (value of FIELD)
run() {
  mode=$1 field=$2; shift 2
  v=$(timeout 300 "$@" 2>&1 | sed -n "s/.*$field \([0-9.]*\).*/\1/p" | head -1)
  echo "$mode ${v:-failed}" | tee -a "$log"
}
REC=("$VRAMSCOPE" record -q -f -o "$out/floor.db")

: >"$log"
L=("$out/launch-rate" "$LAUNCHES")
for _ in $(seq "$ROUNDS"); do
  run launch/plain launch_ns "${L[@]}"
  run launch/injected launch_ns env FLOOR_NONE=1 CUDA_INJECTION64_PATH="$floor" "${L[@]}"
  run launch/cupti-floor launch_ns env CUDA_INJECTION64_PATH="$floor" "${L[@]}"
  run launch/record-nokernels launch_ns "${REC[@]}" --torch=off --no-kernels -- "${L[@]}"
  run launch/record launch_ns "${REC[@]}" --torch=off -- "${L[@]}"
done
T=(python3 "$root/samples/torch-train.py" --batch "$BATCH" --steps "$STEPS")
for _ in $(seq "$TORCH_ROUNDS"); do
  run step/plain step_ms "${T[@]}"
  run step/cupti-floor step_ms env CUDA_INJECTION64_PATH="$floor" "${T[@]}"
  run step/record-notorch-nokernels step_ms "${REC[@]}" --torch=off --no-kernels -- "${T[@]}"
  run step/record-notorch step_ms "${REC[@]}" --torch=off -- "${T[@]}"
  run step/record-nokernels step_ms "${REC[@]}" --no-kernels -- "${T[@]}"
  run step/record step_ms "${REC[@]}" -- "${T[@]}"
done
rm -f "$out/floor.db"
echo "median of the rounds:"
python3 - "$log" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    mode, value = line.split()
    if value != "failed":
        runs.setdefault(mode, []).append(float(value))
for kind, unit in (("launch", "ns per launch"), ("step", "ms per step")):
    base = statistics.median(runs.get(kind + "/plain", [0])) or None
    for mode, values in runs.items():
        if mode.startswith(kind + "/"):
            m = statistics.median(values)
            ratio = " (%.2f×)" % (m / base) if base else ""
            print("%-32s %10.2f %s%s  [%s]" % (mode, m, unit, ratio, " ".join("%g" % v for v in values)))
PY
