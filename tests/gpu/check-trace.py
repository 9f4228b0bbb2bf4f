#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-trace.py — compare a recorded trace with a sample's ground truth.

Usage: check-trace.py TRACE GROUND_TRUTH_JSON

The ground truth is what the sample itself counted (see samples/*.cu and
samples/torch-train.py).  Checks are exact where the truth is exact.  Prints
one line per check and exits 1 if any failed.  Uses only Python's standard
library (sqlite3), so it runs on a bare GPU server.
"""
import json
import sqlite3
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vs_trace_db  # noqa: E402

KINDS = {"device": 1, "pinned": 2, "managed": 3, "static": 4, "async": 5, "vmm": 6}
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok     " if ok else "FAILED ") + what + (": " + detail if detail else ""))
    if not ok:
        failures += 1


def main():
    db = vs_trace_db.connect(sys.argv[1])
    truth = json.loads(sys.argv[2])
    q = lambda sql, *a: db.execute(sql, a).fetchall()

    meta = dict(q("SELECT key, value FROM meta"))
    check("trace is finalized", str(meta.get("finalized")) == "1")
    check("no CUPTI records dropped", int(meta.get("collector_dropped_records", 0)) == 0,
          "dropped %s" % meta.get("collector_dropped_records"))
    check("no queued items dropped", int(meta.get("collector_dropped_items", 0)) == 0)

    for name, kind in KINDS.items():
        if name not in truth:
            continue
        t = truth[name]
        count, nbytes = q("SELECT count(*), coalesce(sum(bytes), 0) FROM mem_event"
                          " WHERE kind = ? AND op = 1", kind)[0]
        frees = q("SELECT count(*) FROM mem_event WHERE kind = ? AND op = 2", kind)[0][0]
        check("%s allocations" % name, count == t["count"], "%d, expected %d" % (count, t["count"]))
        check("%s bytes" % name, nbytes == t["bytes"], "%d, expected %d" % (nbytes, t["bytes"]))
        want_frees = t.get("free_count", t["count"])
        check("%s frees" % name, frees == want_frees, "%d, expected %d" % (frees, want_frees))

    if "pools" in truth:
        pools = q("SELECT id, name FROM allocator WHERE kind = 'pool' ORDER BY id")
        check("pool count", len(pools) == len(truth["pools"]),
              "%d, expected %d" % (len(pools), len(truth["pools"])))
        for (pid, pname), t in zip(pools, truth["pools"]):
            res = q("SELECT max(m) FROM (SELECT max(pool_size) m FROM mem_event WHERE pool_id = ?"
                    " UNION ALL SELECT max(size) FROM pool_event WHERE pool_id = ?)", pid, pid)[0][0]
            used = q("SELECT max(m) FROM (SELECT max(pool_utilized) m FROM mem_event"
                     " WHERE pool_id = ? UNION ALL SELECT max(utilized) FROM pool_event"
                     " WHERE pool_id = ?)", pid, pid)[0][0]
            check("%s reserved high" % pname, res == t["reserved_high"],
                  "%s, expected %d" % (res, t["reserved_high"]))
            check("%s used high" % pname, used == t["used_high"],
                  "%s, expected %d" % (used, t["used_high"]))
            if "reserved_final" in t:
                last = q("SELECT pool_size, pool_utilized FROM mem_event WHERE pool_id = ?"
                         " ORDER BY ts DESC, id DESC LIMIT 1", pid)[0]
                check("%s final reserved" % pname, last[0] == t["reserved_final"],
                      "%s, expected %d" % (last[0], t["reserved_final"]))
                check("%s final used" % pname, last[1] == t["used_final"],
                      "%s, expected %d" % (last[1], t["used_final"]))

    if "failed" in truth:
        rows = q("SELECT api, requested_bytes, error, device_free_bytes, device_total_bytes"
                 " FROM failed_alloc ORDER BY ts")
        check("failed allocations", len(rows) == len(truth["failed"]),
              "%d, expected %d: %r" % (len(rows), len(truth["failed"]), rows))
        for r, t in zip(rows, truth["failed"]):
            check("failed %s" % t["api"], (r[0], r[1], r[2]) == (t["api"], t["bytes"], t["error"]),
                  "%r" % (r,))
            check("free/total at %s" % t["api"], r[3] is not None and r[4] is not None
                  and 0 < r[3] <= r[4], "%r" % (r,))

    if "leaked_bytes" in truth:
        live = q("SELECT coalesce(sum(CASE op WHEN 1 THEN bytes ELSE -bytes END), 0)"
                 " FROM mem_event WHERE kind IN (1, 2, 3, 5, 6)")[0][0]
        check("bytes live at exit", live == truth["leaked_bytes"],
              "%d, expected %d" % (live, truth["leaked_bytes"]))

    if "ranges" in truth:
        n = q("SELECT count(*) FROM nvtx_range")[0][0]
        check("NVTX ranges", n == truth["ranges"], "%d, expected %d" % (n, truth["ranges"]))
        unstamped = q("SELECT count(*) FROM mem_event WHERE op = 1 AND kind = 1"
                      " AND range_id IS NULL")[0][0]
        check("allocations stamped with their range", unstamped == 0, "%d without" % unstamped)
        bad = q("SELECT count(*) FROM mem_event m JOIN nvtx_range r ON r.id = m.range_id"
                " WHERE m.tid IS NOT r.tid OR m.ts < r.start_ns OR m.ts > r.end_ns")[0][0]
        check("range stamps match thread and time", bad == 0, "%d mismatched" % bad)

    if "threads" in truth:
        n = q("SELECT count(DISTINCT tid) FROM mem_event WHERE op = 1 AND kind = 1")[0][0]
        check("allocating threads", n == truth["threads"], "%d, expected %d" % (n, truth["threads"]))

    if "processes" in truth:
        n = q("SELECT count(*) FROM process")[0][0]
        check("processes", n == truth["processes"], "%d, expected %d" % (n, truth["processes"]))
        counts = sorted(c for (c,) in q("SELECT count(m.id) FROM process p LEFT JOIN mem_event m"
                                        " ON m.process_id = p.id AND m.op = 1 AND m.kind = 1"
                                        " GROUP BY p.id"))
        check("allocations per process", counts == sorted(truth["per_process_counts"]),
              "%r" % counts)

    if "devices" in truth:
        n = q("SELECT count(*) FROM device")[0][0]
        check("devices", n == truth["devices"], "%d, expected %d" % (n, truth["devices"]))

    if "torch" in truth:
        t = truth["torch"]
        # Replay device-kind events in time order: the peak of what the
        # process held from cudaMalloc, against torch's reserved peak.
        ev = q("SELECT ts, op, bytes FROM mem_event WHERE kind IN (1, 6) ORDER BY ts, id")
        live = peak = 0
        for ts, op, b in ev:
            live += b if op == 1 else -b
            peak = max(peak, live)
        slack = peak - t["reserved_peak"]
        check("device peak covers torch's reserved peak", 0 <= slack <= (512 << 20),
              "trace %d, torch %d (held outside torch: %d)" % (peak, t["reserved_peak"], slack))
        segs = q("SELECT count(*) FROM mem_event WHERE kind IN (1, 6) AND op = 1")[0][0]
        check("segments recorded", segs >= t["segments"],
              "%d device allocations, torch made %d segments" % (segs, t["segments"]))
        k = q("SELECT count(*) FROM kernel")[0][0]
        check("kernels recorded", k > 0, "%d kernels" % k)
        if "ranges" in t:
            n = q("SELECT count(*) FROM nvtx_range")[0][0]
            check("NVTX ranges", n >= t["ranges"], "%d, at least %d" % (n, t["ranges"]))

    s = q("SELECT d.idx, s.peak_reserved_bytes, s.peak_allocated_bytes, s.failed_alloc_count"
          " FROM summary s JOIN device d ON d.id = s.device_id WHERE s.allocator_id = 0")
    print("summary (device, peak reserved, peak allocated, failed): %r" % s)
    sys.exit(1 if failures else 0)


main()
