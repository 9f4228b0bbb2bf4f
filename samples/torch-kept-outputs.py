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
.item() as the remedy.  Ground truth: torch_truth.py (notes: the bytes kept
per step as PyTorch counts them).

  python3 torch-kept-outputs.py [--steps 16] [--batch 16] [--truth FILE]
"""
import argparse

import torch
import torchvision

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=16)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--size", type=int, default=128)
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("kept-outputs", vars(args), args.truth)

dev = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(dev)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, args.size, args.size, device=dev)
labels = torch.randint(0, 100, (args.batch,), device=dev)
history = []


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()


def log_loss():
    loss = loss_fn(model(images), labels)  # the bug: kept with its graph
    history.append(loss)


growth = []
for step in range(args.steps):
    before = torch.cuda.memory_allocated()
    train_step()
    log_loss()
    torch.cuda.synchronize()
    growth.append(torch.cuda.memory_allocated() - before)
    print("step %d: allocated %.1f MiB" % (step, torch.cuda.memory_allocated() / 2**20), flush=True)
torch_truth.note("allocated_growth_per_step", growth)
# SPDX-License-Identifier: MIT
