# SPDX-License-Identifier: MIT
"""vs_stream_files.py — the files the PyTorch hook's allocator stream
writes (collector/python/vs_torch_stream.cpp and vs_torch_stacks.hpp):
readers of the stream's records and the stacks file's stacks, for the GPU
checks, and a trace's stacks, to compare them with; the stream's record
and file as the tracker lays them out, for the tests that make streams
without a GPU.  Standard library only."""
import struct


def pack_record(action, addr, size, ts, device=0, tid=4242, stream=0x55, stack=0):
    """One 48-byte record (stack: the record's stack id, 0 for none)."""
    return struct.pack("<qQQQiiII", ts, addr, size, stream, device, tid, stack, action)


def write_stream(path, pid, t0, records, zero_records):
    """A stream file: the header (pid, start time t0), the packed records,
    then zero_records zeroed records, as the rest of a mapped chunk."""
    header = b"VSTORCH1" + struct.pack("<IIqq", 1, 48, pid, t0)
    with open(path, "wb") as f:
        f.write(header.ljust(4096, b"\0"))
        f.write(b"".join(records))
        f.write(b"\0" * (48 * zero_records))


def read_stream(path):
    """The stream's records up to the first incomplete one: tuples (ts,
    addr, size, stream, device, tid, stack, action)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"VSTORCH1", "not a stream"
    out = []
    for off in range(4096, len(data) - 47, 48):
        r = struct.unpack_from("<qQQQiiII", data, off)
        if r[7] == 0:
            break
        out.append(r)
    return out


def read_stacks(path):
    """The stacks file: {stack id: [(file, function, line), ...]},
    innermost first, and whether it ended in a torn entry."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"VSSTACK1", "not a stacks file"
    frames, stacks, off = {}, {}, 16
    while off < len(data):
        if off + 8 > len(data):
            return stacks, True
        kind, n = struct.unpack_from("<II", data, off)
        if off + 12 + n > len(data):
            return stacks, True
        p = data[off + 8:off + 8 + n]
        (check,) = struct.unpack_from("<I", data, off + 8 + n)
        h = 2166136261
        for b in data[off:off + 8 + n]:
            h = ((h ^ b) * 16777619) & 0xFFFFFFFF
        assert h == check, "bad check word at %d" % off
        if kind == 1:
            fid, line, fl, nl = struct.unpack_from("<IiII", p)
            assert fid == len(frames) + 1
            frames[fid] = (p[16:16 + fl].decode(), p[16 + fl:16 + fl + nl].decode(), line)
        elif kind == 2:
            sid, cnt = struct.unpack_from("<II", p)
            assert sid == len(stacks) + 1
            stacks[sid] = [frames[i] for i in struct.unpack_from("<%dI" % cnt, p, 8)]
        else:
            raise AssertionError("unknown kind %d at %d" % (kind, off))
        off += 12 + n
    return stacks, False


def trace_stacks(db, columns="file, function, line"):
    """A function giving a trace's stacks (sqlite3 connection db): stack id
    → its frames, innermost first, each the tuple of the frame's columns."""
    frames = {r[0]: r[1:] for r in db.execute("SELECT id, %s FROM frame" % columns)}
    nodes = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, parent_id, frame_id FROM stack")}

    def stack(sid):
        out = []
        while sid:
            parent, frame = nodes[sid]
            out.append(frames[frame])
            sid = parent
        return out

    return stack
