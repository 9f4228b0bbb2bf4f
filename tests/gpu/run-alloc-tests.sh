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
. "$(dirname "$0")/lib.sh"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for s in nvtx-pool frag kinds; do
  "$NVCC" -O2 -o "$out/sample-$s" "$root/samples/sample-$s.cu" -lcuda -lpthread -ldl || exit 1
done

failed=0
run() { # name, expected exit status, command...
  vs_record_truth "$@" || return
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
