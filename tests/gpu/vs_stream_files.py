"""vs_stream_files.py — readers of the files the PyTorch hook's allocator
stream writes (collector/python/vs_torch_stream.cpp and
vs_torch_stacks.hpp), for the GPU checks: the stream's records and the
stacks file's stacks.  Standard library only."""
import struct


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
