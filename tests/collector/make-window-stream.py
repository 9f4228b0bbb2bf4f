#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make-window-stream.py — a long PyTorch allocator stream, as the hook's
tracker (collector/python/vs_torch_stream.cpp) writes it, for the flight
recorder's tests without a GPU.

Usage: make-window-stream.py STREAM PID STEPS [exit] [ranges SCHEMA]
                              [pace RECORDS SECONDS]

A training loop on device 0, one step every 10 ms: a 1 GiB segment, then
per step 6 activations allocated and freed in reverse (free requested, then
completed); every 100 steps a 4 KiB block kept to the end (a leak); at a
tenth of the run an 8 GiB segment and block (the peak), freed at the next
step; every 200 steps (from step 100) an out-of-memory entry.  Prints, as
JSON, what the trace's `pytorch` summary row must hold and the leak.
With `exit`, the process then takes its final snapshot (a marker) and
frees everything as Python shuts down: what was live at the marker is
what the trace must hold at its end.  With `ranges SCHEMA` (the trace
schema, schemas/trace.sql), the process also leaves a process trace beside
the stream, as the collector would, holding an NVTX range "step N" around
each step: the program's iterations.  With `pace RECORDS SECONDS`, the
stream is written over time as the tracker writes it while a program runs
(the file grown in chunks, each record's action word stored last, a pause
of SECONDS after every RECORDS records), and SIGINT ends the writing at
a record: the JSON then says what the records written hold (with `exit`,
those before the final snapshot's marker).
"""
import json
import mmap
import os
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from vs_stream_files import pack_record, write_stream  # noqa: E402
from vs_stream_steps import free_block  # noqa: E402

path, pid, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
at_exit = "exit" in sys.argv[4:]
schema = sys.argv[sys.argv.index("ranges") + 1] if "ranges" in sys.argv[4:] else None
pace = ((int(sys.argv[sys.argv.index("pace") + 1]), float(sys.argv[sys.argv.index("pace") + 2]))
        if "pace" in sys.argv[4:] else None)
t0 = 1_763_900_000_000_000_000
MIB = 1 << 20
SEG, BIG = 0x7F0000000000, 0x7F2000000000
recs = []


def rec(action, addr, size, ts):
    recs.append(pack_record(action, addr, size, ts))


allocated = peak = 0
allocs = frees = ooms = 0
reserved = peak_reserved = 0
leak = 0
rec(4, SEG, 1024 * MIB, t0 + 1000)
reserved = peak_reserved = 1024 * MIB
for i in range(steps):
    ts = t0 + 1_000_000 + i * 10_000_000
    live = []
    for k in range(6):
        size = (1 + (i + k) % 5) * MIB + 256 * k
        ts += 1000
        rec(1, SEG + k * 16 * MIB, size, ts)
        allocs += 1
        allocated += size
        peak = max(peak, allocated)
        live.append((SEG + k * 16 * MIB, size))
    if i == steps // 10:
        ts += 1000
        rec(4, BIG, 8192 * MIB, ts)
        reserved += 8192 * MIB
        peak_reserved = max(peak_reserved, reserved)
        ts += 1000
        rec(1, BIG, 8192 * MIB, ts)
        allocs += 1
        allocated += 8192 * MIB
        peak = max(peak, allocated)
    if i == steps // 10 + 1:
        ts += 1000
        rec(3, BIG, 8192 * MIB, ts)
        frees += 1
        allocated -= 8192 * MIB
        ts += 1000
        rec(5, BIG, 8192 * MIB, ts)
        reserved -= 8192 * MIB
    if i % 200 == 100:
        ts += 1000
        rec(8, 100 * MIB, 100 * 1024 * MIB, ts)
        ooms += 1
    if i % 100 == 0:
        ts += 1000
        rec(1, SEG + 512 * MIB + leak * 4096, 4096, ts)
        allocs += 1
        allocated += 4096
        peak = max(peak, allocated)
        leak += 1
    for a, s in reversed(live):
        ts = free_block(rec, a, s, ts)
        frees += 1
        allocated -= s
if at_exit:
    ts += 1000
    rec(9, 0, allocated, ts)
    for k in range(leak):
        ts += 1000
        rec(3, SEG + 512 * MIB + k * 4096, 4096, ts)
    ts += 1000
    rec(5, SEG, 1024 * MIB, ts)
if schema:
    import sqlite3
    spool = os.path.dirname(os.path.abspath(path))
    db = sqlite3.connect(os.path.join(spool, "process-%d-1.db" % pid))
    db.executescript(open(schema).read())
    db.execute("INSERT INTO meta (key, value) VALUES ('format', 'vramscope-trace'),"
               " ('finalized', '0'), ('source', 'collector'), ('clock', 'CLOCK_REALTIME'),"
               " ('start_ns', ?)", (t0,))
    import socket
    db.execute("INSERT INTO process (id, pid, host, start_ns) VALUES (1, ?, ?, ?)",
               (pid, socket.gethostname(), t0))
    db.execute("INSERT INTO device (id, idx, uuid, name, total_bytes) VALUES"
               " (1, 0, 'GPU-00000000-0000-0000-0000-0000000000aa', 'Test GPU', 85899345920)")
    db.executemany("INSERT INTO nvtx_range (process_id, tid, name, start_ns, end_ns, depth)"
                   " VALUES (1, 4242, ?, ?, ?, 0)",
                   [("step %d" % i, t0 + 1_000_000 + i * 10_000_000 - 500,
                     t0 + 1_000_000 + (i + 1) * 10_000_000 - 1000) for i in range(steps)])
    db.commit()
    db.close()


def write_paced(every, pause):
    """Writes recs over time, as the tracker does; returns how many were
    written (all, or those before a SIGINT)."""
    stop = []
    signal.signal(signal.SIGINT, lambda s, f: stop.append(s))
    chunk = 4096  # records per growth of the file (the tracker's: 65536)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwrite(fd, (b"VSTORCH1" + struct.pack("<IIqq", 1, 48, pid, t0)).ljust(4096, b"\0"), 0)
    m, base = None, 0
    for i, r in enumerate(recs):
        if stop:
            return i
        if i % chunk == 0:
            # The next chunk mapped alone: what came before is never
            # written again.
            os.ftruncate(fd, 4096 + (i + chunk) * 48)
            if m is not None:
                m.close()
            base = 4096 + i * 48
            m = mmap.mmap(fd, chunk * 48, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                          offset=base)
        off = 4096 + i * 48 - base
        m[off:off + 44] = r[:44]
        m[off + 44:off + 48] = r[44:]
        if (i + 1) % every == 0:
            time.sleep(pause)
    return len(recs)


def replay(records):
    """What the records say: the `pytorch` summary row and the leak."""
    out = {"alloc_count": 0, "free_count": 0, "peak_allocated_bytes": 0,
           "final_allocated_bytes": 0, "peak_reserved_bytes": 0, "final_reserved_bytes": 0,
           "failed_alloc_count": 0}
    live = {}
    for r in records:
        _, addr, size, _, _, _, _, action = struct.unpack("<qQQQiiII", r)
        if action == 1:
            out["alloc_count"] += 1
            out["final_allocated_bytes"] += size
            live[addr] = size
        elif action == 3:
            out["free_count"] += 1
            out["final_allocated_bytes"] -= size
            live.pop(addr, None)
        elif action == 4:
            out["final_reserved_bytes"] += size
        elif action == 5:
            out["final_reserved_bytes"] -= size
        elif action == 8:
            out["failed_alloc_count"] += 1
        out["peak_allocated_bytes"] = max(out["peak_allocated_bytes"], out["final_allocated_bytes"])
        out["peak_reserved_bytes"] = max(out["peak_reserved_bytes"], out["final_reserved_bytes"])
    out.update(leak_blocks=len(live), leak_bytes=sum(live.values()), events=len(records))
    return out


if pace is not None:
    n = write_paced(*pace)
    written = recs[:n]
    # With `exit`, the trace keeps what came before the final snapshot's
    # marker.
    marks = [k for k, r in enumerate(written) if struct.unpack_from("<I", r, 44)[0] == 9]
    json.dump(replay(written[:marks[-1]] if at_exit and marks else written), sys.stdout)
    sys.exit(0)
write_stream(path, pid, t0, recs, 100)
json.dump({"alloc_count": allocs, "free_count": frees, "peak_allocated_bytes": peak,
           "final_allocated_bytes": allocated, "peak_reserved_bytes": peak_reserved,
           "final_reserved_bytes": reserved, "failed_alloc_count": ooms,
           "leak_blocks": leak, "leak_bytes": leak * 4096, "events": len(recs)}, sys.stdout)
