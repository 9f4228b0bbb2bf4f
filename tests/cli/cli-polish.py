#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cli-polish.py VRAMSCOPE DATA_DIR MAN_DIR — the command line's
conventions: every command's --help ends with examples and every man page
has an EXAMPLES section; -f means --force wherever it exists (export's
--format has no short name); `whatif --format json` gives the CSV's rows
typed; `whatif FILE` with no settings replays the trace's own settings,
the ones the diagnosis considers (expandable_segments:True unless in
effect, garbage_collection_threshold:0.8) and no cap below the device,
each row equal to the same setting asked for explicitly; `report A B` on
traces that are not ranks of one job says so and names `diff`.  TAP
output.
"""
import csv
import glob
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_cli import run  # noqa: E402

vramscope, data, man = sys.argv[1], sys.argv[2], sys.argv[3]


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


for cmd in ("report", "diff", "export", "import", "whatif", "record", "recover"):
    p = run(vramscope, cmd, "--help")
    ok(p.returncode == 0 and "Examples:" in p.stdout and ("vramscope %s " % cmd) in
       p.stdout.split("Examples:")[1], "%s --help shows examples" % cmd, p.stdout[-800:] + p.stderr)
p = run(vramscope, "help")
ok(p.returncode == 0 and "Examples:" in p.stdout, "vramscope help shows examples")
pages = sorted(glob.glob(os.path.join(man, "*.1")))
ok(len(pages) >= 9, "the man pages are found (%d)" % len(pages))
for page in pages:
    ok(".SH EXAMPLES" in open(page).read(), "%s has EXAMPLES" % os.path.basename(page))

trace = os.path.join(data, "torch-eval-leak.db")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "x.json")
    open(out, "w").write("old")
    p = run(vramscope, "export", trace, "--format", "perfetto", "-o", out, "-f")
    ok(p.returncode == 0 and open(out).read() != "old", "export -f replaces the output", p.stderr)
    p = run(vramscope, "export", trace, "-f", "perfetto", "-o", out)
    ok(p.returncode == 2, "export -f is not --format", p.stderr)

c = run(vramscope, "whatif", trace, "--format", "csv")
j = run(vramscope, "whatif", trace, "--format", "json")
ok(j.returncode == 0, "whatif --format json", j.stderr)
doc = json.loads(j.stdout) if j.returncode == 0 else {"rows": []}
crows = rows(c.stdout)
ok(doc.get("report") == "whatif" and len(doc["rows"]) == len(crows) and all(
    str(jr["peak_reserved_bytes"]) == cr["peak_reserved_bytes"]
    and (jr["alloc_conf"] or "") == cr["alloc_conf"] for jr, cr in zip(doc["rows"], crows)),
   "whatif json rows equal the CSV's", j.stdout[:400])
confs = [r["alloc_conf"] for r in crows]
ok(confs[:3] == ["", "expandable_segments:True", "garbage_collection_threshold:0.8"]
   and len(crows) == 4 and int(crows[3]["limit_bytes"]) > int(crows[0]["limit_bytes"]),
   "whatif with no settings: own, expandable, gc threshold, no cap", c.stdout)
e = rows(run(vramscope, "whatif", trace, "--alloc-conf", "expandable_segments:True",
             "--format", "csv").stdout)
ok(e and e[1]["peak_reserved_bytes"] == crows[1]["peak_reserved_bytes"]
   and e[1]["failed_alloc_count"] == crows[1]["failed_alloc_count"],
   "the expandable row equals the explicit replay", (e, crows))
own = rows(run(vramscope, "whatif", os.path.join(data, "diagnose", "torch-frag-mixed-expandable.db"),
               "--format", "csv").stdout)
ok(own and not any(r["alloc_conf"].endswith(",expandable_segments:True") for r in own[1:]),
   "a setting already in effect is not tried again", own)

a, b = (os.path.join(data, "diagnose", n) for n in ("torch-amp-bf16.db", "torch-amp-fp32.db"))
p = run(vramscope, "report", a, b)
ok(p.returncode == 0 and "not the ranks of one job" in p.stdout and "vramscope diff" in p.stdout,
   "report A B on unrelated traces points to diff", p.stdout[-600:] + p.stderr)
ranks = sorted(glob.glob(os.path.join(data, "ranks", "per-rank", "run-*.db")))
p = run(vramscope, "report", *ranks, "ranks")
ok(p.returncode == 0 and "not the ranks of one job" not in p.stdout,
   "the ranks of one job are compared without that note", p.stdout[-600:] + p.stderr)
done()
