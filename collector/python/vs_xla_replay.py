# SPDX-License-Identifier: MIT
"""XLA's allocator events, read chunk by chunk, to the file `record`
reads (vsfw-PID.xla-events, see vs_xla_events.py for its lines): the
blocks in time order with their stacks, the pool's segments, and the
events lost between two chunks (while the profiler was flushed) put back.

Workload: every allocator event of the run once, at exit; the records of
the chunks of the last 2 s (two at least) are held at a time.
"""

import re

# How long the events read are held before they are written, at least (ns):
# what comes after them in that time can put back what a gap lost.
_HOLD_NS = 2 * 10**9
# The frame of the bytes the pool counted in use whose blocks were not
# found (made or freed while the profiler was flushed, and not put back),
# and the addresses of those stand-ins: below every device address.
UNSEEN = "blocks not seen (profiler flush)"
_UNSEEN_BASE = 1 << 16
# The frame of a block put back from its free: made while the profiler was
# flushed, by a call not seen.
MADE_IN_GAP = "a block made in a profiler flush"
# The frame of the blocks of an executable's run that a flush of the
# profiler cut (begun in it, or still under way as it began): its span,
# and so its name, was never recorded.
LOST_RUN = "a run cut by a profiler flush"


def _module_name(fun_name):
    """The name XLA gives the executable of a compilation of fun_name:
    `jit(step)` runs as `jit_step`."""
    return re.sub(r"\W+", "_", fun_name).rstrip("_")


class _Rec:
    """One line of the file to be: a block ('a'), its free ('f') or a
    segment ('S'); `stats` the pool's bytes in use after it (None for one
    put back); `made` the time its block was made, for its stack (a
    block made again in a ghost's place keeps the first)."""
    __slots__ = ("ts", "op", "dev", "ptr", "nbytes", "size", "frame", "run", "tb", "stats",
                 "made", "thread", "lost", "next_run")

    def __init__(self, ts, op, dev, ptr, nbytes, size=0, frame="", run=None, stats=None):
        self.ts, self.op, self.dev, self.ptr, self.nbytes = ts, op, dev, ptr, nbytes
        self.size, self.frame, self.run, self.stats, self.tb = size, frame, run, stats, None
        self.made = ts
        self.thread = None
        self.lost = False
        self.next_run = None  # (run, name) of its thread's next run, for a block outside every run


class _Gap:
    """The time between two chunks, and the events of it put back: frees
    first, then blocks."""

    def __init__(self, start, end):
        self.start, self.end = start, end
        self.frees, self.allocs = [], []
        self.net = {}  # device -> the bytes in use its events changed (the pool's count)
        self.left = {}  # device -> what of net is not put back yet


class Replay:
    """The allocator's events, chunk by chunk, to the file.

    A block is written a chunk after the one it is in, so that a sample of
    the array that holds it, taken after it, gives its traceback; the
    records of two chunks are held at most.  Events in a gap between two
    chunks are not seen, and are put back from what follows: a block at an
    address still in use was freed in a gap since that block was made (a
    pool never hands out an address in use); a free of a block never seen
    was a block made in a gap.  The pool's own count of bytes in use,
    which each event carries, tells how much each gap changed, and so
    which gap an event goes back to.  As the file is written the running
    sum is checked against that count before each event; where what was
    put back does not give it, a stand-in block (`UNSEEN`) carries the
    difference (`_balance`; `mismatch` counts those events), so the bytes
    in use written are always the pool's own."""

    def __init__(self, out, installed, samples, compiles, address_range):
        self.out, self.installed = out, installed
        self.address_range = address_range  # (device, ptr) -> (base, size) of its CUDA allocation
        self.samples = iter(samples)
        self.sample = next(self.samples, None)
        self.compiles = sorted(compiles, key=lambda c: c[0])
        self.compiled = {}  # executable's name -> [(start, stack)] of its compilations
        for c in self.compiles:
            self.compiled.setdefault(_module_name(c[3]), []).append((c[0], c[2]))
        self.held = []  # [(records, gap after them)] not yet written
        self.latest = 0  # the time of the last event read
        self.gaps = []  # gaps since the first chunk held, for the events put back
        self.live = {}  # ptr -> the record of the block there
        self.in_use = {}  # device -> bytes in use, as read
        self.written = {}  # device -> bytes in use, as written
        self.regions = {}  # device -> [(base, end)]
        self.group_tb = {}  # executable run -> (traceback, chunk it was found in)
        self.outside = {}  # thread -> its blocks outside every run since its last run
        self.chunk_no = 0
        self.stacks = {}
        self.gap = None  # the gap just before the events being read
        # ptr -> a block written as freed in a gap in place of one of its
        # size that was not found, while it is still in use
        self.ghosts = {}
        self.last_at = {}  # address -> the time of the last event read there
        self.empty_at_start = {}  # device -> whether its pool held nothing before the first event
        self.mismatch = self.count = self.repaired = 0
        self.wlive = {}  # ptr -> the record of the block there, as written
        self.pending = []  # records put back, waiting for one with the pool's count
        self.unseen = {}  # device -> its stand-in for the bytes not found
        self.unseen_no = self.unseen_max = 0
        self.out.write("allocator xla\n")

    def chunk(self, events, gap_after):
        recs = []
        first_run = {}  # thread -> the start of its first executable's run here
        last_end = {}  # thread -> the end of its last executable's run here
        for ts, thread, alloc, dev, ptr, nbytes, stats, run, frame in events:
            if alloc is None:
                self._run_begun_before(ts, thread, dev, run, frame)
                first_run.setdefault(thread, ts)
                last_end[thread] = max(last_end.get(thread, ts), dev)
                for rec in self.outside.pop(thread, ()):
                    rec.next_run = (run, frame)
                continue
            self._samples_until(ts)
            if dev not in self.empty_at_start and "bytes_allocated" in stats:
                self.empty_at_start[dev] = \
                    stats["bytes_allocated"] - (nbytes if alloc else -nbytes) == 0
            if self.gap is not None and dev not in self.gap.net:
                after = stats.get("bytes_allocated")
                if after is not None:
                    before = after - (nbytes if alloc else -nbytes)
                    # What earlier gaps changed and is not put back yet is
                    # theirs, not this one's.
                    theirs = sum(g.left.get(dev, 0) for g in self.gaps if g is not self.gap)
                    self.gap.net[dev] = self.gap.left[dev] = \
                        before - self.in_use.get(dev, 0) - theirs
            if alloc:
                old = self.live.get(ptr)
                if old is not None:
                    self._put_back_free(old, ts, recs)
                else:
                    self.ghosts.pop(ptr, None)  # freed indeed, and handed out again
                if not any(b <= ptr < e for b, e in self.regions.get(dev, ())):
                    r = self.address_range(dev, ptr)
                    if r is not None:
                        self.regions.setdefault(dev, []).append((r[0], r[0] + r[1]))
                        recs.append(_Rec(ts, "S", dev, r[0], r[1]))
                rec = _Rec(ts, "a", dev, ptr, nbytes, stats.get("requested_bytes", nbytes),
                           frame, run, stats.get("bytes_allocated"))
                rec.thread = thread
                if run is None and not frame:
                    self.outside.setdefault(thread, []).append(rec)
                self.live[ptr] = rec
                self.in_use[dev] = self.in_use.get(dev, 0) + nbytes
            else:
                ghost = self.ghosts.pop(ptr, None) if ptr not in self.live else None
                if ghost is not None:
                    self._ghost_freed(ghost, ts, stats.get("bytes_allocated"), recs)
                    continue
                if ptr not in self.live and not self._put_back_alloc(dev, ptr, nbytes, ts):
                    continue  # allocated before the profiler started
                held = self.live.pop(ptr)
                self.in_use[held.dev] -= held.nbytes
                rec = _Rec(ts, "f", held.dev, ptr, held.nbytes, stats=stats.get("bytes_allocated"))
            self.last_at[ptr] = ts
            recs.append(rec)
        if self.gap is not None:
            self._runs_begun_in_gap(recs, first_run)
        self.gap = None
        if gap_after is not None:
            # Events recorded as the profiler stopped can be later than the
            # gap's start: those put back come after them.
            start = max([gap_after[0]] + [r.ts for r in recs[-1:]])
            self.gap = _Gap(start, max(start, gap_after[1] or start))
            self.gaps.append(self.gap)
            self._runs_cut_by_gap(recs, last_end)
        self.held.append((recs, self.gap))
        self.chunk_no += 1
        if recs:
            self.latest = recs[-1].ts
        # Held: the last two chunks, and those of the last _HOLD_NS.
        while len(self.held) > 2 and (self.held[0][1] is None
                                      or self.held[0][1].end < self.latest - _HOLD_NS):
            self._write_held()

    def _run_begun_before(self, start, thread, end, run, name):
        """An executable's run from start to end on thread: where it began
        before the profiler was last flushed, the blocks made on that
        thread in it, read in the chunks before (outside every run there,
        as the run's span came with this one), are of it."""
        if self.gap is None or start >= self.gap.end:
            return
        for recs, _ in self.held:
            for rec in recs:
                if rec.op == "a" and (rec.run is None or rec.lost) and rec.thread == thread \
                        and start <= rec.ts <= end:
                    rec.frame, rec.run, rec.lost = name, run, False

    def _runs_begun_in_gap(self, recs, first_run):
        """The blocks read just after a gap, on a thread that runs
        executables, before its first run here and outside every run,
        inside another span (the runtime's `Build buffer allocations`):
        those of a run begun in the gap, whose span was never recorded.
        They are one run (a sampled array of it gives them all its
        traceback), unless a compilation was under way (`_stack_of`)."""
        self._lose_run([rec for rec in recs if rec.thread in first_run
                        and rec.ts < first_run[rec.thread]])

    def _runs_cut_by_gap(self, recs, last_end):
        """The blocks read just before the gap that follows them, after the
        last run of their thread here (or on a thread with none), outside
        every run, inside the runtime's span: those of a run still under
        way as the profiler stopped, whose span was never recorded.  Its
        blocks after the gap are one run with them (`_runs_begun_in_gap`);
        if its span comes after all, `_run_begun_before` names them."""
        self._lose_run([rec for rec in recs if rec.ts > last_end.get(rec.thread, -1)])

    def _lose_run(self, recs):
        """Blocks of recs outside every run and inside a span: one run
        begun or ended in the current gap, per thread."""
        for rec in recs:
            if rec.op == "a" and rec.run is None and rec.frame:
                rec.run, rec.lost = ("lost", self.gap.start, rec.thread), True
                if rec.tb is not None:
                    self.group_tb.setdefault(rec.run, (rec.tb, self.chunk_no))

    def end(self):
        self._samples_until(None)
        while self.held:
            self._write_held()
        for rec in self.pending:
            self._apply(rec)
        self.pending = []

    def _samples_until(self, ts):
        """Each sample before ts gives its traceback to the block at its
        address, and to that block's executable run."""
        while self.sample is not None and (ts is None or self.sample[0] <= ts):
            _, ptr, tb = self.sample
            rec = self.live.get(ptr)
            if rec is not None and rec.tb is None:
                rec.tb = tb
                if rec.run is not None:
                    self.group_tb.setdefault(rec.run, (tb, self.chunk_no))
            self.sample = next(self.samples, None)

    def _open_gaps(self, after, before):
        return [g for g in self.gaps if after <= g.start and g.end <= before]

    def _put_back_free(self, old, ts, recs):
        """The block `old`, at an address handed out again at ts, was freed
        in a gap since it was made: the latest whose count has room for it,
        else the latest."""
        gaps = self._open_gaps(old.ts, ts)
        g = next((g for g in reversed(gaps) if g.left.get(old.dev, 0) <= -old.nbytes), None)
        if g is None and self._swap_ghost(old, ts, recs):
            return
        g = g or (gaps[-1] if gaps else None)
        free = _Rec(g.start if g else ts, "f", old.dev, old.ptr, old.nbytes)
        if g is not None:
            g.frees.append(free)
            g.left[old.dev] = g.left.get(old.dev, 0) + old.nbytes
        else:
            recs.append(free)  # not in a gap: the pool's count will not match
        del self.live[old.ptr]
        self.in_use[old.dev] -= old.nbytes
        self.repaired += 1

    def _swap_ghost(self, old, ts, recs):
        """`old` was freed in a gap where a block of its size (a ghost)
        was written as freed in its place: `old` is freed now, and the
        ghost, still in use, made again now.  Bytes in use stay right."""
        ghost = next((g for g in self.ghosts.values()
                      if g.dev == old.dev and g.nbytes == old.nbytes), None)
        if ghost is None:
            return False
        del self.ghosts[ghost.ptr]
        del self.live[old.ptr]
        recs.append(_Rec(ts, "f", old.dev, old.ptr, old.nbytes))
        again = _Rec(ts, "a", ghost.dev, ghost.ptr, ghost.nbytes, ghost.size, ghost.frame, ghost.run)
        again.tb, again.made, again.lost, again.next_run = \
            ghost.tb, ghost.made, ghost.lost, ghost.next_run
        self.live[ghost.ptr] = again
        recs.append(again)
        self.repaired += 2
        return True

    def _ghost_freed(self, ghost, ts, after, recs):
        """A ghost is freed at ts: the block its size stood for is still
        written as in use, so a block of that size is written as freed now
        (the latest made), and becomes the ghost."""
        w = max((b for b in self.live.values() if b.dev == ghost.dev and b.nbytes == ghost.nbytes),
                key=lambda b: b.ts, default=None)
        if w is None:
            return  # not found: the count says so as the file is written
        del self.live[w.ptr]
        self.in_use[w.dev] -= w.nbytes
        self.ghosts[w.ptr] = w
        recs.append(_Rec(ts, "f", w.dev, w.ptr, w.nbytes, stats=after))

    def _cover(self, gap, dev):
        """The blocks freed in gap that were never found (its count has
        bytes left): the latest made before it that add up to them exactly
        are written as freed there, as ghosts."""
        want = -gap.left.get(dev, 0)
        if want <= 0:
            return
        chosen = []
        mine = set(map(id, gap.allocs))  # written after the gap's frees
        for b in sorted((b for b in self.live.values()
                         if b.dev == dev and b.ts <= gap.start and id(b) not in mine),
                        key=lambda b: b.ts, reverse=True):
            if b.nbytes <= want:
                chosen.append(b)
                want -= b.nbytes
                if want == 0:
                    break
        if want != 0:
            return
        for b in chosen:
            del self.live[b.ptr]
            self.in_use[dev] -= b.nbytes
            self.ghosts[b.ptr] = b
            gap.frees.append(_Rec(gap.start, "f", dev, b.ptr, b.nbytes))
            self.repaired += 1
        gap.left[dev] = 0

    def _put_back_alloc(self, dev, ptr, nbytes, ts):
        """A free at ts of a block never seen: one made in a gap (the last
        whose count has room for it, else the last, when the pool held
        nothing when the profiler started), else one made before the
        profiler started (False)."""
        # In a gap after the last block seen at that address was freed.
        gaps = self._open_gaps(self.last_at.get(ptr, 0), ts)
        g = next((g for g in reversed(gaps) if g.left.get(dev, 0) >= nbytes), None)
        if g is None and gaps and self.empty_at_start.get(dev):
            g = gaps[-1]
        if g is None:
            return False
        rec = _Rec(g.start, "a", dev, ptr, nbytes, nbytes, MADE_IN_GAP)
        g.allocs.append(rec)
        g.left[dev] = g.left.get(dev, 0) - nbytes
        self.live[ptr] = rec
        self.in_use[dev] = self.in_use.get(dev, 0) + nbytes
        self.repaired += 1
        return True

    def _write_held(self):
        recs, gap = self.held.pop(0)
        for rec in recs:
            self._write(rec)
        if gap is not None:
            for dev in list(gap.left):
                self._cover(gap, dev)
            for rec in gap.frees + gap.allocs:
                self._write(rec)
            self.gaps.remove(gap)
        # Runs found before the chunks still held are all written, and so
        # are the blocks outside every run of those chunks (memory: a thread
        # that never runs an executable keeps none).
        self.group_tb = {k: v for k, v in self.group_tb.items()
                         if v[1] >= self.chunk_no - len(self.held) - 2}
        if recs:
            done = recs[-1].ts
            self.outside = {t: kept for t, kept in
                            ((t, [r for r in l if r.ts > done]) for t, l in self.outside.items())
                            if kept}

    def _compile_of(self, ts):
        """The compilation under way at ts, innermost (latest begun) first."""
        found = None
        for c in self.compiles:
            if c[0] > ts:
                break
            if ts <= c[1]:
                found = c
        return found

    def _compiled_before(self, name, ts):
        """The Python stack of the last compilation of executable name
        begun before ts: the program's call that first ran it.  A run none
        of whose arrays a sample saw (most, as the sampler's period is
        longer than a step) takes it."""
        found = None
        for start, stack in self.compiled.get(name, ()):
            if start > ts:
                break
            found = stack
        return found

    def _write(self, rec):
        """Writes rec.  Records put back (with no count of the pool) wait
        for the next that has one; the bytes in use written are then put
        right to its count (`_balance`): lowered before the records that
        waited, raised after them, so that they never pass the pool's."""
        if rec.op == "S":
            self.out.write("S %d %d %d %d\n" % (rec.ts, rec.dev, rec.ptr, rec.nbytes))
            return
        self.pending.append(rec)
        if rec.stats is None:
            return
        pending, self.pending = self.pending, []
        self.count += 1
        dev = rec.dev
        off = rec.stats - self.written.get(dev, 0) - self._change(pending, dev)
        keep = {r.ptr for r in pending}
        if off < 0:
            self._balance(dev, off, pending[0].ts, keep)
        for r in pending[:-1]:
            self._apply(r)
        if off > 0:
            self._balance(dev, off, rec.ts, keep)
        self._apply(rec)

    def _change(self, recs, dev):
        """What writing recs in turn would change of device dev's bytes in
        use written."""
        now = {}  # ptr -> the bytes of the block there, as recs leave it
        change = 0
        for r in recs:
            cur = now.get(r.ptr, self.wlive[r.ptr].nbytes if r.ptr in self.wlive else 0)
            now[r.ptr] = r.nbytes if r.op == "a" else 0
            if r.dev == dev:
                change += now[r.ptr] - cur
        return change

    def _apply(self, rec):
        """Writes block or free rec.  A free of a block not written as in
        use (a balance took it) is left out; a block at an address written
        as in use frees that one first."""
        if rec.ptr in self.wlive:
            self._emit_free(self.wlive[rec.ptr], rec.ts)
        if rec.op == "a":
            self._emit_alloc(rec, self._stack_of(rec))

    def _stack_of(self, rec):
        """The file's stack id of block rec, its lines written the first
        time."""
        tb = rec.tb or (self.group_tb.get(rec.run, (None,))[0] if rec.run is not None else None)
        frame = rec.frame
        if tb is None and rec.run is not None and not rec.lost:
            tb = self._compiled_before(frame, rec.made)
        c = self._compile_of(rec.made) if rec.run is None or rec.lost else None
        if rec.lost and c is None:
            frame = LOST_RUN
        elif tb is None and c is not None:
            tb = c[2]
            frame = frame or ("compile %s" % c[3] if c[3] else "compile")
        elif tb is None and rec.next_run is not None:
            # A block the runtime made outside every run (an argument put on
            # the device) is of the Python call that then ran its thread's
            # next executable.
            run, name = rec.next_run
            tb = self.group_tb.get(run, (None,))[0] or self._compiled_before(name, rec.made)
        key = (frame, id(tb) if tb is not None else 0)
        sid = self.stacks.get(key)
        if sid is None:
            sid = len(self.stacks) + 1
            self.stacks[key] = sid
            out = self.out
            out.write("stack %d\n" % sid)
            if frame:
                out.write("label %s\n" % " ".join(frame.split()))
            for fr in (tb.frames if tb is not None else ()):
                out.write("frame %d %s\t%s\n" % (
                    fr.line_num or 0, self.installed(fr.file_name).replace("\t", " "),
                    fr.function_name.replace("\t", " ")))
        return sid

    def _emit_alloc(self, rec, sid):
        self.written[rec.dev] = self.written.get(rec.dev, 0) + rec.nbytes
        self.wlive[rec.ptr] = rec
        self.out.write("a %d %d %d %d %d %d\n" % (rec.ts, rec.dev, rec.ptr, rec.nbytes,
                                                  rec.size, sid))

    def _emit_free(self, rec, ts):
        self.written[rec.dev] = self.written.get(rec.dev, 0) - rec.nbytes
        del self.wlive[rec.ptr]
        self.out.write("f %d %d %d %d\n" % (ts, rec.dev, rec.ptr, rec.nbytes))

    def _balance(self, dev, change, ts, keep):
        """The events put back did not give the pool's count: the bytes in
        use written change by `change` at ts, through one block of
        `UNSEEN` (the bytes whose blocks were not found, the device's
        only one, made anew at each balance).  Where the bytes written
        are more than the count and the unseen block's, the latest blocks
        written (but those at the addresses `keep`, of the records being
        written) are taken as freed now (their own free, when it comes, is
        not written again)."""
        self.mismatch += 1
        old = self.unseen.pop(dev, None)
        left = change + (old.nbytes if old is not None else 0)
        if old is not None:
            self._emit_free(old, ts)
        if left < 0:
            for b in sorted((b for b in self.wlive.values() if b.dev == dev and b.ptr not in keep),
                            key=lambda b: b.ts, reverse=True):
                self._emit_free(b, ts)
                left += b.nbytes
                if left >= 0:
                    break
        if left > 0:
            self.unseen_no += 1
            rec = _Rec(ts, "a", dev, _UNSEEN_BASE + self.unseen_no * 256, left, left, UNSEEN)
            self.unseen[dev] = rec
            self.unseen_max = max(self.unseen_max, left)
            self._emit_alloc(rec, self._stack_of(rec))
