#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-diagnose-labels.py — a cause label never contradicts its own
evidence: for every committed trace (tests/data, *.db and PyTorch
snapshots *.pickle, recursively), each finding of `diagnose` is read back
from its CSV row and its label checked against the figures its own
evidence prints (as vs_format_bytes prints them, or PyTorch's format in
"As PyTorch printed it"), and against the device's capacity from
`report summary`:

  oom-device-full      CUDA reported less free than the request, or the
                       allocator's cudaMalloc found no room, or reserved +
                       request exceed the device
  oom-allocator-limit  a cap below the device: a limit below capacity
                       that reserved + request exceed; or CUDA had at
                       least the request free and reserved + request fit
                       the device (the allocator refused by itself); a
                       framework's pool: in use + request above its limit,
                       or no free block of the pool as large as the request
  oom-fragmentation    free inside reserved >= the request > the largest
                       free block
  fragmentation        free cached memory that blocked a request: at the
                       worst instant, free >= 64 MiB in blocks smaller
                       than all of it, and that instant is `report
                       fragmentation`'s worst of the allocator
  growth-per-iteration growth: a positive amount per iteration, in at
                       least one iteration
  leak-at-exit         at least two blocks, a positive amount, of a
                       process that exited on its own
  outside-allocator    a positive amount, at most the device's
  other-process        CUDA's total - free - this process's = the amount
  forward-without-backward  a positive amount in 8 blocks or more, at
                       most the peak

An evidence whose figures the test cannot find fails: a new wording is
audited here before it ships.

  test-diagnose-labels.py VRAMSCOPE DATA_DIR
"""
import csv
import glob
import io
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]
MiB = 1 << 20
UNITS = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
         "PiB": 1 << 50, "EiB": 1 << 60}
SIZE = r"(-?[0-9.]+ (?:B|bytes|KiB|MiB|GiB|TiB|PiB|EiB))"


def size(text):
    v, u = text.split()
    return float(v) * UNITS[u]


def le(a, b):
    """a <= b, for figures printed with two decimals (0.5 % apart at most)."""
    return a <= b * 1.005 + 1


def find(pattern, text):
    m = re.search(pattern, text)
    return [size(g) if re.fullmatch(SIZE, g) else g for g in m.groups()] if m else None


env = dict(os.environ)
cache = tempfile.TemporaryDirectory()
env["XDG_CACHE_HOME"] = cache.name


def report(path, name):
    p = subprocess.run([vramscope, "report", "--format", "csv", path, name],
                       capture_output=True, text=True, env=env)
    return p.returncode, list(csv.DictReader(io.StringIO(p.stdout)))


def check_oom(f, ev, capacity):
    """Whether an oom-* label agrees with its evidence; the reason."""
    label = f["finding"]
    # The cause's sentence, before PyTorch's own figures.
    own = ev.split(" As PyTorch printed it")[0]
    req = size(f["bytes"] + " B")
    if label == "oom-device-full":
        x = find(r"CUDA reported " + SIZE + r" free", own)
        if x:
            return x[0] < req, "CUDA's free below the request"
        x = find(r"asked CUDA for " + SIZE + r" \(.*?\) and CUDA had no room", own)
        if x:
            return True, "the allocator's cudaMalloc failed"
        x = find(SIZE + r" reserved on the device \+ " + SIZE + r" requested exceed its " + SIZE,
                 own)
        if x:
            return x[0] + x[1] > x[2], "reserved + request above the capacity"
        x = find(r"inside (?:XLA's BFC allocator|CuPy's memory pool).*?CUDA", own)
        if x is not None:
            return "device" in own or "CUDA" in own, "the pool's cudaMalloc failed"
        return False, "no figures found"
    if label == "oom-fragmentation":
        x = find(SIZE + r" free inside " + SIZE + r" reserved, but the largest free block is "
                 + SIZE, own)
        if x:
            return le(req, x[0]) and x[2] < req, "free >= request > largest free block"
        x = find(r"largest free block (?:is )?" + SIZE, own)
        if x:
            return x[0] < req, "largest free block below the request"
        return False, "no figures found"
    if label == "oom-allocator-limit":
        x = find(SIZE + r" reserved \+ " + SIZE + r" requested exceed the allocator's limit of "
                 + SIZE + r" .*? on a " + SIZE + r" device", own)
        if x:
            return (x[0] + x[1] > x[2] and x[2] < x[3],
                    "reserved + request above a limit below the capacity")
        x = find(r"CUDA had " + SIZE + r" free of " + SIZE + r", enough for the " + SIZE
                 + r" requested, but the allocator refused at " + SIZE + r" reserved", own)
        if x:
            return (le(x[2], x[0]) and x[3] + x[2] <= x[1] and le(x[0], x[1]),
                    "CUDA had room and reserved + request fit the device: a cap below it")
        x = find(r"CUDA had " + SIZE + r" free, enough for the " + SIZE
                 + r" requested, but the allocator refused at " + SIZE + r" reserved", own)
        if x:
            # A device of unknown capacity holds at least what was free
            # and what the allocator reserved.
            cap = capacity if capacity is not None else x[0] + x[2]
            return (le(x[1], x[0]) and x[2] + x[1] <= cap,
                    "CUDA had room and reserved + request fit the device: a cap below it")
        x = find(r"the allocator refused " + SIZE + r" by itself at " + SIZE
                 + r" reserved, far below the device's " + SIZE, own)
        if x:
            return x[1] + x[0] <= x[2], "reserved + request fit the device: a cap below it"
        x = find(SIZE + r" in use of its " + SIZE + r" limit", own)
        if x:
            return x[0] + req > x[1] and (capacity is None or x[1] < capacity), \
                "the pool's use + request above its limit, below the device"
        x = find(SIZE + r" of its " + SIZE + r" pool was in use \(the pool is a fraction of the "
                 + SIZE + r" GPU.*?largest free block " + SIZE, own)
        if x:
            return x[1] < x[2] and x[3] < req, \
                "the pool below the device, no free block of it large enough"
        return False, "no figures found"
    return False, "unknown label"


def check(f, ev, capacity, worst, exit_ok):
    label = f["finding"]
    amount = int(f["bytes"]) if f["bytes"] else 0
    if label.startswith("oom-"):
        return check_oom(f, ev, capacity)
    if label == "fragmentation":
        x = find(r"at (\S+ \S+) \(the worst\), " + SIZE + r" was free inside " + SIZE
                 + r" reserved in blocks of at most " + SIZE, ev)
        if not x:
            return False, "no worst instant in the evidence"
        _, free, reserved, largest = x
        agree = worst is not None and size(fmt(int(worst["free_bytes"]))) == free \
            and size(fmt(int(worst["largest_free_bytes"]))) == largest
        return (free >= 64 * MiB and largest < free and le(free, reserved) and agree,
                "free cached memory that blocked a request, at report fragmentation's worst")
    if label == "growth-per-iteration":
        x = find(r"(?:grew in|rose in) (\d+) (?:of|steps over) (\d+) .*?(?:by |: )" + SIZE
                 + r" per", ev)
        if not x:
            return False, "no figures found"
        return int(x[0]) >= 1 and x[2] > 0 and amount > 0, "a positive growth"
    if label == "leak-at-exit":
        x = find(r"(\d+) allocations \(" + SIZE + r"\) from one stack were still allocated", ev)
        if not x:
            return False, "no figures found"
        return int(x[0]) >= 2 and x[1] > 0 and exit_ok, \
            "blocks still allocated when the program exited on its own"
    if label == "outside-allocator":
        x = find(SIZE + r" of its " + SIZE + r" was held outside every allocator", ev)
        if not x:
            return False, "no figures found"
        return 0 < x[0] <= x[1], "a positive amount, at most the device's"
    if label == "other-process":
        x = find(r"CUDA reported " + SIZE + r" free of " + SIZE + r"; this process held " + SIZE
                 + r", so " + SIZE + r" was used by other processes", ev)
        if not x:
            return False, "no figures found"
        fr, total, mine, others = x
        return others > 0 and abs(total - fr - mine - others) <= total * 0.0001 + 3 * 0.005 * \
            max(fr, mine, others, 1), "total - free - own = the others'"
    if label == "forward-without-backward":
        x = find(r"at the peak \(" + SIZE + r"\), " + SIZE + r" in (\d+) blocks are activations",
                 ev)
        if not x:
            return False, "no figures found"
        return 0 < x[1] <= x[0] and int(x[2]) >= 8, "activations of no backward pass"
    return False, "a label the test does not know"


def fmt(n):
    if -1024 < n < 1024:
        return "%d B" % n
    v, u = float(n), 0
    names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    while abs(v) >= 1024.0 and u < len(names) - 1:
        v /= 1024.0
        u += 1
    return "%.2f %s" % (v, names[u])


def exits_on_its_own(path):
    """Whether every process of a .db trace exited on its own (status 0..127)."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        rows = db.execute("SELECT exit_status FROM process").fetchall()
    except sqlite3.Error:
        return False
    return len(rows) > 0 and all(r[0] is not None and 0 <= r[0] <= 127 for r in rows)


traces = sorted(glob.glob(os.path.join(data, "**", "*.db"), recursive=True)
                + glob.glob(os.path.join(data, "**", "*.pickle"), recursive=True))
checked = labels = 0
kinds = set()
for path in traces:
    name = os.path.relpath(path, data)
    rc, findings = report(path, "diagnose")
    if rc != 0:
        continue
    checked += 1
    if not findings:
        continue
    _, summary = report(path, "summary")
    _, frag = report(path, "fragmentation")
    for f in findings:
        dev_rows = [r for r in summary if r["device"] == f["device"] and r["allocator"] == "all"]
        capacity = int(dev_rows[0]["capacity_bytes"]) \
            if dev_rows and dev_rows[0]["capacity_bytes"] else None
        worst = [r for r in frag if r["device"] == f["device"] and r["allocator"] == f["allocator"]
                 and r["instant"] == "worst"]
        good, why = check(f, " ".join(f["evidence"].split()), capacity,
                          worst[0] if worst else None,
                          path.endswith(".db") and exits_on_its_own(path))
        labels += 1
        kinds.add(f["finding"])
        ok(good, "%s: %s agrees with its evidence (%s)" % (name, f["finding"], why),
           f["evidence"])
ok(checked >= 60, "every committed trace diagnosed (%d)" % checked)
ok(len(kinds) >= 8, "findings of %d kinds checked (%d findings): %s"
   % (len(kinds), labels, ", ".join(sorted(kinds))))
done()
