#!/usr/bin/env python3
"""make-torch-stream.py — a PyTorch allocator stream as the hook's tracker
(collector/python/vs_torch_stream.cpp) writes it, for tests without a GPU.

Usage: make-torch-stream.py STREAM PID

Writes a stream of one process on device 0: a 20 MiB segment, then 40
allocations of distinct sizes with every other one freed (free requested,
then completed), a second segment mapped and unmapped, an out-of-memory
entry; then a record its process did not finish (every field but the
action written) and the zeroed rest of the chunk, as a process killed
mid-write leaves.  Prints, as JSON, what the trace's `pytorch` summary row
must then hold.
"""
import json
import struct
import sys

path, pid = sys.argv[1], int(sys.argv[2])
t0 = 1_763_900_000_000_000_000
recs = []
SEG = 0x7F0000000000
MIB = 1 << 20


def rec(action, addr, size, ts, device=0):
    recs.append(struct.pack("<qQQQiiII", ts, addr, size, 0x55, device, 4242, 0, action))


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
        ts += 1000
        rec(2, a, s, ts)
        ts += 1000
        rec(3, a, s, ts)
        frees += 1
        allocated -= s
ts += 1000
rec(6, SEG + 64 * MIB, 2 * MIB, ts)
ts += 1000
rec(7, SEG + 64 * MIB, 2 * MIB, ts)
ts += 1000
rec(8, 123 * MIB, 30 * MIB, ts)
torn = struct.pack("<qQQQiiII", ts + 1000, SEG + 30 * MIB, 5 * MIB, 0x55, 0, 4242, 0, 0)
header = b"VSTORCH1" + struct.pack("<IIqq", 1, 48, pid, t0)
with open(path, "wb") as f:
    f.write(header.ljust(4096, b"\0"))
    f.write(b"".join(recs))
    f.write(torn)
    f.write(b"\0" * (48 * 1000))
json.dump({"alloc_count": allocs, "free_count": frees, "peak_allocated_bytes": peak,
           "final_allocated_bytes": allocated, "peak_reserved_bytes": 22 * MIB,
           "final_reserved_bytes": 20 * MIB, "failed_alloc_count": 1,
           "events": len(recs)}, sys.stdout)
