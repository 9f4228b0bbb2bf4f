#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-hostile.py — hostile and malformed inputs each give one clear error
# line and exit status 1, never a crash, a hang or unbounded memory.
#
# Covers: every refused opcode, protocol 0/1 text opcodes, sets and
# out-of-band buffers, huge declared lengths, memo abuse, integers wider
# than 64 bits, nesting a million levels deep (valid: must parse without
# recursion), truncations of a real snapshot at every offset (through the
# fuzz driver, which checks no crash), snapshot-shaped pickles with wrong
# fields (through the import), and stacks made to collide in the reader's
# indexes (each frame and stack kept once; how the import time grows with
# them is measured by bench/import-stacks-bench.py).  TAP output.
# Usage: test-hostile.py VS_IMPORT_TOOL FUZZ_DRIVER
import glob
import os
import pickle
import resource
import struct
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOTS = os.path.join(HERE, "..", "data", "snapshots")

REFUSED = {
    "GLOBAL": b"cos\nsystem\n", "STACK_GLOBAL": b"", "REDUCE": b"",
    "BUILD": b"", "INST": b"os\nsystem\n", "OBJ": b"", "NEWOBJ": b"",
    "NEWOBJ_EX": b"", "PERSID": b"x\n", "BINPERSID": b"", "EXT1": b"\x01",
    "EXT2": b"\x01\x00", "EXT4": b"\x01\x00\x00\x00",
}
CODES = {"GLOBAL": b"c", "STACK_GLOBAL": b"\x93", "REDUCE": b"R",
         "BUILD": b"b", "INST": b"i", "OBJ": b"o", "NEWOBJ": b"\x81",
         "NEWOBJ_EX": b"\x92", "PERSID": b"P", "BINPERSID": b"Q",
         "EXT1": b"\x82", "EXT2": b"\x83", "EXT4": b"\x84"}
P4 = b"\x80\x04"


def cases():
    """(name, bytes, mode, must_contain): mode 'dump' reads the pickle only,
    'import' runs the whole import; 'ok' cases must succeed."""
    out = []
    for name, arg in REFUSED.items():
        # Two values first so that REDUCE & co. have operands to misuse.
        data = P4 + b"N" + b"N" + CODES[name] + arg + b"."
        out.append(("refused " + name, data, "dump", name))
    out.append(("os.system by pickle.dumps", pickle.dumps(os.system, 2), "dump", "GLOBAL"))
    out.append(("a real REDUCE payload", pickle.dumps(
        __import__("collections").OrderedDict(a=1), 4), "dump", "refused"))
    for name, op in [("INT", b"I1\n"), ("LONG", b"L1L\n"), ("FLOAT", b"F1.0\n"),
                     ("STRING", b"S'a'\n"), ("UNICODE", b"Va\n"),
                     ("PUT", b"N" + b"p0\n"), ("GET", b"g0\n"),
                     ("EMPTY_SET", b"\x8f"), ("FROZENSET", b"(\x91"),
                     ("NEXT_BUFFER", b"\x97"), ("READONLY_BUFFER", b"N\x98")]:
        out.append(("unsupported " + name, P4 + op + b".", "dump", name))
    out.append(("unknown opcode", P4 + b"\xff.", "dump", "unknown opcode"))
    out.append(("protocol 0", pickle.dumps({"a": 1}, 0), "dump", "not a pickle"))
    out.append(("protocol 1", pickle.dumps({"a": 1}, 1), "dump", "not a pickle"))
    out.append(("protocol 6", b"\x80\x06N.", "dump", "protocol"))
    out.append(("empty file", b"", "dump", "not a pickle"))
    out.append(("text file", b"hello world\n", "dump", "not a pickle"))
    out.append(("random bytes", bytes((i * 97 + 13) % 256 for i in range(4096)), "dump", ""))
    big = (1 << 64) - 1
    out.append(("BINUNICODE8 2^64-1 long", P4 + b"\x8d" + struct.pack("<Q", big) + b"abc.", "dump", "truncated"))
    out.append(("BINBYTES8 2^63 long", P4 + b"\x8e" + struct.pack("<Q", 1 << 63) + b".", "dump", "truncated"))
    out.append(("BINUNICODE 4 GiB long", P4 + b"X\xff\xff\xff\xffab.", "dump", "truncated"))
    out.append(("BINSTRING negative", P4 + b"T\xff\xff\xff\xffab.", "dump", "negative"))
    out.append(("LONG4 2^31-1 long", P4 + b"\x8b\xff\xff\xff\x7f\x01.", "dump", "truncated"))
    out.append(("LONG4 negative length", P4 + b"\x8b\xff\xff\xff\xff.", "dump", "negative"))
    out.append(("FRAME longer than file", P4 + b"\x95" + struct.pack("<Q", big) + b"N.", "dump", "frame"))
    out.append(("LONG_BINGET never stored", P4 + b"j\xff\xff\xff\xff.", "dump", "memo"))
    out.append(("LONG_BINPUT 4e9", P4 + b"Nr\xff\xff\xff\xff.", "dump", "memo"))
    out.append(("BINGET unset", P4 + b"h\x05.", "dump", "memo"))
    out.append(("MEMOIZE empty stack", P4 + b"\x94.", "dump", "memo"))
    out.append(("int 2^64", pickle.dumps(2**64, 4), "dump", "64 bits"))
    # Unsigned 64-bit values are read (PyTorch writes SIZE_MAX); wider
    # ones and signed ones below -2^63 are not.
    out.append(("int 2^63 is fine", pickle.dumps(2**63, 4), "ok", ""))
    out.append(("int 2^64-1 is fine", pickle.dumps(2**64 - 1, 4), "ok", ""))
    out.append(("int 2^64-1 in 10 bytes", P4 + b"\x8a\x0a" + b"\xff" * 8 + b"\x00\x00.", "ok", ""))
    out.append(("int 2^64 in 10 bytes", P4 + b"\x8a\x0a" + b"\x00" * 8 + b"\x01\x00.", "dump", "64 bits"))
    out.append(("int -2^63-1", pickle.dumps(-2**63 - 1, 4), "dump", "64 bits"))
    out.append(("int 2^1000 (LONG4)", pickle.dumps(2**3000, 4), "dump", "64 bits"))
    out.append(("int -2^63 is fine", pickle.dumps(-2**63, 4), "ok", ""))
    out.append(("APPEND to a dict", P4 + b"}Na.", "dump", "not a list"))
    out.append(("SETITEM on a list", P4 + b"]NNs.", "dump", "not a dict"))
    out.append(("SETITEMS odd count", P4 + b"}(Nu.", "dump", "odd"))
    out.append(("APPENDS without MARK", P4 + b"]e.", "dump", "MARK"))
    out.append(("TUPLE3 underflow", P4 + b"N\x87.", "dump", "underflow"))
    out.append(("STOP on empty stack", P4 + b".", "dump", "empty stack"))
    out.append(("no STOP", P4 + b"N", "dump", "STOP"))
    out.append(("POP underflow", P4 + b"0.", "dump", "underflow"))
    n = 1000000
    out.append(("nesting 1e6 lists (valid)", P4 + b"]" * n + b"a" * (n - 1) + b".", "ok", ""))
    out.append(("nesting 1e6 tuples (valid)", P4 + b"N" + b"\x85" * n + b".", "ok", ""))
    out.append(("nesting 1e6 dicts (valid)", P4 + b"}" + b"K\x01}" * n + b"s" * n + b".", "ok", ""))
    out.append(("1e6 MARKs", P4 + b"(" * n + b".", "dump", "empty stack"))
    out.append(("nesting 1e6 as a snapshot", P4 + b"}\x8c\x08segments" + b"]" * n
                + b"a" * (n - 1) + b"s.", "import", "segment"))
    cyc = []
    cyc.append(cyc)
    out.append(("list containing itself", pickle.dumps(cyc, 4), "ok", ""))
    out.append(("billion laughs by memo", P4 + b"]\x94" + b"(" + b"h\x00" * 200000 + b"e" +
                b"(" + b"h\x00" * 200000 + b"e.", "ok", ""))
    # Snapshot-shaped, wrong fields: the import says what is wrong.
    seg = {"device": 0, "address": 4096, "total_size": 2 << 20, "blocks": []}
    ent = {"action": "alloc", "addr": 4096, "size": 512, "stream": 0,
           "time_us": 1000, "frames": []}
    def snap(**kw):
        s = {"segments": [seg], "device_traces": [[ent]], "allocator_settings": {}}
        s.update(kw)
        return pickle.dumps(s, 4)
    out.append(("not a dict at top", pickle.dumps([1, 2], 4), "import", "top level"))
    out.append(("no segments", pickle.dumps({"a": 1}, 4), "import", "segments"))
    out.append(("device_traces not a list", snap(device_traces=5), "import", "device_traces"))
    out.append(("entry without addr", snap(device_traces=[[dict(ent, addr=None)]]), "import", "addr"))
    out.append(("negative size", snap(device_traces=[[dict(ent, size=-5)]]), "import", "size"))
    out.append(("time_us overflows ns", snap(device_traces=[[dict(ent, time_us=2**62)]]), "import", "time_us"))
    out.append(("address range overflows", snap(device_traces=[[dict(ent, addr=2**63 - 2)]]), "import", "address"))
    out.append(("frames not dicts", snap(device_traces=[[dict(ent, frames=[1, 2])]]), "import", "frame"))
    out.append(("segment device out of range", snap(segments=[dict(seg, device=10**9)]), "import", "device"))
    out.append(("block without size", snap(segments=[dict(seg, blocks=[{"state": "active_allocated", "address": 4096}])]), "import", "blocks"))
    out.append(("a minimal valid snapshot", snap(), "ok-import", "1"))
    # A GPU the program never used can still get 'snapshot' markers: it has
    # nothing to import, so no device and no allocator of its own.
    mark = dict(ent, action="snapshot", addr=0, size=0)
    out.append(("an idle device with markers only",
                snap(device_traces=[[ent, dict(mark)], [dict(mark), dict(mark, time_us=9)]]),
                "ok-import", "1"))
    # Values of history entries, which the reader frees as it decodes them,
    # referenced again afterwards through the memo: shared frames, a block
    # with an entry's frames list, an entry dict reused elsewhere.
    fr = [{"filename": "a.py", "line": 1, "name": "f"}]
    e1 = dict(ent, frames=fr)
    e2 = dict(ent, action="free_completed", time_us=2000, frames=[fr[0], fr[0]])
    blk = {"state": "active_allocated", "address": 8192, "size": 512,
           "requested_size": 512, "frames": fr}
    shared = {"device_traces": [[e1, e2] * 3], "segments": [dict(seg, blocks=[blk])],
              "allocator_settings": {}, "again": [e1, e2, fr]}
    out.append(("memo references to decoded history", pickle.dumps(shared, 4), "ok-import", ""))
    return out


def agreeing_frames(i):
    """The 12 frames (indexes into 300) of entry i's stack in
    agreeing_stacks: frames 1, 3, 6 and 11 the same for every entry, the
    others i's digits in base 280."""
    stack, d = [], i
    for j in range(12):
        if j in (1, 3, 6, 11):
            f = j
        else:
            f, d = 20 + d % 280, d // 280
        stack.append(f)
    return stack


def agreeing_stacks(n):
    """A snapshot of n allocations and frees whose 12-frame stacks are all
    distinct but agree on frames 1, 3, 6 and 11: frame dicts made afresh
    per entry, their strings shared, as _dump_snapshot writes them."""
    frames = [{"filename": "/src/model/layer%d.py" % (f % 40), "line": 10 + f,
               "name": "forward_%d" % (f % 57)} for f in range(300)]
    seg = {"device": 0, "address": 4096, "total_size": 2 << 20, "blocks": []}
    trace = []
    for i in range(n):
        stack = [dict(frames[f]) for f in agreeing_frames(i)]
        for action in ("alloc", "free_completed"):
            trace.append({"action": action, "addr": 4096, "size": 512, "stream": 0,
                          "time_us": 1000 + 2 * i, "frames": stack})
    return pickle.dumps({"segments": [seg], "device_traces": [trace],
                         "allocator_settings": {}}, 4)


def agreeing_stacks_counts(n):
    """The distinct frames and the nodes of the stack trie (each stack kept
    as its innermost frame on the stack of its callers) of agreeing_stacks(n)."""
    frames, nodes = set(), set()
    for i in range(n):
        stack = agreeing_frames(i)
        frames.update(stack)
        nodes.update(tuple(stack[k:]) for k in range(12))
    return len(frames), len(nodes)


def limit_memory():
    # 2 GiB of address space (ASan builds set their own, larger needs).
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def main():
    tool, driver = sys.argv[1], sys.argv[2]
    all_cases = cases()
    print("1..%d" % (len(all_cases) + 2))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.pickle")
        db = os.path.join(tmp, "out.db")
        for n, (name, data, mode, want) in enumerate(all_cases, 1):
            with open(path, "wb") as f:
                f.write(data)
            if mode in ("import", "ok-import"):
                cmd = [tool, path, "-o", db, "-q"]
            else:
                cmd = [tool, "--dump", path]
            try:
                res = subprocess.run(cmd, capture_output=True, timeout=60,
                                     preexec_fn=limit_memory)
            except subprocess.TimeoutExpired:
                failed += 1
                print("not ok %d - %s: timed out" % (n, name))
                continue
            err = res.stderr.decode("utf-8", "replace")
            lines = err.splitlines()
            if mode in ("ok", "ok-import"):
                good = res.returncode == 0
            else:
                good = (res.returncode == 1 and len(lines) == 1
                        and want.lower() in lines[0].lower())
            if mode == "import" and os.path.exists(db):
                good = False  # a failed import leaves no trace behind
                os.unlink(db)
            if mode == "ok-import" and os.path.exists(db):
                if good and want:
                    con = sqlite3.connect(db)
                    devices = con.execute("SELECT count(*) FROM device").fetchone()[0]
                    allocators = con.execute("SELECT count(*) FROM allocator").fetchone()[0]
                    con.close()
                    good = devices == allocators == int(want)
                    err = "%d devices, %d allocators, want %s" % (devices, allocators, want)
                os.unlink(db)
            print("%s %d - %s%s" % ("ok" if good else "not ok", n, name,
                                    "" if good else ": rc %d, stderr %r" % (res.returncode, err[:300])))
            failed += not good
        # Every truncation of a real snapshot, through the fuzz harness.
        trunc = os.path.join(tmp, "trunc")
        os.mkdir(trunc)
        src = open(os.path.join(SNAPSHOTS, "oom.pickle"), "rb").read()
        for i in range(len(src)):
            with open(os.path.join(trunc, "t%05d" % i), "wb") as f:
                f.write(src[:i])
        res = subprocess.run([driver, trunc], capture_output=True, timeout=300)
        n = len(all_cases) + 1
        good = res.returncode == 0
        print("%s %d - %d truncations of oom.pickle through the fuzz harness%s" %
              ("ok" if good else "not ok", n, len(src),
               "" if good else ": rc %d" % res.returncode))
        failed += not good
        # Stacks made to collide in the reader's indexes of repeated frames
        # and stacks: each frame and each stack is kept once.
        k = 10000
        with open(path, "wb") as f:
            f.write(agreeing_stacks(k))
        res = subprocess.run([tool, path, "-o", db, "-q", "-f"], capture_output=True, timeout=300)
        got = None
        if res.returncode == 0:
            con = sqlite3.connect(db)
            got = con.execute(
                "SELECT (SELECT count(*) FROM frame WHERE function LIKE 'forward\\_%' ESCAPE '\\'),"
                " (SELECT count(*) FROM stack s JOIN frame f ON f.id = s.frame_id"
                "  WHERE f.function LIKE 'forward\\_%' ESCAPE '\\')").fetchone()
            con.close()
            os.unlink(db)
        want = agreeing_stacks_counts(k)
        n += 1
        good = got == want
        print("%s %d - %d distinct stacks agreeing on some frames: %s frames and stack nodes, want %s%s" %
              ("ok" if good else "not ok", n, k, got, want,
               "" if res.returncode == 0 else ": rc %d" % res.returncode))
        failed += not good
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
