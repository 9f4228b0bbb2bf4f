#!/usr/bin/env python3
"""torch-healthy.py — a healthy training loop: the diagnosis must find nothing.

ResNet-18 trained with SGD on synthetic images, validated under
torch.no_grad() every --val-every steps, losses logged with .item().  No
NVTX ranges (iterations are found from the allocation pattern), no cap,
memory flat from the second step on.  A diagnosis of this run must report
no growth, no leak, no fragmentation worth acting on and no failure.
Ground truth: torch_truth.py.

  python3 torch-healthy.py [--steps 12] [--batch 32] [--truth FILE]
"""
import argparse

import torch
import torchvision

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--size", type=int, default=128)
p.add_argument("--val-every", type=int, default=4)
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("healthy", vars(args), args.truth)

dev = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(dev)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, args.size, args.size, device=dev)
labels = torch.randint(0, 100, (args.batch,), device=dev)
losses = []


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def evaluate():
    model.eval()
    with torch.no_grad():
        correct = int((model(images).argmax(1) == labels).sum().item())
    model.train()
    return correct


for step in range(args.steps):
    losses.append(train_step())
    if (step + 1) % args.val_every == 0:
        print("step %d: loss %.3f, correct %d" % (step, losses[-1], evaluate()), flush=True)
# SPDX-License-Identifier: MIT
