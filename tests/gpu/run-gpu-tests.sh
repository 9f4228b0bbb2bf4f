#!/bin/sh
# SPDX-License-Identifier: MIT
# run-gpu-tests.sh — record every sample on a real GPU and check each trace
# against the sample's own ground truth (tests/gpu/check-trace.py).
#
# Usage: tests/gpu/run-gpu-tests.sh [OUTDIR]
#   VRAMSCOPE   command that records (default: build/cli/vramscope);
#               anything accepting `record -o FILE -- PROGRAM`
#   SAMPLES     folder with the built samples (default: build them with nvcc)
#   NVCC        nvcc to build them with (default: nvcc, /usr/local/cuda/bin/nvcc)
# Exits 77 (skipped) when there is no GPU, 1 when a check failed.
# Needs only sh, nvcc, python3 (standard library): it runs on a bare GPU
# server.
. "$(dirname "$0")/lib.sh"


if [ -z "${SAMPLES:-}" ]; then
  NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  SAMPLES=$out/samples
  mkdir -p "$SAMPLES"
  for s in kinds leak frag oom threads fork multigpu; do
    "$NVCC" -O2 -o "$SAMPLES/sample-$s" "$root/samples/sample-$s.cu" -lcuda -lpthread || exit 1
  done
fi

failed=0
run_sample() { # name, expected exit status, command...
  name=$1; want=$2; shift 2
  echo "== $name"
  "$VRAMSCOPE" record -q -o "$out/$name.db" -- "$@" >"$out/$name.log" 2>&1
  rc=$?
  cat "$out/$name.log"
  if [ "$rc" != "$want" ]; then
    echo "FAILED $name: record exited $rc, expected $want"
    failed=1
    return
  fi
  truth=$(sed -n 's/^GROUND_TRUTH //p' "$out/$name.log" | tail -n 1)
  if [ -z "$truth" ]; then
    echo "FAILED $name: printed no ground truth"
    failed=1
    return
  fi
  python3 "$here/check-trace.py" "$out/$name.db" "$truth" || failed=1
}

for s in kinds leak frag oom threads fork multigpu; do
  run_sample "sample-$s" 0 "$SAMPLES/sample-$s"
done
if python3 -c 'import torch, torchvision' 2>/dev/null; then
  run_sample torch-train 0 python3 "$root/samples/torch-train.py" --steps 10
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
    run_sample torch-train-expandable 0 python3 "$root/samples/torch-train.py" --steps 10
fi

# Several ranks on one host, one GPU each: one trace, each rank its own
# process on its own device, each matching its own memory_stats().
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && python3 -c 'import torch' 2>/dev/null; then
  echo "== torch-ddp"
  NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    "$VRAMSCOPE" record -q -o "$out/torch-ddp.db" -- \
    python3 -m torch.distributed.run --nproc-per-node 2 "$root/samples/torch-ddp.py" \
    >"$out/torch-ddp.log" 2>&1 || { echo "FAILED torch-ddp: record"; failed=1; }
  python3 "$here/check-ddp.py" "$out/torch-ddp.db" "$out/torch-ddp.log" || failed=1
fi

# Stacks: the known chains of the stacks samples, frame by frame.
sh "$here/check-stacks.sh" "$out/stacks" || failed=1

# A program that is already a CUPTI client (as under another profiler):
# one line says the collector stepped aside, the program runs untouched.
echo "== sample-subscribed"
if "$NVCC" -O2 -o "$out/sample-subscribed" "$root/samples/sample-subscribed.cu" -lcupti \
     -L"$(dirname "$(command -v "$NVCC")")/../lib64"; then
  "$VRAMSCOPE" record -q -o "$out/subscribed.db" -- "$out/sample-subscribed" \
    >"$out/subscribed.log" 2>&1
  rc=$?
  cat "$out/subscribed.log"
  if [ $rc = 0 ] && grep -q 'already uses CUPTI; the program runs untraced' "$out/subscribed.log" \
     && grep -q '"own_subscription":true' "$out/subscribed.log"; then
    echo "ok     another CUPTI client: one line, the program runs on"
  else
    echo "FAILED sample-subscribed: rc $rc"
    failed=1
  fi
else
  echo "FAILED sample-subscribed: does not build"
  failed=1
fi

# The program's exit status comes back, also when a signal ends it.
echo "== exit status"
"$VRAMSCOPE" record -q -o "$out/exit.db" -- sh -c 'exit 7'
rc=$?; [ $rc = 7 ] && echo "ok     exit 7" || { echo "FAILED exit 7: got $rc"; failed=1; }
"$VRAMSCOPE" record -q -o "$out/term.db" -- sh -c 'kill -TERM $$'
rc=$?; [ $rc = 143 ] && echo "ok     SIGTERM → 143" || { echo "FAILED SIGTERM: got $rc"; failed=1; }

exit $failed
