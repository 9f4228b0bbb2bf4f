#!/usr/bin/env python3
"""torch-healthy.py — a healthy training loop: the diagnosis must find nothing.

ResNet-18 trained with SGD on synthetic images, validated under
torch.no_grad() every --val-every steps, losses logged with .item().  No
NVTX ranges (iterations are found from the allocation pattern), no cap,
memory flat from the second step on.  A diagnosis of this run must report
no growth, no leak, no fragmentation worth acting on and no failure.
The model, batch and training step: torch_sample.py.  Ground truth:
torch_truth.py.

  python3 torch-healthy.py [--steps 12] [--batch 32] [--truth FILE]
"""
import torch

import torch_sample

p = torch_sample.parser(steps=12, batch=32)
p.add_argument("--val-every", type=int, default=4)
args = torch_sample.start(p, "healthy")
run = torch_sample.setup(args)
losses = []


def evaluate():
    run.model.eval()
    with torch.no_grad():
        correct = int((run.model(run.images).argmax(1) == run.labels).sum().item())
    run.model.train()
    return correct


for step in range(args.steps):
    losses.append(torch_sample.train_step(run))
    if (step + 1) % args.val_every == 0:
        print("step %d: loss %.3f, correct %d" % (step, losses[-1], evaluate()), flush=True)
# SPDX-License-Identifier: MIT
