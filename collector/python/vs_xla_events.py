# SPDX-License-Identifier: MIT
"""XLA's allocator level for vramscope: every block JAX's GPU allocator
(XLA's BFC allocator, `GPU_<n>_bfc`) hands out and takes back, with the
pool's own count of bytes in use after each, for `record`
(record/vs-framework-events.c reads the file this writes).

How: XLA's BFC allocator emits a profiler event, `MemoryAllocation` or
`MemoryDeallocation`, for each block (its address, its size as the pool
counts it, the pool's bytes in use after it) whenever a profiler host
tracer of level 2 or more runs in the library that holds the allocator.
With JAX's GPU plugin that library is the plugin, whose profiler is
reached through the PJRT C API's profiler extension.  This module starts
the plugin's profiler once JAX's backend exists, with its host tracer
alone (device type CPU: the plugin's CUPTI tracer stays off, CUPTI is
the collector's), and reads its events at exit.  The program's
allocator, its settings and its memory limit are unchanged.

The Python stack of a block: the events come from the thread that asked
(JAX's dispatch runs on the program's thread), inside the plugin's span
of the executable it ran (`jit_step`), which becomes the block's
innermost frame.  JAX arrays keep the Python traceback of their creation;
a sampler reads the live arrays' buffers and tracebacks now and then (and
at exit), and a block whose address an array held gets that traceback,
as do the other blocks of the same executable's run (its temporaries).

Output lines ($VRAMSCOPE_SPOOL_DIR/vsfw-PID.xla-events): "allocator xla",
then the events file's lines ("stack ID", "frame LINE FILE<TAB>FUNCTION",
"label NAME" (the executable, a frame that is a name only), "a TS DEV
PTR BYTES SIZE STACK", "f TS DEV PTR BYTES", "S TS DEV PTR
BYTES" for each CUDA allocation of the pool, found with
cuMemGetAddressRange from the first block inside it).

The profiler is flushed every 10 seconds (VRAMSCOPE_XLA_FLUSH_S): what
it holds is saved to PATH.K and it starts again, so the events held in
memory stay bounded.  The events of the moment between the stop and the
start are put back from what follows and from the allocator's own count
(vs_xla_replay.py); the blocks made and freed within that moment are not seen
(xla.alloc_count can be short of num_allocs by those), and where what is
put back does not give the allocator's count, a stand-in block carries
the difference, so the bytes in use are always the allocator's own.  The file is
written at exit, chunk by chunk.  Blocks the compiler takes (autotuning)
get the Python stack of the call that compiled, from JAX's
`jax.monitoring` compile events.  A program that starts JAX's profiler
itself while this one runs cannot: VRAMSCOPE_XLA_EVENTS=0 leaves this
out.
"""
import ctypes
import os
import re
import sys
import threading
import time

import vs_xla_replay

_EXT_PROFILER = 1  # PJRT_Extension_Type_Profiler
# tensorflow.ProfileOptions: version 1, host_tracer_level 2, device_type
# CPU; device and Python tracers off (levels 0).
_OPTIONS = bytes((0x28, 0x01, 0x10, 0x02, 0x30, 0x01))


class _Api(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("priv", ctypes.c_void_p),
                ("error_destroy", ctypes.c_void_p), ("error_message", ctypes.c_void_p),
                ("error_get_code", ctypes.c_void_p), ("create", ctypes.c_void_p),
                ("destroy", ctypes.c_void_p), ("start", ctypes.c_void_p),
                ("stop", ctypes.c_void_p), ("collect_data", ctypes.c_void_p)]


class _Create(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("options", ctypes.c_char_p),
                ("options_size", ctypes.c_size_t), ("profiler", ctypes.c_void_p)]


class _Handle(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("profiler", ctypes.c_void_p)]


class _Collect(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("profiler", ctypes.c_void_p),
                ("buffer", ctypes.c_void_p), ("buffer_size_in_bytes", ctypes.c_size_t)]


class _ErrorMessage(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("priv", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_void_p),
                ("message_size", ctypes.c_size_t)]


class _ErrorDestroy(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("priv", ctypes.c_void_p),
                ("error", ctypes.c_void_p)]


_CALL = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_VOID = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# The same, holding the GIL through the call.
_PYCALL = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


def _plugin_profiler_api():
    """The PLUGIN_Profiler_Api of the loaded PJRT plugin that holds JAX's
    GPU client, or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {l.split(None, 5)[5].strip() for l in f if len(l.split(None, 5)) == 6}
    except OSError:
        return None
    for path in sorted(paths):
        base = os.path.basename(path)
        if not base.endswith(".so") or ("pjrt" not in base and "xla_cuda" not in base):
            continue
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            get = lib.GetPjrtApi
        except (OSError, AttributeError):
            continue
        get.restype = ctypes.c_void_p
        api = get()
        if not api:
            continue
        ext = ctypes.c_void_p.from_address(api + 8).value
        seen = 0
        while ext and seen < 64:
            if ctypes.c_int.from_address(ext + 8).value == _EXT_PROFILER:
                papi = ctypes.c_void_p.from_address(ext + 24).value
                if papi:
                    return _Api.from_address(papi)
            ext = ctypes.c_void_p.from_address(ext + 16).value
            seen += 1
    return None


class _Profiler:
    """The plugin's profiler, host tracer only."""

    def __init__(self, api):
        self.api = api
        self.handle = None

    def _check(self, err, what):
        if not err:
            return
        msg = _ErrorMessage(ctypes.sizeof(_ErrorMessage), None, err, None, 0)
        _VOID(self.api.error_message)(ctypes.addressof(msg))
        text = ctypes.string_at(msg.message, msg.message_size).decode(errors="replace") \
            if msg.message else "?"
        _VOID(self.api.error_destroy)(ctypes.addressof(
            _ErrorDestroy(ctypes.sizeof(_ErrorDestroy), None, err)))
        raise RuntimeError("%s: %s" % (what, text))

    def _create_start(self, call):
        c = _Create(ctypes.sizeof(_Create), _OPTIONS, len(_OPTIONS), None)
        self._check(call(self.api.create)(ctypes.addressof(c)), "create")
        self.handle = c.profiler
        h = _Handle(ctypes.sizeof(_Handle), self.handle)
        self._check(call(self.api.start)(ctypes.addressof(h)), "start")

    def start(self):
        self._create_start(_CALL)

    def stop(self):
        """Stops and returns the serialized XSpace (bytes)."""
        handle, self.handle = self.handle, None
        h = _Handle(ctypes.sizeof(_Handle), handle)
        self._check(_CALL(self.api.stop)(ctypes.addressof(h)), "stop")
        return self._collect(handle)

    def restart(self):
        """Stops, starts a new one and returns what the first held (bytes)
        and the time between (start, end ns), when the allocator's events
        were not seen.  The stop and the start hold the GIL: the program's
        own thread does not run between them.  When the new one does not
        start, the handle is None and the gap has no end."""
        handle, self.handle = self.handle, None
        start = time.time_ns()
        h = _Handle(ctypes.sizeof(_Handle), handle)
        self._check(_PYCALL(self.api.stop)(ctypes.addressof(h)), "stop")
        try:
            self._create_start(_PYCALL)
        except RuntimeError:
            self.handle = None
        end = time.time_ns()
        return self._collect(handle), (start, end if self.handle is not None else None)

    def _collect(self, handle):
        c = _Collect(ctypes.sizeof(_Collect), handle, None, 0)
        self._check(_CALL(self.api.collect_data)(ctypes.addressof(c)), "collect")
        size = c.buffer_size_in_bytes
        if c.buffer:  # the plugin's own copy
            data = ctypes.string_at(c.buffer, size)
        else:
            buf = ctypes.create_string_buffer(max(size, 1))
            c.buffer = ctypes.addressof(buf)
            self._check(_CALL(self.api.collect_data)(ctypes.addressof(c)), "collect")
            data = buf.raw[:size]
        d = _Handle(ctypes.sizeof(_Handle), handle)
        _CALL(self.api.destroy)(ctypes.addressof(d))
        return data


def _address_range(idx, ptr):
    """(base, size) of the CUDA allocation holding ptr on device ordinal
    idx, through its primary context (JAX's own); None when unknown."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        dev = ctypes.c_int()
        ctx = ctypes.c_void_p()
        if cuda.cuDeviceGet(ctypes.byref(dev), int(idx)) != 0 \
                or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) != 0:
            return None
        try:
            if cuda.cuCtxPushCurrent_v2(ctx) != 0:
                return None
            base = ctypes.c_uint64()
            size = ctypes.c_size_t()
            rc = cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                              ctypes.c_uint64(ptr))
            cuda.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
            return (base.value, size.value) if rc == 0 else None
        finally:
            cuda.cuDevicePrimaryCtxRelease_v2(dev)
    except Exception:
        return None


_EXECUTE = re.compile(r"Execute \(([^)]+)\)")
# The sampler reads the live arrays at most 1/_SAMPLE_SHARE of the time.
_SAMPLE_SHARE = 50
# Samples kept in memory before they go to the samples file.
_SAMPLES_IN_MEMORY = 4096
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class _Stack:
    """A Python stack taken here, with a traceback's `frames` (innermost
    first) as JAX's arrays have."""

    def __init__(self, frame):
        self.frames = []
        while frame is not None:
            code = frame.f_code
            self.frames.append(_Frame(code.co_filename, code.co_name, frame.f_lineno))
            frame = frame.f_back


class _Frame:
    __slots__ = ("file_name", "function_name", "line_num")

    def __init__(self, file_name, function_name, line_num):
        self.file_name, self.function_name, self.line_num = file_name, function_name, line_num


class XlaEvents:
    """The plugin's profiler while the program runs, the live arrays'
    tracebacks sampled every `every` seconds, the compilations' Python
    stacks, and the file written at exit.

    Every `flush_every` seconds (VRAMSCOPE_XLA_FLUSH_S, 10 by default; 0:
    never) the profiler is stopped and started again and what it held is
    saved beside the file (PATH.K), so the events held in memory stay
    bounded however long the program runs.  Between the stop and the start
    (0.1 to 3 ms, with the GIL held) the allocator's events are not seen;
    vs_xla_replay.Replay puts them back from what comes after."""

    def __init__(self, path, every=0.5, flush_every=None):
        self.path = path
        self.pid = os.getpid()
        self.profiler = None
        self.samples = []  # (ts, ptr, traceback) not yet in the samples file
        self.spilled = 0  # samples in the samples file
        self.tb_ids = {}  # traceback -> its id in the samples file
        self.tbs = []  # id -> traceback
        self.seen = {}  # id(array) -> ptr, for the arrays live at the last sample
        self.every = every
        if flush_every is None:
            try:
                flush_every = float(os.environ.get("VRAMSCOPE_XLA_FLUSH_S", "10"))
            except ValueError:
                flush_every = 10.0
        self.flush_every = flush_every
        self.chunks = []  # (file, (gap start, gap end)): saved, each followed by a gap
        self.compiles = []  # (start, end, stack, name): the backend's compilations
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.thread = None
        self.mismatch = 0
        self.count = 0
        self.repaired = 0
        self.unseen = self.unseen_max = 0  # stand-ins written, the largest (bytes)
        self.sampling_ns = 0

    def start(self):
        api = _plugin_profiler_api()
        if api is None:
            raise RuntimeError("JAX's GPU plugin has no profiler extension")
        self.profiler = _Profiler(api)
        self.profiler.start()
        try:
            import jax.monitoring
            jax.monitoring.register_event_duration_secs_listener(self._on_duration)
        except Exception:
            pass  # compilations keep their spans only
        self.thread = threading.Thread(target=self._run, name="vramscope-xla", daemon=True)
        self.thread.start()

    def active(self):
        return self.profiler is not None and self.profiler.handle is not None

    def _on_duration(self, name, secs, **kwargs):
        """A compilation ended on this thread: its Python stack is the
        program's call that compiled, for the blocks the compiler (and its
        autotuning) took meanwhile."""
        if name != _COMPILE_EVENT or self.done.is_set() or os.getpid() != self.pid:
            return
        end = time.time_ns()
        self.compiles.append((end - int(secs * 1e9), end, _Stack(sys._getframe(1)),
                              str(kwargs.get("fun_name", ""))))

    def _run(self):
        wait = self.every
        last = time.monotonic()
        while not self.done.wait(wait):
            t = time.perf_counter_ns()
            try:
                self.sample(False)
            except Exception:
                pass
            took = time.perf_counter_ns() - t
            self.sampling_ns += took
            wait = max(self.every, took * _SAMPLE_SHARE / 1e9)
            if self.flush_every > 0 and time.monotonic() - last >= self.flush_every:
                self.flush()
                last = time.monotonic()

    def flush(self):
        """Saves what the profiler holds (PATH.K) and starts it again; on
        failure the profiler keeps its events until exit, as without
        flushing."""
        with self.lock:
            if self.done.is_set() or not self.active():
                return
            try:
                data, gap = self.profiler.restart()
            except Exception:
                self.flush_every = 0
                return
            name = "%s.%d" % (self.path, len(self.chunks))
            with open(name, "wb") as f:
                f.write(data)
            self.chunks.append((name, gap))
            self._spill()

    def sample(self, final):
        """Buffers of the live arrays ready now (all at exit), with their
        creation tracebacks."""
        jax = sys.modules.get("jax")
        if jax is None:
            return
        ts = time.time_ns()
        seen = {}
        for arr in jax.live_arrays():
            key = id(arr)
            try:
                if not final and not arr.is_ready():
                    continue
                ptr = arr.unsafe_buffer_pointer()
            except Exception:
                continue
            seen[key] = ptr
            if self.seen.get(key) == ptr:
                continue
            tb = getattr(arr, "traceback", None)
            if tb is not None:
                self.samples.append((ts, ptr, self.tbs[self._tb_id(tb)]))
        self.seen = seen
        if len(self.samples) >= _SAMPLES_IN_MEMORY:
            self._spill()

    def _tb_id(self, tb):
        try:
            hash(tb)
            key = tb
        except TypeError:
            key = tuple((f.file_name, f.function_name, f.line_num) for f in tb.frames)
        i = self.tb_ids.get(key)
        if i is None:
            i = self.tb_ids[key] = len(self.tbs)
            self.tbs.append(tb)
        return i

    def _spill(self):
        """The samples in memory to the samples file (PATH.samples); their
        tracebacks stay here, one of each."""
        if not self.samples:
            return
        with open(self.path + ".samples", "a") as f:
            f.write("".join("%d %d %d\n" % (ts, ptr, self._tb_id(tb))
                            for ts, ptr, tb in self.samples))
        self.spilled += len(self.samples)
        self.samples = []

    def _all_samples(self):
        """Every sample, in time order: the file's, then memory's."""
        if self.spilled:
            with open(self.path + ".samples") as f:
                for line in f:
                    ts, ptr, i = line.split()
                    yield int(ts), int(ptr), self.tbs[int(i)]
        yield from self.samples

    def finish(self, installed):
        """Stops the profiler and writes the file; returns meta items."""
        self.done.set()
        with self.lock:
            try:
                self.sample(True)
            except Exception:
                pass
            last = self.profiler.stop() if self.active() else None
        from jax.profiler import ProfileData

        def parsed(data):
            try:
                return ProfileData.from_serialized_xspace(data)
            except Exception:
                if not data.endswith(b"\0"):
                    raise
                # The plugin's own copy is one byte longer than the XSpace,
                # a zero at its end.
                return ProfileData.from_serialized_xspace(data[:-1])

        def chunks():
            for name, gap in self.chunks:
                with open(name, "rb") as f:
                    data = f.read()
                os.unlink(name)
                yield _read(parsed(data)), gap
            if last is not None:
                yield _read(parsed(last)), None

        try:
            self._write(chunks(), installed)
        finally:
            for name, _ in self.chunks:
                if os.path.exists(name):
                    os.unlink(name)
            if self.spilled:
                os.unlink(self.path + ".samples")
        # xla.unsampled_runs: how the stack of a run none of whose arrays
        # was sampled is known (vs_xla_replay.Replay._compiled_before).
        return {"xla.allocator_level": "events", "xla.event_count": self.count,
                "xla.unsampled_runs": "compilation-stack",
                "xla.event_mismatch": self.mismatch, "xla.flushes": len(self.chunks),
                "xla.events_put_back": self.repaired, "xla.unseen_blocks": self.unseen,
                "xla.unseen_bytes_max": self.unseen_max,
                "xla.sampling_ms": self.sampling_ns // 1000000}

    def _write(self, chunks, installed):
        """Writes the file from chunks, (events of _read, the gap after
        them or None), in time order."""
        with open(self.path, "w") as f:
            r = vs_xla_replay.Replay(f, installed, self._all_samples(), self.compiles,
                                     _address_range)
            for events, gap in chunks:
                r.chunk(events, gap)
            r.end()
        self.count, self.mismatch, self.repaired = r.count, r.mismatch, r.repaired
        self.unseen, self.unseen_max = r.unseen_no, r.unseen_max


# The stats of an event kept past reading (memory: the events of a chunk).
_KEPT = ("bytes_allocated", "requested_bytes")


def _read(pd):
    """The allocator's events of the XSpace, in time order: (ts, thread,
    is_alloc, device, addr, bytes, stats, executable run, frame name), and
    the executables' runs: (start, thread, None, end, None, None, None,
    run, executable name)."""
    events = []
    for plane in pd.planes:
        for li, line in enumerate(plane.lines):
            spans = []
            mine = []
            for ev in line.events:
                name = ev.name
                if name == "MemoryAllocation" or name == "MemoryDeallocation":
                    mine.append((ev.start_ns, name == "MemoryAllocation", dict(ev.stats)))
                else:
                    spans.append((ev.start_ns, ev.start_ns + ev.duration_ns, name))
            for st, en, name in spans:
                m = _EXECUTE.search(name)
                if m is not None:
                    # An executable's run: its blocks read in an earlier
                    # chunk (the profiler flushed while it ran) take it.
                    events.append((int(st), getattr(line, "name", ""), None, int(en), None, None,
                                   None, (plane.name, li, st), m.group(1)))
            if not mine:
                continue
            spans.sort()
            mine.sort(key=lambda m: m[0])
            open_ = []  # spans begun, outermost first
            j = 0
            for ts, alloc, stats in mine:
                while j < len(spans) and spans[j][0] <= ts:
                    open_.append(spans[j])
                    j += 1
                open_ = [s for s in open_ if s[1] >= ts]
                enclosing = open_
                frame, run = _frame_of(enclosing, plane.name, li)
                name = str(stats.get("allocator_name", ""))
                m = re.match(r"GPU_(\d+)_bfc", name)
                if "addr" not in stats or (m is None and (alloc or name)):
                    continue  # not the GPU's allocator (a free may not name it)
                nbytes = int(stats.get("allocation_bytes", 0))
                kept = {k: int(stats[k]) for k in _KEPT if k in stats}
                events.append((int(ts), getattr(line, "name", ""), alloc, int(m.group(1)) if m else -1,
                               int(stats["addr"]), nbytes, kept, run, frame))
    events.sort(key=lambda e: e[0])
    return events


def _frame_of(enclosing, plane, line):
    """The innermost frame of a block (the executable it ran in, else the
    outermost span around it) and its run's key (None outside one)."""
    for s in enclosing:
        m = _EXECUTE.search(s[2])
        if m is not None:
            return m.group(1), (plane, line, s[0])
    if enclosing:
        return enclosing[0][2], None
    return "", None
