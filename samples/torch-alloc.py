#!/usr/bin/env python3
"""torch-alloc.py — PyTorch's caching allocator at work, with its own account.

A small MLP trains for a few steps, a list of kept outputs grows (a leak),
the cache is emptied once in the middle (segments go back to CUDA) and some
memory outside the caching allocator is taken with cudaMalloc through
cuBLAS's workspace.  Last, it prints GROUND_TRUTH with PyTorch's own
torch.cuda.memory_stats() — the numbers a trace's `pytorch` row must show:

  peak_reserved   reserved_bytes.all.peak     final_reserved   ….current
  peak_allocated  requested_bytes.all.peak    final_allocated  ….current
  alloc_count     allocation.all.allocated    failed           num_ooms

With PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync the allocator is a
stream-ordered pool; the ground truth then also holds allocated_bytes.

  python3 torch-alloc.py [--steps N]
"""
import argparse
import json
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=6)
args = p.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
kept = []
for i in range(args.steps):
    x = torch.randn(512 + 64 * i, 1024, device=dev)
    y = torch.randint(0, 10, (x.shape[0],), device=dev)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    kept.append(model[0](x[:8]).detach())   # grows: kept outputs
    if i == args.steps // 2:
        del x, y, loss
        torch.cuda.empty_cache()
torch.cuda.synchronize()

st = torch.cuda.memory_stats()
backend = torch.cuda.get_allocator_backend()
# time_ns: when these numbers held (CLOCK_REALTIME, the trace's clock).
# Python's own teardown frees tensors after this; the caching allocator
# keeps them cached, but a cudaMallocAsync pool sees them go.
truth = {"backend": backend, "device": torch.cuda.current_device(), "time_ns": time.time_ns(),
         "uuid_hint": str(torch.cuda.get_device_properties(0).uuid),
         "pytorch": {
             "peak_reserved": st.get("reserved_bytes.all.peak"),
             "final_reserved": st.get("reserved_bytes.all.current"),
             "peak_allocated": st.get("requested_bytes.all.peak"),
             "final_allocated": st.get("requested_bytes.all.current"),
             "peak_allocated_bytes": st.get("allocated_bytes.all.peak"),
             "final_allocated_bytes": st.get("allocated_bytes.all.current"),
             "alloc_count": st.get("allocation.all.allocated"),
             "failed": st.get("num_ooms"),
             "segments": st.get("segment.all.allocated")}}
print("GROUND_TRUTH " + json.dumps(truth), flush=True)
# SPDX-License-Identifier: MIT
