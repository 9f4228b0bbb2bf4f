#!/usr/bin/env python3
"""Rewrites the checkout directory of the machine that recorded a fixture
out of it, so committed data names no machine.

A trace or snapshot recorded from a checkout at, say, /srv/ci/vramscope
holds that path in frame files, module paths, command lines and meta
values.  Every occurrence of ROOT/ (each --root given, and by default the
root of the checkout this script is in) becomes the path relative to the
checkout: /srv/ci/vramscope/samples/x.py -> samples/x.py.

  neutralize-paths.py [--root DIR]... FILE...

FILE may be a trace (.db: every TEXT value of every table), a PyTorch
snapshot (.pickle: every string, written back with the same pickle
protocol — our own fixtures only, never an untrusted file), the PyTorch
stream's stacks file (.stacks: each frame's file and function, the entries
written back in the same format, lengths and check words recomputed) or a
text file (.json, .log, .csv).  Prints each file it changed.
"""
import argparse
import os
import pickle
import sqlite3
import struct
import sys


def rewrite(s, roots):
    for r in roots:
        s = s.replace(r, "")
    return s


def fix_db(path, roots):
    db = sqlite3.connect(path)
    changed = 0
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
        for c in cols:
            for r in roots:
                cur = db.execute(
                    f'UPDATE "{t}" SET "{c}" = replace("{c}", ?1, \'\') '
                    f'WHERE typeof("{c}") = \'text\' AND instr("{c}", ?1) > 0', (r,))
                changed += cur.rowcount
    db.commit()
    if changed:
        db.execute("VACUUM")
    db.close()
    return changed


def walk(obj, roots, memo=None):
    """obj with every string rewritten.  What obj shares stays shared (one
    new object per original container, one per distinct string), so the
    pickle written back is no larger than the one read: a snapshot refers
    to each frame and frames list once and then through the memo."""
    if memo is None:
        memo = {}
    if isinstance(obj, str):
        key = ("s", obj)
        if key not in memo:
            memo[key] = rewrite(obj, roots)
        return memo[key]
    key = id(obj)
    if key in memo:
        return memo[key][1]
    if isinstance(obj, dict):
        new = {}
        memo[key] = (obj, new)
        for k, v in obj.items():
            new[walk(k, roots, memo)] = walk(v, roots, memo)
        return new
    if isinstance(obj, list):
        new = []
        memo[key] = (obj, new)
        new.extend(walk(v, roots, memo) for v in obj)
        return new
    if isinstance(obj, tuple):
        new = tuple(walk(v, roots, memo) for v in obj)
        memo[key] = (obj, new)
        return new
    return obj


def fix_pickle(path, roots):
    with open(path, "rb") as f:
        raw = f.read()
    if not any(r.encode() in raw for r in roots):
        return 0
    proto = raw[1] if raw[:1] == b"\x80" else 0
    obj = walk(pickle.loads(raw), roots)
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=proto)
    return 1


def fnv32(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def fix_stacks(path, roots):
    """A stacks file (collector/python/vs_torch_stacks.hpp) with its frames'
    strings rewritten; a torn last entry is kept as it is."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"VSSTACK1" or not any(r.encode() in raw for r in roots):
        return 0
    out, off = [raw[:16]], 16
    while off + 12 <= len(raw):
        kind, n = struct.unpack_from("<II", raw, off)
        if off + 12 + n > len(raw):
            break
        p = raw[off + 8:off + 8 + n]
        if kind == 1:
            fid, line, fl, nl = struct.unpack_from("<IiII", p)
            file = rewrite(p[16:16 + fl].decode("utf-8", "surrogateescape"), roots).encode(
                "utf-8", "surrogateescape")
            name = rewrite(p[16 + fl:16 + fl + nl].decode("utf-8", "surrogateescape"), roots).encode(
                "utf-8", "surrogateescape")
            p = struct.pack("<IiII", fid, line, len(file), len(name)) + file + name
        head = struct.pack("<II", kind, len(p))
        out.append(head + p + struct.pack("<I", fnv32(head + p)))
        off += 12 + n
    out.append(raw[off:])
    with open(path, "wb") as f:
        f.write(b"".join(out))
    return 1


def fix_text(path, roots):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        with open(path, "rb") as f:
            raw = f.read()
        if any(r.encode() in raw for r in roots):
            print(f"{path}: binary file, not rewritten", file=sys.stderr)
        return 0
    new = rewrite(text, roots)
    if new == text:
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    roots = [os.path.abspath(r).rstrip("/") + "/" for r in a.root + [here]]
    for path in a.files:
        ext = os.path.splitext(path)[1]
        fix = {".db": fix_db, ".pickle": fix_pickle, ".stacks": fix_stacks}.get(ext, fix_text)
        if fix(path, roots):
            print(path)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
