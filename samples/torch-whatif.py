#!/usr/bin/env python3
"""torch-whatif.py — one training loop, run under several allocator settings.

An MLP (fp32, Adam) trained for a few steps on synthetic data whose batch
size changes from step to step, as in batched inference or variable-length
training: activations of slightly different sizes leave free slivers in the
caching allocator's segments, so the allocator settings (expandable
segments, max_split_size_mb, roundup_power2_divisions,
garbage_collection_threshold) and the memory cap change the reserved peak
and whether the run fails.  PYTORCH_CUDA_ALLOC_CONF comes from the
environment.

  python3 torch-whatif.py --out RUN.json [--limit-bytes N] [--steps S]

--limit-bytes caps the allocator with set_per_process_memory_fraction
(N / total device memory).  An out-of-memory error ends the loop (it is
caught and counted).  RUN.json receives the ground truth: the settings, the
cap PyTorch computes from the fraction (allowed_bytes, the same double
arithmetic as CUDACachingAllocator's setMemoryFraction), whether and at
which step an OOM happened, and torch.cuda.memory_stats().
"""
import argparse
import json
import os
import sys

import torch

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--limit-bytes", type=int, default=0)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
free0, total = torch.cuda.mem_get_info()
fraction = None
allowed = None
if args.limit_bytes > 0:
    fraction = min(1.0, args.limit_bytes / total)
    torch.cuda.set_per_process_memory_fraction(fraction)
    allowed = int(fraction * float(total))

widths = [4096, 8192, 2048, 6144, 1024, 10]
layers = []
for a, b in zip(widths[:-1], widths[1:]):
    layers.append(torch.nn.Linear(a, b))
    if b != widths[-1]:
        layers.append(torch.nn.ReLU())
result = {
    "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    "limit_bytes": args.limit_bytes or None,
    "fraction": fraction,
    "allowed_bytes": allowed,
    "device_total_bytes": total,
    "device_free_bytes_at_start": free0,
    "steps": args.steps,
    "oom": False,
    "oom_step": None,
    "oom_message": None,
    "torch_version": torch.__version__,
}
batches = [2048, 3072, 2560, 3584, 2304, 4096, 2816, 3328, 3840, 2176]
step = -1
try:
    model = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    for step in range(args.steps):
        b = batches[step % len(batches)]
        x = torch.randn(b, widths[0], device=dev)
        y = torch.randint(0, widths[-1], (b,), device=dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        del x, y, loss
    torch.cuda.synchronize()
except torch.cuda.OutOfMemoryError as e:
    result["oom"] = True
    result["oom_step"] = step
    result["oom_message"] = str(e).splitlines()[0][:300]
torch.cuda.synchronize()
result["memory_stats"] = dict(torch.cuda.memory_stats())
with open(args.out, "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
st = result["memory_stats"]
print("GROUND_TRUTH " + json.dumps({
    "alloc_conf": result["alloc_conf"], "allowed_bytes": allowed, "oom": result["oom"],
    "reserved_peak": st.get("reserved_bytes.all.peak"),
    "allocated_peak": st.get("allocated_bytes.all.peak"),
    "num_ooms": st.get("num_ooms"), "num_alloc_retries": st.get("num_alloc_retries")}))
sys.exit(0)
# SPDX-License-Identifier: MIT
