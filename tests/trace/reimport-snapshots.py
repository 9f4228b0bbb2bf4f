#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""reimport-snapshots.py — every committed snapshot imported by two builds
of vramscope, the traces compared row by row.

  tests/trace/reimport-snapshots.py BEFORE_VRAMSCOPE AFTER_VRAMSCOPE [ROOT]

Imports each PyTorch snapshot committed under ROOT/tests/data (default: the
checkout this script is in) with both programs, then compares: the exit
status and error line of an import that fails; for one that succeeds, every
row of every table and view of the trace, read through `export --format
sqlite` (plain tables).  Prints one line per snapshot and a total; exits 1
when any snapshot differs.  Used to show that a change to the code that
builds traces leaves every trace as it was.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stderr.decode(errors="replace")


def tables(path):
    """Every table and view of the trace at path, name -> sorted rows."""
    db = sqlite3.connect(path)
    names = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
        " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    out = {}
    for n in names:
        rows = db.execute('SELECT * FROM "%s"' % n.replace('"', '""')).fetchall()
        out[n] = sorted(rows, key=repr)
    schema = sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
                    key=repr)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    db.close()
    return out, schema, version


def import_and_expand(vramscope, pickle, work, tag):
    trace = os.path.join(work, tag + ".db")
    plain = os.path.join(work, tag + ".sqlite")
    rc, err = run([vramscope, "import", pickle, "-o", trace, "--force"])
    # The error names the output path, which differs between the two runs.
    err = err.replace(trace, "OUT")
    if rc != 0:
        return rc, err, None
    erc, eerr = run([vramscope, "export", "--format", "sqlite", trace, "-o", plain, "--force"])
    if erc != 0:
        return 100 + erc, eerr, None
    return rc, err, tables(plain)


def main():
    if len(sys.argv) < 3:
        print("usage: reimport-snapshots.py BEFORE_VRAMSCOPE AFTER_VRAMSCOPE [ROOT]",
              file=sys.stderr)
        return 2
    before, after = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..")
    files = subprocess.run(["git", "-C", root, "ls-files", "tests/data/*.pickle",
                            "tests/data/**/*.pickle"], stdout=subprocess.PIPE,
                           check=True).stdout.decode().split()
    files = sorted(set(files))
    bad = 0
    rows_compared = 0
    with tempfile.TemporaryDirectory() as work:
        for rel in files:
            pickle = os.path.join(root, rel)
            a = import_and_expand(before, pickle, work, "before")
            b = import_and_expand(after, pickle, work, "after")
            if a[0] != b[0] or a[1] != b[1]:
                bad += 1
                print("DIFFERS %s: status %d/%d, stderr %r / %r" % (rel, a[0], b[0], a[1], b[1]))
                continue
            if a[2] is None:
                print("same    %s (refused alike: %s)" % (rel, a[1].strip().splitlines()[-1:]))
                continue
            (ta, sa, va), (tb, sb, vb) = a[2], b[2]
            diffs = [n for n in sorted(set(ta) | set(tb)) if ta.get(n) != tb.get(n)]
            if sa != sb or va != vb or diffs:
                bad += 1
                print("DIFFERS %s: tables %s%s" % (rel, diffs,
                                                   "" if sa == sb else ", schema"))
                continue
            n = sum(len(r) for r in ta.values())
            rows_compared += n
            print("same    %s (%d rows in %d tables)" % (rel, n, len(ta)))
    print("%d snapshots, %d differ; %d rows compared" % (len(files), bad, rows_compared))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
