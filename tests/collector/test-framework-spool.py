#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-framework-spool.py VRAMSCOPE ENDINGS_DIR — what the JAX/CuPy hook
leaves in a spool (vsfw-PID.info) made into the trace: the spool a killed
`record` left on an H100 (tests/data/endings/torch-kill-record), with the
file the hook writes for a JAX process that died of RESOURCE_EXHAUSTED
added beside it, recovered with `vramscope recover` (which imports the
spool as `record` does).

  * the hook's meta lines are the trace's meta;
  * the failure is a failed_alloc row (api xla) on the collector's own
    process and GPU (by pid and uuid: no second process or device), with
    the request and the traceback's frames, innermost first;
  * `diagnose` names it (oom-allocator-limit of xla, at the program's
    line) and `summary` has the pool's row from XLA's own figures.
TAP output.
"""
import csv
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_fake_frameworks import recorded_spool  # noqa: E402

vramscope, endings = sys.argv[1], sys.argv[2]

with tempfile.TemporaryDirectory() as tmp:
    spool = os.path.join(tmp, "spool")
    (idx, uuid, total, name), pid, ts = recorded_spool(endings, spool)
    with open(os.path.join(spool, "vsfw-%d.info" % pid), "w") as f:
        f.write("\n".join([
            "pid %d" % pid,
            "device %d %s %d %s" % (idx, uuid, total, name),
            "meta xla.preallocate true",
            "meta xla.mem_fraction 0.75",
            "meta xla.pool_bytes.0 63763906560",
            "meta xla.bytes_limit.0 63763906560",
            "meta xla.peak_bytes_in_use.0 62277026304",
            "meta xla.bytes_in_use.0.at_failure 62277025792",
            "meta xla.bytes_limit.0.at_failure 63763906560",
            "meta xla.largest_free_block_bytes.0.at_failure 1486880256",
            "meta program.last_error JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory",
            "failed %d 0 2147483648 xla RESOURCE_EXHAUSTED: Out of memory while trying to "
            "allocate 2.00GiB with allocator GPU_0_bfc on device 0." % (ts + 1000),
            "frame 28 samples/jax-oom.py\tkeep_growing",
            "frame 36 samples/jax-oom.py\t<module>",
        ]) + "\n")
    # What recover gives without the hook's file, to compare.
    plain_spool = os.path.join(tmp, "plain-spool")
    shutil.copytree(os.path.join(endings, "torch-kill-record", "spool"), plain_spool)
    plain = os.path.join(tmp, "plain.db")
    subprocess.run([vramscope, "recover", plain_spool, "-o", plain], capture_output=True)
    pdb = sqlite3.connect(plain)
    counts = [pdb.execute("SELECT count(*) FROM %s" % t).fetchone()[0] for t in ("process", "device")]
    pdb.close()
    out = os.path.join(tmp, "out.db")
    p = subprocess.run([vramscope, "recover", spool, "-o", out], capture_output=True, text=True)
    ok(p.returncode == 0, "recover writes the trace", p.stderr)
    db = sqlite3.connect(out)
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'xla.%'"
                           " OR key LIKE 'program.%'"))
    ok(meta.get("xla.peak_bytes_in_use.0") in (62277026304, "62277026304")
       and "program.last_error" in meta, "the hook's meta is the trace's", meta)
    got = [db.execute("SELECT count(*) FROM %s" % t).fetchone()[0] for t in ("process", "device")]
    ok(got == counts, "no process or GPU more than without the hook's file: they are the same",
       "%s, without it %s" % (got, counts))
    rows = db.execute("SELECT f.api, f.requested_bytes, d.uuid, p.pid, f.stack_id FROM failed_alloc f"
                      " JOIN device d ON d.id = f.device_id JOIN process p ON p.id = f.process_id"
                      " WHERE f.api = 'xla'").fetchall()
    ok(len(rows) == 1 and rows[0][:4] == ("xla", 2147483648, uuid, pid),
       "the failure, on the collector's process and GPU", rows)
    frames = []
    sid = rows[0][4] if rows else 0
    while sid:
        parent, fn, file, line = db.execute(
            "SELECT s.parent_id, f.function, f.file, f.line FROM stack s JOIN frame f"
            " ON f.id = s.frame_id WHERE s.id = ?", (sid,)).fetchone()
        frames.append((file, line, fn))
        sid = parent
    ok(frames == [("samples/jax-oom.py", 28, "keep_growing"), ("samples/jax-oom.py", 36, "<module>")],
       "its stack: the traceback's frames, innermost first", frames)
    db.close()
    findings = list(csv.DictReader(io.StringIO(subprocess.run(
        [vramscope, "report", out, "--format", "csv", "diagnose"], capture_output=True,
        text=True).stdout)))
    xla = [f for f in findings if f["allocator"] == "xla"]
    ok(len(xla) == 1 and xla[0]["finding"] == "oom-allocator-limit"
       and xla[0]["site"].startswith("samples/jax-oom.py:28"),
       "diagnose: oom-allocator-limit of xla at the program's line", findings)
    summary = list(csv.DictReader(io.StringIO(subprocess.run(
        [vramscope, "report", out, "--format", "csv", "summary"], capture_output=True,
        text=True).stdout)))
    pool = [r for r in summary if r["allocator"] == "xla"]
    ok(len(pool) == 1 and pool[0]["peak_reserved_bytes"] == "63763906560"
       and pool[0]["peak_allocated_bytes"] == "62277026304" and pool[0]["failed_alloc_count"] == "1",
       "summary: the pool's row from XLA's own figures", pool)
done()
