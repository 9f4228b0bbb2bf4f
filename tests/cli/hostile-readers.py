#!/usr/bin/env python3
# hostile-readers.py VRAMSCOPE DATA_DIR — readers given hostile traces and
# arguments: a series seq no replay writes, the what-if model fed sizes at
# and past its range, one file named twice as two ranks, a stream id at
# the top of its range.  Each gets exit status 1 and one clear line on
# stderr, or a correct answer — never a crash.  TAP output.
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
import tempfile

VRAMSCOPE, DATA = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([VRAMSCOPE] + list(args), capture_output=True, text=True,
                          errors="replace", timeout=120)


def one_line_error(p, want):
    """None when p exited 1 with one stderr line holding want."""
    err = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(err) != 1 or want not in err[0]:
        return "exit %d, stderr %r" % (p.returncode, err[:3])
    return None


def mutated(tmp, name, fixture, *sqls):
    path = os.path.join(tmp, name)
    shutil.copy(os.path.join(DATA, fixture), path)
    db = sqlite3.connect(path)
    for sql in sqls:
        db.execute(sql)
    db.commit()
    db.close()
    return path


def negative_seq(tmp):
    """A negative series.seq is said, not dereferenced as a missing error."""
    problems = []
    for fixture in ("sample-oom.db", "torch-train.db"):
        path = mutated(tmp, "seq-" + fixture, fixture, "UPDATE series SET seq = -5 - seq")
        for args in (["report", path, "diagnose"], ["report", path, "ranges"],
                     ["report", path, "oom"], ["report", path, "fragmentation"],
                     ["report", path, "growth"], ["diff", path, path]):
            p = run(*args)
            if p.returncode == 0:
                continue  # this report on this trace does not look up a time
            problem = one_line_error(p, "has a seq that is not a non-negative integer")
            if problem:
                problems.append("%s %s: %s" % (fixture, args[-1], problem))
    return "; ".join(problems) or None


CASES = [
    ("a negative series seq is one line, for every report and diff", negative_seq),
]


def main():
    print("1..%d" % len(CASES))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, case) in enumerate(CASES, 1):
            problem = case(tmp)
            if problem is None:
                print("ok %d - %s" % (n, name))
            else:
                failed = 1
                print("not ok %d - %s: %s" % (n, name, problem))
    return failed


sys.exit(main())
