#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-xla-events.py HOOK_DIR VRAMSCOPE ENDINGS_DIR — XLA's allocator level
(collector/python/vs_xla_events.py, the file vsfw-PID.xla-events) without a
GPU.

The profiler's data comes from a stand-in with the attributes of JAX's
ProfileData (planes, lines, events with name, start_ns, duration_ns and
stats), holding what XLA's BFC allocator emits: MemoryAllocation and
MemoryDeallocation events with the block's address, its size as the pool
counts it and the pool's bytes in use after it (bytes_allocated, the
truth), on the program's thread inside the plugin's span of an
executable's run, and on a compiler thread; a free of a block allocated
before the profiler started.  The sampled arrays are stand-ins with a
traceback's frames.

  * the file's blocks replayed give the pool's peak and final bytes in
    use exactly, and the running sum never left bytes_allocated;
  * a block inside an executable's run has the executable as its
    innermost frame, then the traceback of the array that held it, as do
    the other blocks of that run; one outside every run has no traceback;
  * the pool's CUDA allocation is a segment, before its first block;
  * made into a trace (added to the spool a killed `record` left on an
    H100, tests/data/endings/torch-kill-record, and recovered): one `xla`
    row whose peak and final allocated are the pool's figures, reserved
    the pool's segment; `peak --allocator xla` sums to the peak and names
    the program's line.
TAP output.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_fake_frameworks import recorded_spool  # noqa: E402

hook_dir = os.path.abspath(sys.argv[1])
vramscope, endings = sys.argv[2], sys.argv[3]
sys.path.insert(0, hook_dir)
import vs_xla_events  # noqa: E402

BASE = 1 << 32
POOL = 64 << 20


def event(name, t, dur=0, **stats):
    return types.SimpleNamespace(name=name, start_ns=t, duration_ns=dur, stats=list(stats.items()))


class Bfc:
    """The allocator's figures as it emits them."""

    def __init__(self):
        self.in_use = 0
        self.peak = 0
        self.allocs = 0

    def alloc(self, t, addr, n):
        self.in_use += n
        self.peak = max(self.peak, self.in_use)
        self.allocs += 1
        return event("MemoryAllocation", t, allocator_name="GPU_0_bfc", addr=addr,
                     allocation_bytes=n, requested_bytes=n - 4, bytes_allocated=self.in_use,
                     peak_bytes_in_use=self.peak)

    def free(self, t, addr, n):
        self.in_use -= n
        return event("MemoryDeallocation", t, allocator_name="GPU_0_bfc", addr=addr,
                     allocation_bytes=n, bytes_allocated=self.in_use)


bfc = Bfc()
main = [event("CommonPjRtLoadedExecutable::Execute (jit_step)", 100, 100),
        bfc.alloc(110, BASE, 1 << 20),             # an output the program keeps
        bfc.alloc(120, BASE + (1 << 20), 4 << 20),  # a temporary of the same run
        bfc.free(150, BASE + (1 << 20), 4 << 20),
        event("PjRtCApiLoadedExecutable::Execute", 300, 50),
        event("CommonPjRtLoadedExecutable::Execute (jit_step)", 310, 30),
        bfc.alloc(320, BASE + (2 << 20), 1 << 20),
        bfc.free(400, BASE, 1 << 20)]
# A free of a block allocated before the profiler started: not the pool's
# figure the file replays, so not written.
main.insert(1, event("MemoryDeallocation", 105, allocator_name="GPU_0_bfc", addr=BASE + (9 << 20),
                     allocation_bytes=256, bytes_allocated=0))
compiler = [event("Build buffer allocations", 200, 60),
            bfc.alloc(210, BASE + (3 << 20), 8 << 20),
            bfc.free(250, BASE + (3 << 20), 8 << 20)]
# The events as one list per thread, the allocator's in time order.
main_line = types.SimpleNamespace(events=main)
compile_line = types.SimpleNamespace(events=compiler)
# The figures in time order (the compiler thread's come between).
peak, final = 0, 0
in_use = 0
for e in sorted([e for e in main + compiler if e.name.startswith("Memory")], key=lambda e: e.start_ns):
    st = dict(e.stats)
    if st["addr"] == BASE + (9 << 20):
        continue
    in_use += st["allocation_bytes"] if e.name == "MemoryAllocation" else -st["allocation_bytes"]
    peak = max(peak, in_use)
final = in_use
pd = types.SimpleNamespace(planes=[types.SimpleNamespace(name="/host:CPU",
                                                         lines=[main_line, compile_line])])

frame = types.SimpleNamespace(file_name="/home/u/prog.py", function_name="<module>", line_num=42)
tb = types.SimpleNamespace(frames=[frame])

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "vsfw-1.xla-events")
    ev = vs_xla_events.XlaEvents(path)
    ev.samples = [(130, BASE, tb)]  # the output, live when sampled
    vs_xla_events._address_range = lambda dev, ptr: (BASE, POOL)
    ev._write(vs_xla_events._read(pd), lambda f: f)
    lines = open(path).read().splitlines()
    ok(lines[0] == "allocator xla", "the file names its allocator", lines[:1])
    live, now, top = {}, 0, 0
    for l in lines:
        w = l.split()
        if w[0] == "a":
            live[w[3]] = int(w[4])
            now += int(w[4])
            top = max(top, now)
        elif w[0] == "f":
            now -= live.pop(w[3])
    ok((top, now) == (peak, final), "the blocks replayed: peak and final bytes in use exactly",
       "%s, the pool's %s" % ((top, now), (peak, final)))
    ok(ev.mismatch == 0, "the running sum never left bytes_allocated", ev.mismatch)
    seg = [l for l in lines if l.startswith("S ")]
    first_a = next(i for i, l in enumerate(lines) if l.startswith("a "))
    ok(seg == ["S 110 0 %d %d" % (BASE, POOL)] and lines.index(seg[0]) < first_a,
       "the pool's CUDA allocation is one segment, before its first block", seg)
    stacks, cur = {}, None
    for l in lines:
        if l.startswith("stack "):
            cur = stacks.setdefault(l.split()[1], [])
        elif l.startswith(("label ", "frame ")) and cur is not None:
            cur.append(l)
        elif cur is not None:
            cur = None
    of = {int(l.split()[3]): stacks.get(l.split()[6]) for l in lines if l.startswith("a ")}
    want = ["label jit_step", "frame 42 /home/u/prog.py\t<module>"]
    ok(of.get(BASE) == want and of.get(BASE + (1 << 20)) == want,
       "the run's output and temporary: the executable, then the program's line", of)
    ok(of.get(BASE + (2 << 20)) == ["label jit_step"],
       "a later run whose arrays were never sampled: the executable only", of)
    ok(of.get(BASE + (3 << 20)) == ["label Build buffer allocations"],
       "the compiler's block: its span", of)

    # Into a trace, beside the spool's own process and GPU.
    spool = os.path.join(tmp, "spool")
    (idx, uuid, total, name), pid, ts = recorded_spool(endings, spool)

    def moved(line):  # the hook's times after the spool's own, its device the spool's
        w = line.split(" ")
        if w[0] in ("a", "f", "S"):
            w[1] = str(int(w[1]) + ts + 1000)
            w[2] = str(idx)
        return " ".join(w)

    with open(os.path.join(spool, "vsfw-%d.info" % pid), "w") as f:
        f.write("pid %d\ndevice %d %s %d %s\nmeta xla.allocator_level events\n"
                % (pid, idx, uuid, total, name))
    with open(os.path.join(spool, "vsfw-%d.xla-events" % pid), "w") as f:
        f.write("\n".join(moved(l) for l in lines) + "\n")
    out = os.path.join(tmp, "out.db")
    p = subprocess.run([vramscope, "recover", spool, "-o", out], capture_output=True, text=True)
    ok(p.returncode == 0, "recover writes the trace", p.stderr)

    def table(*args):
        r = subprocess.run([vramscope, "report", out, "--format", "csv"] + list(args),
                           capture_output=True, text=True)
        return list(csv.DictReader(io.StringIO(r.stdout)))

    rows = [r for r in table("summary") if r["allocator"] == "xla"]
    want = {"peak_allocated_bytes": peak, "final_allocated_bytes": final,
            "peak_reserved_bytes": POOL, "alloc_count": bfc.allocs}
    got = {k: int(rows[0][k]) for k in want} if len(rows) == 1 else rows
    ok(got == want, "summary: one xla row, the pool's own figures", "%s, want %s" % (got, want))
    at_peak = table("--allocator", "xla", "peak")
    ok(sum(int(r["bytes"]) for r in at_peak) == peak
       and any("prog.py:42" in r["site"] for r in at_peak),
       "peak: the blocks live at the peak sum to it, the program's line among them", at_peak)
done()
