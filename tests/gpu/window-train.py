# SPDX-License-Identifier: MIT
"""window-train.py — a long training-like PyTorch loop for the flight
recorder (record --window): each step allocates activations, computes and
frees them; one tensor in every 50 steps is kept (a slow leak); one early
peak (a large tensor held for a moment, 3 s in); one caught out-of-memory
error (6 s in).  Runs for --seconds, then writes its own ground truth as
JSON to --truth: torch.cuda.memory_stats() peaks, the error it caught, the
bytes its leak holds, the steps it ran.

Usage: python3 window-train.py --seconds S --truth FILE [--sleep S]
(--sleep: the pause after each step, 0.004 s by default.)
"""
import argparse
import json
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, required=True)
ap.add_argument("--truth", required=True)
ap.add_argument("--sleep", type=float, default=0.004)
args = ap.parse_args()

dev = torch.device("cuda", 0)
torch.manual_seed(0)
w = torch.randn(512, 512, device=dev)
leak = []
leak_bytes = 0
oom = None
peak_done = False
steps = 0
t0 = time.time()
peak_at = oom_at = None
while time.time() - t0 < args.seconds:
    acts = []
    x = torch.randn(256, 512, device=dev)
    for k in range(12):
        x = torch.relu(x @ w)
        acts.append(torch.empty((k + 1) * 65536, dtype=torch.uint8, device=dev))
    loss = x.sum()
    del acts, x
    if steps % 50 == 0:
        t = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
        leak.append(t)
        leak_bytes += t.numel()
    elapsed = time.time() - t0
    if not peak_done and elapsed > 3:
        big = torch.empty(2 << 30, dtype=torch.uint8, device=dev)
        torch.cuda.synchronize()
        time.sleep(0.05)
        del big
        peak_done = True
        peak_at = elapsed
    if oom is None and elapsed > 6:
        try:
            torch.empty(1 << 40, dtype=torch.uint8, device=dev)
        except torch.cuda.OutOfMemoryError as e:
            oom = {"requested_bytes": 1 << 40, "message": str(e).splitlines()[0], "at_s": elapsed}
    loss.item()
    steps += 1
    time.sleep(args.sleep)

torch.cuda.synchronize()
s = torch.cuda.memory_stats(dev)
truth = {
    "seconds": args.seconds,
    "sleep": args.sleep,
    "elapsed_s": time.time() - t0,
    "steps": steps,
    "peak_at_s": peak_at,
    "oom": oom,
    "leak_tensors": len(leak),
    "leak_bytes": leak_bytes,
    "requested_bytes.all.peak": s.get("requested_bytes.all.peak"),
    "allocated_bytes.all.peak": s.get("allocated_bytes.all.peak"),
    "reserved_bytes.all.peak": s.get("reserved_bytes.all.peak"),
    "requested_bytes.all.current": s.get("requested_bytes.all.current"),
    "reserved_bytes.all.current": s.get("reserved_bytes.all.current"),
    "allocation.all.allocated": s.get("allocation.all.allocated"),
    "allocation.all.freed": s.get("allocation.all.freed"),
    "num_ooms": s.get("num_ooms"),
    "torch": torch.__version__,
}
with open(args.truth, "w") as f:
    json.dump(truth, f, indent=1)
print("GROUND_TRUTH", json.dumps(truth))
