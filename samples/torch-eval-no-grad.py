#!/usr/bin/env python3
"""torch-eval-no-grad.py — validation without torch.no_grad().

Trains ResNet-18 for a few steps, then validates on a batch of
--val-batch images (larger than the training batch, as is common) without
torch.no_grad(): the forward pass saves every activation for a backward
pass that never comes, so the peak of the run is inside evaluation, far
above what training needs.  The outputs are not kept: nothing leaks, the
memory is freed after each validation batch.  NVTX ranges mark "step N",
"train" and "evaluate".

What a diagnosis should say: the peak is in evaluate, held by activations
that are never used by a backward pass; remedy: `with torch.no_grad():`
(or torch.inference_mode()) around evaluation.  The model, batch, training
step and ranges: torch_sample.py.  Ground truth: torch_truth.py.

  python3 torch-eval-no-grad.py [--steps 4] [--batch 32] [--val-batch 96] [--truth FILE]
"""
import torch

import torch_sample

p = torch_sample.parser(steps=4, batch=32)
p.add_argument("--val-batch", type=int, default=96)
args = torch_sample.start(p, "eval-no-grad")
run = torch_sample.setup(args)
val_images = torch.randn(args.val_batch, 3, args.size, args.size, device=run.dev)


def evaluate():
    run.model.eval()
    pred = run.model(val_images)  # the bug: no torch.no_grad()
    correct = int((pred.argmax(1) == 0).sum().item())
    run.model.train()
    return correct


for step in range(args.steps):
    loss, correct = torch_sample.train_and_evaluate(run, step, evaluate)
    print("step %d: loss %.3f, correct %d" % (step, loss, correct), flush=True)
# SPDX-License-Identifier: MIT
