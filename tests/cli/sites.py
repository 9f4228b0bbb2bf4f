#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sites.py VRAMSCOPE DATA_DIR — user sites on real stacks.

Every PyTorch snapshot committed that was recorded with stacks="all" (the
corpus, diagnose/stacks-all.pickle, torch-stacks/check.pickle) is imported
and its peak and leaks read by stack (CSV, whole paths).  For every row:
the site is never a frame of the interpreter (`Objects/`, `Python/`,
`_Py*`, `python3.x+0x…`), of the C or C++ runtime (libc, libstdc++,
`thread48.o`, `start_thread`) nor unsymbolized (`??` with no function, a
module+offset); and where the stack holds a Python frame of the user's
code (a .py file outside site-packages, dist-packages and the standard
library), the site is the innermost such frame.  The same holds on a
copy of stacks-all.pickle whose stacks were given the frames that
snapshots from other machines carry (CPython built with symbols:
`Objects/methodobject.c:537 cfunction_call`, `Python/ceval.c`; libstdc++'s
`thread48.o:0 execute_native_thread_routine`; `python3.10+0x…`).  TAP
output.
"""
import glob
import os
import pickle as pickle_module
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_cli import csv_rows, run  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]

RUNTIME = re.compile(
    r"(^|/)(Objects|Python|Modules|Parser|sysdeps|nptl)/"
    r"|\+0x[0-9a-f]+$|^\?\?(:0)?$|^\?\?:0 \?\?$|thread48\.o|libstdc\+\+|libc\.so"
    r"|\b_Py[A-Za-z_]|\bcfunction_call\b|\bstart_thread\b|\bclone3?\b|^python3\.[0-9]+")
PY_FRAME = re.compile(r"^(\S+\.py):-?\d+ ")


def user_python(frame):
    m = PY_FRAME.match(frame)
    if m is None:
        return False
    path = m.group(1)
    return not (path.startswith("<") or "site-packages/" in path or "dist-packages/" in path
                or re.search(r"(^|/)lib/python3", path) or re.match(r"^python3\.[0-9]+/", path))


snapshots = sorted(glob.glob(os.path.join(data, "snapshots", "corpus", "*all*.pickle")))
snapshots += [os.path.join(data, "diagnose", "stacks-all.pickle"),
              os.path.join(data, "torch-stacks", "check.pickle")]
ok(len(snapshots) >= 10, "at least ten stacks=\"all\" snapshots", snapshots)

INTERPRETER = [
    {"filename": "Objects/methodobject.c", "line": 537, "name": "cfunction_call"},
    {"filename": "Objects/call.c", "line": 215, "name": "_PyObject_MakeTpCall"},
    {"filename": "Python/ceval.c", "line": 4181, "name": "_PyEval_EvalFrameDefault"},
    {"filename": "??", "line": 0, "name": "python3.10+0x1a2b3"},
]
OUTERMOST = [
    {"filename": "Modules/main.c", "line": 610, "name": "pymain_run_python"},
    {"filename": "thread48.o", "line": 0, "name": "execute_native_thread_routine"},
    {"filename": "./nptl/pthread_create.c", "line": 442, "name": "start_thread"},
]


def with_interpreter_frames(frames):
    """frames with the interpreter's C frames in front of each Python frame
    and the runtime's at the outer end."""
    out = []
    for f in frames:
        if f.get("filename", "").endswith(".py"):
            out.extend(dict(x) for x in INTERPRETER)
        out.append(f)
    return out + [dict(x) for x in OUTERMOST]


def constructed(source, path):
    with open(source, "rb") as f:
        snap = pickle_module.load(f)
    for trace in snap.get("device_traces", []):
        for entry in trace:
            if entry.get("frames"):
                entry["frames"] = with_interpreter_frames(entry["frames"])
    for seg in snap.get("segments", []):
        for block in seg.get("blocks", []):
            if block.get("frames"):
                block["frames"] = with_interpreter_frames(block["frames"])
    with open(path, "wb") as f:
        pickle_module.dump(snap, f, protocol=4)


with tempfile.TemporaryDirectory() as tmp:
    checked = with_python = 0
    made = os.path.join(tmp, "constructed-stacks-all.pickle")
    constructed(os.path.join(data, "diagnose", "stacks-all.pickle"), made)
    snapshots.append(made)
    for pickle in snapshots:
        name = os.path.relpath(pickle, data) if pickle != made else "constructed stacks"
        db = os.path.join(tmp, name.replace("/", "-") + ".db")
        p = run(vramscope, "import", pickle, "-o", db)
        if not ok(p.returncode == 0, "%s imports" % name, p.stderr):
            continue
        bad = []
        for report in ("peak", "leaks"):
            p = run(vramscope, "report", db, report, "--format", "csv", "--full-paths")
            if not ok(p.returncode == 0, "%s: %s" % (name, report), p.stderr):
                continue
            for row in csv_rows(p):
                site, frames = row["site"], row["stack"].split(" <- ") if row["stack"] else []
                if not frames:
                    continue
                checked += 1
                if RUNTIME.search(site):
                    bad.append("%s: site %r is the runtime's" % (report, site))
                users = [f for f in frames if user_python(f)]
                if users:
                    with_python += 1
                    if site != users[0]:
                        bad.append("%s: site %r, not the user's Python frame %r"
                                   % (report, site, users[0]))
        ok(not bad, "%s: every site is the user's, never the runtime's" % name, "\n".join(bad))
    ok(checked > 100 and with_python > 50,
       "sites checked on many stacks (%d, %d with the user's Python frames)"
       % (checked, with_python))
done()
