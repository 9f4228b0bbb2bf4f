#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make-torch-stream.py — a PyTorch allocator stream as the hook's tracker
(collector/python/vs_torch_stream.cpp) writes it, for tests without a GPU.

Usage: make-torch-stream.py STREAM PID [tail|tail-oom]

Writes a stream of one process on device 0: a 20 MiB segment, then 40
allocations of distinct sizes with every other one freed (free requested,
then completed), a second segment mapped and unmapped, an out-of-memory
entry; then a record its process did not finish (every field but the
action written) and the zeroed rest of the chunk, as a process killed
mid-write leaves.  Prints, as JSON, what the trace's `pytorch` summary row
must then hold.

With `tail`, a snapshot marker (the allocator took the process's final
snapshot) follows, then what the program did after it: a 2 MiB segment,
allocations of 1000, 2000 and 3000 bytes, the first one freed; the JSON
then says what those add to the snapshot's account ("tail_*").  With
`tail-oom`, the same tail ends in an out-of-memory entry (a request of
40 MiB with 1 MiB free; the JSON's "tail_failed" is 1, else 0).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from vs_stream_files import pack_record, write_stream  # noqa: E402
from vs_stream_steps import free_block  # noqa: E402

path, pid = sys.argv[1], int(sys.argv[2])
tail = len(sys.argv) > 3 and sys.argv[3] in ("tail", "tail-oom")
tail_oom = len(sys.argv) > 3 and sys.argv[3] == "tail-oom"
# A tail comes after the final snapshot in time as well: after any
# snapshot a test puts beside it.
t0 = 4_102_444_800_000_000_000 if tail else 1_763_900_000_000_000_000
recs = []
SEG = 0x7F0000000000
MIB = 1 << 20


def rec(action, addr, size, ts, device=0):
    recs.append(pack_record(action, addr, size, ts, device))


ts = t0 + 1000
rec(4, SEG, 20 * MIB, ts)
allocated = peak = 0
live = []
addr = SEG
allocs = frees = 0
for i in range(40):
    size = 4096 * (i + 1) + 17
    ts += 1000
    rec(1, addr, size, ts)
    allocs += 1
    allocated += size
    peak = max(peak, allocated)
    live.append((addr, size))
    addr += 4096 * (i + 2)
    if i % 2 == 1:
        a, s = live.pop(0)
        ts = free_block(rec, a, s, ts)
        frees += 1
        allocated -= s
ts += 1000
rec(6, SEG + 64 * MIB, 2 * MIB, ts)
ts += 1000
rec(7, SEG + 64 * MIB, 2 * MIB, ts)
ts += 1000
rec(8, 123 * MIB, 30 * MIB, ts)
if tail:
    ts += 1000
    rec(9, 0, allocated, ts)
    TAIL = SEG + 256 * MIB
    ts += 1000
    rec(4, TAIL, 2 * MIB, ts)
    for k, size in enumerate((1000, 2000, 3000)):
        ts += 1000
        rec(1, TAIL + k * 4096, size, ts)
    ts = free_block(rec, TAIL, 1000, ts)
    if tail_oom:
        ts += 1000
        rec(8, 1 * MIB, 40 * MIB, ts)
torn = pack_record(0, SEG + 30 * MIB, 5 * MIB, ts + 1000)
write_stream(path, pid, t0, recs + [torn], 1000)
json.dump({"alloc_count": allocs, "free_count": frees, "peak_allocated_bytes": peak,
           "final_allocated_bytes": allocated, "peak_reserved_bytes": 22 * MIB,
           "final_reserved_bytes": 20 * MIB, "failed_alloc_count": 1,
           "events": len(recs), "tail_allocs": 3, "tail_live_peak": 6000,
           "tail_final_allocated": 5000, "tail_reserved": 2 * MIB,
           "tail_failed": int(tail_oom)}, sys.stdout)
