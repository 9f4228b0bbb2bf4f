#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-diagnose-whatif.py VRAMSCOPE DATA_DIR — the predictions that back
the diagnosis's allocator-setting remedies are those of `vramscope whatif`
for the same setting.  TAP output.

Each remedy of `report diagnose` that says "Replayed with
PYTORCH_CUDA_ALLOC_CONF=CONF" must give the peak reserved, its difference
to the trace's own replay and the failure outcome that `vramscope whatif
FILE --alloc-conf CONF` prints; "Replayed with no cap below the device's"
those of `vramscope whatif FILE --limit <device capacity>`.  A remedy the
replay contradicts says so.  Known outcomes, from the committed traces:

  whatif/default-low.db   a failure at a 1.09 GiB limit: with no cap the
                          request fits.
  whatif/max-split-64.db  fragmentation under max_split_size_mb:64: adding
                          expandable segments raises the peak reserved in
                          the replay, and the remedy says it would not help.
  torch-eval-leak.db      29 failures at the 6 GiB fraction: all fit with no
                          cap.
  snapshots/fragmentation.pickle  imported: expandable segments lower the
                          peak reserved.
"""
import csv
import io
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]




def run(*args):
    p = subprocess.run([vramscope, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("vramscope %s: %s" % (" ".join(args), p.stderr))
    return p.stdout


def csv_rows(*args):
    return list(csv.DictReader(io.StringIO(run(*args))))


def text_rows(*args):
    """The rows of a text table, cells split on two spaces or more (an
    empty alloc_conf leaves no cell: index them from the right)."""
    out = []
    for line in run(*args).splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 7 and cells[0].isdigit():
            out.append(cells)
    return out


PRED = re.compile(
    r"Replayed ((?:under the same limit )?with PYTORCH_CUDA_ALLOC_CONF=(?P<conf>[^:]+(?::[^:,]+)?(?:,[^:]+:[^:,]+)*)"
    r"|with no cap below the device's [^:]+): the peak reserved would be "
    r"(?P<peak>[\d.]+ [KMGT]?i?B) \((?P<sign>[-+])(?P<delta>[\d.]+ [KMGT]?i?B)\)"
    r"(?P<rest>[^.]*)"
)


def check(db, name, expect_helps):
    findings = csv_rows("report", db, "diagnose", "--format", "csv")
    preds = [(f, m) for f in findings for m in PRED.finditer(f["remedy"] or "")]
    ok(len(preds) > 0, "%s: a remedy is backed by a replay" % name,
       "\n".join(f["remedy"] or "" for f in findings))
    con = sqlite3.connect(db)
    total = con.execute("SELECT total_bytes FROM device ORDER BY idx LIMIT 1").fetchone()[0]
    con.close()
    helped = []
    for f, m in preds:
        if m.group("conf") is not None:
            args = ["--alloc-conf", m.group("conf")]
        else:
            args = ["--limit", str(total)]
        # Wide enough for whatif's whole table on one line per row.
        t = text_rows("whatif", db, *args, "--width", "250")
        c = csv_rows("whatif", db, *args, "--format", "csv")
        ok(len(t) == 2 and len(c) == 2, "%s %s: whatif prints the own and the asked row"
           % (name, f["finding"]), str(t))
        if len(t) != 2 or len(c) != 2:
            continue
        own, asked = c[0], c[1]
        ok(m.group("peak") == t[1][-4], "%s %s: peak reserved %s as whatif prints it"
           % (name, f["finding"], m.group("peak")), "whatif: %s" % t[1])
        d = int(asked["peak_reserved_bytes"]) - int(own["peak_reserved_bytes"])
        ok(m.group("sign") == ("-" if d < 0 else "+"), "%s %s: sign of the difference"
           % (name, f["finding"]), "%d" % d)
        failed_own = int(own["failed_alloc_count"])
        failed_asked = int(asked["failed_alloc_count"])
        rest = m.group("rest")
        if failed_own > 0 and failed_asked == 0:
            ok("would fit" in rest, "%s %s: the failed requests would fit, as whatif says"
               % (name, f["finding"]), rest)
        elif failed_own > 0:
            ok("%d of the %d failed requests would still fail" % (failed_asked, failed_own)
               in rest, "%s %s: failures left as whatif counts them" % (name, f["finding"]),
               rest)
        else:
            ok(failed_asked == 0 or ("%d requests would fail" % failed_asked) in rest,
               "%s %s: failures as whatif counts them" % (name, f["finding"]), rest)
        helps = (failed_asked < failed_own) if failed_own > 0 else d < 0
        said_no = "it would not" in rest
        helped.append(helps)
        ok(said_no == (not helps),
           "%s %s: the replay %s, and the remedy says so"
           % (name, f["finding"], "helps" if helps else "does not help"), f["remedy"])
    ok(any(helped) == expect_helps, "%s: some replayed setting %s" %
       (name, "helps" if expect_helps else "does not help"), str(helped))


check(os.path.join(data, "whatif", "default-low.db"), "default-low", True)
check(os.path.join(data, "whatif", "max-split-64.db"), "max-split-64", False)
check(os.path.join(data, "torch-eval-leak.db"), "torch-eval-leak", True)
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "fragmentation.db")
    run("import", os.path.join(data, "snapshots", "fragmentation.pickle"), "-o", db)
    check(db, "fragmentation.pickle", True)

# No replay where nothing was recorded by PyTorch's allocator.
findings = csv_rows("report", os.path.join(data, "sample-frag.db"), "diagnose", "--format", "csv")
ok(all("Replayed" not in (f["remedy"] or "") for f in findings),
   "sample-frag (CUDA only): no replay")

done()
