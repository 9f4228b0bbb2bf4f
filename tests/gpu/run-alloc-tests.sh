#!/bin/sh
# SPDX-License-Identifier: MIT
# run-alloc-tests.sh — the allocator level on a real GPU: PyTorch's caching
# allocator recorded through `record --torch`, an uncaught OOM, PyTorch's
# backend:cudaMallocAsync and plain stream-ordered pools, and a sub-allocator
# annotated with the NVTX memory API.  Each trace is checked against the
# program's own account by check-alloc.py.
#
# Usage: tests/gpu/run-alloc-tests.sh [OUTDIR]
#   VRAMSCOPE  command that records (default: build/cli/vramscope)
#   NVCC       nvcc for the CUDA samples (default: nvcc, /usr/local/cuda/bin/nvcc)
# Exits 77 (skipped) without a GPU, 1 when a check failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU: skipped"
  exit 77
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for s in nvtx-pool frag kinds; do
  "$NVCC" -O2 -o "$out/sample-$s" "$root/samples/sample-$s.cu" -lcuda -lpthread -ldl || exit 1
done

failed=0
run() { # name, expected exit status, command...
  name=$1; want=$2; shift 2
  echo "== $name"
  "$VRAMSCOPE" record -q -o "$out/$name.db" -- "$@" >"$out/$name.log" 2>&1
  rc=$?
  if [ "$rc" != "$want" ]; then
    cat "$out/$name.log"
    echo "FAILED $name: record exited $rc, expected $want"
    failed=1
    return
  fi
  sed -n 's/^GROUND_TRUTH //p' "$out/$name.log" | tail -n 1 >"$out/$name.json"
  if [ ! -s "$out/$name.json" ]; then
    cat "$out/$name.log"
    echo "FAILED $name: printed no ground truth"
    failed=1
    return
  fi
  grep -i "vramscope" "$out/$name.log"
  "$VRAMSCOPE" report "$out/$name.db" --format csv summary
  python3 "$here/check-alloc.py" "$out/$name.db" "$out/$name.json" || failed=1
}

run sample-nvtx-pool 0 "$out/sample-nvtx-pool"
run sample-frag 0 "$out/sample-frag"
run sample-kinds 0 "$out/sample-kinds"
if python3 -c 'import torch' 2>/dev/null; then
  run torch-alloc 0 python3 "$root/samples/torch-alloc.py"
  run torch-oom 1 python3 "$root/samples/torch-oom.py"
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run torch-async 0 python3 "$root/samples/torch-alloc.py"
fi
exit $failed
