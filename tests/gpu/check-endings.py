#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-endings.py — checks the trace of one run of the endings matrix
(tests/gpu/run-endings.sh) against what the program printed before it died.

  check-endings.py VRAMSCOPE TRACE LOG KIND RC WANT_RC [SOURCE [STACKS]]

KIND is `torch` (endings-train.py) or `c` (endings-sample).  Checks:

  * record's (or the program's) exit status is WANT_RC ('-' to skip);
  * the trace opens: `vramscope report TRACE --format csv summary` works;
  * the device level is there and complete up to READY (the program waited
    1.2 s after it, past the loss bound of a SIGKILL): for the C sample its
    64 cudaMalloc sizes once each and exactly the 32 frees it made; for
    PyTorch at least one cudaMalloc per segment PyTorch took;
  * PyTorch's allocator level is there and equals memory_stats() as printed
    at READY, exactly: allocations made, bytes requested now and at the
    peak, bytes reserved now and at the peak, OOMs;
  * (PyTorch) it came from SOURCE: `snapshot` (the final snapshot, taken at
    exit or at SIGTERM/SIGHUP, where PyTorch recorded its history: its
    events have rounded block sizes) or `stream` (the allocator stream: no
    block sizes);
  * (PyTorch, STACKS `stacks`) its events have Python stacks, unless the
    program's log says the stream gathers none (and the level came from the
    stream).

Prints one line per check (ok/FAIL) and exits 1 when any failed.
"""
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_gpu_check  # noqa: E402
from vs_gpu_check import line as check  # noqa: E402

vramscope, trace, log, kind, rc, want_rc = sys.argv[1:7]
want_source = sys.argv[7] if len(sys.argv) > 7 else "-"
want_stacks = len(sys.argv) > 8 and sys.argv[8] == "stacks"

truth = None
for line in open(log, errors="replace"):
    if line.startswith("GROUND_TRUTH "):
        truth = json.loads(line[len("GROUND_TRUTH "):])
check(truth is not None, "the program printed its ground truth")
if want_rc != "-":
    check(rc == want_rc, "exit status %s (want %s)" % (rc, want_rc))
r = subprocess.run([vramscope, "report", trace, "--format", "csv", "summary"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
check(r.returncode == 0, "the trace opens (report summary: %s)"
      % r.stdout.decode(errors="replace").strip().splitlines()[-1:])
if r.returncode != 0 or truth is None:
    sys.exit(1)

db = vs_trace_db.connect(trace, vramscope, readonly=True)
MIB = 1 << 20
if kind == "c":
    sizes = dict(db.execute(
        "SELECT bytes, count(*) FROM mem_event WHERE op = 1 AND bytes % :mib = 0"
        " AND bytes <= 64 * :mib GROUP BY bytes", {"mib": MIB}).fetchall())
    # The CUDA runtime may make allocations of its own of some of these
    # sizes: each of the program's sizes must be there at least once, and
    # freed exactly when the program freed it.
    check(all(sizes.get((i + 1) * MIB, 0) >= 1 for i in range(64)),
          "device level: the 64 cudaMalloc calls")
    freed = dict(db.execute(
        "SELECT a.bytes, count(*) FROM mem_event a JOIN mem_event f ON f.address = a.address"
        " AND f.op = 2 AND f.ts >= a.ts WHERE a.op = 1 AND a.bytes % :mib = 0"
        " AND a.bytes <= 64 * :mib GROUP BY a.bytes", {"mib": MIB}).fetchall())
    check(all((freed.get((i + 1) * MIB, 0) >= 1) == (i % 2 == 0) for i in range(64)),
          "device level: the %d frees it made, and no other of those blocks (%d sizes freed)"
          % (truth["frees"], len(freed)))
    sys.exit(vs_gpu_check.status())

t = truth["torch"]
segs = db.execute("SELECT count(*) FROM mem_event WHERE op = 1 AND kind IN (1, 6)").fetchone()[0]
devs = db.execute("SELECT count(*) FROM mem_event WHERE op = 1").fetchone()[0]
check(devs > 0 and segs >= t["segment.all.allocated"],
      "device level: %d device allocations for PyTorch's %d segments"
      % (segs, t["segment.all.allocated"]))
rows = db.execute(
    "SELECT s.alloc_count, s.free_count, s.peak_allocated_bytes, s.final_allocated_bytes,"
    " s.peak_reserved_bytes, s.final_reserved_bytes, s.failed_alloc_count FROM"
    " summary s JOIN allocator a ON a.id = s.allocator_id"
    " WHERE a.kind = 'pytorch'").fetchall()
check(len(rows) == 1, "the PyTorch allocator level is in the trace (%d row)" % len(rows))
if len(rows) == 1:
    got = rows[0]
    pairs = [("allocations", got[0], t["allocation.all.allocated"]),
             ("peak requested bytes", got[2], t["requested_bytes.all.peak"]),
             ("requested bytes at READY", got[3], t["requested_bytes.all.current"]),
             ("peak reserved bytes", got[4], t["reserved_bytes.all.peak"]),
             ("reserved bytes at READY", got[5], t["reserved_bytes.all.current"]),
             ("OOMs", got[6], t["num_ooms"])]
    for name, g, w in pairs:
        check(g == w, "allocator level: %s %s (memory_stats: %s)" % (name, g, w))
    stacks, sized = db.execute(
        "SELECT count(e.stack_id), count(e.block_bytes) FROM alloc_event e"
        " JOIN allocator a ON a.id = e.allocator_id"
        " WHERE a.kind = 'pytorch' AND e.op = 1").fetchone()
    source = "snapshot" if sized else "stream"
    check(want_source in ("-", source), "the allocator level came from the %s (want %s)"
          % (source, want_source))
    if want_stacks:
        no_stacks = "gathers no Python stacks" in open(log, errors="replace").read()
        check(stacks > 0 or (no_stacks and source == "stream"),
              "the allocator level has Python stacks (%d allocations with one)" % stacks)
sys.exit(vs_gpu_check.status())
