#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test-formats.py — snapshots in every format PyTorch has written import,
# and their numbers equal an independent replay (snapshot_replay.py).
#
# The formats the installed PyTorch no longer writes are built here from
# real snapshots (tests/data/snapshots, recorded with PyTorch 2.11) by
# applying the documented differences:
#   - no time_us on history entries (PyTorch 2.0): the time axis becomes
#     the order of events (meta time_axis 'order');
#   - PyTorch 1.13's memory_snapshot(): a bare list of segments whose blocks
#     have no requested_size and no frames but a 'history' of records with
#     'real_size' and 'frames';
#   - a dict without device_traces, or with empty ones (recording off, or
#     enabled="state"): the state at one instant;
#   - allocator_settings with max_split_size 2^64-1 (SIZE_MAX, as older
#     versions wrote it; 2.11 writes -1) and negative values;
# and the additions of newer versions:
#   - actions this importer does not know ('user_defined', 'annotate', a
#     future one) and extra keys: skipped and counted, never refused;
#   - 'snapshot' markers: ranges of no length;
#   - external_annotations (record_function / torch.compile phases):
#     ranges from START to END;
#   - several devices (one GPU on the recording machine: two real
#     histories put on devices 0 and 1, as the format lays them out).
# Each built snapshot is imported with vs-import-tool; the pytorch row of
# every device of `vramscope report --format csv summary` must equal the
# replay's peaks, finals, counts, memory live before the trace and the peak
# times (ns, or event numbers on an event-order axis).  TAP output.
# Usage: test-formats.py VS_IMPORT_TOOL VRAMSCOPE SNAPSHOT_DIR
import copy
import csv
import io
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_replay  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tap  # noqa: E402

COLUMNS = ["peak_reserved_bytes", "peak_reserved_time_ns", "peak_allocated_bytes",
           "peak_allocated_time_ns", "final_reserved_bytes", "final_allocated_bytes",
           "alloc_count", "free_count", "failed_alloc_count", "before_trace_bytes",
           "before_trace_count"]


def load(snapdir, name):
    with open(os.path.join(snapdir, name + ".pickle"), "rb") as f:
        return pickle.load(f)  # our own committed fixture


def no_time(s):
    s = copy.deepcopy(s)
    for t in s["device_traces"]:
        for e in t:
            e.pop("time_us", None)
    s.pop("external_annotations", None)
    return s


def v113(s):
    """PyTorch 1.13: segments only, as a list; blocks carry a history."""
    segs = []
    for seg in copy.deepcopy(s["segments"]):
        seg = {k: seg[k] for k in ("device", "address", "total_size", "allocated_size",
                                   "active_size", "stream", "segment_type", "blocks")}
        blocks = []
        for b in seg["blocks"]:
            nb = {"size": b["size"], "state": b["state"], "address": b["address"]}
            if b["state"] != "inactive":
                nb["history"] = [{"addr": b["address"], "real_size": b["requested_size"],
                                  "frames": b.get("frames", [])}]
            blocks.append(nb)
        seg["blocks"] = blocks
        segs.append(seg)
    return segs


def with_unknown(s):
    s = copy.deepcopy(s)
    t = s["device_traces"][0]
    at = t[len(t) // 2]
    extra = [
        {"action": "user_defined", "addr": 0, "size": 0, "stream": 0,
         "time_us": at["time_us"], "user_metadata": "phase=train"},
        {"action": "annotate", "addr": at.get("addr", 0), "size": 0, "stream": 0,
         "time_us": at["time_us"], "user_metadata": "kept"},
        {"action": "some_future_action", "addr": 1, "size": 2, "stream": -1,
         "time_us": at["time_us"], "frames": []},
    ]
    for i, e in enumerate(extra):
        t.insert(len(t) // 3 * (i + 1), e)
    for e in t[:5]:
        e["new_key"] = {"nested": [1, 2]}
    s["host_traces"] = [[{"action": "alloc", "addr": 1, "size": 2}]]
    return s


def with_markers(s):
    s = copy.deepcopy(s)
    t = s["device_traces"][0]
    for k in (1, 3):
        at = t[len(t) * k // 4]
        t.insert(len(t) * k // 4, {"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
                                   "time_us": at["time_us"], "frames": []})
    return s


def with_annotations(s):
    s = copy.deepcopy(s)
    t = s["device_traces"][0]
    a, b, c = (t[len(t) * k // 8]["time_us"] for k in (1, 4, 7))
    s["external_annotations"] = [
        {"device": 0, "name": "## forward ##", "stage": "START", "time_us": a},
        {"device": 0, "name": "inner", "stage": "START", "time_us": a + 1},
        {"device": 0, "name": "inner", "stage": "END", "time_us": b},
        {"device": 0, "name": "## forward ##", "stage": "END", "time_us": c},
        {"device": 0, "name": "never ended", "stage": "START", "time_us": c},
        {"device": 0, "name": "never started", "stage": "END", "time_us": c},
    ]
    return s


def settings_u64(s):
    s = copy.deepcopy(s)
    s["allocator_settings"]["max_split_size"] = 2**64 - 1
    s["allocator_settings"]["negative"] = -7
    for t in s["device_traces"]:
        for e in t[:3]:
            for f in e.get("frames", [])[:1]:
                f["line"] = -1
    return s


def two_devices(a, b):
    s = copy.deepcopy(a)
    b = copy.deepcopy(b)
    for seg in b["segments"]:
        seg["device"] = 1
    s["segments"] += b["segments"]
    s["device_traces"] = [a["device_traces"][0], b["device_traces"][0]]
    return s


def segments_only(s, key_absent):
    s = copy.deepcopy(s)
    if key_absent:
        del s["device_traces"]
    else:
        s["device_traces"] = [[]]
    s.pop("external_annotations", None)
    return s


def cases(snapdir):
    train, overflow = load(snapdir, "train"), load(snapdir, "overflow")
    late, expandable = load(snapdir, "late"), load(snapdir, "expandable")
    leak = load(snapdir, "leak")
    return [
        ("no time_us (PyTorch 2.0)", no_time(train), {"time_axis": "order"}),
        ("no time_us, wrapped history", no_time(overflow), {"time_axis": "order"}),
        ("no time_us, expandable segments", no_time(expandable), {"time_axis": "order"}),
        ("no time_us, recording started late", no_time(late), {"time_axis": "order"}),
        ("PyTorch 1.13 segment list", v113(late), {}),
        ("no device_traces", segments_only(train, True), {}),
        ("empty device_traces", segments_only(leak, False), {}),
        ("settings with 2^64-1 and negatives", settings_u64(train),
         {"pytorch.allocator_settings": ["18446744073709551615", "-7"]}),
        ("unknown actions and keys", with_unknown(train),
         {"import_skipped_entries": "4",
          "import_skipped": ['"user_defined":1', '"annotate":1', '"some_future_action":1',
                             '"top-level key host_traces":1']}),
        ("snapshot markers", with_markers(train), {"ranges": {"snapshot": 2}}),
        ("external annotations", with_annotations(train),
         {"ranges": {"## forward ##": 1, "inner": 1, "never ended": 1},
          "import_skipped_entries": "1"}),
        ("two devices", two_devices(train, leak), {}),
        ("two devices, no time_us", no_time(two_devices(late, overflow)), {"time_axis": "order"}),
    ]


def expected_ranges(snap, devs, order):
    """Ranges by name: one per START annotation with a name and a time
    (none on an event-order axis), one per distinct time of the snapshot
    markers of the imported devices."""
    out = {}
    if not isinstance(snap, dict):
        return out
    if not order:
        for a in snap.get("external_annotations") or []:
            if a.get("stage") == "START" and "name" in a and "time_us" in a:
                out[a["name"]] = out.get(a["name"], 0) + 1
    times = set()
    for d in devs:
        kept = [e for e in (snap.get("device_traces") or [[]] * (d + 1))[d]
                if e.get("action") in snapshot_replay.KNOWN]
        prev = None
        for i, e in enumerate(kept):
            t = i + 1 if order else e["time_us"]
            prev = t if prev is None else max(prev, t)
            if e["action"] == "snapshot":
                times.add(prev)
    if times:
        out["snapshot"] = len(times)
    return out


def summary_rows(vramscope, db):
    res = subprocess.run([vramscope, "report", db, "--format", "csv", "summary"],
                         capture_output=True)
    if res.returncode != 0:
        raise RuntimeError("report failed: " + res.stderr.decode().strip())
    return {int(r["device"]): r for r in csv.DictReader(io.StringIO(res.stdout.decode()))
            if r["allocator"] == "pytorch"}


def check(tool, vramscope, name, snap, want, tmp):
    path = os.path.join(tmp, "case.pickle")
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    db = os.path.join(tmp, "case.db")
    if os.path.exists(db):
        os.unlink(db)
    res = subprocess.run([tool, path, "-o", db, "-q"], capture_output=True)
    if res.returncode != 0:
        return ["import failed: " + res.stderr.decode().strip()]
    problems = []
    rows = summary_rows(vramscope, db)
    devs = snapshot_replay.devices(snap)
    if sorted(rows) != devs:
        problems.append("devices %s, replay %s" % (sorted(rows), devs))
    for d in devs:
        r = snapshot_replay.replay(snap, d)
        got = rows.get(d, {})
        for k in COLUMNS:
            exp = "" if r[k] is None else str(r[k])
            if got.get(k) != exp:
                problems.append("device %d %s %r, replay %r" % (d, k, got.get(k), exp))
    con = sqlite3.connect(db)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    ranges = dict(con.execute("SELECT name, count(*) FROM nvtx_range GROUP BY name"))
    opened = con.execute("SELECT count(*) FROM nvtx_range WHERE end_ns IS NULL").fetchone()[0]
    nested = con.execute("SELECT count(*) FROM nvtx_range c JOIN nvtx_range p"
                         " ON p.id = c.parent_id WHERE c.name = 'inner'"
                         " AND p.name = '## forward ##' AND c.depth = 1").fetchone()[0]
    con.close()
    order = snapshot_replay.replay(snap, devs[0])["order"] if devs else False
    expect = expected_ranges(snap, devs, order)
    if ranges != expect:
        problems.append("ranges %r, want %r" % (ranges, expect))
    for k, v in want.items():
        if k == "ranges":
            for name, count in v.items():
                if expect.get(name) != count:
                    problems.append("case expects %d %r ranges" % (count, name))
            if "inner" in v and nested != 1:
                problems.append("'inner' not nested in '## forward ##'")
            if "never ended" in v and opened != 1:
                problems.append("%d ranges left open, want 1" % opened)
        elif isinstance(v, list):
            for piece in v:
                if piece not in str(meta.get(k)):
                    problems.append("meta %s %r lacks %s" % (k, meta.get(k), piece))
        elif str(meta.get(k)) != v:
            problems.append("meta %s %r, want %r" % (k, meta.get(k), v))
    if order != (meta.get("time_axis") == "order"):
        problems.append("time_axis %r but the replay's order is %s" % (meta.get("time_axis"), order))
    # Text output says the times are event numbers.
    if order:
        res = subprocess.run([vramscope, "report", db, "summary"], capture_output=True)
        if b"event numbers" not in res.stdout:
            problems.append("text report does not say times are event numbers")
    return problems


def main():
    tool, vramscope, snapdir = sys.argv[1], sys.argv[2], sys.argv[3]
    all_cases = cases(snapdir)
    print("1..%d" % len(all_cases))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, snap, want) in enumerate(all_cases, 1):
            try:
                problems = check(tool, vramscope, name, snap, want, tmp)
            except Exception as e:  # a broken case is a failure, not a crash
                problems = ["%s: %s" % (type(e).__name__, e)]
            failed += tap.case(n, name, problems)
    sys.exit(1 if failed else 0)


main()
