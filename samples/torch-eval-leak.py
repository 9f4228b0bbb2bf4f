#!/usr/bin/env python3
"""torch-eval-leak.py — a training loop that runs out of memory.

A ResNet-18 trains on synthetic images.  After every training step it runs
the model on a validation batch *without* torch.no_grad() and keeps the
predictions in a list — each kept output holds its whole autograd graph
and the activations saved for it, so memory grows with every iteration
until the GPU (here capped at --cap-gib with
torch.cuda.set_per_process_memory_fraction, so the demo fits any GPU)
runs out and PyTorch raises the familiar "CUDA out of memory. Tried to
allocate ..." error, uncaught.

The fix is `with torch.no_grad():` around evaluation, or keeping
`pred.detach().cpu()`.  The program's own account (torch.cuda.memory_stats)
is printed as a GROUND_TRUTH line at exit.

  python3 torch-eval-leak.py [--cap-gib 6] [--batch 32] [--truth FILE]
"""
import argparse
import atexit
import json

import torch
import torchvision

p = argparse.ArgumentParser()
p.add_argument("--cap-gib", type=float, default=6.0)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--steps", type=int, default=100)
p.add_argument("--truth", help="also write the ground truth JSON to this file")
args = p.parse_args()


def truth():
    st = torch.cuda.memory_stats()
    text = json.dumps({"exit_status": 1, "settings": vars(args), "memory_stats": st, "pytorch": {
        "peak_reserved": st["reserved_bytes.all.peak"],
        "final_reserved": st["reserved_bytes.all.current"],
        "peak_allocated": st["requested_bytes.all.peak"],
        "final_allocated": st["requested_bytes.all.current"],
        "alloc_count": st["allocation.all.allocated"],
        "failed": st["num_ooms"]}})
    print("GROUND_TRUTH " + text, flush=True)
    if args.truth:
        with open(args.truth, "w") as f:
            f.write(text + "\n")


atexit.register(truth)
device = torch.device("cuda")
total = torch.cuda.get_device_properties(device).total_memory
torch.cuda.set_per_process_memory_fraction(min(1.0, args.cap_gib * (1 << 30) / total))

model = torchvision.models.resnet18(num_classes=100).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
images = torch.randn(args.batch, 3, 224, 224, device=device)
labels = torch.randint(0, 100, (args.batch,), device=device)
val_images = torch.randn(args.batch, 3, 224, 224, device=device)


def train_step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def evaluate(kept):
    pred = model(val_images)  # the bug: no torch.no_grad(), output kept
    kept.append(pred)


kept = []
for step in range(args.steps):
    torch.cuda.nvtx.range_push(f"step {step}")
    torch.cuda.nvtx.range_push("train")
    loss = train_step()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("evaluate")
    evaluate(kept)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"step {step}: loss {loss:.3f}, "
          f"allocated {torch.cuda.memory_allocated() / (1 << 30):.2f} GiB", flush=True)
# SPDX-License-Identifier: MIT
