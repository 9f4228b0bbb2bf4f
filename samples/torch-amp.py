#!/usr/bin/env python3
"""torch-amp.py — the same training loop in fp32 and with bf16 autocast.

ResNet-18 on synthetic images, --steps steps in NVTX ranges "step N",
with --amp bf16 (torch.autocast) or --amp off (fp32).  Recorded once each,
the two traces are the pair `vramscope diff` compares: autocast stores the
activations saved for backward in bf16, roughly halving them, while
parameters, gradients and optimizer state stay fp32.

  python3 torch-amp.py [--amp off|bf16] [--batch 64] [--steps 6] [--truth FILE]
"""
import argparse
import contextlib

import torch
import torchvision

import torch_truth

p = argparse.ArgumentParser()
p.add_argument("--amp", choices=["off", "bf16"], default="off")
p.add_argument("--batch", type=int, default=64)
p.add_argument("--size", type=int, default=128)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--truth")
args = p.parse_args()
torch_truth.install("amp-" + args.amp, vars(args), args.truth)

dev = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=100).to(dev)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, args.size, args.size, device=dev)
labels = torch.randint(0, 100, (args.batch,), device=dev)


def autocast():
    if args.amp == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_step():
    optimizer.zero_grad(set_to_none=True)
    with autocast():
        loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


for step in range(args.steps):
    torch.cuda.nvtx.range_push("step %d" % step)
    loss = train_step()
    torch.cuda.nvtx.range_pop()
    print("step %d: loss %.3f" % (step, loss), flush=True)
# SPDX-License-Identifier: MIT
