#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report-cli.py VRAMSCOPE DATA_DIR — the conventional side of `vramscope
report`: time windows with units on peak and leaks checked exactly against
the trace's own rows (read with sqlite3), FILE and REPORT in either order,
--format json typed and equal to the CSV, colour and NO_COLOR, the pager.
TAP output.

Ground truth, from tests/data/torch-allocator.db:
  peak --from A --to B   the bytes live at the highest allocated_bytes of
                         the `series` rows of allocator `all` in [A, B),
                         the state entering A included;
  leaks --from A --to B  the pytorch allocator's blocks never freed whose
                         alloc_ts lies in [A, B).
"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
trace = os.path.join(data, "torch-allocator.db")




def run(*args, env=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run([vramscope, *args], capture_output=True, text=True, env=e)


def csv_rows(*args):
    p = run(*args, "--format", "csv")
    assert p.returncode == 0, p.stderr
    return list(csv.DictReader(io.StringIO(p.stdout)))


db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
start = int(db.execute("SELECT value FROM meta WHERE key = 'start_ns'").fetchone()[0])
end = int(db.execute("SELECT value FROM meta WHERE key = 'end_ns'").fetchone()[0]) - start
pytorch = db.execute("SELECT id FROM allocator WHERE name = 'pytorch'").fetchone()[0]


def true_peak(a, b):
    entering = db.execute(
        "SELECT allocated_bytes FROM series WHERE device_id = 1 AND allocator_id = 0"
        " AND ts < ? ORDER BY seq DESC LIMIT 1", (start + a,)).fetchone()
    inside = db.execute(
        "SELECT MAX(allocated_bytes) FROM series WHERE device_id = 1 AND allocator_id = 0"
        " AND ts >= ? AND ts < ?", (start + a, start + b)).fetchone()[0]
    values = [v for v in ((entering or [None])[0], inside) if v is not None]
    return max(values) if values else 0


def true_leaks(a, b):
    return db.execute(
        "SELECT COALESCE(SUM(bytes), 0), COUNT(*) FROM block WHERE allocator_id = ?"
        " AND level = 2 AND free_seq IS NULL AND alloc_ts >= ? AND alloc_ts < ?",
        (pytorch, start + a, start + b)).fetchone()


# Windows given with units, and the ns they mean.
windows = [("0", "1s", 0, 10**9), ("1.5s", "3s", 1500000000, 3 * 10**9),
           ("3300ms", "3345000us", 3300000000, 3345000000),
           ("3.3s", "0.06m", 3300000000, 3600000000), ("2s", None, 2 * 10**9, end + 1),
           (None, "3.2s", 0, 3200000000)]
for fa, ta, a, b in windows:
    args = ["report", trace, "peak"] + (["--from", fa] if fa else []) + (["--to", ta] if ta else [])
    rows = csv_rows(*args)
    got = sum(int(r["bytes"]) for r in rows)
    ok(got == true_peak(a, b) and (a > 3400000000 or got > 0), "peak in [%s, %s) sums to the window's peak" % (fa, ta),
       "got %d, want %d" % (got, true_peak(a, b)))
    args = ["report", trace, "leaks", "--allocator", "pytorch"] \
        + (["--from", fa] if fa else []) + (["--to", ta] if ta else [])
    rows = csv_rows(*args)
    got = (sum(int(r["bytes"]) for r in rows), sum(int(r["count"]) for r in rows))
    want = true_leaks(a, b)
    ok(got == tuple(want), "leaks in [%s, %s) are the blocks allocated in it" % (fa, ta),
       "got %s, want %s" % (got, want))
    ok(all(a <= int(r["first_alloc_time_ns"]) and int(r["last_alloc_time_ns"]) < b for r in rows),
       "leaks in [%s, %s): every row allocated inside" % (fa, ta))

# oom and ranges: with a window, exactly the whole report's rows whose
# failure (oom) or entry (ranges) lies in it.
leaky = os.path.join(data, "torch-eval-leak.db")
for report, column in [("oom", "time_ns"), ("ranges", "start_ns")]:
    whole_rows = csv_rows("report", leaky, report)
    times = sorted(int(r[column]) for r in whole_rows)
    a, b = times[len(times) // 4], times[3 * len(times) // 4]
    want = [r for r in whole_rows if a <= int(r[column]) < b]
    got = csv_rows("report", leaky, report, "--from", "%dns" % a, "--to", str(b))
    ok(0 < len(want) < len(whole_rows) and got == want,
       "%s in [%d, %d): the whole report's rows in the window" % (report, a, b),
       "got %d rows, want %d of %d" % (len(got), len(want), len(whole_rows)))

# No window: the whole trace's peak, as the summary says.
summary = csv_rows("report", trace, "summary")
whole = sum(int(r["bytes"]) for r in csv_rows("report", trace, "peak"))
ok(whole == int(summary[0]["peak_allocated_bytes"]), "peak without a window is the trace's peak")
ok(sum(int(r["bytes"]) for r in csv_rows("report", trace, "peak", "--to", "%dns" % (end + 1)))
   == whole, "a window over the whole trace finds the same peak")

# The same window in ns and with units gives the same report.
p1 = run("report", trace, "timeline", "--from", "1500000000", "--to", "3000000000",
         "--format", "csv")
p2 = run("report", trace, "timeline", "--from", "1.5s", "--to", "3000ms", "--format", "csv")
ok(p1.returncode == 0 and p1.stdout == p2.stdout, "timeline: 1.5s is 1500000000 ns")

# A window where it makes no sense, bad times: usage errors.
for args, words in [(["summary", "--from", "1s"], "--from and --to apply to"),
                    (["kernels", "--to", "2s"], "kernels covers the whole trace"),
                    (["peak", "--from", "1.5"], "not a whole number"),
                    (["peak", "--from", "2 s"], "not a time"),
                    (["leaks", "--from", "3s", "--to", "2s"], "--from must be before --to"),
                    (["peak", "--color", "sometimes"], "--color must be"),
                    (["peak", "--format", "xml"], "text, csv or json")]:
    p = run("report", trace, *args)
    ok(p.returncode == 2 and words in p.stderr and p.stdout == "",
       "usage error: %s" % " ".join(args), p.stderr)

# Either order: `report summary FILE` is `report FILE summary`.
p1 = run("report", trace, "summary", "--format", "csv")
p2 = run("report", "summary", trace, "--format", "csv")
ok(p1.returncode == 0 and p1.stdout == p2.stdout, "report REPORT FILE works as FILE REPORT")
p = run("report", "summary")
ok(p.returncode == 2 and "expected a trace file" in p.stderr, "a report name alone: usage error")
p = run("report", "summary", "missing.db")
ok(p.returncode == 1 and "missing.db" in p.stderr, "REPORT MISSING-FILE names the file")

# JSON: one document per report, typed, equal to the CSV cell for cell.
for report in ["diagnose", "summary", "peak", "leaks", "timeline", "oom", "fragmentation",
               "kernels", "ranges", "roles", "growth", "meta"]:
    p = run("report", trace, report, "--format", "json")
    c = run("report", trace, report, "--format", "csv")
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        ok(False, "json %s parses" % report, e)
        continue
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    names = [col["name"] for col in doc["columns"]]
    same = doc["report"] == report and names == (list(rows[0].keys()) if rows else names) \
        and len(doc["rows"]) == len(rows)
    for jr, cr in zip(doc["rows"], rows):
        for col in doc["columns"]:
            v, text = jr[col["name"]], cr[col["name"]]
            if col["kind"] in ("int", "bytes", "time_ns", "duration_ns"):
                same = same and (v is None and text == "" or type(v) is int and str(v) == text)
            else:
                same = same and (v is None and text == "" or v == text)
    ok(p.returncode == 0 and same, "json %s: typed, the CSV's values" % report)

# JSON of hostile text: a frame named with quotes, a backslash, control
# characters and a byte that is not UTF-8 still makes valid JSON, the name
# read back as written (the bad byte as U+FFFD).
import shutil
import tempfile

with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "hostile.db")
    shutil.copy(trace, copy)
    name = b'con"vert\\ \x01\x1b[31m\t\n\xff \xc3\xa9'
    with sqlite3.connect(copy) as c:
        c.execute("UPDATE frame SET function = CAST(? AS TEXT) WHERE function = 'convert'", (name,))
    p = run("report", copy, "peak", "--format", "json")
    try:
        doc = json.loads(p.stdout)
        stacks = [r["stack"] for r in doc["rows"] if r["stack"]]
        want = name.decode("utf-8", "replace")
        ok(any(want in st for st in stacks), "json: hostile text escaped and read back",
           "\n".join(stacks)[:500])
    except ValueError as e:
        ok(False, "json: hostile text escaped and read back", "%s\n%s" % (e, p.stdout[:500]))

golden = os.path.join(data, "golden", "report-summary.json")
with open(golden) as f:
    ok(json.loads(run("report", trace, "summary", "--format", "json").stdout) == json.load(f),
       "json summary matches its golden file")

# Colour: never by default off a terminal; always on request; NO_COLOR
# does not override an explicit --color=always, and never strips all.
plain = run("report", trace, "peak", "--width", "100")
colour = run("report", trace, "peak", "--width", "100", "--color=always")
ok("\033[" not in plain.stdout, "no colour off a terminal")
ok(colour.stdout.startswith("\033[1m") and
   colour.stdout.replace("\033[1m", "").replace("\033[0m", "") == plain.stdout,
   "--color=always: a bold title, the same text")
title = colour.stdout.split("\n\n")[0].split("\n")
ok(len(title) > 1 and all(t.startswith("\033[1m") and t.endswith("\033[0m") for t in title),
   "--color=always: each line of the title bold", title)
diag = run("report", trace, "--color=always", "--width", "100")
ok("\033[1;33mgrowth-per-iteration\033[0m" in diag.stdout, "diagnose: finding names coloured")
ok("\033[" not in run("report", trace, "--color=never").stdout, "--color=never")

# On a terminal: colour unless NO_COLOR, and the pager.
script = "import os,pty,sys\n" \
         "pid, fd = pty.fork()\n" \
         "if pid == 0:\n" \
         "    os.execvp(sys.argv[1], sys.argv[1:])\n" \
         "out = b''\n" \
         "while True:\n" \
         "    try:\n" \
         "        b = os.read(fd, 65536)\n" \
         "    except OSError:\n" \
         "        break\n" \
         "    if not b:\n" \
         "        break\n" \
         "    out += b\n" \
         "os.waitpid(pid, 0)\n" \
         "sys.stdout.write(out.decode('utf-8', 'replace'))\n"


def on_tty(env, *args):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", script, vramscope, *args],
                          capture_output=True, text=True, env=e, timeout=60).stdout


t = on_tty({"PAGER": "cat"}, "report", trace, "peak")
ok("\033[1m" in t, "on a terminal: colour", t[:200])
t = on_tty({"PAGER": "cat", "NO_COLOR": "1"}, "report", trace, "peak")
ok("\033[" not in t and "Allocations live" in t, "NO_COLOR: none", t[:200])
t = on_tty({"PAGER": "sed s/^/PAGED:/", "NO_COLOR": "1"}, "report", trace, "peak")
ok(t.startswith("PAGED:Allocations live"), "on a terminal: through $PAGER", t[:200])
t = on_tty({"PAGER": "no-such-pager-here", "NO_COLOR": "1"}, "report", trace, "peak")
ok("Allocations live" in t, "a pager that cannot start: the text itself", t[:200])
t = on_tty({"PAGER": "sed s/^/PAGED:/"}, "report", trace, "summary", "--format", "csv")
ok(t.startswith("device,"), "CSV is never paged", t[:200])

# diff: JSON equal to its CSV; negative deltas green, positive red.
other = os.path.join(data, "torch-eval-leak.db")
p = run("diff", trace, other, "--format", "json")
rows = list(csv.DictReader(io.StringIO(run("diff", trace, other, "--format", "csv").stdout)))
doc = json.loads(p.stdout)
ok(doc["report"] == "diff" and len(doc["rows"]) == len(rows) > 0 and all(
    all((jr[k] is None and v == "") or str(jr[k]) == v for k, v in cr.items())
    for jr, cr in zip(doc["rows"], rows)), "diff --format json: the CSV's values, typed")
t = run("diff", trace, other, "--color=always", "--width", "120").stdout
ok("\033[32m-37.32 MiB\033[0m" in t and "\033[31m+5.25 GiB\033[0m" in t,
   "diff: negative deltas green, positive red")
ok("\033[" not in run("diff", trace, other).stdout, "diff: no colour off a terminal")

done()
