#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""same-trace.py — whether two traces hold the same rows, ids aside.

Usage: same-trace.py A B [--ignore-meta KEY,KEY...]   ($VRAMSCOPE: the
vramscope command, for traces that need it to be read)

Every table both traces have is compared as a multiset of rows, each row
without its own id and with every id it holds replaced by what the row it
names holds: a process by its pid and host, a GPU by its uuid, an
allocator by its kind, name, handle, process and GPU, a stack by its
frames, an NVTX range by its process, thread, name and start, an event by
its table, time, op and address (a block's, in mem_event for a
device-level block, else in alloc_event), a block by its address and
allocation time, a kernel configuration by its columns.  Meta is compared key by key,
but for the keys given.  Prints "same", or the first table that differs
and a row one trace has and the other lacks, and exits 1.
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect


class Keys:
    """The natural keys of one trace's rows."""

    def __init__(self, db):
        self.db = db
        self.tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self.memo = {}

    def cols(self, table):
        return [c[1] for c in self.db.execute("PRAGMA table_info(%s)" % table)]

    def row(self, table, rid):
        if rid is None or rid == 0 or table not in self.tables:
            return None
        k = (table, rid)
        if k not in self.memo:
            self.memo[k] = None  # a cycle never comes back here twice
            r = self.db.execute("SELECT * FROM %s WHERE id = ?" % table, (rid,)).fetchone()
            self.memo[k] = self.natural(table, dict(zip(self.cols(table), r))) if r else ("?", rid)
        return self.memo[k]

    def stack(self, sid):
        out = []
        while sid:
            r = self.db.execute("SELECT parent_id, frame_id FROM stack WHERE id = ?", (sid,)).fetchone()
            if r is None:
                return ("missing stack", sid)
            out.append(self.row("frame", r[1]))
            sid = r[0]
        return tuple(out)

    def natural(self, table, r):
        """The row r of table without ids: what it holds."""
        if table == "process":
            return ("process", r["pid"], r["host"])
        if table == "device":
            return ("device", r["uuid"] if r["uuid"] is not None else r["idx"])
        if table == "allocator":
            return ("allocator", r["kind"], r["name"], r["handle"], self.row("process", r["process_id"]),
                    self.row("device", r["device_id"]))
        if table == "nvtx_range":
            return ("range", self.row("process", r["process_id"]), r["tid"], r["name"], r["start_ns"])
        if table == "block":
            return ("block", self.row("allocator", r["allocator_id"]), r["address"], r["alloc_ts"])
        if table in ("alloc_event", "mem_event", "pool_event"):
            return (table, r.get("ts"), r.get("op"), r.get("address"), r.get("requested_bytes", r.get("bytes")))
        return self.values(table, r)

    def value(self, col, v, table):
        if col in ("process_id",):
            return self.row("process", v)
        if col in ("device_id",):
            return self.row("device", v)
        if col in ("allocator_id", "series_allocator_id", "pool_id"):
            return self.row("allocator", v)
        if col.endswith("stack_id"):
            return self.stack(v) if v else None
        if col == "range_id" or (col == "parent_id" and table == "nvtx_range"):
            return self.row("nvtx_range", v)
        if col == "module_id":
            return self.row("module", v)
        if col == "config_id":
            return self.row("kernel_config", v)
        if col in ("alloc_event_id", "free_event_id"):
            return self.row("alloc_event", v)
        if col == "owner_id":
            return self.row("block", v)
        if col == "frame_id":
            return self.row("frame", v)
        return v

    def values(self, table, r):
        out = []
        for c, v in r.items():
            if c == "id":
                continue
            if table == "block" and c in ("alloc_event_id", "free_event_id"):
                # A device-level block's events are mem_events.
                out.append((c, self.row("mem_event" if r["level"] == 1 else "alloc_event", v)))
            else:
                out.append((c, self.value(c, v, table)))
        return tuple(out)

    def rows(self, table):
        cols = self.cols(table)
        if table == "stack":
            return Counter(self.stack(r[0]) for r in self.db.execute("SELECT id FROM stack"))
        out = Counter()
        for r in self.db.execute("SELECT * FROM %s" % table):
            out[repr(self.values(table, dict(zip(cols, r))))] += 1
        return out


def main():
    a, b = Keys(connect(sys.argv[1])), Keys(connect(sys.argv[2]))
    ignore = set()
    if "--ignore-meta" in sys.argv:
        ignore = set(sys.argv[sys.argv.index("--ignore-meta") + 1].split(","))
    for t in sorted(a.tables & b.tables):
        if t == "meta" or t.startswith("sqlite_"):
            continue
        ra, rb = a.rows(t), b.rows(t)
        if ra != rb:
            only_a, only_b = ra - rb, rb - ra
            print("%s differs: %d rows against %d; only in A: %s; only in B: %s" % (
                t, sum(ra.values()), sum(rb.values()), next(iter(only_a), None), next(iter(only_b), None)))
            return 1
    ma = {k: v for k, v in a.db.execute("SELECT key, value FROM meta") if k not in ignore}
    mb = {k: v for k, v in b.db.execute("SELECT key, value FROM meta") if k not in ignore}
    if ma != mb:
        keys = sorted(k for k in set(ma) | set(mb) if ma.get(k) != mb.get(k))
        print("meta differs: %s" % ", ".join("%s: %r / %r" % (k, ma.get(k), mb.get(k)) for k in keys))
        return 1
    if a.tables != b.tables:
        print("tables differ: %s" % sorted(a.tables ^ b.tables))
        return 1
    print("same")
    return 0


sys.exit(main())
