#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-diagnose-figures.py — one story: every figure `diagnose` prints
equals the same figure in the other reports, for every committed trace.

For each trace of tests/data (recursively; traces that fail to open are
skipped by name: none today):
  - the header's "Peak: A allocated at T; R reserved at most" equal the
    device's `all` row of `report summary` (peak_allocated_bytes and its
    time, peak_reserved_bytes);
  - the header's "By role" figures equal `report roles` (allocator all),
    taken at that same peak;
  - each failure finding (oom-*) describes one row of `report oom` (its
    request and time) of that cause, and counts that cause's rows;
  - an outside-allocator finding's bytes are the header's "outside every
    allocator" figure of its device, at the same instant;
  - a fragmentation finding's bytes are `summary`'s peak reserved −
    peak allocated of its allocator.
Figures are compared as both print them (vs_format_bytes: "1.23 GiB").

  test-diagnose-figures.py VRAMSCOPE DATA_DIR
"""
import csv
import glob
import io
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def fmt_bytes(n):
    if -1024 < n < 1024:
        return "%d B" % n
    v, u = float(n), 0
    while abs(v) >= 1024.0 and u < len(UNITS) - 1:
        v /= 1024.0
        u += 1
    return "%.2f %s" % (v, UNITS[u])


def run(*args):
    p = subprocess.run([vramscope, "report", *args], capture_output=True, text=True)
    return p.returncode, p.stdout


def rows(db, report):
    rc, out = run("--format", "csv", db, report)
    return list(csv.DictReader(io.StringIO(out))) if rc == 0 else []


traces = sorted(glob.glob(os.path.join(data, "**", "*.db"), recursive=True))
checked = 0
for db in traces:
    name = os.path.relpath(db, data)
    rc, text = run("--width", "100", db, "diagnose")
    if rc != 0:
        continue
    checked += 1
    flat = " ".join(text.split())
    summary = rows(db, "summary")
    roles = rows(db, "roles")
    # One block of text per device.
    blocks = re.split(r"(?=Device \d+,)", flat)
    for block in blocks[1:]:
        dev = re.match(r"Device (\d+),", block).group(1)
        allrow = [r for r in summary if r["device"] == dev and r["allocator"] == "all"]
        m = re.search(r"Peak: (\S+ \S+) allocated at \S+ \S+; (\S+ \S+) reserved at most", block)
        if not allrow or not m:
            continue
        s = allrow[0]
        ok(m.group(1) == fmt_bytes(int(s["peak_allocated_bytes"]))
           and m.group(2) == fmt_bytes(int(s["peak_reserved_bytes"])),
           "%s device %s: the peak as summary has it" % (name, dev), (m.groups(), s))
        r = re.search(r"By role: (.*?) By site:", block)
        if r:
            said = dict((k, v) for v_k in r.group(1).split("), ")
                        for k, v in [re.match(r"(\S+) (\S+ \S+) \(", v_k.strip() + " (").groups()])
            want = {x["role"]: fmt_bytes(int(x["bytes"])) for x in roles
                    if x["device"] == dev and x["allocator"] == "all"}
            ok(all(want.get(k) == v for k, v in said.items()) and len(said) > 0,
               "%s device %s: the roles as report roles has them" % (name, dev), (said, want))
        o = re.search(r"(\S+ \S+) outside every allocator\)", block)
        if o:
            out_f = [f for f in rows(db, "diagnose") if f["finding"] == "outside-allocator"
                     and f["device"] == dev]
            ok(not out_f or fmt_bytes(int(out_f[0]["bytes"])) == o.group(1),
               "%s device %s: outside the allocators, one figure" % (name, dev),
               (o.group(1), out_f))
    findings = rows(db, "diagnose")
    ooms = rows(db, "oom")
    for f in findings:
        if f["finding"].startswith("oom-"):
            same = [x for x in ooms if x["cause"] == f["finding"] and x["device"] == f["device"]
                    and x["allocator"] == f["allocator"]]
            ok(any(x["requested_bytes"] == f["bytes"] and x["time_ns"] == f["time_ns"]
                   for x in same) and (f["count"] == str(len(same)) or "windowed" in f["evidence"]),
               "%s: %s is one of report oom's rows of that cause, and counts them"
               % (name, f["finding"]), (f, len(same)))
        if f["finding"] == "fragmentation":
            s = [x for x in summary if x["device"] == f["device"]
                 and x["allocator"] == f["allocator"]]
            ok(s and int(f["bytes"]) == int(s[0]["peak_reserved_bytes"])
               - int(s[0]["peak_allocated_bytes"]),
               "%s: fragmentation's bytes are summary's peak reserved - peak allocated" % name,
               (f, s))
ok(checked >= 20, "every committed trace diagnosed (%d)" % checked)
done()
