#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-ddp.py — a recording of a multi-process run against each rank.

Usage: check-ddp.py TRACE LOG

LOG holds the GROUND_TRUTH lines samples/torch-ddp.py printed, one per
rank.  Checks that the trace has one process per rank with that rank, on
its own device (matched by uuid), and that each rank's `pytorch` summary
row equals its memory_stats().  TAP output; exit 1 when a check failed.
"""
import json
import sqlite3
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_gpu_check  # noqa: E402
from vs_gpu_check import tap as check  # noqa: E402

db = vs_trace_db.connect(sys.argv[1], readonly=True)
# Ranks print concurrently: their lines may run together.
text = open(sys.argv[2]).read()
truths = []
at = text.find("GROUND_TRUTH ")
while at >= 0:
    value, end = json.JSONDecoder().raw_decode(text, at + len("GROUND_TRUTH "))
    truths.append(value)
    at = text.find("GROUND_TRUTH ", end)
check("every rank printed its ground truth", len(truths) >= 2, "%d ranks" % len(truths))
devices = db.execute("SELECT count(DISTINCT uuid) FROM device").fetchone()[0]
check("one device row per GPU", devices == len(truths), "%d devices" % devices)
for t in truths:
    row = db.execute("SELECT id, rank FROM process WHERE pid = ?", (t["pid"],)).fetchone()
    check("rank %d is a process of the trace" % t["rank"], row is not None)
    if row is None:
        continue
    check("rank %d has its rank" % t["rank"], row[1] == t["rank"], "%r" % (row[1],))
    dev = db.execute("SELECT id FROM device WHERE lower(uuid) LIKE '%' || ? || '%'",
                     (t["uuid"].lower().replace("gpu-", ""),)).fetchone()
    check("rank %d's GPU is a device of the trace" % t["rank"], dev is not None, t["uuid"])
    if dev is None:
        continue
    a = db.execute("SELECT id FROM allocator WHERE kind = 'pytorch' AND process_id = ?"
                   " AND device_id = ?", (row[0], dev[0])).fetchone()
    check("rank %d has a pytorch allocator on its GPU" % t["rank"], a is not None)
    if a is None:
        continue
    s = db.execute("SELECT peak_reserved_bytes, peak_allocated_bytes, alloc_count FROM summary"
                   " WHERE device_id = ? AND allocator_id = ?", (dev[0], a[0])).fetchone()
    want = t["pytorch"]
    for got, key in zip(s, ["peak_reserved", "peak_allocated", "alloc_count"]):
        check("rank %d %s" % (t["rank"], key), got == want[key], "trace %s, expected %s" % (got, want[key]))
vs_gpu_check.plan()
sys.exit(vs_gpu_check.status())
