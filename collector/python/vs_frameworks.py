# SPDX-License-Identifier: MIT
"""vramscope's hook for the allocators of JAX/XLA and CuPy, loaded by the
`sitecustomize` that `vramscope record` puts first on PYTHONPATH.

Neither framework's allocator is changed.  What it keeps, for `record` to
write into the trace (record/vs-framework-spool.c):

  * the settings that decide how much memory the framework takes, as
    "meta KEY VALUE" lines: xla.preallocate, xla.mem_fraction,
    xla.allocator (XLA_PYTHON_CLIENT_PREALLOCATE, _MEM_FRACTION or
    XLA_CLIENT_MEM_FRACTION, _ALLOCATOR; the defaults where unset),
    cupy.gpu_memory_limit (CUPY_GPU_MEMORY_LIMIT), cupy.allocator (whether
    CuPy's default memory pool is its allocator) and cupy.limit_bytes.<dev>
    (the pool's set_limit);
  * the framework's own statistics at exit, per device index:
    xla.bytes_in_use.<dev>, xla.peak_bytes_in_use.<dev>, xla.pool_bytes.<dev>,
    xla.bytes_limit.<dev>, xla.largest_free_block_bytes.<dev> (JAX's
    Device.memory_stats()), cupy.used_bytes.<dev>, cupy.total_bytes.<dev>
    (the default pool's), cupy.peak_used_bytes.<dev>,
    cupy.peak_total_bytes.<dev> and cupy.num_allocs.<dev> (kept by a
    wrapper around the default pool's own malloc, set as CuPy's allocator
    where the pool is: the same pool, so nothing changes for the program;
    VRAMSCOPE_CUPY_PEAK=0 leaves it out), and the same at an out-of-memory error under
    the key's name followed by ".at_failure";
  * CuPy's pool at the allocator level: every block the default pool
    hands out, with the Python stack that asked for it, its free, and the
    segments the pool takes from CUDA and gives back, one line each in
    $VRAMSCOPE_SPOOL_DIR/vsfw-PID.events (_CupyEvents; the same wrapper
    around the pool's own malloc, the block handed to CuPy inside an
    UnownedMemory whose owner marks its free; VRAMSCOPE_CUPY_EVENTS=0
    leaves it out).  Events stop at exit;
  * every out-of-memory error (JAX's RESOURCE_EXHAUSTED, CuPy's
    OutOfMemoryError), whether the program catches it or not: where it
    is raised (CuPy's in the wrapper, JAX's through sys.monitoring's
    RAISE event, Python 3.12 and later: meta frameworks.caught_errors),
    else in the excepthook; a failure inside a pool makes no CUDA call
    fail, so this is the only sign of it.  A line
    "failed TS DEVICE BYTES FRAMEWORK MESSAGE" (TS CLOCK_REALTIME ns, BYTES
    the request as the message gives it, -1 when it gives none) followed
    by one "frame LINE FILE<TAB>FUNCTION" line per Python frame,
    innermost first, and meta program.last_oom, the error's first line;
  * the program's last uncaught error, meta program.last_error.

All of it goes to $VRAMSCOPE_SPOOL_DIR/vsfw-PID.info (with "pid" and
"device IDX UUID TOTAL NAME" lines, from the CUDA driver, so that `record`
puts it on the collector's own process and GPUs), rewritten whole under a
temporary name and renamed each time something is added.  Nothing here
may break the program: a failure prints one line on stderr and the
program runs on.  VRAMSCOPE_FRAMEWORKS=0 turns the hook off.
"""
import bisect
import os
import re
import sys
import time

_spool = os.environ.get("VRAMSCOPE_SPOOL_DIR", "")
_pid = os.getpid()
_meta = {}
_failures = []  # (ts, device, bytes, framework, message, frames)
_devices = set()
_frameworks = set()


def _say(msg):
    try:
        sys.stderr.write("vramscope: %s\n" % msg)
    except Exception:
        pass


def _one_line(text):
    return " ".join(str(text).split())


def _cuda_device(idx):
    """(uuid, total bytes, name) of CUDA device ordinal idx, from the
    driver the program already loaded; None when it cannot say."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        dev = ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(dev), int(idx)) != 0:
            return None
        raw = ctypes.create_string_buffer(16)
        get_uuid = getattr(cuda, "cuDeviceGetUuid_v2", None) or cuda.cuDeviceGetUuid
        if get_uuid(raw, dev) != 0:
            return None
        h = raw.raw.hex()
        uuid = "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
        total = ctypes.c_size_t()
        cuda.cuDeviceTotalMem_v2(ctypes.byref(total), dev)
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, dev)
        return uuid, total.value, name.value.decode(errors="replace")
    except Exception:
        return None


def _write():
    """Writes everything kept so far to vsfw-PID.info; never raises."""
    if not _spool or os.getpid() != _pid or not _frameworks:
        return
    try:
        lines = ["pid %d" % _pid]
        for idx in sorted(_devices):
            d = _cuda_device(idx)
            if d is not None:
                lines.append("device %d %s %d %s" % (idx, d[0], d[1], _one_line(d[2])))
        for k, v in sorted(_meta.items()):
            lines.append("meta %s %s" % (k, _one_line(v)))
        for ts, dev, nbytes, fw, message, frames in _failures:
            lines.append("failed %d %d %d %s %s" % (ts, dev, nbytes, fw, _one_line(message)))
            for filename, line, function in frames:
                lines.append("frame %d %s\t%s" % (line, filename.replace("\t", " "),
                                                  function.replace("\t", " ")))
        base = os.path.join(_spool, "vsfw-%d.info" % _pid)
        with open(base + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(base + ".tmp", base)
    except Exception as e:
        _say("could not save the framework's allocator figures (%s: %s)" % (type(e).__name__, e))


# ----------------------------------------------------------------- JAX/XLA

def _jax_settings():
    env = os.environ
    _meta["xla.preallocate"] = env.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true")
    fraction = env.get("XLA_PYTHON_CLIENT_MEM_FRACTION", env.get("XLA_CLIENT_MEM_FRACTION"))
    _meta["xla.mem_fraction"] = fraction if fraction is not None else "0.75"
    _meta["xla.allocator"] = env.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default")


def _jax_gpu_devices():
    """JAX's local GPUs (CUDA ordinal, device), without starting a backend
    the program never started."""
    jax = sys.modules.get("jax")
    if jax is None:
        return []
    try:
        from jax._src import xla_bridge
        if not getattr(xla_bridge, "_backends", None):
            return []
    except Exception:
        pass
    out = []
    for d in jax.local_devices():
        if getattr(d, "platform", "") != "gpu":
            continue
        out.append((int(getattr(d, "local_hardware_id", None) or d.id), d))
    return out


_JAX_KEYS = ("bytes_in_use", "peak_bytes_in_use", "pool_bytes", "bytes_limit",
             "largest_free_block_bytes", "num_allocs")


def _jax_stats(suffix):
    for idx, d in _jax_gpu_devices():
        st = d.memory_stats() or {}
        _devices.add(idx)
        for k in _JAX_KEYS:
            if k in st:
                _meta["xla.%s.%d%s" % (k, idx, suffix)] = int(st[k])


_xla_events = None


def _xla_events_start():
    """Starts XLA's allocator level (vs_xla_events.py) once JAX's backend
    exists; never raises."""
    global _xla_events
    if _xla_events is not None or not _spool or os.getpid() != _pid:
        return
    try:
        # Called inside JAX's backend lookup: its devices are not asked for
        # here (that would look the backend up again), only its platforms.
        from jax._src import xla_bridge
        if not any(p in ("cuda", "gpu") for p in (getattr(xla_bridge, "_backends", None) or {})):
            return
        import vs_xla_events
        ev = vs_xla_events.XlaEvents(os.path.join(_spool, "vsfw-%d.xla-events" % _pid))
        _xla_events = ev
        ev.start()
        _meta["xla.allocator_level"] = "events"
    except Exception as e:
        _meta["xla.allocator_level"] = "unavailable"
        _say("XLA's blocks are not followed (%s: %s)" % (type(e).__name__, e))


def _xla_events_finish():
    global _xla_events
    ev = _xla_events
    if ev is None or ev.profiler is None or os.getpid() != _pid:
        return
    try:
        _meta.update(ev.finish(_installed))
        if ev.mismatch:
            from vs_xla_replay import UNSEEN
            _say("blocks of XLA's lost while its profiler was flushed, not found again: "
                 "%.2f MiB at most stand as \"%s\" (at %d of %d events), so the bytes in use "
                 "stay XLA's own; VRAMSCOPE_XLA_FLUSH_S=0 keeps every block (in memory until exit)"
                 % (ev.unseen_max / 2**20, UNSEEN, ev.mismatch, ev.count))
    except Exception as e:
        _meta["xla.allocator_level"] = "failed"
        _say("could not save XLA's blocks (%s: %s)" % (type(e).__name__, e))


def _watch_backend():
    """Starts the allocator level after the first call of JAX's backends()
    that made its backends (the GPU plugin's client exists then), and puts
    the original back."""
    try:
        from jax._src import xla_bridge
    except Exception:
        return
    original = xla_bridge.backends

    def backends(*args, **kwargs):
        result = original(*args, **kwargs)
        if getattr(xla_bridge, "backends", None) is backends:
            xla_bridge.backends = original
            _xla_events_start()
        return result

    backends.__wrapped__ = original
    xla_bridge.backends = backends


def _exit_stats(read, what):
    """At exit: read() takes the framework's figures (what names them in
    the line said when it fails), then the meta file is written."""
    try:
        read()
    except Exception as e:
        _say("could not read %s (%s: %s)" % (what, type(e).__name__, e))
    _write()


def _jax_exit():
    _xla_events_finish()
    _exit_stats(lambda: _jax_stats(""), "JAX's memory_stats()")


def _on_jax(module):
    _frameworks.add("xla")
    _jax_settings()
    if os.environ.get("VRAMSCOPE_XLA_EVENTS", "1") != "0" \
            and os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default") in ("default", "bfc"):
        _watch_backend()
    import atexit
    # Registered once jax has registered its own clean-up, so it runs first.
    atexit.register(_jax_exit)


# -------------------------------------------------------------------- CuPy

_cupy_peak = {}  # device → [peak used_bytes, peak total_bytes, mallocs]


class _CupyEvents:
    """The CuPy pool's allocator level, one line per event, to
    vsfw-PID.events (record/vs-framework-spool.c reads it):

      stack ID                      a Python stack, then its frames:
      frame LINE FILE<TAB>FUNCTION  innermost first
      a TS DEV PTR BYTES SIZE STACK an allocation: BYTES as the pool counts
                                    it (used_bytes()), SIZE as asked
      f TS DEV PTR BYTES            its free
      S TS DEV PTR BYTES            a segment the pool took from CUDA
      F TS DEV PTR BYTES            a segment it gave back

    TS is CLOCK_REALTIME ns.  The pool takes a new segment of exactly the
    block's size where no cached block fits (CuPy's chunks start where
    CUDA's allocation does), so a block at an address outside every known
    segment is a new segment; segments leave only when the pool frees its
    cached blocks (free_all_blocks(), or before retrying a failed
    cudaMalloc), seen as total_bytes() falling below the segments' sum:
    then the segments holding no live block are the ones it gave back.
    Where the sum and total_bytes() still differ, `mismatch` counts it."""

    def __init__(self, path):
        import threading
        self.pid = os.getpid()
        # Blocks are allocated and freed from any thread; the pool's
        # own lock is CuPy's, this one keeps the segments' bookkeeping
        # and the lines whole (re-entrant: a free may run inside an
        # allocation, from the garbage collector).
        self.lock = threading.RLock()
        self.out = open(path, "a", buffering=1 << 16)
        self.stacks = {}
        self.segments = {}  # device → (sorted starts, {start: [bytes, live blocks]})
        self.held = {}  # device → the segments' sum
        self.mismatch = 0

    def stack(self, f):
        """The id of the Python stack from frame f outwards, written the
        first time it is seen.  Keyed by each frame's code object's id and
        last instruction, integers cheap to read and hash (the code objects
        of a kept stack are kept alive with it, so their ids stay theirs);
        the lines are computed only for a new stack."""
        key = []
        top = f
        while f is not None:
            key.append(id(f.f_code))
            key.append(f.f_lasti)
            f = f.f_back
        key = tuple(key)
        known = self.stacks.get(key)
        if known is not None:
            return known[0]
        frames = []
        while top is not None:
            frames.append(top)
            top = top.f_back
        sid = len(self.stacks) + 1
        self.stacks[key] = (sid, tuple(fr.f_code for fr in frames))
        lines = ["stack %d" % sid]
        for fr in frames:
            code = fr.f_code
            lines.append("frame %d %s\t%s" % (fr.f_lineno or 0,
                                               _installed(code.co_filename).replace("\t", " "),
                                               code.co_name.replace("\t", " ")))
        self.out.write("\n".join(lines) + "\n")
        return sid

    def block(self, dev, ptr, nbytes, total, ts):
        """A block the pool handed out, total its total_bytes() after:
        the start of the segment holding it (a new one if none does), its
        live blocks counted; segments given back before are written
        first."""
        starts, segs = self.segments.setdefault(dev, ([], {}))
        i = bisect.bisect_right(starts, ptr) - 1
        if i >= 0 and ptr < starts[i] + segs[starts[i]][0]:
            segs[starts[i]][1] += 1
            self.settle(dev, total, ts)
            return starts[i]
        self.settle(dev, total - nbytes, ts)
        starts.insert(i + 1, ptr)
        segs[ptr] = [nbytes, 1]
        self.held[dev] = self.held.get(dev, 0) + nbytes
        self.out.write("S %d %d %d %d\n" % (ts, dev, ptr, nbytes))
        return ptr

    def settle(self, dev, total, ts):
        """Segments given back since the last look: total is the pool's
        total_bytes() now."""
        held = self.held.get(dev, 0)
        if total >= held:
            if total != held:
                self.mismatch += 1
            return
        starts, segs = self.segments.get(dev, ([], {}))
        idle = [s for s in starts if segs[s][1] == 0]
        if sum(segs[s][0] for s in idle) != held - total:
            self.mismatch += 1
            return
        for s in idle:
            self.out.write("F %d %d %d %d\n" % (ts, dev, s, segs[s][0]))
            del segs[s]
        starts[:] = [s for s in starts if s in segs]
        self.held[dev] = total

    def close(self):
        try:
            self.out.flush()
        except Exception:
            pass


_cupy_events = None


class _CupyBlock:
    """Owns one block the pool handed out; its end is the block's free."""
    __slots__ = ("mp", "dev", "ptr", "nbytes", "segment", "pool")

    def __del__(self):
        ev = _cupy_events
        if ev is None or ev.pid != os.getpid():  # a forked child's frees are its own
            return
        try:
            with ev.lock:
                ts = time.time_ns()
                ev.out.write("f %d %d %d %d\n" % (ts, self.dev, self.ptr, self.nbytes))
                seg = ev.segments[self.dev][1].get(self.segment)
                if seg is not None:
                    seg[1] -= 1
                # Free the pool's block now, then see whether segments went.
                pool = self.pool
                self.mp = None
                ev.settle(self.dev, pool.total_bytes(), ts)
        except Exception:
            pass


def _cupy_stop(e):
    """The allocator level stops at an error it did not expect; the
    pool's figures go on."""
    global _cupy_events
    if _cupy_events is not None:
        _say("CuPy's blocks are no longer followed (%s: %s)" % (type(e).__name__, e))
        _meta["cupy.allocator_level"] = "stopped"
        _cupy_events.close()
        _cupy_events = None


def _cupy_watch(pool, malloc):
    """CuPy's allocator, the default pool's own malloc, with the pool's
    high-water marks kept after each call: used_bytes() and total_bytes()
    grow only in malloc, so their peaks are exact.  CuPy has no peak
    statistic of its own.  With the allocator level on (_cupy_events),
    each block is also written with the Python stack that asked for it,
    and handed to CuPy inside an UnownedMemory whose owner marks its free:
    the pool's own block is freed the moment CuPy lets go of it, as
    before.  An OutOfMemoryError, caught by the program or not, is kept
    as a failure."""
    import cupy
    from cupy.cuda import memory

    def allocate(size):
        try:
            ptr = malloc(size)
        except memory.OutOfMemoryError as e:
            _record_error("cupy", type(e), e, sys._getframe(1))
            raise
        try:
            dev = ptr.device_id
            peak = _cupy_peak.setdefault(dev, [0, 0, 0])
            used = pool.used_bytes()
            total = pool.total_bytes()
            if used > peak[0]:
                peak[0] = used
            if total > peak[1]:
                peak[1] = total
            peak[2] += 1
            ev = _cupy_events
            if ev is None or ev.pid != os.getpid():  # not in a forked child
                return ptr
            addr = ptr.ptr
            nbytes = ptr.mem.size
            with ev.lock:
                ts = time.time_ns()
                sid = ev.stack(sys._getframe(1))
                # Read again under the lock: another thread's block may
                # have come between.
                seg = ev.block(dev, addr, nbytes, pool.total_bytes(), ts)
                ev.out.write("a %d %d %d %d %d %d\n" % (ts, dev, addr, nbytes, size, sid))
            block = _CupyBlock()
            block.mp, block.dev, block.ptr, block.nbytes = ptr, dev, addr, nbytes
            block.segment, block.pool = seg, pool
            return memory.MemoryPointer(memory.UnownedMemory(addr, nbytes, block, dev), 0)
        except Exception as e:
            _cupy_stop(e)
            return ptr

    allocate.__wrapped__ = malloc
    return allocate


def _cupy_stats(suffix):
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return
    pool = cupy.get_default_memory_pool()
    dev = int(cupy.cuda.runtime.getDevice())
    _devices.add(dev)
    _meta["cupy.used_bytes.%d%s" % (dev, suffix)] = int(pool.used_bytes())
    _meta["cupy.total_bytes.%d%s" % (dev, suffix)] = int(pool.total_bytes())
    peak = _cupy_peak.get(dev)
    if peak is not None and not suffix:
        _meta["cupy.peak_used_bytes.%d" % dev] = int(peak[0])
        _meta["cupy.peak_total_bytes.%d" % dev] = int(peak[1])
        _meta["cupy.num_allocs.%d" % dev] = int(peak[2])
    limit = int(pool.get_limit())
    if limit > 0:
        _meta["cupy.limit_bytes.%d" % dev] = limit
    try:
        current = cupy.cuda.get_allocator()
        if getattr(current, "__wrapped__", None) == pool.malloc:
            current = pool.malloc
        _meta["cupy.allocator"] = "pool" if current == pool.malloc else _one_line(
            getattr(current, "__qualname__", repr(current)))
    except Exception:
        pass


def _cupy_exit():
    cupy = sys.modules.get("cupy")
    global _cupy_events
    ev = _cupy_events
    if ev is not None and os.getpid() == _pid:
        # The program's work is done: what Python frees while it shuts
        # down is not the program's (as PyTorch's stream stops at its
        # final snapshot), and the pool's figures are read now.
        _cupy_events = None
        ev.close()
        _meta["cupy.segment_mismatch"] = ev.mismatch

    def read():
        # Only where the program used a GPU through CuPy.
        if cupy is not None and cupy.get_default_memory_pool().total_bytes() > 0:
            _cupy_stats("")

    _exit_stats(read, "CuPy's memory pool")


def _on_cupy(module):
    _frameworks.add("cupy")
    try:
        # Only where the program's allocator is CuPy's default pool, as it
        # is unless the program sets another: the pool stays the same.
        import cupy.cuda
        pool = module.get_default_memory_pool()
        if os.environ.get("VRAMSCOPE_CUPY_PEAK", "1") != "0" \
                and cupy.cuda.get_allocator() == pool.malloc:
            global _cupy_events
            if os.environ.get("VRAMSCOPE_CUPY_EVENTS", "1") != "0":
                _cupy_events = _CupyEvents(os.path.join(_spool, "vsfw-%d.events" % _pid))
                _meta["cupy.allocator_level"] = "events"
            cupy.cuda.set_allocator(_cupy_watch(pool, pool.malloc))
    except Exception as e:
        _say("could not watch CuPy's memory pool (%s: %s)" % (type(e).__name__, e))
    if os.environ.get("CUPY_GPU_MEMORY_LIMIT"):
        _meta["cupy.gpu_memory_limit"] = os.environ["CUPY_GPU_MEMORY_LIMIT"]
    import atexit
    atexit.register(_cupy_exit)


# ------------------------------------------------------- uncaught errors

_UNITS = {"B": 1, "BYTES": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}


def _requested(message):
    """The request an out-of-memory message names, in bytes; -1 if none."""
    m = re.search(r"allocat\w*\s+([0-9][0-9,]*(?:\.[0-9]+)?)\s*([KMGT]i?B|bytes|B)\b",
                  message, re.I)
    if m is None:
        return -1
    value = float(m.group(1).replace(",", ""))
    return int(round(value * _UNITS[m.group(2).upper()]))


def _oom_kind(kind, value):
    """("xla"|"cupy", device index) when the error is an out-of-memory
    error of a framework's pool, else None."""
    name = kind.__name__
    text = str(value)
    module = getattr(kind, "__module__", "") or ""
    if "cupy" in module and name == "OutOfMemoryError":
        try:
            return "cupy", int(sys.modules["cupy"].cuda.runtime.getDevice())
        except Exception:
            return "cupy", 0
    if "RESOURCE_EXHAUSTED" in text and "memory" in text.lower():
        m = re.search(r"GPU_(\d+)_bfc", text)
        return "xla", int(m.group(1)) if m else 0
    return None


def _installed(filename):
    """A compiled module's frame names its source relative to its package
    (cupy/cuda/memory.pyx): the path where that package is installed, so
    that it reads as a package's frame, not the program's."""
    if os.path.isabs(filename) or filename.startswith("<"):
        return filename
    top = filename.split("/", 1)[0]
    module = sys.modules.get(top)
    where = getattr(module, "__file__", None) if module is not None else None
    if not where or os.path.exists(filename):
        return filename
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(where))), filename)


def _frames(tb):
    """The traceback's frames, innermost first."""
    import traceback
    here = os.path.abspath(__file__)
    out = [(_installed(fs.filename), fs.lineno or 0, fs.name)
           for fs in traceback.extract_tb(tb)
           if os.path.abspath(fs.filename) != here]  # the hook's own wrapper
    out.reverse()
    return out


_kept_errors = []  # (id, text) of the errors kept as failures, the last few


def _kept(value):
    """Whether this error, or one it was raised from, is kept already."""
    seen = 0
    while value is not None and seen < 8:
        if (id(value), str(value)[:200]) in _kept_errors:
            return True
        value = value.__cause__ or value.__context__
        seen += 1
    return False


def _keep_failure(oom, value, frames):
    """Keeps an out-of-memory error as a failed allocation."""
    fw, dev = oom
    text = str(value)
    _frameworks.add(fw)
    _devices.add(dev)
    _kept_errors.append((id(value), text[:200]))
    del _kept_errors[:-64]
    first = next((l for l in text.splitlines() if l.strip()), text)
    _failures.append((time.time_ns(), dev, _requested(first), fw, first[:2000], frames))
    _meta["program.last_oom"] = "%s: %s" % (type(value).__name__, first[:4000])
    try:
        if fw == "xla":
            _jax_stats(".at_failure")
        else:
            _cupy_stats(".at_failure")
    except Exception:
        pass
    if _cupy_events is not None:
        _cupy_events.close()
    _write()


def _stack_frames(f):
    """The frames from f outwards, innermost first, the hook's own left out."""
    here = os.path.abspath(__file__)
    out = []
    while f is not None:
        code = f.f_code
        if os.path.abspath(code.co_filename) != here:
            out.append((_installed(code.co_filename), f.f_lineno or 0, code.co_name))
        f = f.f_back
    return out


def _record_error(fw, kind, value, frame):
    """An out-of-memory error as it is raised, caught later or not: a
    failure with the stack of the frame it was raised in.  Never raises."""
    try:
        oom = _oom_kind(kind, value)
        if oom is not None and not _kept(value):
            _keep_failure(oom, value, _stack_frames(frame))
    except Exception as e:
        _say("could not keep an out-of-memory error (%s: %s)" % (type(e).__name__, e))


_ERROR_NAMES = frozenset(("XlaRuntimeError", "JaxRuntimeError", "OutOfMemoryError"))


def _on_raise(code, offset, exc):
    """sys.monitoring's RAISE: every exception raised in Python code, in
    the frame it enters first; out-of-memory errors of the pools are kept
    there, whether the program then catches them or not."""
    if type(exc).__name__ in _ERROR_NAMES and _frameworks:
        _record_error(None, type(exc), exc, sys._getframe(1))


def _watch_raises():
    """Watches raised exceptions where Python can (3.12's sys.monitoring,
    a tool id no one holds); returns whether it does."""
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        return False
    for tool in (4, 3):
        try:
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "vramscope")
                mon.register_callback(tool, mon.events.RAISE, _on_raise)
                mon.set_events(tool, mon.get_events(tool) | mon.events.RAISE)
                return True
        except Exception:
            continue
    return False


def _excepthook(kind, value, tb):
    try:
        text = str(value)
        _meta["program.last_error"] = "%s: %s" % (kind.__name__, text[:4000])
        oom = _oom_kind(kind, value)
        if oom is not None and not _kept(value):
            _keep_failure(oom, value, _frames(tb))
        if _frameworks:
            _write()
    except Exception as e:
        _say("could not keep the program's error (%s: %s)" % (type(e).__name__, e))
    _previous_hook(kind, value, tb)


_previous_hook = sys.excepthook


class Watcher:
    """A meta path finder that lets the real finders load the watched
    top-level packages and calls their hook once each has executed."""

    def __init__(self, hooks):
        self.hooks = dict(hooks)

    def find_spec(self, name, path=None, target=None):
        hook = self.hooks.pop(name, None)
        if hook is None:
            return None
        if not self.hooks:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
        spec = None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is not None:
                spec = find(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            try:
                hook(module)
            except Exception as e:
                _say("could not hook %s (%s: %s)" % (name, type(e).__name__, e))

        spec.loader.exec_module = exec_module
        return spec


def install():
    """Installs the hook (once, at start-up)."""
    global _previous_hook
    if not _spool or os.environ.get("VRAMSCOPE_FRAMEWORKS", "1") == "0":
        return
    hooks = {}
    for name, hook in (("jax", _on_jax), ("cupy", _on_cupy)):
        if name in sys.modules:
            hook(sys.modules[name])
        else:
            hooks[name] = hook
    if hooks:
        sys.meta_path.insert(0, Watcher(hooks))
    _previous_hook = sys.excepthook
    sys.excepthook = _excepthook
    _meta["frameworks.caught_errors"] = "1" if _watch_raises() else "0"
