#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# import-gen-snapshot.py — writes a synthetic PyTorch-snapshot-shaped pickle
# of about SIZE_MB MiB for timing `vramscope import`.
#
# The opcodes are the ones torch.cuda.memory._dump_snapshot writes (protocol
# 4, FRAME, MEMOIZE, BINGET/LONG_BINGET for repeated strings, SETITEMS,
# APPENDS): each history entry is a dict with action, addr, size, stream,
# time_us, compile_context, user_metadata and 12 Python frames drawn from 300
# distinct ones.  The history is consistent: one segment, blocks allocated
# and freed in a rotating window of 64 live blocks, which the final
# `segments` list as active.  Written as a stream, so any size is cheap.
#   import-gen-snapshot.py OUT.pickle [SIZE_MB]
import struct
import sys

out_path = sys.argv[1]
target = int(sys.argv[2] if len(sys.argv) > 2 else 1024) << 20

buf = bytearray()
out = open(out_path, "wb")
out.write(b"\x80\x04")
memo = {}
nmemo = 0
total = 2


def flush(force=False):
    global buf, total
    if len(buf) >= 65536 or (force and buf):
        out.write(b"\x95" + struct.pack("<Q", len(buf)) + buf)
        total += 9 + len(buf)
        buf = bytearray()


def memoize():
    global nmemo
    nmemo += 1
    return b"\x94"


def get(i):
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def s(text):
    """A str: the first time written and memoized, then fetched."""
    global nmemo
    if text in memo:
        return get(memo[text])
    b = text.encode()
    memo[text] = nmemo
    return (b"\x8c" + bytes([len(b)]) + b if len(b) < 256 else
            b"X" + struct.pack("<I", len(b)) + b) + memoize()


def integer(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -2**31 <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    n = (v.bit_length() + 8) // 8
    return b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)


FRAMES = [("/home/user/project/model/layer%d.py" % (i % 40),
           "forward_%d" % (i % 57), 10 + i) for i in range(300)]


def frame_bytes(f):
    return (b"}" + memoize() + b"(" + s("name") + s(f[1]) + s("filename") +
            s(f[0]) + s("line") + integer(f[2]) + b"u")


_frames_cache = {}


def frames_bytes(k):
    """Cached once every string in it is memoized: then only the MEMOIZE
    count advances."""
    global nmemo
    hit = _frames_cache.get(k % 300)
    if hit:
        nmemo += hit[1]
        return hit[0]
    before, strings = nmemo, len(memo)
    b = _frames_bytes(k)
    if len(memo) == strings:
        _frames_cache[k % 300] = (b, nmemo - before)
    return b


def _frames_bytes(k):
    b = b"]" + memoize() + b"("
    for j in range(12):
        b += frame_bytes(FRAMES[(k * 7 + j * 13) % 300])
    return b + b"e"


SEG = 0x7f0000000000
BLOCK = 1 << 20
WINDOW = 64
SLOTS = 256
t0 = 1795240000000000

# root dict, then 'segments' is written last (as PyTorch's dict order has it
# first, the reader must not care); device_traces first here.
buf += b"}" + memoize() + b"(" + s("device_traces") + b"]" + memoize() + b"]" + memoize() + b"("
# segment_alloc of the one segment
def entry(action, addr, size, t, k):
    return (b"}" + memoize() + b"(" + s("action") + s(action) + s("addr") +
            integer(addr) + s("size") + integer(size) + s("stream") +
            integer(0) + s("time_us") + integer(t) + s("compile_context") +
            s("N/A") + s("user_metadata") + s("") + s("frames") +
            frames_bytes(k) + b"u")


buf += entry("segment_alloc", SEG, SLOTS * BLOCK, t0, 0)
i = 0
batch = 1
live = []
while total + len(buf) < target - 200000:
    slot = i % SLOTS
    addr = SEG + slot * BLOCK
    req = 4096 + (i * 4099) % (BLOCK - 4096)
    buf += entry("alloc", addr, req, t0 + 3 * i + 1, i)
    live.append((addr, req))
    batch += 1
    if len(live) > WINDOW:
        a, r = live.pop(0)
        buf += entry("free_requested", a, r, t0 + 3 * i + 2, i + 1)
        buf += entry("free_completed", a, r, t0 + 3 * i + 3, i + 2)
        batch += 2
    if batch >= 1000:  # APPENDS in batches of 1000 like the pickler
        buf += b"e("
        batch = 0
    i += 1
    flush()
buf += b"e" + b"a"  # close the device's list, append it to device_traces
buf += s("segments") + b"]" + memoize() + b"("
buf += (b"}" + memoize() + b"(" + s("device") + integer(0) + s("address") +
        integer(SEG) + s("total_size") + integer(SLOTS * BLOCK) + s("stream") +
        integer(0) + s("is_expandable") + b"\x89" + s("blocks"))
buf += b"]" + memoize() + b"("
livemap = dict(live)
for k in range(SLOTS):
    a = SEG + k * BLOCK
    r = livemap.get(a)
    buf += (b"}" + memoize() + b"(" + s("address") + integer(a) + s("size") +
            integer(BLOCK) + s("requested_size") + integer(r or 0) + s("state") +
            s("active_allocated" if r is not None else "inactive") +
            s("frames") + b"]" + memoize() + b"u")
buf += b"e" + b"u"
buf += b"e" + s("allocator_settings") + b"}" + memoize() + b"u."
flush(force=True)
out.close()
print("%s: %d bytes, %d history entries" % (out_path, total,
      1 + i + 2 * max(0, i - WINDOW)), file=sys.stderr)
