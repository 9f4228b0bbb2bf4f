#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-ranks.py VRAMSCOPE DIR — `vramscope report ranks` on the runs
tests/gpu/ranks-run.sh recorded, against each rank's own ground truth.
TAP output; exit 1 when a check failed.

DIR holds the two layouts of the same two-rank run of samples/torch-ranks.py
and the identity run:
  one/ranks.db        + one/truth-rank<R>.json       one trace of both ranks
  per-rank/run-<R>.db + per-rank/truth-rank<R>.json  a trace per rank
  job/job.db                                         record --job under Slurm
                                                     variables (optional)
Checks, for each layout: one row per rank; each rank's `pytorch` peaks
equal its torch.cuda.memory_stats() peaks exactly (reserved_bytes.all.peak,
requested_bytes.all.peak) and its failed requests its num_ooms; the rank
that caught an OOM is marked failed; the worst mark is on the row with the
highest peak reserved share of capacity, and by pytorch on the rank that
reserved most; a device is marked shared when both ranks of one trace ran
on it (one GPU); each trace's meta has the job id
the run was given (SLURM_JOB_ID); and the identity run's rank, local rank,
world size and job come from Slurm's variables and --job.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
import vs_cli  # noqa: E402
from vs_cli import csv_rows  # noqa: E402

vramscope, top = sys.argv[1], sys.argv[2]


def run(*args):
    return vs_cli.run(vramscope, *args)


def meta(trace):
    return {r["key"]: r["value"] for r in csv_rows(run("report", trace, "meta", "--format", "csv"))}


for layout, pattern in (("one", "ranks.db"), ("per-rank", "run-*.db")):
    d = os.path.join(top, layout)
    traces = sorted(glob.glob(os.path.join(d, pattern)))
    truths = {}
    for f in glob.glob(os.path.join(d, "truth-rank*.json")):
        t = json.load(open(f))
        truths[t["rank"]] = t
    ok(len(traces) >= 1 and len(truths) == 2, "%s: traces and two ground truths" % layout,
       "%s %s" % (traces, sorted(truths)))
    if not traces or not truths:
        continue
    if layout == "per-rank":
        ok([os.path.basename(t) for t in traces] == ["run-%d.db" % r for r in sorted(truths)],
           "per-rank: record -o run-%q{RANK}.db named each trace after its rank", traces)

    p = run("report", "ranks", *traces, "--allocator", "pytorch", "--format", "csv")
    rows = csv_rows(p)
    ok(p.returncode == 0 and sorted(int(r["rank"]) for r in rows) == sorted(truths),
       "%s: one row per rank" % layout, p.stderr + p.stdout)
    for r in rows:
        t = truths.get(int(r["rank"]))
        if t is None:
            continue
        st = t["memory_stats"]
        ok(int(r["pid"]) == t["pid"] and int(r["world_size"]) == t["world_size"]
           and int(r["local_rank"]) == t["local_rank"],
           "%s rank %s: pid, local rank and world size" % (layout, r["rank"]), (r, t["pid"]))
        ok(int(r["peak_reserved_bytes"]) == st["reserved_bytes.all.peak"],
           "%s rank %s: pytorch peak reserved = memory_stats exactly" % (layout, r["rank"]),
           "%s vs %s" % (r["peak_reserved_bytes"], st["reserved_bytes.all.peak"]))
        ok(int(r["peak_allocated_bytes"]) == st["requested_bytes.all.peak"],
           "%s rank %s: pytorch peak allocated = memory_stats exactly" % (layout, r["rank"]),
           "%s vs %s" % (r["peak_allocated_bytes"], st["requested_bytes.all.peak"]))
        ok(int(r["failed_alloc_count"]) == st["num_ooms"]
           and ("failed" in r["mark"].split()) == (st["num_ooms"] > 0)
           and (t["error"] is not None) == (st["num_ooms"] > 0),
           "%s rank %s: failed requests = num_ooms (%d)" % (layout, r["rank"], st["num_ooms"]),
           (r, t["error"]))
        ok(r["job_id"] == t["job"].get("SLURM_JOB_ID"),
           "%s rank %s: job id in meta" % (layout, r["rank"]), r["job_id"])

    # The rank that reserved most is the worst by its own allocator's
    # figures, and by everything on its device: where the ranks share one
    # (both ranks on one GPU in one trace) the device's figures are theirs
    # together, a tie that its own allocator's peak breaks.
    heavy = max(truths, key=lambda k: truths[k]["memory_stats"]["reserved_bytes.all.peak"])
    worst = [r["rank"] for r in rows if "worst" in r["mark"].split()]
    ok(worst == [str(heavy)], "%s: by pytorch, the worst rank is the one that reserved most"
       % layout, "%s vs %s" % (worst, heavy))
    p = run("report", "ranks", *traces, "--format", "csv")
    rows = csv_rows(p)
    share = [int(r["peak_reserved_bytes"]) / int(r["capacity_bytes"]) for r in rows]
    worst = [r["rank"] for r in rows if "worst" in r["mark"].split()]
    shared = any("shared-device" in r["mark"].split() for r in rows)
    ok(p.returncode == 0 and len(rows) == 2 and len(worst) == 1
       and share[[r["rank"] for r in rows].index(worst[0])] == max(share),
       "%s: the worst mark on the highest share of capacity (rank %s)" % (layout, worst), rows)
    ok(shared == (layout == "one" and len({r["device"] for r in rows}) == 1),
       "%s: a device is marked shared exactly when both ranks of one trace used it" % layout,
       rows)
    ok(worst == [str(heavy)], "%s: the worst rank is the one that reserved most%s"
       % (layout, " (a tie on the shared device, broken by its own allocator)" if shared else ""),
       "%s vs %s" % (worst, heavy))
    for trace in traces:
        m = meta(trace)
        ok(m.get("job_id") == "4242" and m.get("job_id_source") == "SLURM_JOB_ID",
           "%s: meta job_id 4242 from SLURM_JOB_ID" % os.path.relpath(trace, top), m)
    p = run("report", "ranks", *traces, "--allocator", "pytorch")
    fails = sorted(k for k in truths if truths[k]["memory_stats"]["num_ooms"] > 0)
    ok(p.returncode == 0 and p.stdout.splitlines()[0].startswith("rank %s" % heavy)
       and p.stdout.splitlines()[0].endswith(
           "; rank %d failed" % fails[0] if len(fails) == 1 else "; no rank failed"),
       "%s: the headline names the worst and the failed rank" % layout, p.stdout[:400])

job = os.path.join(top, "job", "job.db")
if os.path.exists(job):
    m = meta(job)
    ok(m.get("job_id") == "nightly-7" and m.get("job_id_source") == "VRAMSCOPE_JOB_ID",
       "record --job wins over SLURM_JOB_ID", m)
    rows = csv_rows(run("report", "ranks", job, "--format", "csv"))
    ok(len(rows) == 1 and (rows[0]["rank"], rows[0]["local_rank"], rows[0]["world_size"])
       == ("3", "1", "4"), "rank, local rank and world size from Slurm's variables", rows)

done()
