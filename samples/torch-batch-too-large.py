#!/usr/bin/env python3
"""torch-batch-too-large.py — a batch too large for the memory available.

Trains torchvision's ResNet-18 on synthetic 224x224 images with a batch
that does not fit under a cap of --cap-gib GiB (set with
torch.cuda.set_per_process_memory_fraction, so it fails the same way on any
GPU): the activations the forward pass saves for backward outgrow the
parameters, gradients and optimizer state many times over, and the first
step fails with torch.cuda.OutOfMemoryError, uncaught.

What a diagnosis should say: the allocator's limit stopped it (the device
had room); activations hold most of the memory at the failure; remedies are
a smaller batch with gradient accumulation, activation checkpointing or
bf16 autocast.  Ground truth: torch_truth.py.

  python3 torch-batch-too-large.py [--batch 256] [--cap-gib 3] [--truth FILE]
"""
import argparse

import torch
import torchvision

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=256)
p.add_argument("--cap-gib", type=float, default=3.0)
p.add_argument("--steps", type=int, default=3)
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("batch-too-large", vars(args), args.truth)

dev = torch.device("cuda")
torch_truth.cap_memory(args.cap_gib)
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(dev)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, 224, 224, device=dev)
labels = torch.randint(0, 100, (args.batch,), device=dev)


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


for step in range(args.steps):
    print("step %d: loss %.3f" % (step, train_step()), flush=True)
# SPDX-License-Identifier: MIT
