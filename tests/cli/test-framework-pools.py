#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-framework-pools.py VRAMSCOPE DATA_DIR — pools recognised from the
device level alone, on traces recorded on a GPU (tests/data/frameworks/)
made into what other programs and older recordings leave:

  * the JAX and CuPy traces without the hook's meta (a trace recorded
    before the hook, or with VRAMSCOPE_FRAMEWORKS=0): the pool's row is
    still there, its reserved memory the same, its allocated memory
    empty (unknown, never the pool's size), `all` not counting it, and
    no finding (no leak of what the pool keeps, nothing outside the
    allocators);
  * the CuPy trace with its pool's frames renamed as RMM's
    (rmm::mr::pool_memory_resource) and the JAX trace with its BFC
    allocator's module renamed as TensorFlow's: rows `rmm` and
    `tensorflow` (neither framework is on the GPU machine);
  * PyTorch and CUDA C traces: no pool row.

Each copy is edited with SQL on its plain tables (meta, frame, module).
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

vramscope, data = sys.argv[1], sys.argv[2]
frameworks = os.path.join(data, "frameworks")


def run(*args):
    p = subprocess.run([vramscope, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("vramscope %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def table(trace, report):
    return list(csv.DictReader(io.StringIO(run("report", trace, "--format", "csv", report))))


def edited(tmp, name, *sql):
    path = os.path.join(tmp, name + "-edited.db")
    shutil.copy(os.path.join(frameworks, name + ".db"), path)
    db = sqlite3.connect(path)
    for s in sql:
        db.execute(s)
    db.commit()
    db.close()
    return path


def pool_checks(trace, name, reserved, what):
    rows = table(trace, "summary")
    pool = [r for r in rows if r["allocator"] == name]
    everything = [r for r in rows if r["allocator"] == "all"]
    if not ok(len(pool) == 1 and len(everything) == 1, "%s: one %s row beside all" % (what, name),
              rows):
        return
    p, a = pool[0], everything[0]
    ok(int(p["peak_reserved_bytes"]) == reserved,
       "%s: its peak reserved is the pool's size, %d" % (what, reserved), p)
    ok(p["peak_allocated_bytes"] == "" and p["final_allocated_bytes"] == "",
       "%s: its allocated memory is unknown (empty), never the pool's size" % what, p)
    ok(int(a["peak_allocated_bytes"]) < reserved,
       "%s: all does not count the pool as allocated" % what, a)
    findings = table(trace, "diagnose")
    ok(findings == [], "%s: no finding (no leak of the pool's cache, nothing outside)" % what,
       findings)


with tempfile.TemporaryDirectory() as tmp:
    no_meta = "DELETE FROM meta WHERE key LIKE 'xla.%' OR key LIKE 'cupy.%'"
    pool_checks(edited(tmp, "jax-healthy", no_meta), "xla", 63763906560,
                "JAX without the hook")
    pool_checks(edited(tmp, "cupy-healthy", no_meta), "cupy", 268452352, "CuPy without the hook")
    rmm = edited(tmp, "cupy-healthy", no_meta,
                 "UPDATE frame SET function = 'rmm::mr::pool_memory_resource<"
                 "rmm::mr::cuda_memory_resource>::expand_pool(unsigned long)'"
                 " WHERE function LIKE '%SingleDeviceMemoryPool%'")
    pool_checks(rmm, "rmm", 268452352, "RMM's pool")
    ok(not any(r["allocator"] == "cupy" for r in table(rmm, "summary")), "RMM's pool: no cupy row")
    tf = edited(tmp, "jax-healthy", no_meta,
                "UPDATE module SET path = '/usr/lib/python3/site-packages/tensorflow/"
                "libtensorflow_framework.so.2' WHERE id IN (SELECT module_id FROM frame"
                " WHERE function LIKE 'tsl::BFCAllocator::Extend%')")
    pool_checks(tf, "tensorflow", 63763906560, "TensorFlow's BFC allocator")

    # A failed run without the hook's figures still names the failure.
    oom = edited(tmp, "jax-oom", no_meta)
    findings = table(oom, "diagnose")
    ok([f["finding"] for f in findings] == ["oom-device-full"]
       and findings[0]["allocator"] == "xla" and int(findings[0]["bytes"]) == 2147483648,
       "JAX OOM without the pool's figures: a finding of the pool, for the request", findings)

for name in ("torch-train.db", "torch-allocator.db", "sample-leak.db"):
    names = [r["allocator"] for r in table(os.path.join(data, name), "summary")]
    ok(not set(names) & {"xla", "cupy", "rmm", "tensorflow"}, "%s: no pool row" % name, names)
done()
