#!/usr/bin/env python3
"""torch-batch-too-large.py — a batch too large for the memory available.

Trains torchvision's ResNet-18 on synthetic 224x224 images with a batch
that does not fit under a cap of --cap-gib GiB (set with
torch.cuda.set_per_process_memory_fraction, so it fails the same way on any
GPU): the activations the forward pass saves for backward outgrow the
parameters, gradients and optimizer state many times over, and the first
step fails with torch.cuda.OutOfMemoryError, uncaught.  The model, the
batch and the training step: torch_sample.py; what is too large is the
batch asked for here.

What a diagnosis should say: the allocator's limit stopped it (the device
had room); activations hold most of the memory at the failure; remedies are
a smaller batch with gradient accumulation, activation checkpointing or
bf16 autocast.  Ground truth: torch_truth.py.

  python3 torch-batch-too-large.py [--batch 256] [--cap-gib 3] [--truth FILE]
"""
import torch_sample

p = torch_sample.parser(steps=3, batch=256, size=224)
p.add_argument("--cap-gib", type=float, default=3.0)
args = torch_sample.start(p, "batch-too-large")
run = torch_sample.setup(args, cap_gib=args.cap_gib)

for step in range(args.steps):
    print("step %d: loss %.3f" % (step, torch_sample.train_step(run)), flush=True)
# SPDX-License-Identifier: MIT
