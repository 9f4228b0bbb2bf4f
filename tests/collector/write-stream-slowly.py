#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""write-stream-slowly.py — a process that writes its PyTorch allocator
stream over time, as the hook's tracker (collector/python/vs_torch_stream.cpp)
writes it while a program trains: the file grows in chunks, each record is
stored with its action word last, and the Python stacks file
(vs_torch_stacks.hpp) gets each new stack, in one write, before the first
record naming it.  For the tests of `record` importing streams while the
program runs, without a GPU.

Usage: write-stream-slowly.py OUT_DIR [options]   (run under `vramscope
record`: the stream goes to $VRAMSCOPE_SPOOL_DIR/torch-PID.stream)
  --batches N      batches of records to write (default 4)
  --per-batch K    records per batch (default 300)
  --sleep S        seconds between batches (default 0.3)
  --kill-after B   SIGKILL itself after batch B, mid-way through the next
                   record (every field written but its action)
  --on-int M       on SIGINT, write M more batches, then exit 130
  --exit           end as Python's normal exit does with a final snapshot:
                   a snapshot marker, then the frees of what was live
                   (after a pause, so that they are written before the
                   process ends), and the snapshot's .info saying
                   `reason exit`, with the pickle given by --pickle
  --pickle FILE    the final snapshot's pickle (with --exit)
  --history H      what the stream's .info says of PyTorch's own history
                   (0: none, the stream is the level; default 0)
  --gate FILE      after the first batch, wait until FILE exists before
                   writing the others (a test acts on record meanwhile,
                   however slow the machine)

Writes OUT_DIR/PID.done with the number of records completed, after each
batch (not counting what --exit adds), and OUT_DIR/ready once the first
batch is written.  The records are those of record(i) below, so a test
computes what the trace must hold from the count alone:
`write-stream-slowly.py --expect N` prints, as JSON, the events records
0..N-1 give and the stacks they name.
"""
import json
import mmap
import os
import shutil
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from vs_stream_files import pack_record  # noqa: E402

T0 = 1_763_900_000_000_000_000
SEG = 0x7F0000000000
MIB = 1 << 20
CHUNK = 1024  # records per chunk of the file (the tracker's is 65536)
N_STACKS = 37


def stack_of(i):
    """The stack id of record i (1..N_STACKS), 0 for every 11th: none."""
    return 0 if i % 11 == 5 else 1 + (i // 3) % N_STACKS


def stack_frames(sid):
    """Stack sid's frames, innermost first: (file, function, line)."""
    return [("model.py", "layer%d" % sid, 100 + sid), ("train.py", "step", 42),
            ("train.py", "<module>", 7)]


def record(i):
    """Record i: (action, addr, size, ts, stack).  A 64 MiB segment first,
    then blocks allocated and freed in turn inside it, an oom every 97."""
    ts = T0 + 1000 * (i + 1)
    if i == 0:
        return (4, SEG, 64 * MIB, ts, stack_of(i))
    if i % 97 == 50:
        return (8, 10 * MIB, 100 * MIB, ts, stack_of(i))
    slot = (i // 2) % 16
    size = 4096 * (1 + slot) + (i % 7)
    action = 1 if i % 2 == 1 else 3
    if action == 3:
        size = 4096 * (1 + ((i - 1) // 2) % 16) + ((i - 1) % 7)
    return (action, SEG + slot * MIB, size, ts, stack_of(i))


class Stacks:
    """The side file, each new stack with its new frames in one write."""

    def __init__(self, path):
        self.f = open(path, "wb", buffering=0)
        self.f.write(b"VSSTACK1" + struct.pack("<II", 1, 0))
        self.frames, self.stacks = {}, set()

    def entry(self, kind, payload):
        head = struct.pack("<II", kind, len(payload))
        h = 2166136261
        for b in head + payload:
            h = ((h ^ b) * 16777619) & 0xFFFFFFFF
        return head + payload + struct.pack("<I", h)

    def need(self, sid):
        if sid == 0 or sid in self.stacks:
            return
        out, ids = b"", []
        for file, func, line in stack_frames(sid):
            key = (file, func, line)
            if key not in self.frames:
                self.frames[key] = len(self.frames) + 1
                fb, nb = file.encode(), func.encode()
                out += self.entry(1, struct.pack("<IiII", self.frames[key], line, len(fb), len(nb))
                                  + fb + nb)
            ids.append(self.frames[key])
        # Stack ids count in the order of their entries: written in order.
        assert sid == len(self.stacks) + 1
        out += self.entry(2, struct.pack("<II%dI" % len(ids), sid, len(ids), *ids))
        self.stacks.add(sid)
        self.f.write(out)


class Stream:
    """The stream file, grown a chunk at a time and mapped shared."""

    def __init__(self, path, pid):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        header = b"VSTORCH1" + struct.pack("<IIqq", 1, 48, pid, T0)
        os.pwrite(self.fd, header.ljust(4096, b"\0"), 0)
        self.n, self.cap, self.map = 0, 0, None
        self.grow()

    def grow(self):
        self.cap += CHUNK
        os.ftruncate(self.fd, 4096 + self.cap * 48)
        if self.map is not None:
            self.map.close()
        self.map = mmap.mmap(self.fd, 4096 + self.cap * 48, mmap.MAP_SHARED,
                             mmap.PROT_READ | mmap.PROT_WRITE)

    def put(self, action, addr, size, ts, stack, finish=True):
        if self.n == self.cap:
            self.grow()
        off = 4096 + self.n * 48
        rec = pack_record(action, addr, size, ts, stack=stack)
        self.map[off:off + 44] = rec[:44]  # every field, then the action
        if finish:
            self.map[off + 44:off + 48] = rec[44:]
            self.n += 1


def expect(n):
    """The events records 0..n-1 give, as the trace holds them (with
    --exit, what comes after them is cut at the snapshot marker)."""
    recs = [record(i) for i in range(n)]
    allocs = [[r[3], r[0], r[1], r[2], r[4]] for r in recs if r[0] <= 7]
    ooms = [[r[3], r[2], r[1], r[4]] for r in recs if r[0] == 8]
    stacks = {str(s): stack_frames(s) for s in range(1, N_STACKS + 1)}
    return {"alloc": allocs, "oom": ooms, "stacks": stacks}


def main():
    if sys.argv[1] == "--expect":
        json.dump(expect(int(sys.argv[2])), sys.stdout)
        return
    out = sys.argv[1]
    opts = {"--batches": "4", "--per-batch": "300", "--sleep": "0.3", "--kill-after": None,
            "--on-int": None, "--pickle": None, "--history": "0", "--gate": None}
    exit_snapshot = False
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--exit":
            exit_snapshot = True
        else:
            opts[a] = args.pop(0)
    spool, pid = os.environ["VRAMSCOPE_SPOOL_DIR"], os.getpid()
    info = "pid %d\n%%sdevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n" % pid
    with open(os.path.join(spool, "torch-%d.stream.info" % pid), "w") as f:
        f.write(info % ("reason stream\nhistory %s\n" % opts["--history"]))
    stacks = Stacks(os.path.join(spool, "torch-%d.stacks" % pid))
    stream = Stream(os.path.join(spool, "torch-%d.stream" % pid), pid)
    interrupted = []
    signal.signal(signal.SIGINT, lambda s, f: interrupted.append(s))
    batches = int(opts["--batches"])
    per = int(opts["--per-batch"])

    def write_batch():
        for _ in range(per):
            r = record(stream.n)
            stacks.need(r[4])
            stream.put(*r)
        with open(os.path.join(out, "%d.done" % pid), "w") as f:
            f.write("%d\n" % stream.n)

    b, total = 0, batches
    while True:
        if interrupted and opts["--on-int"] is not None and total == batches:
            total += int(opts["--on-int"])
        if b >= total:
            if opts["--on-int"] is not None and not interrupted:
                time.sleep(0.05)  # runs on until it gets SIGINT
                continue
            break
        write_batch()
        b += 1
        if b == 1:
            open(os.path.join(out, "ready"), "w").close()
            while opts["--gate"] is not None and not os.path.exists(opts["--gate"]):
                time.sleep(0.05)
        if opts["--kill-after"] is not None and b == int(opts["--kill-after"]):
            stream.put(1, SEG, 4096, T0 + 1000 * (stream.n + 1), 0, finish=False)
            os.kill(pid, signal.SIGKILL)
        time.sleep(float(opts["--sleep"]))
    if exit_snapshot:
        stream.put(9, 0, 0, T0 + 1000 * (stream.n + 1), 0)
        time.sleep(float(opts["--sleep"]))
        # Python shutting down frees what was live, after the snapshot.
        for k in range(16):
            stream.put(3, SEG + k * MIB, 4096, T0 + 1000 * (stream.n + 1), 0)
        stream.put(5, SEG, 64 * MIB, T0 + 1000 * (stream.n + 1), 0)
        time.sleep(float(opts["--sleep"]))
        with open(os.path.join(spool, "torch-%d-000001.info" % pid), "w") as f:
            f.write(info % "reason exit\n")
        shutil.copy(opts["--pickle"], os.path.join(spool, "torch-%d-000001.pickle" % pid))
    if interrupted:
        sys.exit(130)


main()
