#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make-snapshots.py — records the PyTorch memory snapshots that the import
# tests use as fixtures, each with the run's own torch.cuda.memory_stats().
#
# Runs on a machine with a CUDA GPU and PyTorch.  Every workload runs in a
# fresh interpreter so that its allocator history starts empty (except the
# 'late' workload, which allocates before recording on purpose).  For each
# workload NAME it writes NAME.pickle (torch.cuda.memory._dump_snapshot) and
# NAME.json (memory_stats() taken at the same instant, plus facts about the
# run) into the output folder.
#
#   python3 make-snapshots.py OUTDIR            all workloads
#   python3 make-snapshots.py OUTDIR NAME...    only these
import json
import os
import subprocess
import sys
import time

import vs_torch_train

WORKLOADS = ["train", "oom", "leak", "fragmentation", "expandable",
             "streams", "overflow", "late"]


def finish(torch, out, name, max_entries, extra=None):
    """Takes stats and the snapshot back to back (neither allocates device
    memory nor processes pending stream events) and writes both."""
    stats = torch.cuda.memory_stats()
    torch.cuda.memory._dump_snapshot(os.path.join(out, name + ".pickle"))
    free, total = torch.cuda.mem_get_info()
    info = {
        "workload": name,
        "torch_version": torch.__version__,
        "device_name": torch.cuda.get_device_name(0),
        "device_total_bytes": total,
        "max_entries": max_entries,
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "memory_stats": stats,
    }
    if extra:
        info.update(extra)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)


def record(torch, max_entries):
    torch.cuda.memory._record_memory_history(
        enabled="all", context="all", stacks="python",
        max_entries=max_entries)


def tiny_model(torch):
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10)).cuda()


def train_steps(torch, model, opt, steps, batch=64):
    vs_torch_train.train(torch, model, opt, steps, batch, 256)


def run_one(name, out):
    if name == "expandable":
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    import torch
    max_entries = 100000
    extra = {}
    if name == "train":
        record(torch, max_entries)
        model = tiny_model(torch)
        opt = torch.optim.Adam(model.parameters())
        train_steps(torch, model, opt, 3)
        torch.cuda.empty_cache()
        train_steps(torch, model, opt, 1)
    elif name == "oom":
        record(torch, max_entries)
        held = []
        ooms = 0
        try:
            while True:  # take 30 GiB at a time until the device is full
                held.append(torch.empty(30 << 30, dtype=torch.uint8,
                                        device="cuda"))
        except torch.cuda.OutOfMemoryError:
            ooms += 1
        del held[1:]
        small = [torch.empty(1 << 20, device="cuda") for _ in range(4)]
        try:
            torch.empty(1 << 40, dtype=torch.uint8, device="cuda")
        except torch.cuda.OutOfMemoryError:
            ooms += 1
        del small[::2]
        extra["caught_ooms"] = ooms
    elif name == "leak":
        record(torch, max_entries)
        model = tiny_model(torch)
        kept = []
        for _ in range(6):  # outputs kept with their autograd graph
            kept.append(model(torch.randn(128, 256, device="cuda")))
    elif name == "fragmentation":
        record(torch, max_entries)
        ts = [torch.empty((3 if i % 2 else 5) << 20, dtype=torch.uint8,
                          device="cuda") for i in range(40)]
        del ts[::2]
        big = [torch.empty(24 << 20, dtype=torch.uint8, device="cuda")
               for _ in range(4)]
        del ts[::3]
        big.append(torch.empty(7 << 20, dtype=torch.uint8, device="cuda"))
    elif name == "expandable":
        record(torch, max_entries)
        model = tiny_model(torch)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        train_steps(torch, model, opt, 2)
        ts = [torch.empty(40 << 20, dtype=torch.uint8, device="cuda")
              for _ in range(6)]
        del ts[:4]
        torch.cuda.empty_cache()  # unmaps the free pages (segment_unmap)
        ts.append(torch.empty(90 << 20, dtype=torch.uint8, device="cuda"))
    elif name == "streams":
        record(torch, max_entries)
        side = torch.cuda.Stream()
        a = torch.randn(4096, 4096, device="cuda")
        with torch.cuda.stream(side):
            side.wait_stream(torch.cuda.current_stream())
            b = torch.randn(4096, 4096, device="cuda")  # side-stream pool
            for _ in range(3):
                c = a @ a
            a.record_stream(side)
        del a, c
        x = torch.randn(1024, 1024, device="cuda")
        with torch.cuda.stream(side):
            for _ in range(40):  # keeps the side stream busy
                d = b @ b
            x.record_stream(side)
        del x  # freed while the side stream still uses it: pending free
        extra["pending_free_expected"] = True
    elif name == "overflow":
        max_entries = 64
        record(torch, max_entries)
        model = tiny_model(torch)
        opt = torch.optim.Adam(model.parameters())
        train_steps(torch, model, opt, 4)
    elif name == "late":
        model = tiny_model(torch)
        opt = torch.optim.Adam(model.parameters())
        train_steps(torch, model, opt, 1)
        keep = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
        record(torch, max_entries)
        train_steps(torch, model, opt, 1)
        del keep
    else:
        raise SystemExit("unknown workload " + name)
    finish(torch, out, name, max_entries, extra)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--one":
        run_one(sys.argv[2], sys.argv[3])
        return
    out = sys.argv[1]
    names = sys.argv[2:] or WORKLOADS
    os.makedirs(out, exist_ok=True)
    failed = 0
    for name in names:
        t = time.time()
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        r = subprocess.run([sys.executable, __file__, "--one", name, out],
                           env=env, timeout=180)
        print("%-14s rc=%d %.1fs" % (name, r.returncode, time.time() - t),
              flush=True)
        failed += r.returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
