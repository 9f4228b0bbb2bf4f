#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace-sizes.py — where a trace's bytes are: per table, its rows and the
bytes of the table and its indexes (SQLite's dbstat virtual table), as
markdown rows (a compacted trace's chunk tables with the rows their chunks
hold); then the post-run timings `record --timings` left in the trace's
meta (record_<phase>_ns).

  python3 bench/trace-sizes.py TRACE [LABEL]

Needs only Python's sqlite3 module.  Where the SQLite it links lacks
dbstat, the bytes columns say so and only the rows are counted.
"""
import os
import sqlite3
import sys


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: trace-sizes.py TRACE [LABEL]\n")
        return 2
    path = sys.argv[1]
    label = sys.argv[2] if len(sys.argv) > 2 else os.path.basename(path)
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    size = os.path.getsize(path)
    owner = {}
    for name, tbl, kind in db.execute(
            "SELECT name, tbl_name, type FROM sqlite_master WHERE type IN ('table', 'index')"):
        owner[name] = tbl
    tables = sorted(n for n, t in owner.items() if n == t and not n.startswith("sqlite_"))
    try:
        pages = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
    except sqlite3.Error:
        pages = None
    print("%s: %.1f MB (%d bytes)" % (label, size / 1e6, size))
    print()
    print("| table | rows | table MB | index MB | bytes/row |")
    print("|---|---|---|---|---|")
    rows_by = []
    for t in tables:
        # A compacted trace's table t is stored in t_chunk: its rows are
        # the rows its chunks hold.
        count = "SUM(row_count)" if t.endswith("_chunk") else "COUNT(*)"
        n = db.execute('SELECT coalesce(%s, 0) FROM "%s"'
                       % (count, t.replace('"', '""'))).fetchone()[0]
        if pages is None:
            rows_by.append((0, "| `%s` | %d | no dbstat | | |" % (t, n)))
            continue
        tb = pages.get(t, 0)
        ib = sum(v for k, v in pages.items() if k != t and owner.get(k) == t)
        per = "%.0f" % ((tb + ib) / n) if n else ""
        rows_by.append((tb + ib, "| `%s` | %d | %.2f | %.2f | %s |" % (t, n, tb / 1e6, ib / 1e6, per)))
    for _, line in sorted(rows_by, key=lambda r: -r[0]):
        print(line)
    timings = db.execute(
        "SELECT key, value FROM meta WHERE key LIKE 'record\\_%\\_ns' ESCAPE '\\' "
        "ORDER BY key").fetchall() if "meta" in tables else []
    if timings:
        print()
        print("| post-run phase (trace meta) | ms |")
        print("|---|---|")
        for k, v in timings:
            try:
                print("| %s | %.1f |" % (k[len("record_"):-len("_ns")], int(v) / 1e6))
            except ValueError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
