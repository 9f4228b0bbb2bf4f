#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-export.py — every `vramscope export` format read back and compared
# exactly with the trace it came from.  TAP output.
#
#   perfetto  parsed as strict JSON (no duplicate keys, no NaN), every
#             event checked against the trace event format (required and
#             allowed members and their types per phase), then compared
#             with the trace read through sqlite3: the counters equal the
#             series (the state after the last change of each instant, to
#             the nanosecond), the slices the kernels and NVTX ranges, the
#             instants the failed allocations;
#   snapshot  loaded with Python's pickle, checked for the structure
#             memory_viz reads, read under node by snapshot-viz.mjs (a
#             JavaScript unpickler and memory timeline, as a browser viewer
#             reads snapshots) whose peaks, finals and counts equal the
#             trace's, and imported again with `vramscope import`:
#             the PyTorch rows of both summaries agree exactly (bytes,
#             counts, and peak times to the microsecond the format keeps);
#             real snapshots imported, exported and imported again give an
#             identical summary;
#   folded    the lines of each device add up to peak_allocated_bytes (at
#             the peak) or final_allocated_bytes (at exit), and equal
#             `report peak` grouped by stack;
# and the CLI contract: an existing output is replaced only with --force,
# nothing is left behind on failure, usage errors exit 2.
#
# Usage: test-export.py VRAMSCOPE DATA_DIR NODE
import collections
import csv
import glob
import io
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile

vramscope, data, node = sys.argv[1], sys.argv[2], sys.argv[3]
VIZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshot-viz.mjs")
VIZ_FIELDS = ["peak_allocated_bytes", "peak_reserved_bytes", "final_allocated_bytes",
              "final_reserved_bytes", "alloc_count", "failed_alloc_count"]


def viz(path):
    """What the JavaScript reader makes of a snapshot, per device index."""
    res = subprocess.run([node, VIZ, path], capture_output=True, text=True)
    if res.returncode != 0:
        return res.stderr.strip()
    return json.loads(res.stdout)
TRACES = ["torch-eval-leak", "torch-ddp", "torch-allocator", "sample-oom", "sample-nvtx-pool",
          "sample-kinds", "sample-leak", "sample-frag"]
PYTORCH_TRACES = ["torch-eval-leak", "torch-ddp", "torch-allocator"]
DEVICE_PID = 1 << 30

results = []


def ok(cond, name, detail=""):
    results.append((bool(cond), name, detail))


def run(*args):
    return subprocess.run([vramscope, *args], capture_output=True, text=True)


def summary(db):
    res = run("report", db, "--format", "csv", "summary")
    assert res.returncode == 0, res.stderr
    return list(csv.DictReader(io.StringIO(res.stdout)))


# ------------------------------------------------------------ perfetto --

def strict_json(text):
    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key in %r" % keys)
        return dict(items)

    def constant(name):
        raise ValueError("non-standard JSON constant " + name)

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


NUMBER = (int, float)
COMMON = {"ph": str, "pid": int, "tid": int, "name": str}
PHASES = {
    # phase: (required members beyond COMMON, optional members)
    "M": ({"args": dict}, {}),
    "C": ({"ts": NUMBER, "args": dict}, {}),
    "X": ({"ts": NUMBER, "dur": NUMBER, "cat": str}, {"args": dict}),
    "i": ({"ts": NUMBER, "s": str, "cat": str}, {"args": dict}),
}


def schema_errors(doc):
    errs = []
    if not isinstance(doc, dict) or set(doc) != {"displayTimeUnit", "otherData", "traceEvents"}:
        return ["top level must be an object with displayTimeUnit, otherData, traceEvents"]
    if doc["displayTimeUnit"] not in ("ms", "ns"):
        errs.append("displayTimeUnit must be ms or ns")
    if not isinstance(doc["traceEvents"], list):
        return errs + ["traceEvents must be an array"]
    for n, ev in enumerate(doc["traceEvents"]):
        if not isinstance(ev, dict) or ev.get("ph") not in PHASES:
            errs.append("event %d: unknown phase %r" % (n, ev.get("ph") if isinstance(ev, dict) else ev))
            continue
        req, opt = PHASES[ev["ph"]]
        want = dict(COMMON, **req)
        missing = set(want) - set(ev)
        extra = set(ev) - set(want) - set(opt)
        if missing or extra:
            errs.append("event %d (%s): missing %s, unexpected %s" % (n, ev["ph"], sorted(missing), sorted(extra)))
            continue
        for k, t in list(want.items()) + list(opt.items()):
            if k in ev and (not isinstance(ev[k], t) or isinstance(ev[k], bool)):
                errs.append("event %d: %s has type %s" % (n, k, type(ev[k]).__name__))
        if "dur" in ev and ev["dur"] < 0:
            errs.append("event %d: negative dur" % n)
        if ev["ph"] == "M" and (ev["name"] not in ("process_name", "thread_name")
                                or set(ev["args"]) != {"name"} or not isinstance(ev["args"]["name"], str)):
            errs.append("event %d: bad metadata event" % n)
        if ev["ph"] == "C" and (not ev["args"] or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in ev["args"].values())):
            errs.append("event %d: counter values must be integers" % n)
        if ev["ph"] == "i" and ev["s"] not in ("g", "p", "t"):
            errs.append("event %d: bad instant scope" % n)
    return errs


def ns(us):
    """A ts or dur in microseconds back to integer nanoseconds, exactly."""
    return round(us * 1000)


def exported(name, tmp, fmt, ext):
    """Exports the trace tests/data/NAME.db in format fmt to tmp/NAME+ext,
    a check that it succeeds; returns the trace's path and the output's,
    None when the export failed."""
    db = os.path.join(data, name + ".db")
    out = os.path.join(tmp, name + ext)
    res = run("export", db, "--format", fmt, "-o", out)
    ok(res.returncode == 0, "%s: %s export succeeds" % (name, fmt), res.stderr)
    return db, out if res.returncode == 0 else None


def check_perfetto(name, tmp):
    db, out = exported(name, tmp, "perfetto", ".json")
    if out is None:
        return
    text = open(out, encoding="utf-8").read()
    try:
        doc = strict_json(text)
    except ValueError as e:
        ok(False, "%s: perfetto output is strict JSON" % name, str(e))
        return
    errs = schema_errors(doc)
    ok(not errs, "%s: every event follows the trace event format" % name, "\n".join(errs[:5]))
    if errs:
        return
    events = doc["traceEvents"]
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    start = con.execute("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'").fetchone()
    start = start[0] if start else None
    ok(start == doc["otherData"]["start_ns"], "%s: otherData.start_ns is the trace's start" % name)

    # Counters: per (device pid, allocator name), the last state per ts.
    names = {row[0]: row[1] for row in con.execute("SELECT id, name FROM allocator")}
    names[0] = "all"
    want = collections.defaultdict(dict)
    for dev_idx, dev_id, alloc_id, stored in con.execute(
            "SELECT d.idx, d.id, s.allocator_id, s.series_allocator_id FROM summary s"
            " JOIN device d ON d.id = s.device_id"):
        rows = con.execute("SELECT ts, reserved_bytes, allocated_bytes, device_bytes FROM series"
                           " WHERE device_id = ? AND allocator_id = ? ORDER BY ts, seq",
                           (dev_id, stored)).fetchall()
        key = (DEVICE_PID + dev_idx, names[alloc_id])
        for ts, r, a, d in rows:
            vals = {"reserved_bytes": r, "allocated_bytes": a}
            if alloc_id == 0 and d is not None:
                vals["device_bytes"] = d
            want[key][ts - start] = vals
    got = collections.defaultdict(dict)
    duplicates = 0
    for ev in events:
        if ev["ph"] == "C":
            key = (ev["pid"], ev["name"])
            t = ns(ev["ts"])
            duplicates += t in got[key]
            got[key][t] = ev["args"]
    ok(duplicates == 0, "%s: one counter event per instant" % name)
    ok(dict(want) == dict(got), "%s: counters equal the series exactly (%d events)"
       % (name, sum(len(v) for v in got.values())),
       "tracks wanted %s got %s" % (sorted(want)[:4], sorted(got)[:4]))

    # Kernels and NVTX ranges as slices.
    kern_want = collections.Counter(
        (n, s - start, e - s) for n, s, e in con.execute("SELECT name, start_ns, end_ns FROM kernel"))
    kern_got = collections.Counter(
        (ev["name"], ns(ev["ts"]), ns(ev["dur"])) for ev in events if ev["ph"] == "X" and ev["cat"] == "kernel")
    ok(kern_want == kern_got, "%s: %d kernels exported exactly" % (name, sum(kern_want.values())))
    end = max([0] + [ns(ev["ts"]) for ev in events if ev["ph"] == "C"])
    ranges_want = collections.Counter()
    for n, s, e in con.execute("SELECT name, start_ns, end_ns FROM nvtx_range"):
        if e is not None:
            ranges_want[(n, s - start, e - s)] += 1
        else:
            ranges_want[(n, s - start, None)] += 1
    ranges_got = collections.Counter()
    for ev in events:
        if ev["ph"] == "X" and ev["cat"] != "kernel":
            unclosed = ev.get("args", {}).get("unclosed", False)
            ranges_got[(ev["name"], ns(ev["ts"]), None if unclosed else ns(ev["dur"]))] += 1
    ok(ranges_want == ranges_got, "%s: %d NVTX ranges exported exactly" % (name, sum(ranges_want.values())))

    fail_want = collections.Counter(
        (s - start, b, api) for s, b, api in con.execute("SELECT ts, requested_bytes, api FROM failed_alloc"))
    fail_got = collections.Counter(
        (ns(ev["ts"]), ev["args"]["requested_bytes"], ev["args"]["api"]) for ev in events if ev["ph"] == "i")
    ok(fail_want == fail_got, "%s: %d failed allocations exported as instants"
       % (name, sum(fail_want.values())))

    # Every track a slice or instant lies on is named.
    named = {(ev["pid"], ev["tid"]) for ev in events if ev["ph"] == "M" and ev["name"] == "thread_name"}
    unnamed = {(ev["pid"], ev["tid"]) for ev in events if ev["ph"] in ("X", "i")} - named
    ok(not unnamed, "%s: every thread track is named" % name, str(sorted(unnamed)[:5]))
    con.close()


# ------------------------------------------------------------ snapshot --

def check_snapshot_structure(name, snap):
    errs = []
    if set(snap) != {"segments", "device_traces", "allocator_settings"}:
        errs.append("top-level keys %s" % sorted(snap))
    for seg in snap["segments"]:
        for k in ("device", "address", "total_size", "allocated_size", "active_size",
                  "requested_size", "stream", "segment_type", "blocks", "frames"):
            if k not in seg:
                errs.append("segment lacks %s" % k)
        if sum(b["size"] for b in seg["blocks"]) != seg["total_size"]:
            errs.append("blocks of segment 0x%x do not tile it" % seg["address"])
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["address"] != addr:
                errs.append("block at 0x%x not contiguous" % b["address"])
            addr = b["address"] + b["size"]
            if b["state"] not in ("active_allocated", "inactive"):
                errs.append("block state %s" % b["state"])
    actions = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
               "segment_map", "segment_unmap", "oom"}
    for trace in snap["device_traces"]:
        last = None
        for e in trace:
            if e["action"] not in actions:
                errs.append("action %s" % e["action"])
            if not all(isinstance(f, dict) and set(f) == {"filename", "line", "name"} for f in e["frames"]):
                errs.append("bad frames")
            if last is not None and e["time_us"] < last:
                errs.append("time_us goes backwards")
            last = e["time_us"]
    ok(not errs, "%s: the snapshot has the structure memory_viz reads" % name, "\n".join(errs[:5]))


def check_snapshot(name, tmp):
    db, out = exported(name, tmp, "snapshot", ".pickle")
    if out is None:
        return
    with open(out, "rb") as f:
        snap = pickle.load(f)
    check_snapshot_structure(name, snap)
    shown = viz(out)
    want = {r["device"]: {k: int(r[k]) for k in VIZ_FIELDS}
            for r in summary(db) if r["allocator"] == "pytorch"}
    ok(shown == want, "%s: read in JavaScript, the snapshot's timeline has the trace's peaks and counts"
       % name, "%s\n%s" % (shown, want))
    again = os.path.join(tmp, name + ".again.db")
    res = subprocess.run([vramscope, "import", out, "-o", again, "-q"], capture_output=True, text=True)
    ok(res.returncode == 0, "%s: the snapshot imports again" % name, res.stderr)
    if res.returncode != 0:
        return
    orig = {r["device"]: r for r in summary(db) if r["allocator"] == "pytorch"}
    back = {r["device"]: r for r in summary(again) if r["allocator"] == "pytorch"}
    fields = ["peak_reserved_bytes", "peak_allocated_bytes", "final_reserved_bytes",
              "final_allocated_bytes", "alloc_count", "free_count", "failed_alloc_count"]
    same = set(orig) == set(back) and all(orig[d][k] == back[d][k] for d in orig for k in fields)
    ok(same, "%s: re-imported summary equals the trace's PyTorch rows" % name,
       "%s\n%s" % (orig, back))

    def start(path):
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        v = con.execute("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'").fetchone()[0]
        con.close()
        return v
    s0, s1 = start(db), start(again)
    times_same = all((s0 + int(orig[d][k])) // 1000 * 1000 == s1 + int(back[d][k])
                     for d in orig for k in ("peak_reserved_time_ns", "peak_allocated_time_ns"))
    ok(times_same, "%s: peak times agree to the microsecond" % name)


def check_snapshot_roundtrip(pickle_path, tmp):
    name = os.path.basename(pickle_path)
    a, p, b = (os.path.join(tmp, name + x) for x in (".a.db", ".out.pickle", ".b.db"))
    steps = [["import", pickle_path, "-o", a, "-q"], ["export", a, "--format", "snapshot", "-o", p],
             ["import", p, "-o", b, "-q"]]
    for s in steps:
        res = run(*s)
        if res.returncode != 0:
            ok(False, "%s: import, export, import" % name, res.stderr)
            return
    ok(summary(a) == summary(b), "%s: import → export → import keeps the summary identical" % name)
    ok(viz(p) == viz(pickle_path) and isinstance(viz(p), dict),
       "%s: read in JavaScript, the export shows what the original shows" % name, "%s\n%s" % (viz(p), viz(pickle_path)))


# -------------------------------------------------------------- folded --

def folded_lines(db, *extra):
    res = run("export", db, "--format", "folded", "-o", "-", *extra)
    assert res.returncode == 0, res.stderr
    lines = {}
    for line in res.stdout.splitlines():
        stack, _, value = line.rpartition(" ")
        assert stack not in lines, "duplicate line " + stack
        lines[stack] = int(value)
    return lines


def check_folded(name):
    db = os.path.join(data, name + ".db")
    rows = [r for r in summary(db) if r["allocator"] == "all"]
    several = len(rows) > 1
    for when, field in (("peak", "peak_allocated_bytes"), ("exit", "final_allocated_bytes")):
        lines = folded_lines(db, "--at", when)
        per_dev = collections.Counter()
        for stack, v in lines.items():
            per_dev[stack.split(";")[0] if several else rows[0]["device"]] += v
        want = {("device " + r["device"] if several else r["device"]): int(r[field])
                for r in rows if int(r[field]) > 0}
        ok(dict(per_dev) == want, "%s: folded at %s adds up to %s of each device" % (name, when, field),
           "%s != %s" % (dict(per_dev), want))
    if several:
        return
    # The lines are `report peak` grouped by stack, outermost frame first.
    res = run("report", db, "--format", "csv", "peak")
    peak = collections.Counter()
    for r in csv.DictReader(io.StringIO(res.stdout)):
        frames = r["stack"].split(" <- ") if r["stack"] else ["[no stack]"]
        peak[";".join(reversed(frames)).replace("\n", " ")] += int(r["bytes"])
    ok(dict(peak) == folded_lines(db), "%s: folded at peak equals report peak by stack" % name)


# ----------------------------------------------------------------- CLI --

def check_cli(tmp):
    db = os.path.join(data, "sample-oom.db")
    out = os.path.join(tmp, "cli.json")
    open(out, "w").write("keep")
    res = run("export", db, "--format", "perfetto", "-o", out)
    ok(res.returncode == 1 and "--force" in res.stderr and open(out).read() == "keep",
       "an existing output is kept without --force")
    res = run("export", db, "--format", "perfetto", "-o", out, "--force")
    ok(res.returncode == 0 and open(out).read().startswith("{"), "--force replaces the output")
    res = run("export", db, "--format", "snapshot", "-o", os.path.join(tmp, "none.pickle"))
    ok(res.returncode == 1 and "no PyTorch allocator" in res.stderr and len(res.stderr.splitlines()) == 1
       and not os.path.exists(os.path.join(tmp, "none.pickle")),
       "a trace without PyTorch allocator: one line, exit 1, no file")
    ok(not [f for f in os.listdir(tmp) if ".tmp-" in f], "no temporary file is left behind")
    res = run("export", db, "--format", "svg", "-o", out)
    ok(res.returncode == 2 and "usage: vramscope export" in res.stderr, "an unknown format is a usage error")
    res = run("export", db)
    ok(res.returncode == 2 and "--format is required" in res.stderr, "--format is required")
    res = run("export", os.path.join(tmp, "missing.db"), "--format", "folded", "-o", "-")
    ok(res.returncode == 1 and len(res.stderr.splitlines()) == 1, "a missing trace: one line, exit 1")
    res = run("export", db, "--format", "folded", "--device", "7", "-o", "-")
    ok(res.returncode == 1 and "no device 7" in res.stderr, "an unknown device: exit 1")


with tempfile.TemporaryDirectory() as tmp:
    for t in TRACES:
        check_perfetto(t, tmp)
    for t in PYTORCH_TRACES:
        check_snapshot(t, tmp)
    for p in sorted(glob.glob(os.path.join(data, "snapshots", "*.pickle"))):
        check_snapshot_roundtrip(p, tmp)
    for t in TRACES:
        check_folded(t)
    check_cli(tmp)

print("1..%d" % len(results))
failed = 0
for n, (good, name, detail) in enumerate(results, 1):
    print("%s %d %s" % ("ok" if good else "not ok", n, name))
    if not good:
        failed = 1
        for line in str(detail).splitlines()[:20]:
            print("# " + line)
sys.exit(failed)
