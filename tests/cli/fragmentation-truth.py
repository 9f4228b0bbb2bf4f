#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fragmentation-truth.py — `report fragmentation`'s free blocks equal
the allocator's own, and a free block never spans two segments.

Two truths, neither read through the analyzer:
  - PyTorch's snapshots (tests/data/snapshots/*.pickle): at the end, the
    free ('inactive') blocks PyTorch itself lists in each segment.  The
    `end` row of the PyTorch allocator has their sum as segment free
    bytes and the largest of them as the largest free block.
  - Traces recorded from PyTorch's allocator stream (every committed
    trace with a PyTorch allocator that is complete: not windowed, not
    compacted): the allocator's own events (alloc_event) replayed in
    order up to each instant of the report — segments from
    segment_alloc / segment_free, mapped pieces of expandable segments
    from segment_map / segment_unmap (touching pieces are one segment),
    blocks from alloc (at their rounded size) / free_completed — and each
    segment's uncovered ranges taken as its free blocks.
For each, segment count, segment free bytes and largest free block must
match exactly.

  fragmentation-truth.py VRAMSCOPE DATA_DIR
"""
import csv
import glob
import io
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP = 4, 5, 6, 7
ALLOC, FREE_COMPLETED = 1, 3


def frag_rows(path, env):
    p = subprocess.run([vramscope, "report", "--format", "csv", path, "fragmentation"],
                       capture_output=True, text=True, env=env)
    return p.returncode, list(csv.DictReader(io.StringIO(p.stdout))), p.stderr


def figures(row):
    return (int(row["segment_count"]), int(row["segment_free_bytes"]),
            int(row["largest_free_bytes"]))


def gaps_of(segments, blocks):
    """Free ranges of each segment (lo, hi) given live blocks (lo, hi)."""
    out = []
    blocks = sorted(blocks)
    for lo, hi in sorted(segments):
        cursor = lo
        for blo, bhi in blocks:
            if bhi <= lo or blo >= hi:
                continue
            if blo > cursor:
                out.append(blo - cursor)
            cursor = max(cursor, min(bhi, hi))
        if hi > cursor:
            out.append(hi - cursor)
    return out


env = dict(os.environ)
cache = tempfile.TemporaryDirectory()
env["XDG_CACHE_HOME"] = cache.name

# PyTorch's own free blocks at the end of each snapshot.
snapshots = sorted(glob.glob(os.path.join(data, "snapshots", "*.pickle")))
for snap in snapshots:
    name = os.path.relpath(snap, data)
    with open(snap, "rb") as f:
        d = pickle.load(f)
    by_device = {}
    for seg in d.get("segments", []):
        free = [b["size"] for b in seg["blocks"] if b["state"] == "inactive"]
        by_device.setdefault(seg["device"], []).append(free)
    rc, rows, err = frag_rows(snap, env)
    if not ok(rc == 0, "%s: report fragmentation" % name, err):
        continue
    for dev, segs in sorted(by_device.items()):
        end = [r for r in rows if r["device"] == str(dev) and r["allocator"] == "pytorch"
               and r["instant"] == "end"]
        free = [b for s in segs for b in s]
        want = (len(segs), sum(free), max(free, default=0))
        ok(len(end) == 1 and figures(end[0]) == want,
           "%s device %d: at the end, PyTorch's segments and free blocks" % (name, dev),
           (end, want))


def replay(db, allocator_id, until_ts):
    """Segments and live blocks of allocator_id after every event up to
    until_ts (absolute), from alloc_event alone."""
    segments, mapped, blocks = {}, {}, {}
    for op, addr, req, blk in db.execute(
            "SELECT op, address, requested_bytes, block_bytes FROM alloc_event"
            " WHERE allocator_id = ? AND ts <= ? ORDER BY ts, id", (allocator_id, until_ts)):
        size = blk if blk is not None else req
        if op == SEGMENT_ALLOC:
            segments[addr] = size
        elif op == SEGMENT_FREE:
            segments.pop(addr, None)
        elif op == SEGMENT_MAP:
            mapped[addr] = size
        elif op == SEGMENT_UNMAP:
            lo, hi = addr, addr + size
            for a, n in list(mapped.items()):
                if a + n <= lo or a >= hi:
                    continue
                del mapped[a]
                if a < lo:
                    mapped[a] = lo - a
                if a + n > hi:
                    mapped[hi] = a + n - hi
        elif op == ALLOC:
            blocks[addr] = size
        elif op == FREE_COMPLETED:
            blocks.pop(addr, None)
    spans = [(a, a + n) for a, n in segments.items()]
    # Touching mapped pieces are one expandable segment.
    ext = []
    for a, n in sorted(mapped.items()):
        if ext and a <= ext[-1][1]:
            ext[-1][1] = max(ext[-1][1], a + n)
        else:
            ext.append([a, a + n])
    spans += [tuple(e) for e in ext]
    return spans, [(a, a + n) for a, n in blocks.items()]


traces = sorted(glob.glob(os.path.join(data, "**", "*.db"), recursive=True))
streams = 0
for path in traces:
    name = os.path.relpath(path, data)
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        torch = db.execute("SELECT id, device_id FROM allocator WHERE kind = 'pytorch'").fetchall()
        tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master")}
        windowed = "detail_interval" in tables and \
            db.execute("SELECT count(*) FROM detail_interval").fetchone()[0] > 0
        start = int(db.execute("SELECT value FROM meta WHERE key = 'start_ns'").fetchone()[0])
        db.execute("SELECT count(*) FROM alloc_event").fetchone()
    except sqlite3.Error:
        continue  # compacted (its tables need the reader) or older
    if not torch or windowed or len(torch) != 1:
        continue
    allocator_id, device_id = torch[0]
    dev_idx = db.execute("SELECT idx FROM device WHERE id = ?", (device_id,)).fetchone()[0]
    rc, rows, err = frag_rows(path, env)
    if not ok(rc == 0, "%s: report fragmentation" % name, err):
        continue
    streams += 1
    for r in rows:
        if r["allocator"] != "pytorch" or r["device"] != str(dev_idx) \
                or r["instant"] not in ("worst", "peak_reserved", "end") \
                or r["largest_free_bytes"] == "":
            continue
        at = start + int(r["time_ns"])
        # An instant shared by several events is ambiguous from time alone.
        if db.execute("SELECT count(*) FROM alloc_event WHERE allocator_id = ? AND ts = ?",
                      (allocator_id, at)).fetchone()[0] > 1:
            continue
        spans, live = replay(db, allocator_id, at)
        free = gaps_of(spans, live)
        want = (len(spans), sum(free), max(free, default=0))
        ok(figures(r) == want,
           "%s: %s, the segments and free blocks of the allocator's own events"
           % (name, r["instant"]), (r, want))
ok(len(snapshots) >= 5 and streams >= 10,
   "snapshots (%d) and recorded traces (%d) checked" % (len(snapshots), streams))
done()
