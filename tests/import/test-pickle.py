#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-pickle.py — the restricted reader reads what Python's pickle writes.
#
# Builds random plain values (nested dicts, lists, tuples, shared references,
# str of every length class, bytes, ints of 64 bits signed or unsigned,
# floats, bools, None),
# pickles each with protocols 2 to 5, and checks that
# `vs-import-tool --dump` prints exactly the canonical form computed here.
# TAP output.  Usage: test-pickle.py VS_IMPORT_TOOL
import os
import pickle
import random
import struct
import subprocess
import sys
import tempfile


def canon(v):
    if v is None:
        return "N"
    if v is True:
        return "T"
    if v is False:
        return "F"
    if isinstance(v, int):
        return "i%d" % v
    if isinstance(v, float):
        return "f" + struct.pack(">d", v).hex()
    if isinstance(v, str):
        return "s'" + v.encode("utf-8", "surrogatepass").hex() + "'"
    if isinstance(v, bytes):
        return "b'" + v.hex() + "'"
    if isinstance(v, list):
        return "[" + "".join(canon(x) + "," for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + "".join(canon(x) + "," for x in v) + ")"
    if isinstance(v, dict):
        return "{" + "".join(canon(k) + ":" + canon(x) + "," for k, x in v.items()) + "}"
    raise TypeError(type(v))


def rand_value(r, depth, shared, with_bytes):
    k = r.randrange(12 if depth < 6 else 8)
    if k == 0:
        return None
    if k == 1:
        return r.random() < 0.5
    if k == 2:
        return r.choice([0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31,
                         2**31, 2**40 + 7, -2**40, 2**63 - 1, -2**63,
                         2**63, 2**64 - 1,
                         r.randrange(-2**62, 2**62)])
    if k == 3:
        return r.choice([0.0, -0.0, 1.5, -2.25e300, 1e-310, float("inf"),
                         r.random()])
    if k == 4:
        n = r.choice([0, 1, 5, 255, 256, 300, 66000])
        return "".join(r.choice("aé€𝄞z\x00\n") for _ in range(n))
    if k == 5:
        if not with_bytes:
            return "plain"
        return bytes(r.randrange(256) for _ in range(r.choice([0, 3, 255, 256, 1000])))
    if k == 6 and shared:
        return r.choice(shared)
    if k == 7:
        return r.randrange(-2**30, 2**30)
    if k in (8, 9):
        v = [rand_value(r, depth + 1, shared, with_bytes)
             for _ in range(r.choice([0, 1, 2, 3, 10, 1001, 2100] if depth < 1 else [0, 1, 3]))]
        shared.append(v)
        return v
    if k == 10:
        return tuple(rand_value(r, depth + 1, shared, with_bytes)
                     for _ in range(r.choice([0, 1, 2, 3, 4, 7])))
    d = {}
    for _ in range(r.choice([0, 1, 3, 8, 1200] if depth < 1 else [0, 2, 5])):
        key = r.choice([r.choice(["a", "addr", "size", "é"]) + str(r.randrange(50)),
                        r.randrange(100), (1, "t")])
        d[key] = rand_value(r, depth + 1, shared, with_bytes)
    shared.append(d)
    return d


def main():
    tool = sys.argv[1]
    r = random.Random(4242)
    cases = []
    for i in range(30):
        for proto in (2, 3, 4, 5):
            cases.append((i, proto))
    print("1..%d" % len(cases))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "v.pickle")
        for n, (i, proto) in enumerate(cases, 1):
            # Protocol 2 pickles bytes through a REDUCE of _codecs.encode,
            # which the reader refuses by design: no bytes there.
            v = rand_value(random.Random(i * 7919), 0, [], proto >= 3)
            with open(path, "wb") as f:
                pickle.dump(v, f, protocol=proto)
            res = subprocess.run([tool, "--dump", path], capture_output=True)
            want = canon(v)
            got = res.stdout.decode().rstrip("\n")
            if res.returncode == 0 and got == want:
                print("ok %d - value %d protocol %d" % (n, i, proto))
            else:
                failed += 1
                print("not ok %d - value %d protocol %d: rc %d %s" %
                      (n, i, proto, res.returncode, res.stderr.decode().strip()))
                for a, (x, y) in enumerate(zip(got, want)):
                    if x != y:
                        print("# first difference at %d: got %r want %r" %
                              (a, got[a:a + 60], want[a:a + 60]))
                        break
    sys.exit(1 if failed else 0)


main()
