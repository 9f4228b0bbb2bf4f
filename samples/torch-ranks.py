#!/usr/bin/env python3
"""torch-ranks.py — data-parallel ranks that differ: one peaks higher, one fails.

Run under torchrun (`python3 -m torch.distributed.run --nproc-per-node 2
torch-ranks.py`), one process per GPU where there are enough (NCCL), else
every rank on GPU LOCAL_RANK mod the GPU count (Gloo: NCCL refuses two ranks
on one GPU).  Each rank trains the same small MLP with
DistributedDataParallel for a few steps on its GPU, but rank R
takes a batch of --batch × (1 + --skew × R) rows, so the last rank peaks
highest.  After training, the rank --fail-rank caps PyTorch's allocator at
--cap-gib GiB (torch.cuda.set_per_process_memory_fraction, so it fails the
same way on any GPU) and asks for --request-gib GiB more: PyTorch refuses
with torch.cuda.OutOfMemoryError, which the rank catches and notes, so the
run ends normally.  This is what `vramscope report ranks` compares: the
worst rank, the rank that failed, the spread between them.

Each rank prints its own account as a GROUND_TRUTH line and, with
--truth-dir, writes it to DIR/truth-rank<R>.json: its rank, local rank,
world size, pid, GPU uuid and capacity, the job id variables it saw, the
settings, the error it caught, and its complete torch.cuda.memory_stats()
taken last (nothing allocates after it).
"""
import argparse
import json
import os

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=2048)
p.add_argument("--skew", type=float, default=7.0)
p.add_argument("--steps", type=int, default=4)
p.add_argument("--fail-rank", type=int, default=0, help="-1: no rank fails")
p.add_argument("--cap-gib", type=float, default=4.0)
p.add_argument("--request-gib", type=float, default=6.0)
p.add_argument("--truth-dir")
args = p.parse_args()

world = int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
gpus = torch.cuda.device_count()
local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
backend = "nccl" if gpus >= local_world else "gloo"
dist.init_process_group(backend)
rank = dist.get_rank()
index = local % gpus
torch.cuda.set_device(index)
device = torch.device("cuda", index)
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.ReLU(),
                            torch.nn.Linear(8192, 4096)).to(device)
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[index])
opt = torch.optim.Adam(ddp.parameters(), lr=1e-4)
rows = int(args.batch * (1 + args.skew * rank))
x = torch.randn(rows, 4096, device=device)
for _ in range(args.steps):
    opt.zero_grad(set_to_none=True)
    ddp(x).square().mean().backward()
    opt.step()
torch.cuda.synchronize()
dist.barrier()
dist.destroy_process_group()

props = torch.cuda.get_device_properties(device)
error = None
if rank == args.fail_rank:
    fraction = min(1.0, args.cap_gib * (1 << 30) / props.total_memory)
    torch.cuda.set_per_process_memory_fraction(fraction, device)
    try:
        extra = torch.empty(int(args.request_gib * (1 << 30)), dtype=torch.uint8, device=device)
        del extra
    except torch.cuda.OutOfMemoryError as e:
        error = "OutOfMemoryError: " + str(e).splitlines()[0]
torch.cuda.synchronize()
st = torch.cuda.memory_stats(device)  # last: nothing allocates after it
truth = {
    "rank": rank, "local_rank": local, "world_size": world, "pid": os.getpid(),
    "backend": backend, "device_index": index, "gpus": gpus,
    "uuid": str(props.uuid), "device_total_bytes": props.total_memory,
    "job": {k: os.environ[k] for k in ("SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                       "VRAMSCOPE_JOB_ID") if k in os.environ},
    "settings": dict(vars(args), rows=rows),
    "error": error,
    "pytorch": {
        "peak_reserved": st["reserved_bytes.all.peak"],
        "peak_allocated": st["requested_bytes.all.peak"],
        "alloc_count": st["allocation.all.allocated"],
        "failed": st["num_ooms"]},
    "memory_stats": st,
}
print("GROUND_TRUTH " + json.dumps({k: truth[k] for k in truth if k != "memory_stats"}),
      flush=True)
if args.truth_dir:
    with open(os.path.join(args.truth_dir, "truth-rank%d.json" % rank), "w") as f:
        json.dump(truth, f, sort_keys=True)
        f.write("\n")
# SPDX-License-Identifier: MIT
