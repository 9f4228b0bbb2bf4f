#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-torch-stacks.py — the allocator stream's own Python stacks, from the
gatherer to the trace, without PyTorch or a GPU.

  test-torch-stacks.py VRAMSCOPE LIB GPU_TESTS_DIR          (TAP output)

LIB is vs-test-torch-stacks.cpp built against this Python: the stream's
real stack gatherer (collector/python/vs_torch_stacks.hpp).  Each case runs
this file again as the program `vramscope record` records (--program): it
gathers its own stacks at known places, with the GIL (ctypes.PyDLL) and
without it (ctypes.CDLL, as under PyTorch's operators), in nested calls, a
generator, a lambda, a thread and a recursion deeper than the gatherer
keeps, into the spool's torch-PID.stacks, and writes torch-PID.stream (the
tracker's documented record layout) with one allocation or free per
place, each naming its stack, and a .stream.info saying PyTorch recorded
no history.  The frames it expects are its own, read with sys._getframe
at each place.  Then, by case:

  kill     it appends half an entry to the stacks file (a write its death
           cut short) and kills itself with SIGKILL;
  garbage  it flips a byte inside an entry of the stacks file and exits.

Checks: the stacks file holds exactly the expected frames (file, function,
line) per place; the trace record wrote has each event with its stack,
frame by frame (tests/gpu/check-stream-trace.py), the torn entry left out;
a damaged stacks file costs one line on stderr and the stacks only, the
events are all there.
"""
import ctypes
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading


def expected_frames(skip=1):
    f = sys._getframe(skip)
    out = []
    while f is not None:
        out.append([f.f_code.co_filename, f.f_code.co_name, f.f_lineno])
        f = f.f_back
    return out


class Program:
    def __init__(self, lib, spool):
        self.pid = os.getpid()
        self.base = os.path.join(spool, "torch-%d" % self.pid)
        self.with_gil = ctypes.PyDLL(lib, use_errno=True)
        self.no_gil = ctypes.CDLL(lib, use_errno=True)
        for l in (self.with_gil, self.no_gil):
            l.vs_test_stacks_capture.restype = ctypes.c_uint32
        self.with_gil.vs_test_stacks_open.argtypes = [ctypes.c_char_p]
        if self.with_gil.vs_test_stacks_open((self.base + ".stacks").encode()) != 0:
            raise OSError(ctypes.get_errno(), "vs_test_stacks_open")
        self.records = []
        self.expected = []
        self.ts = 1_763_900_000_000_000_000
        self.next_addr = 0x7F0000000000

    def record(self, action, addr, size, stack):
        self.ts += 1000
        self.records.append(struct.pack("<qQQQiiII", self.ts, addr, size, 7, 0,
                                        threading.get_native_id(), stack, action))

    def alloc(self, gil=False):
        lib = self.with_gil if gil else self.no_gil
        # One line: the frame's line is where the capture was called.
        stack, frames = lib.vs_test_stacks_capture(), expected_frames(1)
        addr = self.next_addr
        self.next_addr += 4096
        self.record(1, addr, 1000 + len(self.records), stack)
        self.expected.append([stack, frames])
        return addr

    def write_stream(self):
        header = bytearray(4096)
        header[0:8] = b"VSTORCH1"
        struct.pack_into("<IIqq", header, 8, 1, 48, self.pid, self.ts)
        with open(self.base + ".stream", "wb") as f:
            f.write(bytes(header) + b"".join(self.records))
        with open(self.base + ".stream.info", "w") as f:
            f.write("pid %d\nreason stream\nstacks 1\nhistory 0\n"
                    "device 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n" % self.pid)


def nested(p, depth, gil):
    if depth:
        return nested(p, depth - 1, gil)
    return p.alloc(gil)


def gen(p, k):
    for _ in range(k):
        yield p.alloc()


def deep(p, depth):
    if depth:
        return deep(p, depth - 1)
    return p.alloc()


def program(lib, out, mode):
    p = Program(lib, os.environ["VRAMSCOPE_SPOOL_DIR"])
    p.record(4, 0x7F0000000000 - (1 << 24), 1 << 30, 0)  # a segment holding them all
    for rep in range(2):  # the second time, every stack is known
        nested(p, 3, False)
        nested(p, 3, True)
        list(gen(p, 2))
        (lambda: p.alloc())()
        [p.alloc() for _ in range(2)]
        t = threading.Thread(target=lambda: nested(p, 1, False))
        t.start()
        t.join()
    sys.setrecursionlimit(5000)
    deep(p, 1500)  # deeper than the gatherer keeps: the innermost 1024 frames
    p.expected[-1][1] = p.expected[-1][1][:1024]
    a = p.alloc()
    p.record(2, a, 0, p.expected[-1][0])  # freed where allocated
    p.record(3, a, 0, p.expected[-1][0])
    p.write_stream()
    with open(out + ".expected.json", "w") as f:
        json.dump(p.expected, f)
    stacks = p.base + ".stacks"
    if mode == "kill":
        data = open(stacks, "rb").read()
        with open(stacks, "ab") as f:
            f.write(data[16:16 + 10])  # the start of an entry, no more
        shutil.copyfile(p.base + ".stream", out + ".stream")
        shutil.copyfile(stacks, out + ".stacks")
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "garbage":
        data = bytearray(open(stacks, "rb").read())
        data[len(data) // 2] ^= 0x5A
        open(stacks, "wb").write(bytes(data))
    return 0


def main():
    vramscope, lib, gpu_tests = sys.argv[1:4]
    # The checks it runs read the compacted trace through this command.
    os.environ["VRAMSCOPE"] = os.path.abspath(vramscope)
    sys.path.insert(0, gpu_tests)
    sys.path.insert(0, os.path.join(gpu_tests, ".."))
    from tap import done, ok
    from vs_stream_files import read_stacks
    d = tempfile.mkdtemp()
    try:
        out = os.path.join(d, "kill")
        r = subprocess.run([vramscope, "record", "-q", "-o", out + ".db", "--", sys.executable,
                            __file__, "--program", lib, out, "kill"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ok(r.returncode == 137, "the program killed itself (record exited %d: %s)"
           % (r.returncode, r.stdout.strip()[-300:]))
        expected = json.load(open(out + ".expected.json"))
        stacks, torn = read_stacks(out + ".stacks")
        ok(torn, "the stacks file ends in a torn entry")
        ids = [e[0] for e in expected]
        ok(all(ids) and len(set(ids)) == len(set(tuple(map(tuple, e[1])) for e in expected)),
           "every place has a stack id, one per distinct stack (%d ids, %d stacks)"
           % (len(ids), len(stacks)))
        same = sum(1 for sid, frames in expected
                   if [list(f) for f in stacks.get(sid, [])] == frames)
        ok(same == len(expected),
           "the stacks file holds each place's frames: file, function, line (%d of %d)"
           % (same, len(expected)))
        threads = [e for e in expected if any(f[1] == "<lambda>" for f in e[1])
                   and not any(f[1] == "program" for f in e[1])]
        ok(len(threads) == 2, "a thread's stack is its own (%d)" % len(threads))
        r = subprocess.run([sys.executable, os.path.join(gpu_tests, "check-stream-trace.py"),
                            out + ".db", out + ".stream", out + ".stacks"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ok(r.returncode == 0, "the trace has each event with its stack, frame by frame (%s)"
           % " / ".join(l for l in r.stdout.splitlines() if not l.startswith("ok")))

        out = os.path.join(d, "garbage")
        r = subprocess.run([vramscope, "record", "-q", "-o", out + ".db", "--", sys.executable,
                            __file__, "--program", lib, out, "garbage"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        said = [l for l in r.stderr.splitlines() if "malformed" in l]
        ok(r.returncode == 0 and len(said) == 1 and "without their Python stacks" in said[0],
           "a damaged stacks file: one line (%s)" % r.stderr.strip()[-300:])
        import vs_trace_db
        db = vs_trace_db.connect(out + ".db", vramscope)
        events, with_stack = db.execute(
            "SELECT count(*), count(stack_id) FROM alloc_event e JOIN allocator a"
            " ON a.id = e.allocator_id WHERE a.kind = 'pytorch'").fetchone()
        want = len(json.load(open(out + ".expected.json"))) + 3
        ok(events == want and with_stack == 0,
           "and every event, without stacks (%d of %d events, %d with one)"
           % (events, want, with_stack))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    done()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--program":
        sys.exit(program(*sys.argv[2:5]))
    main()
