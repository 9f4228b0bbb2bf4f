#!/usr/bin/env python3
"""torch-optimizer-state.py — optimizer state dominating.

A wide MLP (--layers linear layers of --width x --width, fp32) trained with
Adam on a tiny batch: Adam keeps two fp32 moments per parameter
(exp_avg, exp_avg_sq), so its state is twice the parameters and dwarfs the
activations.  NVTX ranges "step N" (torch_sample.py, with the options).

What a diagnosis should say: at the peak, optimizer-state ≈ 2 × parameters
≈ 2 × gradients, activations small; remedies: a fused or 8-bit optimizer,
or sharding (FSDP / ZeRO).  Ground truth: torch_truth.py (notes: the
parameter count and bytes).

  python3 torch-optimizer-state.py [--width 4096] [--layers 8] [--steps 4] [--truth FILE]
"""
import torch

import torch_sample
import torch_truth

p = torch_sample.parser(steps=4, batch=8, size=None)
p.add_argument("--width", type=int, default=4096)
p.add_argument("--layers", type=int, default=8)
args = torch_sample.start(p, "optimizer-state")

dev = torch.device("cuda")
torch.manual_seed(0)
layers = []
for _ in range(args.layers):
    layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).to(dev)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
params = sum(p.numel() for p in model.parameters())
torch_truth.note("parameters", params)
torch_truth.note("parameter_bytes", params * 4)
x = torch.randn(args.batch, args.width, device=dev)


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    loss.backward()
    optimizer.step()
    return loss.item()


torch_sample.ranged_steps(args.steps, train_step, "step %d: loss %.5f")
# SPDX-License-Identifier: MIT
