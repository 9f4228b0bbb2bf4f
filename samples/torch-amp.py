#!/usr/bin/env python3
"""torch-amp.py — the same training loop in fp32 and with bf16 autocast.

ResNet-18 on synthetic images, --steps steps in NVTX ranges "step N",
with --amp bf16 (torch.autocast) or --amp off (fp32).  Recorded once each,
the two traces are the pair `vramscope diff` compares: autocast stores the
activations saved for backward in bf16, roughly halving them, while
parameters, gradients and optimizer state stay fp32.  The model, batch and
ranges: torch_sample.py; the training step, with its autocast, is here.

  python3 torch-amp.py [--amp off|bf16] [--batch 64] [--steps 6] [--truth FILE]
"""
import contextlib

import torch

import torch_sample

p = torch_sample.parser(steps=6, batch=64)
p.add_argument("--amp", choices=["off", "bf16"], default="off")
args = torch_sample.start(p, "amp-{amp}")
run = torch_sample.setup(args)


def autocast():
    if args.amp == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_step():
    run.optimizer.zero_grad(set_to_none=True)
    with autocast():
        loss = run.loss_fn(run.model(run.images), run.labels)
    loss.backward()
    run.optimizer.step()
    return loss.item()


torch_sample.ranged_steps(args.steps, train_step, "step %d: loss %.3f")
# SPDX-License-Identifier: MIT
