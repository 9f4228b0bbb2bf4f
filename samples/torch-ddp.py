#!/usr/bin/env python3
"""torch-ddp.py — data-parallel training, one process per GPU.

Run under torchrun (`python3 -m torch.distributed.run --nproc-per-node 2
torch-ddp.py`): each rank trains a small MLP with DistributedDataParallel on
its own GPU for a few steps and prints its own account as a GROUND_TRUTH
line: its rank, its GPU's uuid and PyTorch's memory_stats().  A recording of
the whole run must hold every rank as its own process, on its own device.
"""
import json
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
local = int(os.environ.get("LOCAL_RANK", rank))
torch.cuda.set_device(local)
device = torch.device("cuda", local)
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.ReLU(),
                            torch.nn.Linear(8192, 4096)).to(device)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
opt = torch.optim.Adam(ddp.parameters(), lr=1e-4)
x = torch.randn(256 * (rank + 1), 4096, device=device)  # ranks differ
for _ in range(5):
    opt.zero_grad(set_to_none=True)
    ddp(x).square().mean().backward()
    opt.step()
torch.cuda.synchronize()
dist.barrier()
dist.destroy_process_group()
torch.cuda.synchronize()
st = torch.cuda.memory_stats(device)  # last: nothing allocates after it
print("GROUND_TRUTH " + json.dumps({
    "rank": rank, "uuid": str(torch.cuda.get_device_properties(device).uuid),
    "pid": os.getpid(), "pytorch": {
        "peak_reserved": st["reserved_bytes.all.peak"],
        "peak_allocated": st["requested_bytes.all.peak"],
        "alloc_count": st["allocation.all.allocated"]}}), flush=True)
# SPDX-License-Identifier: MIT
