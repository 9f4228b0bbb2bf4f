# SPDX-License-Identifier: MIT
"""check-stacks.py — checks `report peak` of a stacks sample frame by frame.

Usage: check-stacks.py native|stripped|python TRACE PEAK_CSV LOG [--torch]
The LOG holds the sample's STACK_TRUTH line (the source lines of its
calls).  Standard library only: runs on a bare GPU server.
"""
import csv
import re
import sqlite3
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

SEP = " <- "


def fail(msg):
    print("FAILED " + msg)
    sys.exit(1)


def truth(log):
    for line in open(log, encoding="utf-8", errors="replace"):
        if line.startswith("STACK_TRUTH "):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    fail("no STACK_TRUTH line in " + log)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def stats(db):
    con = vs_trace_db.connect(db)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    q = lambda sql: con.execute(sql).fetchone()[0]
    print("   symbolize %.1f ms for %s native frames (%s named);"
          " allocs with stack %d/%d, frees with stack %d/%d" % (
              (meta.get("collector_symbolize_ns") or 0) / 1e6,
              meta.get("collector_native_frames"), meta.get("collector_symbolized_frames"),
              q("SELECT count(stack_id) FROM mem_event WHERE op = 1 AND kind != 4"),
              q("SELECT count(*) FROM mem_event WHERE op = 1 AND kind != 4"),
              q("SELECT count(stack_id) FROM mem_event WHERE op = 2 AND kind != 4"),
              q("SELECT count(*) FROM mem_event WHERE op = 2 AND kind != 4")))
    return con


def native(db, csv_path, log, stripped):
    t = truth(log)
    con = stats(db)
    want = int(t["bytes"])
    mine = [r for r in rows(csv_path) if int(r["bytes"]) == want]
    if len(mine) != 1:
        fail("expected one peak row of %d bytes, got %s" % (want, rows(csv_path)))
    r = mine[0]
    frames = r["stack"].split(SEP)
    print("   top_frame: %s\n   site:      %s\n   stack:     %s" % (
        r["top_frame"], r["site"], SEP.join(frames[:5])))
    if stripped:
        if not re.fullmatch(r"sample-stacks-stripped\+0x[0-9a-f]+", r["top_frame"]):
            fail("stripped top_frame is not module+offset: " + r["top_frame"])
        print("ok     stripped binary: module+offset")
        return
    for i, (fn, key) in enumerate([("layer", "layer"), ("train", "train"),
                                   ("main", "main")]):
        m = re.fullmatch(r"(.*sample-stacks\.cu):(\d+) (\S+?)(\(.*\))?", frames[i])
        if not m or m.group(3) != fn or int(m.group(2)) != int(t[key]):
            fail("frame %d is %r, expected sample-stacks.cu:%s %s" % (i, frames[i], t[key], fn))
        print("ok     frame %d: %s" % (i, frames[i]))
    if r["top_frame"] != frames[0] or r["site"] != frames[0]:
        fail("top_frame/site are not the layer frame")
    print("ok     top_frame and site = layer")


def python(db, csv_path, log, with_torch):
    t = truth(log)
    con = stats(db)
    want = int(t["bytes"])
    mine = [r for r in rows(csv_path) if "stacks.py:%s layer" % t["layer"] in r["stack"]]
    if len(mine) != 1 or int(mine[0]["bytes"]) != want:
        fail("expected one peak row of %d bytes with the layer frame, got %s" % (
            want, [(r["bytes"], r["stack"][:300]) for r in rows(csv_path)]))
    r = mine[0]
    frames = r["stack"].split(SEP)
    print("   top_frame: %s\n   site:      %s" % (r["top_frame"], r["site"]))
    i = next(k for k, f in enumerate(frames) if f.endswith(" layer"))
    print("   stack from there: %s" % SEP.join(frames[i:i + 4]))
    for k, (fn, key) in enumerate([("layer", "layer"), ("train", "train"),
                                   ("main", "main")]):
        f = frames[i + k]
        if f != "%s:%s %s" % (t["file"], t[key], fn):
            fail("Python frame %d is %r, expected %s:%s %s" % (k, f, t["file"], t[key], fn))
        print("ok     Python frame %d: %s" % (k, f))
    if r["site"] != frames[i]:
        fail("site %r is not the layer frame" % r["site"])
    print("ok     site = layer; native frames inside: %s" % SEP.join(frames[:i]))
    if any("_PyEval_EvalFrameDefault" in f for f in frames):
        fail("an evaluation-loop frame was left in the stack")
    print("ok     no _PyEval_EvalFrameDefault frames")
    labels = [x[0] for x in con.execute("SELECT function FROM frame WHERE kind = 4")]
    print("   label frames: %s" % labels)
    if with_torch:
        if not any(l.startswith("backward pass") for l in labels):
            fail("no allocation was labelled as made by the backward pass")
        print("ok     backward-pass allocations labelled")


def main():
    mode, db, csv_path, log = sys.argv[1:5]
    if mode in ("native", "stripped"):
        native(db, csv_path, log, mode == "stripped")
    else:
        python(db, csv_path, log, "--torch" in sys.argv[5:])


main()
