# SPDX-License-Identifier: MIT
# snapshot_replay.py — what a PyTorch memory snapshot says, computed in
# plain Python from the snapshot dict, to check the importer against.
#
# Written from PyTorch's documented snapshot format, independently of the
# importer's code: per device, the blocks live at the end (segments, blocks
# active_allocated or active_pending_free, at their requested size) and the
# reserved address ranges, the history replayed backwards to find what was
# live before its first entry, then forwards to find peaks, finals and
# counts, the way PyTorch's statistics move:
#   requested bytes   + alloc, - free_completed
#   reserved bytes    + segment_alloc / segment_map,
#                     - segment_free / segment_unmap
#   alloc_count       alloc entries;  free_count  free_completed entries
#   failed            oom entries
# Entries of other actions are not memory events; 'snapshot' markers are
# kept in the event order, others skipped.  A history without time_us is
# placed on the event order: entry i (0-based, among the kept entries) at
# time i + 1, the state before the history at 0.
KNOWN = {"alloc", "free_requested", "free_completed", "segment_alloc",
         "segment_free", "segment_map", "segment_unmap", "oom", "snapshot"}


class Ranges:
    """Disjoint [start, end) ranges."""

    def __init__(self):
        self.r = []

    def sub(self, a, n):
        b, out, gone = a + n, [], 0
        for s, e in self.r:
            if e <= a or s >= b:
                out.append((s, e))
                continue
            gone += min(e, b) - max(s, a)
            if s < a:
                out.append((s, a))
            if e > b:
                out.append((b, e))
        self.r = sorted(out)
        return gone

    def add(self, a, n):
        self.sub(a, n)
        self.r = sorted(self.r + [(a, a + n)])

    def total(self):
        return sum(e - s for s, e in self.r)


def block_requested(b):
    """A block's requested size: `requested_size`, or in PyTorch 1.13's
    format the `real_size` of its last `history` record, else `size`."""
    if "requested_size" in b:
        return b["requested_size"]
    hist = b.get("history") or []
    if hist and "real_size" in hist[-1]:
        return hist[-1]["real_size"]
    return b["size"]


def segments_of(snap):
    return snap if isinstance(snap, list) else snap.get("segments", [])


def devices(snap):
    devs = set()
    for s in segments_of(snap):
        devs.add(s.get("device", 0))
    if isinstance(snap, dict):
        for d, t in enumerate(snap.get("device_traces") or []):
            if any(e.get("action") in KNOWN - {"snapshot"} for e in t):
                devs.add(d)
    return sorted(devs)


def replay(snap, dev):
    """The summary of device dev: a dict of the importer's summary columns,
    plus 'order' (whether the time axis is event order, for the whole
    snapshot) and 'times' of the peaks (ns, or event numbers)."""
    traces = snap.get("device_traces") or [] if isinstance(snap, dict) else []
    all_entries = [e for t in traces for e in t if e.get("action") in KNOWN]
    order = any("time_us" not in e for e in all_entries)
    hist = [e for e in (traces[dev] if dev < len(traces) else [])
            if e.get("action") in KNOWN]
    live, reserved = {}, Ranges()
    for s in segments_of(snap):
        if s.get("device", 0) != dev:
            continue
        reserved.add(s["address"], s["total_size"])
        for b in s.get("blocks", []):
            if b["state"] in ("active_allocated", "active_pending_free"):
                live[b["address"]] = block_requested(b)
    for e in reversed(hist):
        a = e["action"]
        if a == "alloc":
            live.pop(e["addr"], None)
        elif a == "free_completed":
            live[e["addr"]] = e["size"]
        elif a in ("segment_alloc", "segment_map"):
            reserved.sub(e["addr"], e["size"])
        elif a in ("segment_free", "segment_unmap"):
            reserved.add(e["addr"], e["size"])
    before_bytes, before_count = sum(live.values()), len(live)
    alloc = before_bytes
    res = reserved.total()
    # The trace's start: the earliest first entry of any device's list.
    firsts = [t[0]["time_us"] * 1000 for t in traces
              if t and isinstance(t[0], dict) and "time_us" in t[0]]
    t0 = 0 if order or not firsts else min(firsts)
    ts = 0 if order else (max(hist[0]["time_us"] * 1000, t0) if hist else t0)
    out = {"peak_allocated_bytes": alloc, "peak_reserved_bytes": res,
           "peak_allocated_time_ns": ts - t0 if alloc else None,
           "peak_reserved_time_ns": ts - t0 if res else None,
           "alloc_count": 0, "free_count": 0, "failed_alloc_count": 0,
           "before_trace_bytes": before_bytes, "before_trace_count": before_count,
           "order": order}
    prev = ts
    for i, e in enumerate(hist):
        a = e["action"]
        t = max(i + 1 if order else e["time_us"] * 1000, prev)
        prev = t
        if a == "alloc":
            alloc += e["size"]
            out["alloc_count"] += 1
        elif a == "free_completed":
            alloc -= e["size"]
            out["free_count"] += 1
        elif a in ("segment_alloc", "segment_map"):
            res += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            res -= e["size"]
        elif a == "oom":
            out["failed_alloc_count"] += 1
        if alloc > out["peak_allocated_bytes"]:
            out["peak_allocated_bytes"], out["peak_allocated_time_ns"] = alloc, t - t0
        if res > out["peak_reserved_bytes"]:
            out["peak_reserved_bytes"], out["peak_reserved_time_ns"] = res, t - t0
    out["final_allocated_bytes"] = alloc
    out["final_reserved_bytes"] = res
    return out
