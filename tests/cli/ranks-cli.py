#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ranks-cli.py VRAMSCOPE DATA_DIR — `vramscope report` and `diff` on the
ranks of a run: one trace holding every rank, and a trace per rank.
TAP output.

Ground truth:
  tests/data/torch-ddp.db    two ranks of DistributedDataParallel, one trace;
  tests/data/torch-ddp.log   each rank's GROUND_TRUTH line: its pid and its
                             torch.cuda.memory_stats() peaks, which the
                             rank's `pytorch` peaks must equal exactly;
  each trace's summary       (`report FILE summary`): the `all` row of a
                             rank's device gives its peaks, times and
                             failed requests when the rank has the device
                             to itself.
Several traces are made by copying fixtures into a temporary folder
(run-0.db, run-1.db, ...) and named with a shell glob.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = os.path.abspath(sys.argv[1]), sys.argv[2]




def run(*args, cwd=None, shell=False):
    env = dict(os.environ, NO_COLOR="1", PAGER="cat", COLUMNS="160")
    if shell:
        return subprocess.run(args[0], shell=True, capture_output=True, text=True, env=env,
                              cwd=cwd)
    return subprocess.run([vramscope, *args], capture_output=True, text=True, env=env, cwd=cwd)


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def summary_all(trace):
    """device index -> the `all` row of the trace's summary."""
    p = run("report", trace, "summary", "--format", "csv")
    return {int(r["device"]): r for r in rows(p.stdout) if r["allocator"] == "all"}


def truths(log):
    text = open(log).read()
    out, at = [], text.find("GROUND_TRUTH ")
    while at >= 0:
        value, end = json.JSONDecoder().raw_decode(text, at + len("GROUND_TRUTH "))
        out.append(value)
        at = text.find("GROUND_TRUTH ", end)
    return out


ddp = os.path.join(data, "torch-ddp.db")
truth = {t["pid"]: t for t in truths(os.path.join(data, "torch-ddp.log"))}

# --- one trace holding both ranks ------------------------------------------
p = run("report", "ranks", ddp, "--format", "csv", "--allocator", "pytorch")
r = rows(p.stdout)
ok(p.returncode == 0 and len(r) == 2, "one trace, two ranks: two rows", p.stderr + p.stdout)
ok([x["rank"] for x in r] == ["0", "1"], "rows in rank order", [x["rank"] for x in r])
for x in r:
    t = truth.get(int(x["pid"]))
    ok(t is not None and t["rank"] == int(x["rank"]), "rank %s is its ground truth's pid" % x["rank"])
    if t is None:
        continue
    ok(int(x["peak_reserved_bytes"]) == t["pytorch"]["peak_reserved"]
       and int(x["peak_allocated_bytes"]) == t["pytorch"]["peak_allocated"],
       "rank %s: pytorch peaks equal its memory_stats() exactly" % x["rank"],
       "%s %s vs %s" % (x["peak_reserved_bytes"], x["peak_allocated_bytes"], t["pytorch"]))
    ok(x["host"] == "vm" and x["world_size"] == "2" and x["local_rank"] == x["rank"],
       "rank %s: host, local rank and world size from its process" % x["rank"], x)

summary = summary_all(ddp)
p = run("report", ddp, "ranks", "--format", "csv")
r = rows(p.stdout)
for x in r:
    s = summary[int(x["device"])]
    same = all(x[k] == s[k] for k in ("capacity_bytes", "peak_reserved_bytes",
                                      "peak_reserved_time_ns", "peak_allocated_bytes",
                                      "peak_allocated_time_ns", "failed_alloc_count"))
    ok(same, "rank %s: its device's own summary row (allocator all)" % x["rank"], (x, s))
share = {x["rank"]: int(x["peak_reserved_bytes"]) / int(x["capacity_bytes"]) for x in r}
worst = max(share, key=share.get)
ok([x["rank"] for x in r if "worst" in x["mark"].split()] == [worst],
   "the worst rank is the highest share of its device (rank %s)" % worst, r)
ok(all("failed" not in x["mark"] for x in r), "no rank of a run without failures is marked failed")

p = run("report", ddp, "ranks", "--width", "120")
lines = p.stdout.splitlines()
ok(p.returncode == 0 and lines[0].startswith("rank %s on host vm peaks highest: " % worst)
   and lines[0].endswith("; no rank failed"), "text headline: the worst rank, no failure",
   p.stdout)
ok(lines[1].startswith("spread of peak reserved over 2 ranks: ") and "max/min 1.01×" in lines[1],
   "text headline: the spread", p.stdout)

j = run("report", ddp, "ranks", "--format", "json")
doc = json.loads(j.stdout) if j.returncode == 0 else {}
ok(doc.get("report") == "ranks" and len(doc.get("rows", [])) == 2
   and doc["rows"][0]["peak_reserved_bytes"] == int(r[0]["peak_reserved_bytes"]),
   "json: the same rows, typed", j.stdout[:400])

# A single trace's diagnosis is unchanged by the rank comparison.
p = run("report", ddp)
ok(p.returncode == 0 and p.stdout.startswith("Diagnosis of torch-ddp.db")
   and "peaks highest" not in p.stdout, "one trace: the diagnosis as before", p.stdout[:300])

# --- a trace per rank ---------------------------------------------------------
tmp = tempfile.mkdtemp(prefix="vs-ranks-")
try:
    shutil.copy(ddp, os.path.join(tmp, "run-0.db"))
    shutil.copy(os.path.join(data, "sample-oom.db"), os.path.join(tmp, "run-1.db"))
    shutil.copy(os.path.join(data, "torch-eval-leak.db"), os.path.join(tmp, "run-2.db"))
    p = run("'%s' report ranks run-*.db --format csv" % vramscope, cwd=tmp, shell=True)
    r = rows(p.stdout)
    ok(p.returncode == 0 and [x["trace"] for x in r] == ["run-0.db", "run-0.db", "run-1.db",
                                                         "run-2.db"],
       "a glob of traces: every rank of each, ranked ones first", p.stderr + p.stdout)
    for x in r[2:]:
        s = summary_all(os.path.join(tmp, x["trace"]))[int(x["device"])]
        ok(all(x[k] == s[k] for k in ("peak_reserved_bytes", "peak_allocated_bytes",
                                      "peak_reserved_time_ns", "failed_alloc_count")),
           "%s: its own summary row" % x["trace"], (x, s))
        oom = rows(run("report", os.path.join(tmp, x["trace"]), "oom", "--format", "csv").stdout)
        ok(x["first_failure_time_ns"] == oom[0]["time_ns"]
           and x["first_failure_bytes"] == oom[0]["requested_bytes"],
           "%s: the first failure is its first failed request" % x["trace"], (x, oom[:1]))
    marks = {x["trace"]: x["mark"] for x in r}
    ok(marks["run-1.db"] == "failed" and marks["run-2.db"] == "worst failed",
       "failed ranks and the worst marked", marks)

    p = run("report", "ranks", "run-0.db", "run-1.db", "run-2.db", cwd=tmp)
    pids = {x["trace"]: x["pid"] for x in r}
    want = ("process %s of run-2.db on host vm peaks highest" % pids["run-2.db"])
    ok(p.returncode == 0 and p.stdout.startswith(want)
       and p.stdout.splitlines()[0].endswith(
           "; process %s of run-1.db and process %s of run-2.db failed"
           % (pids["run-1.db"], pids["run-2.db"])),
       "text: processes without a rank named by pid and trace", p.stdout[:600])

    # The diagnosis of several traces: the comparison, then the first rank
    # that failed, diagnosed on its device.
    p = run("report", "run-0.db", "run-1.db", "run-2.db", cwd=tmp)
    one = run("report", "run-1.db", "--device", "0", cwd=tmp)
    ok(p.returncode == 0 and p.stdout.splitlines()[0].startswith(want)
       and "is the first rank that failed a request:" in p.stdout
       and p.stdout.rstrip().endswith(one.stdout.rstrip()),
       "diagnose of several: rank comparison, then the first failed rank's diagnosis",
       p.stdout[-800:])
    p = run("report", "run-0.db", "run-2.db", "--format", "csv", cwd=tmp)
    r = rows(p.stdout)
    each = []
    for name in ("run-0.db", "run-2.db"):
        each += [dict(trace=name, **x)
                 for x in rows(run("report", name, "diagnose", "--format", "csv", cwd=tmp).stdout)]
    ok(p.returncode == 0 and r == each and len(r) > 2,
       "diagnose csv of several: every trace's findings, led by the trace", p.stdout[:400])

    # diff: each trace against the first, or against --baseline.
    p = run("diff", "run-0.db", "run-1.db", "run-2.db", "--format", "csv", cwd=tmp)
    r = rows(p.stdout)
    want = []
    for name in ("run-1.db", "run-2.db"):
        want += [dict(trace=name, **x)
                 for x in rows(run("diff", "run-0.db", name, "--format", "csv", cwd=tmp).stdout)]
    ok(p.returncode == 0 and r == want, "diff of three: each compared with the first",
       p.stderr + p.stdout[:300])
    p = run("diff", "run-1.db", "run-2.db", "--baseline", "run-0.db", "--format", "csv", cwd=tmp)
    ok(p.returncode == 0 and rows(p.stdout) == want, "diff --baseline: the same comparisons",
       p.stderr)
    p = run("diff", "run-0.db", "run-1.db", "run-2.db", cwd=tmp)
    ok(p.returncode == 0 and p.stdout.count("A: run-0.db\n") == 2
       and "B: run-1.db" in p.stdout and "B: run-2.db" in p.stdout,
       "diff text of three: a section per trace", p.stdout[:300])
    two = run("diff", "run-0.db", "run-1.db", "--format", "csv", cwd=tmp)
    ok(two.stdout.startswith("section,device,name,unit,a,b,delta\n"),
       "diff of two: the columns as before", two.stdout[:100])

    # One bad file among many: one line naming it, nothing printed.
    with open(os.path.join(tmp, "run-3.db"), "w") as f:
        f.write("not a trace\n")
    for args in (["report", "ranks", "run-0.db", "run-3.db", "run-1.db"],
                 ["report", "run-0.db", "run-1.db", "run-3.db"],
                 ["diff", "run-0.db", "run-3.db", "run-1.db"]):
        p = run(*args, cwd=tmp)
        ok(p.returncode == 1 and p.stdout == "" and len(p.stderr.splitlines()) == 1
           and "run-3.db" in p.stderr, "%s with a bad trace: exit 1, one line naming it"
           % " ".join(args[:2]), p.stderr + p.stdout)
    p = run("report", "ranks", "run-0.db", "missing.db", cwd=tmp)
    ok(p.returncode == 1 and p.stdout == "" and "missing.db" in p.stderr
       and len(p.stderr.splitlines()) == 1, "a missing trace among several: exit 1", p.stderr)

    # Usage errors.
    for args, what in ((["report", "run-0.db", "run-1.db", "summary"], "reads one trace"),
                       (["report", "ranks", "run-0.db", "--device", "0"], "do not apply"),
                       (["report", "run-0.db", "run-1.db", "--device", "0"], "apply to one trace"),
                       (["report", "run-0.db", "ranks", "summary"], "one report name")):
        p = run(*args, cwd=tmp)
        ok(p.returncode == 2 and what in p.stderr, "usage: %s" % " ".join(args), p.stderr)
    p = run("report", "ranks", "run-0.db", "run-1.db", "--allocator", "nvtx:none", cwd=tmp)
    ok(p.returncode == 1 and "no allocator 'nvtx:none'" in p.stderr,
       "an allocator no trace has: exit 1", p.stderr)
finally:
    shutil.rmtree(tmp)

done()
