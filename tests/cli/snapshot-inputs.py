#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""snapshot-inputs.py VRAMSCOPE DATA_DIR — a PyTorch snapshot wherever a
trace is expected: `report`, `diff`, `whatif` and `export` take a .pickle
and give what they give on the trace `import` makes of it (CSV compared
exactly); the snapshot is imported once into $XDG_CACHE_HOME/vramscope,
keyed by its content (a copy under another name reuses it), and nothing is
written beside the user's file; a broken snapshot is one line on stderr and
status 1, never "not an SQLite database".  TAP output.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]

with tempfile.TemporaryDirectory() as tmp:
    cache_home = os.path.join(tmp, "cache")
    env = dict(os.environ, NO_COLOR="1", PAGER="cat", XDG_CACHE_HOME=cache_home)

    def run(*args):
        return subprocess.run([vramscope, *args], capture_output=True, text=True, env=env)

    user = os.path.join(tmp, "user")
    os.mkdir(user)
    snap = os.path.join(user, "run.pickle")
    shutil.copy(os.path.join(data, "snapshots", "oom.pickle"), snap)
    other = os.path.join(user, "other.pickle")
    shutil.copy(os.path.join(data, "snapshots", "leak.pickle"), other)
    imported = os.path.join(tmp, "run.db")
    p = run("import", snap, "-o", imported)
    ok(p.returncode == 0, "the snapshot imports", p.stderr)

    for report in ("summary", "peak", "oom", "fragmentation", "leaks"):
        a = run("report", snap, report, "--format", "csv")
        b = run("report", imported, report, "--format", "csv")
        ok(a.returncode == 0 and a.stdout == b.stdout and a.stdout,
           "report %s on the snapshot equals report on its import" % report, a.stderr + a.stdout)
    p = run("report", snap)
    ok(p.returncode == 0 and "SQLite" not in p.stderr and "Diagnosis" in p.stdout,
       "report SNAPSHOT diagnoses it", p.stderr)
    cached = os.listdir(os.path.join(cache_home, "vramscope", "snapshots"))
    ok(len(cached) == 1 and cached[0].endswith(".db"), "one trace in the user's cache", cached)
    ok(sorted(os.listdir(user)) == ["other.pickle", "run.pickle"],
       "nothing written beside the user's snapshots", os.listdir(user))

    renamed = os.path.join(user, "renamed.bin")
    shutil.copy(snap, renamed)
    p = run("report", renamed, "summary", "--format", "csv")
    ok(p.returncode == 0 and len(os.listdir(os.path.join(cache_home, "vramscope", "snapshots"))) == 1,
       "the same content under another name reuses the cached trace", p.stderr)
    os.unlink(renamed)

    a = run("whatif", snap, "--alloc-conf", "expandable_segments:True", "--format", "csv")
    b = run("whatif", imported, "--alloc-conf", "expandable_segments:True", "--format", "csv")
    ok(a.returncode == 0 and a.stdout == b.stdout, "whatif takes a snapshot", a.stderr)
    a = run("diff", snap, other, "--format", "csv")
    ok(a.returncode == 0 and a.stdout.count("\n") > 3, "diff takes snapshots", a.stderr)
    out = os.path.join(tmp, "folded.txt")
    a = run("export", snap, "--format", "folded", "-o", out)
    b = run("export", imported, "--format", "folded", "-o", out + ".2")
    ok(a.returncode == 0 and open(out).read() == open(out + ".2").read(),
       "export takes a snapshot", a.stderr)
    ok(sorted(os.listdir(user)) == ["other.pickle", "run.pickle"],
       "still nothing beside the user's snapshots", os.listdir(user))

    broken = os.path.join(user, "broken.pickle")
    with open(snap, "rb") as f:
        whole = f.read()
    with open(broken, "wb") as f:
        f.write(whole[: len(whole) // 2])
    for args in (("report", broken), ("whatif", broken), ("diff", broken, snap),
                 ("export", broken, "--format", "folded", "-o", os.path.join(tmp, "x"))):
        p = run(*args)
        ok(p.returncode == 1 and p.stderr.count("\n") == 1 and "broken.pickle" in p.stderr
           and "SQLite" not in p.stderr,
           "%s on a broken snapshot: one line naming it, status 1" % args[0], p.stderr)
    left = [n for n in os.listdir(os.path.join(cache_home, "vramscope", "snapshots"))]
    ok(len(left) == 2, "a broken snapshot leaves no trace in the cache", left)
done()
