#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-oom-message.py — the diagnosis of a program that died of OOM holds
the figures of the exception text PyTorch printed.

Every committed trace (tests/data, recursively) whose program exited with
a failure after a failed PyTorch allocation must have the exception text
of that same run saved beside it as NAME.oom.txt (the recordings saved
it: tests/gpu/record-diagnose-samples.sh).  The diagnosis of the trace
(`report --format csv FILE diagnose`) must name, in the finding of the
failure that ended the run, each figure of that text in PyTorch's own
format: the request as the allocator rounded it ("Tried to allocate"),
the device's total capacity and free memory, the limit ("allowed"),
memory allocated by PyTorch (rounded blocks) and reserved but
unallocated.

The bundled tests/data/torch-eval-leak.db was recorded on an H200 whose
message was not saved; diagnose/torch-eval-leak.db is the same program
recorded again (H100) with its text.  Both runs ended with identical
memory_stats, so the allocator's figures of that text (the request,
allocated, reserved but unallocated) are checked on the bundled trace
too; its device and limit figures are of another GPU.

  test-oom-message.py VRAMSCOPE DATA_DIR
"""
import csv
import glob
import io
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
SIZE = r"(\d+(?:\.\d+)? (?:bytes|KiB|MiB|GiB))"


def figures(text):
    """The figures of PyTorch's message, as the diagnosis must quote them."""
    want = {}
    for key, pattern, said in [
            ("request", r"Tried to allocate " + SIZE, "tried to allocate %s"),
            ("total", r"total capacity of " + SIZE, "total capacity of %s"),
            ("free", r"of which " + SIZE + " is free", "of which %s is free"),
            ("limit", SIZE + r" allowed", "%s allowed"),
            ("allocated", SIZE + r" is allocated by PyTorch", "%s allocated by PyTorch"),
            ("unallocated", SIZE + r" is reserved by PyTorch but unallocated",
             "%s reserved but unallocated")]:
        m = re.search(pattern, text)
        if m:
            want[key] = said % m.group(1)
    return want


def died_of_oom(db):
    con = sqlite3.connect(db)
    try:
        failed = con.execute("SELECT COUNT(*) FROM failed_alloc f JOIN allocator a"
                             " ON a.id = f.allocator_id WHERE a.kind = 'pytorch'").fetchone()[0]
        bad = con.execute("SELECT COUNT(*) FROM process WHERE exit_status != 0").fetchone()[0]
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return failed > 0 and bad > 0


def fatal_evidence(db):
    out = subprocess.run([vramscope, "report", "--format", "csv", db, "diagnose"],
                         capture_output=True, text=True, check=True).stdout
    for f in csv.DictReader(io.StringIO(out)):
        if f["finding"].startswith("oom-") and "the failure that ended the run" in f["evidence"]:
            return f["evidence"]
    return ""


bundled = os.path.join(data, "torch-eval-leak.db")
traces = sorted(set(glob.glob(os.path.join(data, "**", "*.db"), recursive=True)))
dead = [t for t in traces if died_of_oom(t)]
ok(len(dead) >= 4, "the committed traces that died of OOM are found", dead)
for db in dead:
    name = os.path.relpath(db, data)
    text_path = db[:-3] + ".oom.txt"
    if db == bundled:
        text_path = os.path.join(data, "diagnose", "torch-eval-leak.oom.txt")
    ok(os.path.exists(text_path), "%s: the exception text is saved beside it" % name, text_path)
    if not os.path.exists(text_path):
        continue
    with open(text_path) as f:
        want = figures(f.read())
    if db == bundled:
        want = {k: v for k, v in want.items() if k in ("request", "allocated", "unallocated")}
    ok(len(want) >= 3, "%s: the text has PyTorch's figures" % name, want)
    evidence = fatal_evidence(db)
    for key, said in sorted(want.items()):
        ok(said in evidence, "%s: the fatal failure says %r as PyTorch printed it" % (name, said),
           evidence)
done()
