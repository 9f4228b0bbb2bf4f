#!/usr/bin/env python3
"""torch-eval-leak.py — a training loop that runs out of memory.

A ResNet-18 trains on synthetic images.  After every training step it runs
the model on a validation batch *without* torch.no_grad() and keeps the
predictions in a list — each kept output holds its whole autograd graph
and the activations saved for it, so memory grows with every iteration
until the GPU (here capped at --cap-gib with
torch.cuda.set_per_process_memory_fraction, so the demo fits any GPU)
runs out and PyTorch raises the familiar "CUDA out of memory. Tried to
allocate ..." error, uncaught.  NVTX ranges mark "step N", "train" and
"evaluate"; the model, batch, training step and ranges: torch_sample.py.

The fix is `with torch.no_grad():` around evaluation, or keeping
`pred.detach().cpu()`.  The program's own account (torch.cuda.memory_stats)
is printed as a GROUND_TRUTH line at exit (torch_truth.py).

  python3 torch-eval-leak.py [--cap-gib 6] [--batch 32] [--truth FILE]
"""
import torch

import torch_sample

p = torch_sample.parser(steps=100, batch=32, size=224)
p.add_argument("--cap-gib", type=float, default=6.0)
args = torch_sample.start(p, "eval-leak")
run = torch_sample.setup(args, cap_gib=args.cap_gib)
val_images = torch.randn(args.batch, 3, args.size, args.size, device=run.dev)
kept = []


def evaluate():
    pred = run.model(val_images)  # the bug: no torch.no_grad(), output kept
    kept.append(pred)


for step in range(args.steps):
    loss, _ = torch_sample.train_and_evaluate(run, step, evaluate)
    print(f"step {step}: loss {loss:.3f}, "
          f"allocated {torch.cuda.memory_allocated() / (1 << 30):.2f} GiB", flush=True)
# SPDX-License-Identifier: MIT
