#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-stacks.py — every imported event carries the stack its history entry
# had, however the pickle shares frames and strings.
#
# The reader recognises repeated frames and stacks while parsing (frame
# dicts and frames lists whose items are the same memoized strings and ints
# read as the token of the first one), so this checks, event by event, the
# imported stacks against Python's own unpickling of the same file.  The
# snapshots are built here with pickle (protocols 2 and 4): frame dicts that
# are distinct objects with shared strings (as PyTorch writes them), frame
# dicts and frames lists shared by identity, equal frames with their keys
# in another order, frames that differ only in their line, empty and
# missing frames, over several append batches so that values are freed and
# handles reused between them.  Protocol 4 (MEMOIZE, as PyTorch writes)
# is where repeats are recognised while parsing; protocol 2 (BINPUT) takes
# the importer's own path.  A hand-written pickle then repeats one frames
# list byte for byte (which the reader replays instead of parsing once it
# has read it) and overwrites, with BINPUT, a string that list fetches from
# the memo: the same bytes must then read as the new frame.  TAP output.
# Usage: test-stacks.py VS_IMPORT_TOOL
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

FILES = ["/srv/app/model.py", "/srv/app/train.py", "<frozen runpy>", "libtorch.so"]
NAMES = ["forward", "backward", "step", "main"]


def frame(i, order=0):
    f, n, line = FILES[i % 4], NAMES[(i // 4) % 4], 10 + i % 7
    if order:
        return {"line": line, "name": n, "filename": f}
    return {"filename": f, "line": line, "name": n}


def snapshot(seed):
    """A consistent snapshot: allocs and frees of one segment's blocks."""
    shared_frame = frame(3)
    shared_list = [frame(1), frame(2)]
    entries = [{"action": "segment_alloc", "addr": 1 << 20, "size": 64 << 20,
                "stream": 0, "time_us": 1, "frames": []}]
    live = []
    t = 2
    for k in range(3000):
        kind = (k * seed) % 9
        if kind == 0:
            frames = shared_list
        elif kind == 1:
            frames = [shared_frame, frame(k % 5), shared_frame]
        elif kind == 2:
            frames = [frame(k % 11, order=1) for _ in range(3)]
        elif kind == 3:
            frames = []
        else:
            frames = [frame((k * 7 + j) % 23) for j in range(1 + k % 6)]
        addr = (1 << 20) + (k % 60) * 4096
        if addr in live:
            live.remove(addr)
            entries.append({"action": "free_completed", "addr": addr,
                            "size": 512, "stream": 0, "time_us": t,
                            "frames": frames})
        else:
            live.append(addr)
            entry = {"action": "alloc", "addr": addr, "size": 512,
                     "stream": 0, "time_us": t}
            if kind != 4:
                entry["frames"] = frames
            entries.append(entry)
        t += 1
    blocks = [{"address": a, "size": 512, "requested_size": 512,
               "state": "active_allocated", "frames": []} for a in live]
    return {"segments": [{"device": 0, "address": 1 << 20,
                          "total_size": 64 << 20, "stream": 0,
                          "blocks": blocks}],
            "device_traces": [entries], "allocator_settings": {}}


def expected(snap):
    """Per history entry (alloc/free order), its frames outermost first as
    (file, function, line)."""
    out = []
    for e in snap["device_traces"][0]:
        fr = e.get("frames") or []
        out.append([(f["filename"], f["name"], f["line"]) for f in reversed(fr)])
    return out


def imported(db):
    con = vs_trace_db.connect(db)
    frames = {r[0]: (r[1], r[2], r[3]) for r in
              con.execute("SELECT id, file, function, line FROM frame")}
    stacks = {r[0]: (r[1], r[2]) for r in
              con.execute("SELECT id, parent_id, frame_id FROM stack")}
    out = []
    for (sid,) in con.execute(
            "SELECT stack_id FROM alloc_event ORDER BY ts, id"):
        chain = []
        while sid:
            parent, fid = stacks[sid]
            chain.append(frames[fid])
            sid = parent
        out.append(list(reversed(chain)))
    con.close()
    return out


def overwritten_memo():
    """Protocol 4 by hand: batches of entries whose frames list is the same
    bytes each time (new dicts of memoized strings), then a BINPUT that
    gives the memo entry of its first file name another string, then the
    same bytes again."""
    out = bytearray(b"\x80\x04")
    memo = {}

    def put():
        memo[("#", len(memo))] = len(memo)
        return b"\x94"

    def get(i):
        return b"h" + bytes([i]) if i < 256 else b"j" + i.to_bytes(4, "little")

    def s(text):
        if text in memo:
            return get(memo[text])
        b = text.encode()
        memo[text] = len(memo)
        return b"\x8c" + bytes([len(b)]) + b + b"\x94"

    def num(v):
        return b"\x8a" + bytes([8]) + v.to_bytes(8, "little", signed=True)

    def frames():
        b = b"]" + put() + b"("
        for j in range(3):
            b += (b"}" + put() + b"(" + s("filename") + s(FILES[j % 2]) +
                  s("name") + s(NAMES[j]) + s("line") + b"K" + bytes([10 + j]) +
                  b"u")
        return b + b"e"

    def entry(action, addr, size, t, with_frames=True):
        return (b"}" + put() + b"(" + s("action") + s(action) + s("addr") +
                num(addr) + s("size") + num(size) + s("stream") + b"K\x00" +
                s("time_us") + num(t) + s("frames") +
                (frames() if with_frames else b"]" + put()) + b"u")

    seg = 1 << 20
    out += b"}" + put() + b"(" + s("segments") + b"]" + put() + b"("
    out += (b"}" + put() + b"(" + s("device") + b"K\x00" + s("address") +
            num(seg) + s("total_size") + num(1 << 24) + s("blocks") + b"]" +
            put() + b"u")
    out += b"e" + s("device_traces") + b"]" + put() + b"]" + put() + b"("
    out += entry("segment_alloc", seg, 1 << 24, 1, with_frames=False)
    t = 2
    for batch in range(10):
        if batch == 7:
            # Still on the stack: the device's list.  Push a new string,
            # store it over the first file name's memo entry, pop it.
            b = b"/srv/app/other.py"
            out += (b"e" + b"\x8c" + bytes([len(b)]) + b + b"q" +
                    bytes([memo[FILES[0]]]) + b"0" + b"(")
        for k in range(4):
            out += entry("alloc", seg + 4096 * k, 512, t)
            out += entry("free_completed", seg + 4096 * k, 512, t + 1)
            t += 2
        if batch != 6:
            out += b"e("
    out += b"e" + b"a" + s("allocator_settings") + b"}" + put() + b"u."
    return bytes(out)


def main():
    tool = sys.argv[1]
    cases = [(seed, proto) for seed in (1, 2, 5) for proto in (2, 4)]
    cases.append(("overwritten memo", 4))
    print("1..%d" % len(cases))
    with tempfile.TemporaryDirectory() as tmp:
        for n, (seed, proto) in enumerate(cases, 1):
            if seed == "overwritten memo":
                data = overwritten_memo()
            else:
                data = pickle.dumps(snapshot(seed), proto)
            # What the file says, as Python reads it.
            want = expected(pickle.loads(data))
            path = os.path.join(tmp, "s.pickle")
            db = os.path.join(tmp, "s.db")
            with open(path, "wb") as f:
                f.write(data)
            if os.path.exists(db):
                os.remove(db)
            r = subprocess.run([tool, path, "-o", db], capture_output=True,
                               text=True)
            name = ("seed %s, protocol %d" % (seed, proto) if seed != "overwritten memo"
                    else "a frames list read again after its memo entries changed")
            if r.returncode != 0:
                print("not ok %d - %s: import failed: %s" % (n, name, r.stderr.strip()))
                continue
            try:
                got = imported(db)
            except KeyError as e:
                print("not ok %d - %s: a stack refers to a missing row %s" % (n, name, e))
                continue
            if got == want:
                print("ok %d - %s: %d stacks equal" % (n, name, len(got)))
            else:
                bad = next(i for i in range(min(len(got), len(want)))
                           if got[i] != want[i]) if len(got) == len(want) else -1
                print("not ok %d - %s: %d events, %d expected; first difference "
                      "at %d" % (n, name, len(got), len(want), bad))


main()
