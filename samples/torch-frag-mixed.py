#!/usr/bin/env python3
"""torch-frag-mixed.py — fragmentation from mixed sizes.

Under a cap of --cap-gib GiB (torch.cuda.set_per_process_memory_fraction),
the program fills the cache with --count 40 MiB blocks (each its own
segment), frees them, then allocates 30 MiB blocks: each is carved out of a
cached 40 MiB segment, leaving a 10 MiB hole beside it.  Finally it asks
for --big MiB: the holes add up to far more than that, but none is large
enough, every segment is partly in use so the cache cannot be released,
and the cap leaves no room for a new segment — torch.cuda.OutOfMemoryError
(caught: the program reports it and exits 1).

What a diagnosis should say: the failure is fragmentation (free memory
inside reserved ≥ the request, largest free block < the request); remedy:
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True — unless it is already
set (run it with that setting too: the diagnosis must not recommend it
then).  Ground truth: torch_truth.py.

  python3 torch-frag-mixed.py [--cap-gib 1] [--count 24] [--big 64] [--truth FILE]
"""
import argparse
import sys

import torch

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--cap-gib", type=float, default=1.0)
p.add_argument("--count", type=int, default=24)
p.add_argument("--big", type=int, default=64, help="MiB")
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("frag-mixed", vars(args), args.truth)

MIB = 1 << 20
dev = torch.device("cuda")
torch_truth.cap_memory(args.cap_gib)


def blocks(count, mib):
    return [torch.empty(mib * MIB, dtype=torch.uint8, device=dev) for _ in range(count)]


big = blocks(args.count, 40)  # fills the cache with 40 MiB segments
del big
kept = blocks(args.count, 30)  # each carved from one, leaving a 10 MiB hole
torch_truth.note("kept_bytes", sum(t.numel() for t in kept))
torch_truth.note("reserved_before_big", torch.cuda.memory_reserved())
try:
    extra = torch.empty(args.big * MIB, dtype=torch.uint8, device=dev)
    print("the %d MiB request fitted" % args.big, flush=True)
except torch.cuda.OutOfMemoryError as e:
    torch_truth.note("oom", str(e).splitlines()[0])
    print("out of memory: %s" % str(e).splitlines()[0], flush=True)
    sys.exit(1)
# SPDX-License-Identifier: MIT
