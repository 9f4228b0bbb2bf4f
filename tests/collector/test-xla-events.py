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
    the program's line;
  * saved in chunks with the events between them lost: a lost free
    found from the address handed out again, a lost block from its free,
    a lost free never found again from the pool's count (a block of its
    size standing in until its own free); the running sum is the pool's
    at every event; a free of a block from before the profiler is left
    out;
  * a block the compiler takes while compiling gets the Python stack of
    the call that compiled;
  * the sampler remembers the live arrays only, samples an array once,
    keeps one of equal tracebacks, and moves samples to a file.
TAP output.
"""
import csv
import io
import itertools
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

def replay(path):
    """The file's lines, and (time, bytes in use) after each block and free."""
    lines = open(path).read().splitlines()
    live, now, seen = {}, 0, []
    for l in lines:
        w = l.split()
        if w[0] == "a":
            live[w[3]] = int(w[4])
            now += int(w[4])
            seen.append((int(w[1]), now))
        elif w[0] == "f":
            now -= live.pop(w[3])
            seen.append((int(w[1]), now))
    return lines, seen


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "vsfw-1.xla-events")
    ev = vs_xla_events.XlaEvents(path)
    ev.samples = [(130, BASE, tb)]  # the output, live when sampled
    vs_xla_events._address_range = lambda dev, ptr: (BASE, POOL)
    ev._write([(vs_xla_events._read(pd), None)], lambda f: f)
    lines = open(path).read().splitlines()
    ok(lines[0] == "allocator xla", "the file names its allocator", lines[:1])
    _, seen1 = replay(path)
    top, now = max(n for t, n in seen1), seen1[-1][1]
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
       "the compiler's block outside every compilation seen: its span", of)

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

    # Saved in chunks, with the events of the gaps between them lost.
    g = Bfc()
    line1 = [event("CommonPjRtLoadedExecutable::Execute (jit_step)", 100, 100),
             g.alloc(110, BASE, 1 << 20),
             g.alloc(120, BASE + (1 << 20), 4 << 20),
             g.free(150, BASE + (1 << 20), 4 << 20)]
    lost1 = [g.free(202, BASE, 1 << 20),                 # its address is handed out again
             g.alloc(204, BASE + (8 << 20), 2 << 20)]     # freed after the gap
    line2 = [g.alloc(220, BASE, 1 << 20),
             g.alloc(225, BASE + (16 << 20), 512 << 10),
             g.free(230, BASE + (8 << 20), 2 << 20),
             g.free(240, BASE, 1 << 20)]
    truth = [(e.start_ns, dict(e.stats)["bytes_allocated"]) for e in line1 + lost1 + line2
             if e.name.startswith("Memory")]
    lost2 = [g.free(302, BASE + (16 << 20), 512 << 10)]  # never handed out again
    line3 = [g.alloc(320, BASE + (32 << 20), 1 << 20)]

    def xs(events):
        return vs_xla_events._read(types.SimpleNamespace(planes=[types.SimpleNamespace(
            name="/host:CPU", lines=[types.SimpleNamespace(events=events)])]))

    path2 = os.path.join(tmp, "vsfw-2.xla-events")
    ev2 = vs_xla_events.XlaEvents(path2, flush_every=0)
    ev2._write([(xs(line1), (200, 210)), (xs(line2), None)], lambda f: f)
    lines2, seen = replay(path2)
    got = [n for t, n in seen]
    want = [n for t, n in sorted(truth)]
    ok(got == want and ev2.mismatch == 0 and ev2.repaired == 2,
       "the gap's lost free and lost block put back: bytes in use equal the pool's at every event",
       "%s, the pool's %s; mismatch %d, put back %d" % (got, want, ev2.mismatch, ev2.repaired))
    back = [(t, n) for t, n in seen if 200 <= t <= 210]
    ok(len(back) == 2 and [l.split()[0] for l in lines2 if l.split()[1:2] == ["200"]] == ["f", "a"],
       "both at the gap's start, the free first", lines2)
    ok(ev2.count == len([e for e in line1 + line2 if e.name.startswith("Memory")]),
       "the events read are counted, those put back are not", ev2.count)

    path3 = os.path.join(tmp, "vsfw-3.xla-events")
    ev3 = vs_xla_events.XlaEvents(path3, flush_every=0)
    ev3._write([(xs(line1), (200, 210)), (xs(line2), (300, 310)), (xs(line3), None)], lambda f: f)
    lines3, seen3 = replay(path3)
    ok(ev3.mismatch == 0 and "f 300 0 %d %d" % (BASE + (16 << 20), 512 << 10) in lines3,
       "a block freed in a gap whose address never comes back: found from the pool's count, "
       "freed at the gap", (ev3.mismatch, lines3))

    # Two blocks of one size, the older freed in a gap and never handed
    # out again: the newer is taken for it (a ghost) until its own free
    # comes; the bytes in use are the pool's at every event.
    h = Bfc()
    a1 = [h.alloc(110, BASE, 256), h.alloc(120, BASE + 256, 256)]
    h.free(205, BASE, 256)  # lost
    a2 = [h.alloc(220, BASE + (4 << 20), 1 << 20), h.free(230, BASE + 256, 256),
          h.free(240, BASE + (4 << 20), 1 << 20), h.alloc(250, BASE + 512, 256)]
    path7 = os.path.join(tmp, "vsfw-7.xla-events")
    ev7 = vs_xla_events.XlaEvents(path7, flush_every=0)
    ev7._write([(xs(a1), (200, 210)), (xs(a2), None)], lambda f: f)
    lines7, seen7 = replay(path7)
    frees = sorted(int(l.split()[3]) for l in lines7 if l.startswith("f "))
    ok(ev7.mismatch == 0 and [n for t, n in seen7][-1] == h.in_use
       and frees == [BASE, BASE + 256, BASE + (4 << 20)],
       "a block of the same size stands in until its own free: each freed once, the count "
       "right throughout", (ev7.mismatch, lines7))

    # A free seen first that no gap explains: allocated before the profiler.
    path4 = os.path.join(tmp, "vsfw-4.xla-events")
    ev4 = vs_xla_events.XlaEvents(path4, flush_every=0)
    early = [event("MemoryDeallocation", 90, allocator_name="GPU_0_bfc", addr=BASE + (40 << 20),
                   allocation_bytes=256, bytes_allocated=0)]
    ev4._write([(xs(early), (95, 99)), (xs(line1), None)], lambda f: f)
    ok(ev4.repaired == 0 and ev4.mismatch == 0 and not any(l.startswith("f ") and "%d" % (BASE + (40 << 20)) in l
                                                           for l in open(path4)),
       "a free of a block from before the profiler is left out, gap or not", ev4.repaired)

    # A compilation: the compiler's blocks then take the Python stack of the
    # call that compiled.
    path5 = os.path.join(tmp, "vsfw-5.xla-events")
    ev5 = vs_xla_events.XlaEvents(path5, flush_every=0)
    here = vs_xla_events._Stack(sys._getframe())
    ev5.compiles.append((190, 270, here, "jit(step)"))
    ev5._write([(vs_xla_events._read(pd), None)], lambda f: f)
    text = open(path5).read()
    mine = "frame %d %s\t<module>" % (here.frames[0].line_num, here.frames[0].file_name)
    ok("label Build buffer allocations\n" + mine in text,
       "a block the compiler took while compiling: its span, then the program's call", text)

    # An executable's run the profiler was flushed in: its span comes
    # with the chunk after, its first blocks with the one before; they
    # are of the run all the same.
    r = Bfc()
    r1 = [event("Build buffer allocations", 105, 10), r.alloc(110, BASE, 256)]
    r2 = [event("CommonPjRtLoadedExecutable::Execute (jit_step)", 100, 200),
          r.alloc(220, BASE + 256, 256), r.free(230, BASE + 256, 256)]
    path11 = os.path.join(tmp, "vsfw-11.xla-events")
    ev11 = vs_xla_events.XlaEvents(path11, flush_every=0)
    ev11._write([(xs(r1), (200, 210)), (xs(r2), None)], lambda f: f)
    lines11 = open(path11).read().splitlines()
    sid = {l.split()[3]: l.split()[6] for l in lines11 if l.startswith("a ")}
    ok(sid.get(str(BASE)) == sid.get(str(BASE + 256))
       and lines11[lines11.index("stack " + sid.get(str(BASE), "?")) + 1] == "label jit_step",
       "a run begun before a flush: its blocks of the chunk before are of it", lines11)

    # A run begun while the profiler was flushed: its span is never
    # recorded, so its blocks after the gap are inside the runtime's span
    # only.  They are one run, named as such, and an array of it sampled
    # gives them all the program's line.
    q = Bfc()
    q1 = [q.alloc(110, BASE, 256)]
    q2 = [event("Build buffer allocations", 212, 10), q.alloc(214, BASE + 256, 256),
          q.alloc(216, BASE + 512, 256), q.free(218, BASE + 512, 256),
          event("CommonPjRtLoadedExecutable::Execute (jit_step)", 300, 30),
          q.alloc(310, BASE + 1024, 256)]
    path12 = os.path.join(tmp, "vsfw-12.xla-events")
    ev12 = vs_xla_events.XlaEvents(path12, flush_every=0)
    ev12.samples = [(220, BASE + 256, tb)]
    ev12._write([(xs(q1), (200, 210)), (xs(q2), None)], lambda f: f)
    lines12 = open(path12).read().splitlines()
    sid = {l.split()[3]: l.split()[6] for l in lines12 if l.startswith("a ")}
    lost = vs_xla_events.vs_xla_replay.LOST_RUN
    at = lines12.index("stack " + sid.get(str(BASE + 512), "?")) if str(BASE + 512) in sid else -1
    ok(sid.get(str(BASE + 256)) == sid.get(str(BASE + 512)) and at >= 0
       and lines12[at + 1:at + 3] == ["label " + lost,
                                      "frame 42 /home/u/prog.py\t<module>"]
       and sid.get(str(BASE + 1024)) != sid.get(str(BASE + 512)),
       "a run begun in a gap: its blocks one run, named so, with its array's line", lines12)

    # A run still under way as the profiler stopped: its span is never
    # recorded either.  Its blocks before the gap, after its thread's last
    # run there, and those after the gap are one run, named so.
    c = Bfc()
    c1 = [event("CommonPjRtLoadedExecutable::Execute (jit_step)", 100, 20), c.alloc(105, BASE, 256),
          event("Build buffer allocations", 150, 10), c.alloc(152, BASE + 256, 256)]
    c2 = [event("Build buffer allocations", 212, 5), c.alloc(214, BASE + 512, 256),
          c.free(216, BASE + 512, 256),
          event("CommonPjRtLoadedExecutable::Execute (jit_step)", 300, 30),
          c.alloc(310, BASE + 1024, 256)]
    path13 = os.path.join(tmp, "vsfw-13.xla-events")
    ev13 = vs_xla_events.XlaEvents(path13, flush_every=0)
    ev13._write([(xs(c1), (200, 210)), (xs(c2), None)], lambda f: f)
    lines13 = open(path13).read().splitlines()
    sid = {l.split()[3]: l.split()[6] for l in lines13 if l.startswith("a ")}
    cut = sid.get(str(BASE + 256), "?")
    ok(cut == sid.get(str(BASE + 512)) and cut not in (sid.get(str(BASE)), sid.get(str(BASE + 1024)))
       and lines13[lines13.index("stack " + cut) + 1] == "label " + lost,
       "a run the profiler stopped in: its blocks on both sides of the gap one run, named so",
       lines13)

    # The runs of an executable none of whose arrays was sampled take the
    # Python stack of its compilation; a block made outside every run (an
    # argument put on the device) that of its thread's next run.
    n = Bfc()
    n1 = [n.alloc(50, BASE + 2048, 256),
          event("CommonPjRtLoadedExecutable::Execute (jit_step)", 100, 20), n.alloc(105, BASE, 256),
          n.alloc(400, BASE + 4096, 256)]
    path14 = os.path.join(tmp, "vsfw-14.xla-events")
    ev14 = vs_xla_events.XlaEvents(path14, flush_every=0)
    ev14.compiles.append((10, 40, here, "jit(step)"))
    ev14._write([(xs(n1), None)], lambda f: f)
    lines14 = open(path14).read().splitlines()
    sid = {l.split()[3]: l.split()[6] for l in lines14 if l.startswith("a ")}

    def stack_of(ptr):
        """The label and frame lines of the stack of the block at ptr."""
        at = lines14.index("stack " + sid.get(str(ptr), "?")) if str(ptr) in sid else -1
        return list(itertools.takewhile(lambda l: l.startswith(("label ", "frame ")),
                                        lines14[at + 1:])) if at >= 0 else None

    ok(stack_of(BASE) == ["label jit_step", mine] and stack_of(BASE + 2048) == [mine]
       and stack_of(BASE + 4096) == [],
       "an unsampled run: its compilation's stack; a block before a run: the run's", lines14)

    def counts(path):
        """The pool's count after each event of the file (that is not a
        stand-in's) as the blocks replayed give it."""
        lines, seen = replay(path)
        return lines, [n for t, n in seen]

    def truth_of(*events):
        return [dict(e.stats)["bytes_allocated"] for e in sorted(
            (e for e in events if e.name.startswith("Memory")), key=lambda e: e.start_ns)]

    # Lost events no rule finds again: a block made in a gap and still in
    # use at the end (its free never comes), and a free in a gap that no
    # set of the latest blocks adds up to.  A stand-in block then carries
    # the difference, so the bytes in use are the pool's at every event.
    u = Bfc()
    b1 = [u.alloc(110, BASE, 1 << 20), u.alloc(120, BASE + (1 << 20), 4 << 20)]
    u.alloc(205, BASE + (8 << 20), 2 << 20)  # lost, never freed
    u.free(206, BASE, 1 << 20)                # lost, its address never back
    b2 = [u.alloc(220, BASE + (16 << 20), 3 << 20), u.free(230, BASE + (16 << 20), 3 << 20)]
    path8 = os.path.join(tmp, "vsfw-8.xla-events")
    ev8 = vs_xla_events.XlaEvents(path8, flush_every=0)
    ev8._write([(xs(b1), (200, 210)), (xs(b2), None)], lambda f: f)
    lines8, seen8 = replay(path8)
    top8 = max(n for t, n in seen8)
    ok(seen8[-1][1] == u.in_use and top8 == u.peak and ev8.mismatch == 1 and ev8.unseen == 1,
       "what cannot be found again stands as one block: final and peak the pool's",
       (seen8, u.in_use, u.peak, ev8.mismatch, ev8.unseen))
    ok(("label " + vs_xla_events.vs_xla_replay.UNSEEN) in lines8
       and ev8.unseen_max == (2 << 20) - (1 << 20),
       "the stand-in says what it is; its size, the bytes not found", (lines8, ev8.unseen_max))
    after = [n for t, n in seen8 if t >= 220]
    ok(after[-2:] == truth_of(*b2) or after == truth_of(*b2),
       "after the gap, the running sum is the pool's at each event", (after, truth_of(*b2)))

    # More bytes written than the pool counts, with no stand-in to take
    # them from: the latest blocks are written as freed there, and their
    # own free, when it comes, is not written again.
    v = Bfc()
    c1 = [v.alloc(110, BASE, 3 << 20), v.alloc(120, BASE + (4 << 20), 2 << 20)]
    v.free(205, BASE, 3 << 20)  # lost, and no later block of 3 MiB
    c2 = [v.alloc(220, BASE + (8 << 20), 1 << 20), v.free(230, BASE + (4 << 20), 2 << 20),
          v.free(240, BASE + (8 << 20), 1 << 20)]
    path9 = os.path.join(tmp, "vsfw-9.xla-events")
    ev9 = vs_xla_events.XlaEvents(path9, flush_every=0)
    ev9._write([(xs(c1), (200, 210)), (xs(c2), None)], lambda f: f)
    lines9, seen9 = replay(path9)
    freed = [l.split()[3] for l in lines9 if l.startswith("f ")]
    ok(seen9[-1][1] == v.in_use and max(n for t, n in seen9) == v.peak
       and len(freed) == len(set(freed)),
       "blocks written as freed early: each freed once, final and peak the pool's",
       (lines9, v.in_use, v.peak))

    # A compiler's block that stood in for a lost free (a ghost) and is
    # made again when the lost block's address comes back: it keeps the
    # Python stack of the compilation it was made in.
    k = Bfc()
    k1 = [event("Build buffer allocations", 100, 40), k.alloc(110, BASE, 256),
          k.alloc(120, BASE + 256, 256)]
    k.free(205, BASE, 256)  # lost
    s = 10**9
    k2 = [k.alloc(300, BASE + (1 << 20), 1 << 20), k.free(310, BASE + (1 << 20), 1 << 20)]
    k3 = [k.alloc(3 * s, BASE + (2 << 20), 1 << 20), k.free(3 * s + 10, BASE + (2 << 20), 1 << 20)]
    k4 = [k.alloc(5 * s, BASE, 256)]  # the lost block's address back
    path10 = os.path.join(tmp, "vsfw-10.xla-events")
    ev10 = vs_xla_events.XlaEvents(path10, flush_every=0)
    ev10.compiles.append((90, 150, here, "jit(step)"))
    ev10._write([(xs(k1), (200, 210)), (xs(k2), (2 * s, 2 * s + 10)),
                 (xs(k3), (4 * s, 4 * s + 10)), (xs(k4), None)], lambda f: f)
    lines10, seen10 = replay(path10)
    again = [l for l in lines10 if l.startswith("a %d " % (5 * s)) and " %d " % (BASE + 256) in l]
    sid = again[0].split()[6] if again else "?"
    block = lines10[lines10.index("stack " + sid):][:3] if again else []
    ok(block[1:] == ["label Build buffer allocations", mine] and seen10[-1][1] == k.in_use,
       "a compiler's block made again in a ghost's place keeps the compilation's stack",
       lines10)

    # The sampler: at most one live array's traceback per buffer, and
    # one traceback kept for equal ones; samples beyond the memory's share
    # go to a file and come back in order.
    ev6 = vs_xla_events.XlaEvents(os.path.join(tmp, "vsfw-6.xla-events"), flush_every=0)
    fake = types.SimpleNamespace(live_arrays=lambda: arrays)

    class Arr:
        def __init__(self, ptr):
            self.ptr, self.traceback = ptr, tb

        def is_ready(self):
            return True

        def unsafe_buffer_pointer(self):
            return self.ptr

    saved = sys.modules.get("jax")
    sys.modules["jax"] = fake
    try:
        arrays = [Arr(BASE + i) for i in range(3)]
        for _ in range(vs_xla_events._SAMPLES_IN_MEMORY + 10):
            ev6.sample(False)  # the same arrays: nothing new
        first = len(ev6.samples)
        for i in range(vs_xla_events._SAMPLES_IN_MEMORY):
            arrays = [Arr(BASE + 100 + i)]
            ev6.sample(False)
    finally:
        if saved is None:
            del sys.modules["jax"]
        else:
            sys.modules["jax"] = saved
    ok(first == 3 and len(ev6.seen) == 1 and len(ev6.tbs) == 1,
       "an array sampled once; what is remembered is the live arrays only",
       (first, len(ev6.seen), len(ev6.tbs)))
    all_ = list(ev6._all_samples())
    ok(ev6.spilled > 0 and len(ev6.samples) < vs_xla_events._SAMPLES_IN_MEMORY
       and len(all_) == 3 + vs_xla_events._SAMPLES_IN_MEMORY
       and [s[1] for s in all_] == [BASE + i for i in range(3)]
       + [BASE + 100 + i for i in range(vs_xla_events._SAMPLES_IN_MEMORY)],
       "samples beyond the memory's share go to a file and come back in order",
       (ev6.spilled, len(ev6.samples), len(all_)))
done()
