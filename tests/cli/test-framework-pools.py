#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-framework-pools.py VRAMSCOPE DATA_DIR — pools recognised from the
device level alone, on traces recorded on a GPU (tests/data/frameworks/)
made into what other programs and older recordings leave:

  * the JAX and CuPy traces without the hook's meta (a trace recorded
    before the hook, or with VRAMSCOPE_FRAMEWORKS=0): the pool's row is
    still there, its reserved memory the same, its allocated memory
    empty (unknown, never the pool's size), `all` not counting it (in
    `summary` and in its `timeline` alike), and no finding (no leak of what the pool keeps, nothing outside the
    allocators);
  * the CuPy trace with its pool's frames renamed as RMM's
    (rmm::mr::pool_memory_resource) and the JAX trace with its BFC
    allocator's module renamed as TensorFlow's: rows `rmm` and
    `tensorflow` (neither framework is on the GPU machine);
  * PyTorch and CUDA C traces: no pool row.

Each copy is edited with SQL on its plain tables (meta, frame, module).
TAP output.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_cli import bound  # noqa: E402
from vs_trace_edit import edited_copy  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
run, table = bound(vramscope)
frameworks = os.path.join(data, "frameworks")


def edited(tmp, name, *sql):
    return edited_copy(os.path.join(frameworks, name + ".db"),
                       os.path.join(tmp, name + "-edited.db"), *sql)


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
    timeline = [r for r in table(trace, "timeline") if r["allocator"] == "all"]
    top = max((int(r["max_allocated_bytes"]) for r in timeline if r["max_allocated_bytes"]),
              default=None)
    ok(top == int(a["peak_allocated_bytes"]),
       "%s: all's timeline draws the pool as reserved only (its peak is summary's)" % what,
       "timeline %s, summary %s" % (top, a["peak_allocated_bytes"]))
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

    # CuPy's pool asked CUDA and CUDA failed, then CuPy raised: the
    # cudaMalloc failure (as the collector records it, with the pool's
    # stack, and as the finalizer counts it on `all`) and the error are
    # one failure, on `all` as on `cupy`.
    retried = edited(tmp, "cupy-oom",
                     "INSERT INTO failed_alloc (ts, process_id, device_id, api, requested_bytes,"
                     " error, error_name, stack_id) SELECT ts - 1000, process_id, device_id,"
                     " 'cudaMalloc', requested_bytes, 2, 'cudaErrorMemoryAllocation',"
                     " (SELECT s.id FROM stack s JOIN frame f ON f.id = s.frame_id"
                     "  WHERE f.function LIKE '%SingleDeviceMemoryPool%' LIMIT 1)"
                     " FROM failed_alloc WHERE api = 'cupy'",
                     "UPDATE summary SET failed_alloc_count = failed_alloc_count + 1"
                     " WHERE allocator_id IS NULL OR allocator_id = 0")
    counts = {r["allocator"]: r["failed_alloc_count"] for r in table(retried, "summary")}
    ok(counts.get("all") == "1" and counts.get("cupy") == "1",
       "CuPy's failed cudaMalloc and the error it raised count once on all and on cupy", counts)

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
