#!/usr/bin/env python3
"""torch-kept-outputs.py — outputs kept with their autograd graph.

A training loop logs a loss every step by computing it again on the batch
and appending the tensor to a list (`history.append(loss)` instead of
`loss.item()`).  That loss never goes through backward, so it holds its
whole autograd graph and every activation the forward pass saved for it,
as long as the list lives.  Memory grows by the same amount every step: a
leak that would kill a long run after hours shows in the first steps.
No NVTX ranges: iterations must be found from
the repeating allocation pattern.

What a diagnosis should say: growth per iteration at the line that keeps
the output (`history.append`'s forward, in log_loss), with .detach() /
.item() as the remedy.  The model, batch and training step:
torch_sample.py.  Ground truth: torch_truth.py (notes: the bytes kept per
step as PyTorch counts them).

  python3 torch-kept-outputs.py [--steps 16] [--batch 16] [--truth FILE]
"""
import torch

import torch_sample
import torch_truth

args = torch_sample.start(torch_sample.parser(steps=16, batch=16), "kept-outputs")
run = torch_sample.setup(args)
history = []


def log_loss():
    loss = run.loss_fn(run.model(run.images), run.labels)  # the bug: kept with its graph
    history.append(loss)


growth = []
for step in range(args.steps):
    before = torch.cuda.memory_allocated()
    torch_sample.train_step(run)
    log_loss()
    torch.cuda.synchronize()
    growth.append(torch.cuda.memory_allocated() - before)
    print("step %d: allocated %.1f MiB" % (step, torch.cuda.memory_allocated() / 2**20), flush=True)
torch_truth.note("allocated_growth_per_step", growth)
# SPDX-License-Identifier: MIT
