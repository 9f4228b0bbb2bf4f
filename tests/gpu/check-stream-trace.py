#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-stream-trace.py — a recorded trace's PyTorch allocator level
against the allocator stream and stacks file it was made from.

  check-stream-trace.py TRACE STREAM STACKS

STREAM and STACKS are copies of a process's torch-PID.stream and
torch-PID.stacks taken while it ran (tests/gpu/stream-stacks-check.py
writes them); the trace holds at least those records.  Checks that the
trace's `pytorch` events, in time order, begin with the stream's records
(operation, address, requested bytes) and that each event's stack,
read from the trace's stack and frame tables, is the record's stack from
the stacks file, frame by frame (file, function, line); an out-of-memory
record is a failed_alloc with its stack.  Prints one line per check and
exits 1 when one failed.  Standard library only.
"""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402
from vs_stream_files import read_stacks, read_stream, trace_stacks  # noqa: E402
import vs_gpu_check  # noqa: E402
from vs_gpu_check import line as check  # noqa: E402

trace, stream, stacks_path = sys.argv[1:4]

records = read_stream(stream)
stacks, torn = read_stacks(stacks_path)
db = vs_trace_db.connect(trace)
trace_stack = trace_stacks(db, "coalesce(file, ''), coalesce(function, ''), line")


events = db.execute(
    "SELECT e.ts, e.op, e.address, e.requested_bytes, e.stack_id FROM alloc_event e"
    " JOIN allocator a ON a.id = e.allocator_id WHERE a.kind = 'pytorch'"
    " ORDER BY e.ts, e.id").fetchall()
ooms = db.execute(
    "SELECT f.ts, f.requested_bytes, f.stack_id FROM failed_alloc f"
    " JOIN allocator a ON a.id = f.allocator_id WHERE a.kind = 'pytorch'"
    " ORDER BY f.ts, f.id").fetchall()
# The trace is in time order; the stream of one device is too (the tracker
# runs under the device's allocator lock), devices may interleave.
want = sorted((r for r in records if 1 <= r[7] <= 7), key=lambda r: r[0])
want_ooms = sorted((r for r in records if r[7] == 8), key=lambda r: r[0])
check(len(events) >= len(want), "the trace has the stream's %d events (%d)" % (len(want), len(events)))
same = same_stack = with_stack = same_ts = 0
first_bad = None
for r, e in zip(want, events):
    if (e[1], e[2], e[3]) != (r[7], r[1], r[2]):
        first_bad = first_bad or ("event", r, e)
        continue
    same += 1
    same_ts += e[0] == r[0]
    got = trace_stack(e[4]) if e[4] else []
    exp = stacks.get(r[6], []) if r[6] else []
    with_stack += bool(exp)
    if got == exp:
        same_stack += 1
    else:
        first_bad = first_bad or ("stack", r, got[:3], exp[:3])
check(same == len(want), "events in order with the same operation, address, bytes (%d of %d;"
      " %d at the same time)" % (same, len(want), same_ts))
check(same_stack == len(want), "events with the same stack, frame by frame (%d of %d, %d with one)"
      % (same_stack, len(want), with_stack))
check(with_stack > 0, "events have stacks")
oom_same = sum(1 for r, f in zip(want_ooms, ooms)
               if f[1] == r[2]
               and (trace_stack(f[2]) if f[2] else []) == (stacks.get(r[6], []) if r[6] else []))
check(len(ooms) >= len(want_ooms) and oom_same == len(want_ooms),
      "out-of-memory records with their stacks (%d of %d)" % (oom_same, len(want_ooms)))
if first_bad:
    print("first difference:", first_bad)
sys.exit(vs_gpu_check.status())
