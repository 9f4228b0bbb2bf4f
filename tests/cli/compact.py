#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compact.py VRAMSCOPE COMPACT_TOOL EXTENSION DATA_DIR — compacting a trace
(schema 5: its big tables in column chunks) loses nothing, and a damaged
chunk is one clear error.  TAP output.

Each committed trace (tests/data) is copied and finalized again, which
brings it to schema 4 (as tests/cli/schema-upgrade.py does); a second copy
of that is compacted by COMPACT_TOOL (vs_trace_compact_file).  Then:
  * every row of every chunked table, in its key order, read by the sqlite3
    shell with the loadable extension EXTENSION, equals the plain table's,
    and so does `vramscope export --format sqlite` of the compacted copy;
  * every report (CSV and text), whatif, the Perfetto export and the folded
    stacks answer the same, byte for byte (both copies have the same file
    name);
  * the compacted copy is no larger;
  * finalized again with the row sink (as record does: series, series_level
    and block coded as derived, mem_event and alloc_event as loaded), every
    row and answer the same;
  * a version-5 trace that kept series_level plain (as those written before
    it was chunked) reads the same, and a text value in a raw table leaves
    the trace plain with no chunk table.
A compacted copy damaged in one chunk's data (bytes flipped, cut short, a
row count that lies) or zone map is refused with one line and exit
status 1, never a crash; so are 40 chunks damaged at random places.
"""
import glob
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, tool, extension, data = sys.argv[1:5]

TABLES = {
    "alloc_event": "id",
    "mem_event": "id",
    "kernel_exec": "start_ns, id",
    "series": "device_id, allocator_id, ts, seq",
    "series_level": "device_id, allocator_id, shift, bucket",
    "block": "id",
}
REPORTS = [
    ["summary"], ["peak"], ["leaks"], ["timeline", "--buckets", "64"], ["oom"],
    ["fragmentation"], ["kernels"], ["ranges"], ["roles"], ["growth"], ["diagnose"],
]


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def answers(path):
    """Every report's output on path, in one list."""
    out = []
    for r in REPORTS:
        out.append(run(vramscope, "report", path, "--format", "csv", *r)[:2])
    out.append(run(vramscope, "report", path)[:2])
    out.append(run(vramscope, "report", path, "peak")[:2])
    out.append(run(vramscope, "whatif", path)[:2])
    out.append(run(vramscope, "export", path, "--format", "perfetto", "-o", "-")[:2])
    out.append(run(vramscope, "export", path, "--format", "folded", "-o", "-")[:2])
    out.append(run(vramscope, "export", path, "--format", "folded", "--at", "exit", "-o", "-")[:2])
    return out


def dump(path, table, load):
    """The table's rows in key order, as the sqlite3 shell quotes them."""
    cmd = ["sqlite3", "-bail", "-cmd", ".mode quote"]
    if load:
        cmd += ["-cmd", ".load " + extension]
    rc, out, err = run(*cmd, path, "SELECT * FROM %s ORDER BY %s" % (table, TABLES[table]))
    return out if rc == 0 else "error: " + err


def traces():
    pats = ["*.db", "diagnose/*.db", "whatif/*.db", "window/*/run.db", "ranks/*/*.db",
            "endings/*/trace.db"]
    return sorted(p for pat in pats for p in glob.glob(os.path.join(data, pat)))


work = tempfile.mkdtemp(prefix="vs-compact-")
try:
    damaged_source = None
    for src in traces():
        name = os.path.relpath(src, data)
        d4, d5, dx = (os.path.join(work, name, k) for k in ("plain", "compact", "export"))
        for d in (d4, d5, dx):
            os.makedirs(d)
        plain, compact, exported = (os.path.join(d, "trace.db") for d in (d4, d5, dx))
        shutil.copy(src, plain)
        with sqlite3.connect(plain) as db:
            db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
        rc, _, err = run(vramscope, "report", plain, "summary")
        shutil.copy(plain, compact)
        rc2, _, err2 = run(tool, compact)
        ok(rc == 0 and rc2 == 0, "%s: finalized and compacted (%s)" % (name, (err + err2).strip()))
        if rc2 != 0:
            continue
        rc, _, err = run(vramscope, "export", compact, "--format", "sqlite", "-o", exported)
        same_rows = [t for t in TABLES
                     if dump(plain, t, False) == dump(compact, t, True)
                     and not dump(plain, t, False).startswith("error")]
        same_export = [t for t in TABLES if dump(plain, t, False) == dump(exported, t, False)]
        ok(len(same_rows) == len(TABLES) and len(same_export) == len(TABLES) and rc == 0,
           "%s: every row of every chunked table as before, through the extension (%s)"
           " and the plain export (%s)" % (name, ", ".join(same_rows), ", ".join(same_export)))
        a, b = answers(plain), answers(compact)
        differ = [" ".join(REPORTS[i]) if i < len(REPORTS) else str(i)
                  for i in range(len(a)) if a[i] != b[i]]
        ok(not differ, "%s: every report, whatif and export answer the same%s"
           % (name, " (differ: %s)" % ", ".join(differ) if differ else ""))
        s4, s5 = os.path.getsize(plain), os.path.getsize(compact)
        ok(s5 <= s4, "%s: %d bytes compacted, %d plain" % (name, s5, s4))
        if name == "window/fix-8/run.db":
            damaged_source = compact
        # Marked unfinalized: the reader expands it and finalizes it, the
        # finalizer coding series and block into chunks as it derives them
        # (as record does), then compacts the rest.
        again = os.path.join(d5, "again", "trace.db")
        os.makedirs(os.path.dirname(again))
        shutil.copy(compact, again)
        with sqlite3.connect(again) as db:
            db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
        c = answers(again)
        with sqlite3.connect(again) as db:
            v = db.execute("PRAGMA user_version").fetchone()[0]
        differ = [" ".join(REPORTS[i]) if i < len(REPORTS) else str(i)
                  for i in range(len(a)) if a[i] != c[i]]
        differ += [t for t in TABLES if dump(plain, t, False) != dump(again, t, True)]
        ok(not differ and v == 5,
           "%s: compacted, then finalized again with its series and blocks coded as derived:"
           " version %d, every row and answer the same%s"
           % (name, v, " (differ: %s)" % ", ".join(differ) if differ else ""))

    # The compacted traces written before series_level was chunked kept it
    # plain: such a trace (made from one compacted now) answers the same.
    src = os.path.join(data, "torch-train.db")
    plain, compact, older = (os.path.join(work, "older", k, "trace.db")
                             for k in ("plain", "compact", "older"))
    for p in (plain, compact, older):
        os.makedirs(os.path.dirname(p))
    shutil.copy(src, plain)
    with sqlite3.connect(plain) as db:
        db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
    run(vramscope, "report", plain, "summary")
    shutil.copy(plain, compact)
    rc, _, err = run(tool, compact)
    shutil.copy(compact, older)
    with sqlite3.connect(plain) as db:
        create = db.execute("SELECT sql FROM sqlite_master WHERE name = 'series_level'").fetchone()[0]
    rc2, _, err2 = run("sqlite3", "-bail", "-cmd", ".load " + extension, older,
                       create.replace("CREATE TABLE series_level", "CREATE TABLE main.series_level")
                       + "; INSERT INTO main.series_level SELECT * FROM temp.series_level;"
                       " DROP TABLE main.series_level_chunk; VACUUM;")
    with sqlite3.connect(older) as db:
        kept = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'series_level'"
                          " AND type = 'table'").fetchone()[0]
        v = db.execute("PRAGMA user_version").fetchone()[0]
    a, c = answers(plain), answers(older)
    differ = [" ".join(REPORTS[i]) if i < len(REPORTS) else str(i)
              for i in range(len(a)) if a[i] != c[i]]
    differ += [t for t in TABLES if dump(plain, t, False) != dump(older, t, True)]
    ok(rc == 0 and rc2 == 0 and kept == 1 and v == 5 and not differ,
       "a version-5 trace with series_level plain: every row and answer the same (%s%s)%s"
       % (err.strip(), err2.strip(), " (differ: %s)" % ", ".join(differ) if differ else ""))
    rc, _, err = run(vramscope, "export", older, "--format", "sqlite", "-o",
                     os.path.join(work, "older", "export.db"))
    same = [t for t in TABLES
            if dump(plain, t, False) == dump(os.path.join(work, "older", "export.db"), t, False)]
    ok(rc == 0 and len(same) == len(TABLES),
       "... and its plain export holds every row (%s%s)" % (", ".join(same), err.strip()))

    # A value that is not an integer in a raw table the finalizer codes as
    # it loads it: compaction leaves the trace as it was, plain, without
    # chunk tables, every row as finalizing it alone gives.
    for table, column in (("alloc_event", "tid"), ("mem_event", "context")):
        base = os.path.join(work, "text-" + table)
        os.makedirs(base)
        mixed, alone = os.path.join(base, "trace.db"), os.path.join(base, "alone.db")
        shutil.copy(os.path.join(data, "torch-allocator.db"), mixed)
        with sqlite3.connect(mixed) as db:
            db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
            db.execute("UPDATE %s SET %s = 'x' WHERE id = (SELECT max(id) FROM %s)"
                       % (table, column, table))
        shutil.copy(mixed, alone)
        rc, _, err = run(tool, "--finalize", mixed)
        rc2, _, err2 = run(tool, "--plain", alone)
        with sqlite3.connect(mixed) as db:
            v = db.execute("PRAGMA user_version").fetchone()[0]
            chunks = db.execute("SELECT count(*) FROM sqlite_master"
                                " WHERE name LIKE '%\\_chunk' ESCAPE '\\'").fetchone()[0]
        differ = [t for t in TABLES if dump(mixed, t, False) != dump(alone, t, False)]
        ok(rc == 3 and rc2 == 0 and v == 4 and chunks == 0 and not differ,
           "%s.%s not an integer: finalized, left plain (status %d, version %d, %d chunk"
           " tables%s)%s" % (table, column, rc, v, chunks, (err + err2).strip(),
                             " (differ: %s)" % ", ".join(differ) if differ else ""))

    # Damage: each case on a fresh copy of one compacted trace.
    # The reports that read the damaged table: block (peak, leaks), series
    # (timeline).
    block, series = (["peak"], ["leaks"]), (["timeline"],)
    cases = [
        ("a chunk's bytes flipped",
         "UPDATE block_chunk SET data = randomblob(length(data)) WHERE seq = 0", block),
        ("a chunk cut short",
         "UPDATE series_chunk SET data = substr(data, 1, length(data) / 2) WHERE seq = 0",
         series),
        ("a row count that lies",
         "UPDATE block_chunk SET row_count = row_count - 1 WHERE seq = 0", block),
        ("a zone map cut short",
         "UPDATE block_chunk SET zone = substr(zone, 1, 3) WHERE seq = 0", block),
        ("a chunk's data not a blob", "UPDATE series_chunk SET data = 'text' WHERE seq = 0",
         series),
    ]
    ok(damaged_source is not None, "a compacted trace to damage")
    for what, sql, reports in cases if damaged_source else []:
        bad = os.path.join(work, "damaged.db")
        shutil.copy(damaged_source, bad)
        with sqlite3.connect(bad) as db:
            db.execute(sql)
        results = [run(vramscope, "report", bad, *r) for r in reports]
        good = all(rc == 1 and len(err.strip().splitlines()) == 1 and "damaged" in err
                   for rc, _, err in results)
        ok(good, "%s: one line and exit status 1 (%s)"
           % (what, "; ".join("%d %s" % (rc, err.strip()) for rc, _, err in results)))

    # Random damage: bytes of chunks and zone maps overwritten at random
    # places (a fixed seed); each report ends in an answer or one line and
    # exit status 1, never a crash.
    rnd = random.Random(14)
    crashes = []
    for k in range(40) if damaged_source else []:
        bad = os.path.join(work, "random.db")
        shutil.copy(damaged_source, bad)
        with sqlite3.connect(bad) as db:
            table = rnd.choice(list(TABLES))
            column = rnd.choice(["data", "zone"])
            rows = db.execute("SELECT seq, %s FROM %s_chunk" % (column, table)).fetchall()
            if not rows:
                continue
            seq, blob = rnd.choice(rows)
            blob = bytearray(blob)
            for _ in range(rnd.randint(1, 4)):
                blob[rnd.randrange(len(blob))] = rnd.randrange(256)
            db.execute("UPDATE %s_chunk SET %s = ? WHERE seq = ?" % (table, column),
                       (bytes(blob), seq))
        for r in (["peak"], ["leaks"], ["timeline"], ["kernels"]):
            rc, _, err = run(vramscope, "report", bad, *r)
            if rc not in (0, 1) or (rc == 1 and len(err.strip().splitlines()) != 1):
                crashes.append("%s %s.%s: %d %s" % (" ".join(r), table, column, rc, err.strip()))
    ok(damaged_source is not None and not crashes,
       "40 chunks damaged at random: every report answers or says so in one line",
       "\n".join(crashes))
finally:
    shutil.rmtree(work, ignore_errors=True)
done()
