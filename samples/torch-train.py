#!/usr/bin/env python3
"""torch-train.py — a small PyTorch training loop for traces and benchmarks.

Trains torchvision's ResNet-18 (built from its definition, random weights)
on synthetic data.  Each step runs inside an NVTX range "step N".  Prints
the time per step and, last, GROUND_TRUTH with PyTorch's own statistics:
reserved_bytes.all.peak and the number of segments it took from cudaMalloc.
--torch-history FILE records PyTorch's own allocation history
(torch.cuda.memory._record_memory_history, Python stacks, as vramscope's
hook asks for it) and dumps it to FILE at the end (_dump_snapshot): the
profiler PyTorch ships, for comparison.  --out FILE writes the ground truth
(settings, torch.cuda.memory_stats(), the loop's time) as JSON.  The last
line, end_wall, is the wall-clock time (seconds since the epoch) at which
the program's own work ended: what comes after it is interpreter exit.

  python3 torch-train.py [--steps N] [--batch B] [--warmup W]
                         [--torch-history FILE] [--out FILE]
"""
import argparse
import json
import time

import torch
import torchvision

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--size", type=int, default=224)
p.add_argument("--torch-history", metavar="FILE")
p.add_argument("--out", metavar="FILE")
args = p.parse_args()

if args.torch_history:
    torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")

torch.manual_seed(0)
dev = torch.device("cuda")
model = torchvision.models.resnet18(num_classes=100).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(args.batch, 3, args.size, args.size, device=dev)
y = torch.randint(0, 100, (args.batch,), device=dev)


def step(i):
    torch.cuda.nvtx.range_push("step %d" % i)
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    return loss


for i in range(args.warmup):
    step(i)
torch.cuda.synchronize()
t0 = time.perf_counter()
for i in range(args.warmup, args.warmup + args.steps):
    step(i)
torch.cuda.synchronize()
dt = time.perf_counter() - t0
print("step_ms %.3f" % (1000 * dt / args.steps))
st = torch.cuda.memory_stats()
print("GROUND_TRUTH " + json.dumps({"torch": {
    "reserved_peak": st["reserved_bytes.all.peak"],
    "segments": st["segment.all.allocated"],
    "ranges": args.warmup + args.steps}}))
if args.torch_history:
    torch.cuda.memory._dump_snapshot(args.torch_history)
if args.out:
    with open(args.out, "w") as f:
        json.dump({"settings": vars(args), "step_ms": 1000 * dt / args.steps,
                   "memory_stats": st}, f, indent=1, sort_keys=True)
print("end_wall %.6f" % time.time(), flush=True)
# SPDX-License-Identifier: MIT
