#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""snapshot-gc-bench.py — what Python's cyclic garbage collector costs the
PyTorch hook's exit snapshot: builds an object graph shaped like
torch.cuda.memory._snapshot()'s (ENTRIES history entries, each a dict
with 12 frames drawn from 300 shared frame dicts) and pickles it as the
hook does, inside a process already holding HEAP other objects (a
training process's heap), with the collector on and off, alternating,
REPS times each.  Needs no GPU and no torch.

  python3 bench/snapshot-gc-bench.py [ENTRIES [HEAP [REPS]]]
  (defaults: 643000 entries, as a 800-step ResNet-18 run; 2,000,000; 2)
"""
import gc
import io
import pickle
import sys
import time

entries = int(sys.argv[1]) if len(sys.argv) > 1 else 643000
heap_size = int(sys.argv[2]) if len(sys.argv) > 2 else 2000000
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2

frames = [{"filename": "f%d.py" % i, "line": i, "name": "fn%d" % i} for i in range(300)]


def build(n):
    trace = []
    for i in range(n):
        trace.append({"action": "alloc", "addr": i * 512, "size": 512, "stream": 0,
                      "time_us": i, "frames": [frames[(i + k) % 300] for k in range(12)]})
    return {"segments": [], "device_traces": [trace]}


heap = [{"x": i} for i in range(heap_size)]
print("python %s, %d entries, a heap of %d objects" % (sys.version.split()[0], entries, heap_size))
for rep in range(reps):
    for collect in (True, False):
        if not collect:
            gc.disable()
        t0 = time.perf_counter()
        snapshot = build(entries)
        t1 = time.perf_counter()
        out = io.BytesIO()
        pickle.dump(snapshot, out, protocol=4)
        t2 = time.perf_counter()
        gc.enable()
        print("collector %-3s: building %.3f s, pickling %.3f s (%d MB)"
              % ("on" if collect else "off", t1 - t0, t2 - t1, len(out.getvalue()) >> 20))
        del snapshot, out
