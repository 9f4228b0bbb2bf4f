#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make-torch-stacks.py — a stacks file written by the allocator stream's
real stack gatherer (collector/python/vs_torch_stacks.hpp, built as LIB:
tests/collector/vs-test-torch-stacks.cpp), for the reader's tests.

  make-torch-stacks.py LIB OUT

Runs code compiled under fixed file names (so the file names no folder of
the machine: "model/net.py", a non-ASCII "mödel/ünï.py"), gathering its
stack at several places, with the GIL and without it, some places twice.
Writes OUT (the stacks file, as the gatherer wrote it) and OUT.txt, what
it must hold: per stack, in id order, a line "stack ID N" and then its N
frames innermost first, one "FILE<TAB>FUNCTION<TAB>LINE" line each (the
frames read with sys._getframe where each stack was gathered).
"""
import ctypes
import sys

lib_path, out = sys.argv[1], sys.argv[2]
with_gil = ctypes.PyDLL(lib_path, use_errno=True)
no_gil = ctypes.CDLL(lib_path, use_errno=True)
for l in (with_gil, no_gil):
    l.vs_test_stacks_capture.restype = ctypes.c_uint32
with_gil.vs_test_stacks_open.argtypes = [ctypes.c_char_p]
if with_gil.vs_test_stacks_open(out.encode()) != 0:
    sys.exit("make-torch-stacks.py: the gatherer cannot run here (errno %d)" % ctypes.get_errno())

stacks = {}


def frames_here():
    f = sys._getframe(1)
    got = []
    while f is not None:
        got.append((f.f_code.co_filename, f.f_code.co_name, f.f_lineno))
        f = f.f_back
    return got


def gather(gil):
    lib = with_gil if gil else no_gil
    # One line: the frame's line is where the gatherer was called.
    sid, frames = lib.vs_test_stacks_capture(), frames_here()
    assert stacks.setdefault(sid, frames) == frames, "stack id %d reused" % sid


NET = '''
def layer(gather, k):
    for i in range(k):
        gather(i % 2 == 0)


def forward(gather):
    layer(gather, 3)
    return [gather(False) for _ in range(2)]
'''
UNI = '''
def ünï(gather):
    gather(False)
    gather(True)
'''
net, uni = {}, {}
exec(compile(NET, "model/net.py", "exec"), net)
exec(compile(UNI, "mödel/ünï.py", "exec"), uni)
for _ in range(2):
    net["forward"](gather)
    uni["ünï"](gather)
gather(False)

with open(out + ".txt", "w", encoding="utf-8") as f:
    for sid in sorted(stacks):
        f.write("stack %d %d\n" % (sid, len(stacks[sid])))
        for file, name, line in stacks[sid]:
            f.write("%s\t%s\t%d\n" % (file, name, line))
