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
(or torch.inference_mode()) around evaluation.  Ground truth:
torch_truth.py.

  python3 torch-eval-no-grad.py [--steps 4] [--batch 32] [--val-batch 96] [--truth FILE]
"""
import argparse

import torch
import torchvision

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=4)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--val-batch", type=int, default=96)
p.add_argument("--size", type=int, default=128)
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("eval-no-grad", vars(args), args.truth)

dev = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(dev)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, args.size, args.size, device=dev)
labels = torch.randint(0, 100, (args.batch,), device=dev)
val_images = torch.randn(args.val_batch, 3, args.size, args.size, device=dev)


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def evaluate():
    model.eval()
    pred = model(val_images)  # the bug: no torch.no_grad()
    correct = int((pred.argmax(1) == 0).sum().item())
    model.train()
    return correct


for step in range(args.steps):
    torch.cuda.nvtx.range_push("step %d" % step)
    torch.cuda.nvtx.range_push("train")
    loss = train_step()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("evaluate")
    correct = evaluate()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    print("step %d: loss %.3f, correct %d" % (step, loss, correct), flush=True)
# SPDX-License-Identifier: MIT
