#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""whatif-gpu.py VRAMSCOPE DATA_DIR — what-if predictions against real runs.

DATA_DIR holds runs of samples/torch-whatif.py recorded on a GPU by
tests/gpu/whatif-runs.sh: NAME.db (the trace) and NAME.json (the run's own
settings, memory cap and torch.cuda.memory_stats()).  For every run:

  * self-consistency: `vramscope whatif NAME.db` (its own settings, the
    derived limit) for a run without a cap, and for a capped run the same
    under its real cap (--limit allowed_bytes: a trace does not record it,
    and with expandable segments or garbage collection a fraction cap and a
    full device differ), give exactly the run's reserved peak and number of
    out-of-memory errors;
  * prediction: the trace of the unlimited default run (default.db),
    replayed under the other run's settings and cap, predicts its reserved
    peak within BOUND (2 %) and the same outcome (an out-of-memory error
    or none).  A run that failed stopped at its first error, so only the
    outcome is compared for it.

TAP output; the figures are printed as comments (docs/whatif.md quotes
them).
"""
import csv
import io
import json
import os
import subprocess
import sys

BOUND = 0.02

vramscope, data = sys.argv[1], sys.argv[2]
runs = sorted(f[:-5] for f in os.listdir(data) if f.endswith(".json")
              and os.path.exists(os.path.join(data, f[:-5] + ".db")))
truth = {}
for name in runs:
    with open(os.path.join(data, name + ".json")) as f:
        truth[name] = json.load(f)

tests = []


def ok(cond, what):
    tests.append((bool(cond), what))


def whatif(db, *args):
    out = subprocess.run([vramscope, "whatif", "--format", "csv", os.path.join(data, db + ".db")]
                         + list(args), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("whatif %s %s: %s" % (db, args, out.stderr.strip()))
    return list(csv.DictReader(io.StringIO(out.stdout)))


def peak(name):
    return truth[name]["memory_stats"]["reserved_bytes.all.peak"]


def ooms(name):
    return truth[name]["memory_stats"].get("num_ooms", 0)


comments = ["run | settings | cap | recorded peak | predicted from default | error | OOM recorded / predicted"]
for name in runs:
    t = truth[name]
    if not t.get("allowed_bytes"):
        own = whatif(name)[0]
        ok(int(own["peak_reserved_bytes"]) == peak(name)
           and int(own["failed_alloc_count"]) == ooms(name),
           "%s replayed under its own settings and derived limit: peak %s (recorded %d), %s OOM "
           "(recorded %d)" % (name, own["peak_reserved_bytes"], peak(name),
                              own["failed_alloc_count"], ooms(name)))
    if t.get("allowed_bytes"):
        capped = whatif(name, "--limit", str(t["allowed_bytes"]))[1]
        ok(int(capped["peak_reserved_bytes"]) == peak(name)
           and int(capped["failed_alloc_count"]) == ooms(name),
           "%s replayed under its own settings and its real cap %d: peak %s (recorded %d), %s OOM "
           "(recorded %d)" % (name, t["allowed_bytes"], capped["peak_reserved_bytes"], peak(name),
                              capped["failed_alloc_count"], ooms(name)))

source = "default"
if source in truth and not truth[source]["oom"]:
    for name in runs:
        if name == source:
            continue
        t = truth[name]
        args = ["--alloc-conf", t["alloc_conf"]]
        if t.get("allowed_bytes"):
            args += ["--limit", str(t["allowed_bytes"])]
        pred = whatif(source, *args)[1]
        p = int(pred["peak_reserved_bytes"])
        err = (p - peak(name)) / peak(name)
        failed = int(pred["failed_alloc_count"]) > 0
        comments.append("%s | %s | %s | %d | %d | %+.2f %% | %s / %s"
                        % (name, t["alloc_conf"] or "(defaults)", t.get("allowed_bytes") or "-",
                           peak(name), p, 100 * err, "yes" if t["oom"] else "no",
                           "yes" if failed else "no"))
        ok(failed == bool(t["oom"]),
           "%s predicted from %s: OOM %s, recorded %s" % (name, source, failed, t["oom"]))
        if not t["oom"]:
            ok(abs(err) <= BOUND, "%s predicted from %s: peak %d vs %d recorded (%+.2f %%, bound %.0f %%)"
               % (name, source, p, peak(name), 100 * err, 100 * BOUND))
else:
    ok(False, "no unlimited default run without an OOM to predict from")

print("1..%d" % len(tests))
for line in comments:
    print("# " + line)
failed = 0
for i, (good, what) in enumerate(tests, 1):
    print("%s %d %s" % ("ok" if good else "not ok", i, what))
    failed |= not good
sys.exit(1 if failed else 0)
