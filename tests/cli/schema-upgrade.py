#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""schema-upgrade.py VRAMSCOPE DATA_DIR — every trace recorded on a GPU
(tests/data/*.db, tests/data/diagnose/*.db, written with older schema
versions, and the windowed recordings tests/data/window/*/run.db) answers
every report and export exactly as before once it is finalized again,
which brings it to the current schema version.  TAP output.

Each trace is copied and marked unfinalized (meta finalized = 0); the first
`report` on the copy finalizes it in place.  Both files then answer every
report as CSV and the Perfetto export, compared byte for byte.  The one
expected difference: a version 1 trace's summary leaves before_trace_bytes
and before_trace_count unknown (empty), and finalizing it counts them
(its blocks recreated from before the trace: none), so the summary is
compared without its last two columns for version 1 originals.
"""
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]

REPORTS = [
    ["summary"],
    ["peak"],
    ["leaks"],
    ["timeline", "--buckets", "64"],
    ["oom"],
    ["fragmentation"],
    ["kernels"],
    ["ranges"],
    ["roles"],
    ["growth"],
    ["diagnose"],
    ["meta"],
]




def run(*args):
    p = subprocess.run([vramscope, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def pragma(path, what):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return db.execute("PRAGMA %s" % what).fetchone()[0]
    finally:
        db.close()


def without_before_trace(text):
    return "\n".join(",".join(line.split(",")[:-2]) for line in text.splitlines())


traces = sorted(glob.glob(os.path.join(data, "*.db")) + glob.glob(os.path.join(data, "diagnose", "*.db"))
                + glob.glob(os.path.join(data, "window", "*", "run.db")))
tmp = tempfile.mkdtemp()
try:
    for original in traces:
        name = os.path.relpath(original, data)
        copy = os.path.join(tmp, name.replace(os.sep, "-"))
        shutil.copyfile(original, copy)
        os.chmod(copy, 0o644)
        db = sqlite3.connect(copy)
        db.execute("UPDATE meta SET value = '0' WHERE key = 'finalized'")
        db.commit()
        db.close()
        version = pragma(original, "user_version")
        first = run("report", copy, "summary", "--format", "csv")
        ok(first[0] == 0 and pragma(copy, "user_version") == 4,
           "%s: finalized again, from version %d to 4" % (name, version), first[2])
        for report in REPORTS:
            a = run("report", original, *report, "--format", "csv")
            b = run("report", copy, *report, "--format", "csv")
            same_a, same_b = a[1], b[1]
            if report == ["summary"] and version == 1:
                same_a, same_b = without_before_trace(a[1]), without_before_trace(b[1])
            ok(a[0] == b[0] and same_a == same_b and a[2] == b[2].replace(copy, original),
               "%s: report %s as before" % (name, " ".join(report)),
               "exit %d/%d\n%s\n---\n%s" % (a[0], b[0], a[1] + a[2], b[1] + b[2]))
        pa, pb = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
        a = run("export", original, "--format", "perfetto", "--force", "-o", pa)
        b = run("export", copy, "--format", "perfetto", "--force", "-o", pb)
        same = a[0] == 0 and b[0] == 0 and open(pa, "rb").read() == open(pb, "rb").read()
        ok(same, "%s: Perfetto export as before" % name, a[2] + b[2])
finally:
    shutil.rmtree(tmp)
done()
