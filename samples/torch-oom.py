#!/usr/bin/env python3
"""torch-oom.py — a PyTorch program that dies of an uncaught OutOfMemoryError.

It keeps a few tensors alive, then asks for far more than the GPU has; the
error is not caught, so Python prints the traceback and exits with status 1
— the case where the state at the failure is usually lost.  Its ground
truth (PyTorch's own memory_stats(), the failed request and what was live)
is printed from an atexit handler registered before CUDA is used, so it
runs after every handler registered later and sees the final state.

  python3 torch-oom.py
"""
import atexit
import json

import torch

GiB = 1 << 30
request = 4096 * GiB  # far beyond any GPU


def truth():
    st = torch.cuda.memory_stats()
    print("GROUND_TRUTH " + json.dumps({"exit_status": 1, "pytorch": {
        "peak_reserved": st["reserved_bytes.all.peak"],
        "final_reserved": st["reserved_bytes.all.current"],
        "peak_allocated": st["requested_bytes.all.peak"],
        "final_allocated": st["requested_bytes.all.current"],
        "alloc_count": st["allocation.all.allocated"],
        "failed": st["num_ooms"],
        "oom_request": request}}), flush=True)


atexit.register(truth)
kept = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda") for _ in range(3)]
kept.append(torch.ones(1000, 1000, device="cuda"))
too_big = torch.empty(request, dtype=torch.uint8, device="cuda")  # raises, uncaught
# SPDX-License-Identifier: MIT
