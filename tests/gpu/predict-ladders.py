#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""predict-ladders.py — records the ladders `vramscope predict` is checked
against: samples/torch-ladder.py run at several batch sizes (and sequence
lengths), each in its own process, with PyTorch's allocator history.

  python3 tests/gpu/predict-ladders.py OUTDIR [--lanes 3]

Ladders (name: model, what varies, sizes):
  resnet18-batch   ResNet-18, batch 16 32 64 128 256 512
  gpt2-batch       GPT-2 small, seq 256, batch 2 4 8 16 32
  gpt2-seq         GPT-2 small, batch 4, seq 64 128 256 512 1024
  resnet18-bf16, gpt2-bf16, resnet18-ckpt, gpt2-ckpt: three sizes each,
                   under autocast bf16 or with activation checkpointing
For each run NAME: OUTDIR/NAME.json (settings and memory_stats()), and
NAME.pickle (the snapshot).  Then, for the three main ladders, a cap
between the reserved peaks of the third and fourth sizes, and the ladder
run again under it from the third size up to the first that fails:
NAME-cap.json.  OUTDIR/ladders.json lists every ladder, its sizes, its cap,
its last size that fit and its first that failed.  Three ladders run at a time
(one per lane).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sample = os.path.join(here, "..", "..", "samples", "torch-ladder.py")
if not os.path.exists(sample):
    sample = os.path.join(here, "torch-ladder.py")

LADDERS = [
    ("resnet18-batch", "resnet18", "batch", [16, 32, 64, 128, 256, 512], {}),
    ("gpt2-batch", "gpt2", "batch", [2, 4, 8, 16, 32], {"seq": 256}),
    ("gpt2-seq", "gpt2", "seq", [64, 128, 256, 512, 1024], {"batch": 4}),
    ("resnet18-bf16", "resnet18", "batch", [16, 32, 128], {"dtype": "bf16"}),
    ("gpt2-bf16", "gpt2", "batch", [2, 4, 16], {"seq": 256, "dtype": "bf16"}),
    ("resnet18-ckpt", "resnet18", "batch", [16, 32, 128], {"checkpoint": True}),
    ("gpt2-ckpt", "gpt2", "batch", [2, 4, 16], {"seq": 256, "checkpoint": True}),
]
CAPPED = {"resnet18-batch", "gpt2-batch", "gpt2-seq"}


def run_one(out, name, model, vary, size, extra, limit=0, snapshot=True):
    args = [sys.executable, sample, "--model", model, "--truth", os.path.join(out, name + ".json")]
    batch = extra.get("batch", size) if vary == "seq" else size
    args += ["--batch", str(batch)]
    if model == "gpt2":
        args += ["--seq", str(size if vary == "seq" else extra.get("seq", 256))]
    if extra.get("dtype"):
        args += ["--dtype", extra["dtype"]]
    if extra.get("checkpoint"):
        args += ["--checkpoint"]
    if limit:
        args += ["--limit-bytes", str(limit)]
    if snapshot:
        args += ["--snapshot", os.path.join(out, name + ".pickle")]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, timeout=240)
    line = [l for l in p.stdout.splitlines() if l.startswith("LADDER")]
    print("%-28s rc=%d %.0fs %s" % (name, p.returncode, time.time() - t0,
                                     line[0] if line else p.stderr[-600:]), flush=True)
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)


def run_ladder(out, ladder, summary):
    lname, model, vary, sizes, extra = ladder
    truths = {}
    for size in sizes:
        truths[size] = run_one(out, "%s-%d" % (lname, size), model, vary, size, extra)
    entry = {"model": model, "vary": vary, "sizes": sizes, "settings": extra}
    if lname in CAPPED:
        r2 = truths[sizes[2]]["memory_stats"]["reserved_bytes.all.peak"]
        r3 = truths[sizes[3]]["memory_stats"]["reserved_bytes.all.peak"]
        cap = (r2 + r3) // 2
        entry["cap_bytes"] = cap
        entry["last_fit"] = None
        entry["first_failure"] = None
        for size in sizes[2:]:
            t = run_one(out, "%s-%d-cap" % (lname, size), model, vary, size, extra, limit=cap,
                        snapshot=False)
            entry["allowed_bytes"] = t["allowed_bytes"]
            if t["oom"]:
                entry["first_failure"] = size
                break
            entry["last_fit"] = size
    summary[lname] = entry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--lanes", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    todo = [l for l in LADDERS if not a.only or l[0] in a.only]
    summary = {}
    lanes = [todo[i::a.lanes] for i in range(a.lanes)]

    def lane(ladders):
        for l in ladders:
            try:
                run_ladder(a.out, l, summary)
            except Exception as e:  # one broken ladder must not stop the others
                print("ladder %s failed: %r" % (l[0], e), flush=True)

    threads = [threading.Thread(target=lane, args=(l,)) for l in lanes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(os.path.join(a.out, "ladders.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
