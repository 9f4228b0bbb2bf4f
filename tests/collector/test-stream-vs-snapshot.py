#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-stream-vs-snapshot.py — one real PyTorch run's allocator level
imported twice, from the stream with its own stacks and from PyTorch's
snapshot with its history, gives the same events with the same stacks.

  test-stream-vs-snapshot.py VRAMSCOPE FIXTURE_DIR            (TAP output)

FIXTURE_DIR holds what tests/gpu/stream-stacks-check.py left on a GPU with
both on (VRAMSCOPE_TORCH_HISTORY=1): check.stream and check.stacks (the
process's stream and stacks file as it ran) and check.pickle (the snapshot
it took right after, with the history).  `vramscope recover` reads the
stream and stacks as `record` does (a spool holding them and a .stream.info
saying no history); `vramscope import` reads the snapshot.  Checked: the
snapshot's events are the tail of the stream's (operation, address,
requested bytes, in order), each with the same stack frame by frame (file,
function, line, frame kind) as the trace tables hold them, and the same
out-of-memory failures with their stacks.

A free completed late (after its request, once the block's other streams
were done) has the stack of the allocator call that completed it, in the
stream as in PyTorch's history; the fixture holds one.
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "gpu"))
sys.path.insert(0, os.path.join(here, ".."))
import vs_trace_db  # noqa: E402
from tap import done, ok  # noqa: E402
from vs_stream_files import read_stream, trace_stacks  # noqa: E402

vramscope, fixtures = sys.argv[1:3]


def events(db_path):
    db = vs_trace_db.connect(db_path, vramscope)
    stack = trace_stacks(db, "file, function, line, kind")
    ev = [(r[0], r[1], r[2], stack(r[3])) for r in db.execute(
        "SELECT e.op, e.address, e.requested_bytes, e.stack_id FROM alloc_event e"
        " JOIN allocator a ON a.id = e.allocator_id WHERE a.kind = 'pytorch'"
        " AND e.before_trace IS NULL ORDER BY e.ts, e.id")]
    ooms = [(r[0], stack(r[1])) for r in db.execute(
        "SELECT f.requested_bytes, f.stack_id FROM failed_alloc f"
        " JOIN allocator a ON a.id = f.allocator_id WHERE a.kind = 'pytorch'"
        " ORDER BY f.ts, f.id")]
    return ev, ooms


d = tempfile.mkdtemp()
try:
    spool = os.path.join(d, "spool")
    os.mkdir(spool)
    shutil.copyfile(os.path.join(fixtures, "check.stream"), os.path.join(spool, "torch-4242.stream"))
    shutil.copyfile(os.path.join(fixtures, "check.stacks"), os.path.join(spool, "torch-4242.stacks"))
    with open(os.path.join(spool, "torch-4242.stream.info"), "w") as f:
        f.write("pid 4242\nreason stream\nstacks 1\nhistory 0\n"
                "device 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n")
    stream_db = os.path.join(d, "stream.db")
    r = subprocess.run([vramscope, "recover", spool, "-o", stream_db],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ok(r.returncode == 0, "recover reads the stream and its stacks (%s)" % r.stdout.strip()[-200:])
    snap_db = os.path.join(d, "snap.db")
    r = subprocess.run([vramscope, "import", os.path.join(fixtures, "check.pickle"), "-o", snap_db],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ok(r.returncode == 0, "import reads the snapshot (%s)" % r.stdout.strip()[-200:])
    s_ev, s_oom = events(stream_db)
    h_ev, h_oom = events(snap_db)
    ok(len(h_ev) > 100 and len(s_ev) >= len(h_ev),
       "the stream has at least the history's events (%d, %d)" % (len(s_ev), len(h_ev)))
    tail = s_ev[len(s_ev) - len(h_ev):]
    same = sum(1 for a, b in zip(tail, h_ev) if a[:3] == b[:3])
    ok(same == len(h_ev), "the same events in the same order (%d of %d)" % (same, len(h_ev)))
    recs = [r for r in read_stream(os.path.join(fixtures, "check.stream")) if 1 <= r[7] <= 7]
    ok(len(recs) == len(s_ev), "the stream's records are the trace's events (%d, %d)"
       % (len(recs), len(s_ev)))
    same_stack = sum(1 for a, b in zip(tail, h_ev) if a == b)
    with_stack = sum(1 for a, b in zip(tail, h_ev) if b[3])
    first = next(((a, b) for a, b in zip(tail, h_ev) if a != b), None)
    ok(same_stack == len(h_ev) and with_stack > len(h_ev) // 2,
       "each with the same stack, frame by frame (%d of %d, %d with one)%s"
       % (same_stack, len(h_ev), with_stack,
          "" if first is None else ": first differs: %r" % (first,)))
    ok(len(h_oom) > 0 and s_oom[len(s_oom) - len(h_oom):] == h_oom,
       "the same out-of-memory failures with their stacks (%d, %d)" % (len(s_oom), len(h_oom)))
finally:
    shutil.rmtree(d, ignore_errors=True)
done()
