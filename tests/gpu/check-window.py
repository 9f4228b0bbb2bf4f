#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-window.py VRAMSCOPE DIR — the runs tests/gpu/window-run.sh
recorded, against each program's own ground truth.  TAP output; exit 1
when a check failed.

DIR holds one folder per run, each with run.db (the trace, when it was
kept) and truth.json:
  a PyTorch run (tests/gpu/window-train.py): its `pytorch` row's peaks
  equal torch.cuda.memory_stats()'s exactly (requested_bytes.all.peak,
  reserved_bytes.all.peak), its failed requests num_ooms, its allocations
  allocation.all.allocated, what it holds at the end
  requested_bytes.all.current, and the tensors it kept (the leak) are
  live at the end;
  the CUDA C loop (tests/gpu/window-sample.cu): its allocations, the
  blocks it leaks and its failed request;
  and a windowed run (meta window_ns) says so at the top of its text
  reports, has detail intervals (the last one ending at the trace's end)
  and slices covering the whole run.
Folders without run.db (traces too large to keep) are skipped.
"""
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402
from tap import done, ok  # noqa: E402
import vs_cli  # noqa: E402
from vs_cli import csv_rows  # noqa: E402

vramscope, top = sys.argv[1], sys.argv[2]


def run(*args):
    return vs_cli.run(vramscope, *args)


checked = 0
for d in sorted(glob.glob(os.path.join(top, "*"))):
    trace, truth_path = os.path.join(d, "run.db"), os.path.join(d, "truth.json")
    if not os.path.isfile(trace) or not os.path.isfile(truth_path):
        continue
    name = os.path.basename(d)
    truth = json.load(open(truth_path))
    meta = {r["key"]: r["value"] for r in csv_rows(run("report", trace, "meta", "--format", "csv"))}
    rows = {r["allocator"]: r for r in csv_rows(run("report", trace, "summary", "--format", "csv"))}
    db = vs_trace_db.connect(trace, vramscope, readonly=True)
    checked += 1
    if "requested_bytes.all.peak" in truth:
        p = rows.get("pytorch", {})
        want = {
            "peak_allocated_bytes": truth["requested_bytes.all.peak"],
            "peak_reserved_bytes": truth["reserved_bytes.all.peak"],
            "failed_alloc_count": truth["num_ooms"],
            "alloc_count": truth["allocation.all.allocated"],
            "final_allocated_bytes": truth["requested_bytes.all.current"],
        }
        for col, v in want.items():
            ok(p.get(col) == str(v), "%s: pytorch %s is the program's (%s)" % (name, col, v),
               "trace: %s" % p.get(col))
        kept = db.execute("SELECT count(*) FROM block WHERE level = 2 AND free_seq IS NULL"
                          " AND bytes = 1048576").fetchone()[0]
        ok(kept >= truth["leak_tensors"],
           "%s: the %d tensors it kept are live at the end" % (name, truth["leak_tensors"]),
           "1 MiB blocks live at the end: %d" % kept)
    elif "peak_bytes" in truth:
        a = rows.get("all", {})
        leaked = db.execute("SELECT count(*) FROM block WHERE level = 1 AND free_seq IS NULL"
                            " AND bytes = 262144").fetchone()[0]
        ok(leaked == truth["leaked_count"],
           "%s: the %d buffers it leaks are live at the end" % (name, truth["leaked_count"]),
           "256 KiB blocks live at the end: %d" % leaked)
        ok(a.get("failed_alloc_count") == str(truth["failed"]),
           "%s: its failed request is counted" % name, "trace: %s" % a.get("failed_alloc_count"))
        ok(a.get("alloc_count") is not None and int(a["alloc_count"]) >= truth["allocs"],
           "%s: its %d allocations are counted" % (name, truth["allocs"]),
           "trace: %s" % a.get("alloc_count"))
    else:
        ok(False, "%s: a ground truth this check knows" % name, json.dumps(truth)[:400])
    if "window_ns" in meta:
        text = run("report", trace, "summary", "--width", "100").stdout
        intervals = db.execute("SELECT count(*), max(end_ns) FROM detail_interval").fetchone()
        slices = db.execute("SELECT min(start_ns), max(end_ns) FROM window_slice").fetchone()
        windowed = intervals[0] > 0
        ok(not windowed or text.startswith("Windowed trace"),
           "%s: a windowed trace says so at the top of its reports" % name, text[:300])
        ok(not windowed or (intervals[1] == int(meta["end_ns"])
                            and slices[0] == int(meta["start_ns"])
                            and slices[1] > int(meta["end_ns"])),
           "%s: its detail reaches the end and its slices cover the run" % name,
           "intervals %s, slices %s, meta start %s end %s"
           % (intervals, slices, meta.get("start_ns"), meta.get("end_ns")))
ok(checked > 0, "runs checked: %d" % checked)
done()
