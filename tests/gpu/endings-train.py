#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""endings-train.py — a small PyTorch training loop that ends the way it is
told, for tests/gpu/run-endings.sh.

  python3 endings-train.py HOW [--steps N] [--batch B] [--size S]

Trains torchvision's ResNet-18 (random weights, synthetic data) for N
steps, then prints GROUND_TRUTH with PyTorch's own account of its caching
allocator (torch.cuda.memory_stats()) and READY, waits 1.2 s (longer than
the loss bound of a SIGKILL, so everything before READY must be in the
trace) and ends as HOW says:

  exit        returns normally
  exception   raises RuntimeError (uncaught)
  oom         asks for more memory than the GPU has (uncaught
              torch.OutOfMemoryError; GROUND_TRUTH then counts it)
  sigkill     SIGKILL to itself (what the OOM killer does)
  sigterm     SIGTERM to itself
  abort       os.abort() (what NCCL's watchdog does)
  segv        a segmentation fault (reads address 0)
  exit3       os._exit(3): no atexit handlers, no flush
  wait        sleeps until a signal from outside ends it

  python3 endings-train.py bench [--steps N] ...  prints step_ms, the mean
  time of a training step after warmup, and nothing else is ended.
"""
import argparse
import ctypes
import json
import os
import signal
import sys
import time

import torch
import torchvision

p = argparse.ArgumentParser()
p.add_argument("how")
p.add_argument("--steps", type=int, default=3)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--size", type=int, default=64)
args = p.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
model = torchvision.models.resnet18(num_classes=10).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(args.batch, 3, args.size, args.size, device=dev)
y = torch.randint(0, 10, (args.batch,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


if args.how == "bench":
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    print("step_ms %.4f" % (1000 * (time.perf_counter() - t0) / args.steps), flush=True)
    sys.exit(0)

for i in range(args.steps):
    loss = step()
    print("step %d loss %.4f" % (i, loss.item()), flush=True)
torch.cuda.synchronize()
del loss

oom = None
if args.how == "oom":
    total = torch.cuda.get_device_properties(0).total_memory
    try:
        torch.empty(total * 2, dtype=torch.uint8, device=dev)
    except torch.OutOfMemoryError as e:
        oom = e


def truth():
    st = torch.cuda.memory_stats()
    keys = ["allocation.all.allocated", "allocation.all.freed", "allocation.all.current",
            "requested_bytes.all.current", "requested_bytes.all.peak",
            "reserved_bytes.all.current", "reserved_bytes.all.peak",
            "segment.all.allocated", "segment.all.current", "num_ooms"]
    return {k: st.get(k, 0) for k in keys}


print("GROUND_TRUTH " + json.dumps({"how": args.how, "pid": os.getpid(), "torch": truth()}),
      flush=True)
print("READY", flush=True)
time.sleep(1.2)

how = args.how
if how == "exit":
    sys.exit(0)
if how == "exception":
    raise RuntimeError("ended by an exception, as asked")
if how == "oom":
    raise oom
if how in ("sigkill", "sigterm"):
    # The signal ends the process; until it does (the collector's handler
    # saves the final snapshot and flushes first), wait.
    os.kill(os.getpid(), signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
    while True:
        time.sleep(1)
if how == "abort":
    os.abort()
if how == "segv":
    ctypes.string_at(0)
if how == "exit3":
    os._exit(3)
if how == "wait":
    while True:
        time.sleep(1)
sys.exit("unknown ending %s" % how)
