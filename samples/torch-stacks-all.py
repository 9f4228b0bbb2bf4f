#!/usr/bin/env python3
"""torch-stacks-all.py — a PyTorch memory snapshot with stacks="all".

Records the caching allocator's history with PyTorch's default
`stacks="all"` (C++ frames first — torch::unwind, CapturedTraceback,
CUDACachingAllocator, the dispatcher — interleaved with the Python frames),
trains a small MLP for a few steps in train_step(), and dumps the snapshot
to OUT.pickle with the program's torch.cuda.memory_stats() in OUT.json.
`vramscope import OUT.pickle` must attribute every allocation to a line of
this file (the site), never to a C++ frame.  Run it without `vramscope
record` (whose hook records its own history).

  python3 torch-stacks-all.py OUT [--steps 3]
"""
import argparse
import json

import torch

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--steps", type=int, default=3)
args = p.parse_args()

torch.cuda.memory._record_memory_history(max_entries=100000, stacks="all")
dev = torch.device("cuda")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(64, 512, device=dev)
y = torch.randint(0, 10, (64,), device=dev)


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


for step in range(args.steps):
    print("step %d: loss %.3f" % (step, train_step()), flush=True)
torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(args.out + ".pickle")
with open(args.out + ".json", "w") as f:
    json.dump({"memory_stats": torch.cuda.memory_stats(), "steps": args.steps,
               "stacks": "all"}, f, sort_keys=True)
# SPDX-License-Identifier: MIT
