#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""text-width.py VRAMSCOPE DATA_DIR — every text report of every committed
trace fits 100 columns: each report of `vramscope report` on each trace
under DATA_DIR, as a program sees it (standard output not a terminal, no
--width, COLUMNS unset: 100 columns), `diff` of traces of one program and
`whatif`; and some traces' reports at --width 60.  A line's width is its
count of characters.  TAP output.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_cli import run  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
os.environ.pop("COLUMNS", None)
REPORTS = ["diagnose", "summary", "peak", "leaks", "timeline", "oom", "fragmentation", "kernels",
           "ranges", "roles", "growth", "meta", "ranks"]
WIDTH = 100


def widest(text):
    return max([len(line) for line in text.splitlines()] or [0])


traces = sorted(glob.glob(os.path.join(data, "*.db")) + glob.glob(os.path.join(data, "*", "*.db")))
ok(len(traces) >= 20, "the committed traces are found (%d)" % len(traces))
runs = 0
for trace in traces:
    name = os.path.relpath(trace, data)
    too_wide = []
    for report in REPORTS:
        p = run(vramscope, "report", trace, report, "--limit", "0")
        if p.returncode != 0:
            # A report a trace cannot give (no such data) says so on stderr.
            too_wide += ["%s: exit %d: %s" % (report, p.returncode, p.stderr.strip())] \
                if p.returncode != 1 else []
            continue
        runs += 1
        if widest(p.stdout) > WIDTH:
            line = max(p.stdout.splitlines(), key=len)
            too_wide.append("%s: %d columns: %s" % (report, len(line), line))
    ok(not too_wide, "%s: every report fits %d columns" % (name, WIDTH), "\n".join(too_wide))

pairs = [("diagnose/torch-amp-bf16.db", "diagnose/torch-amp-fp32.db"),
         ("diagnose/torch-frag-mixed.db", "diagnose/torch-frag-mixed-expandable.db"),
         ("whatif/default.db", "whatif/expandable.db")]
for a, b in pairs:
    p = run(vramscope, "diff", os.path.join(data, a), os.path.join(data, b))
    ok(p.returncode == 0 and widest(p.stdout) <= WIDTH, "diff %s %s fits" % (a, b),
       p.stderr + p.stdout)
for trace in ("torch-eval-leak.db", "diagnose/torch-frag-mixed.db", "whatif/default.db"):
    p = run(vramscope, "whatif", os.path.join(data, trace), "--alloc-conf",
            "expandable_segments:True")
    ok(p.returncode == 0 and widest(p.stdout) <= WIDTH, "whatif %s fits" % trace,
       p.stderr + p.stdout)
# A narrower width asked for: every line within it too.
for trace in ("torch-eval-leak.db", "diagnose/torch-batch-too-large.db", "sample-kinds.db",
              "torch-ddp.db"):
    too_wide = []
    for report in REPORTS:
        p = run(vramscope, "report", os.path.join(data, trace), report, "--width", "60",
                "--limit", "0")
        if p.returncode == 0 and widest(p.stdout) > 60:
            too_wide.append("%s: %s" % (report, max(p.stdout.splitlines(), key=len)))
    ok(not too_wide, "%s: every report fits --width 60" % trace, "\n".join(too_wide))
ok(runs > 200, "many reports ran (%d)" % runs)
done()
