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

The profiler's events stay in memory until exit, where they are read
here in Python (samples/jax-healthy.py on an H100: about 80 allocator
events a step; 170 MB and 2 s at exit per 1,000 steps, docs/performance.md).
Stopping and starting the profiler to flush would lose the events in
between, so it runs once.  A program that starts JAX's profiler itself
while this one runs cannot: VRAMSCOPE_XLA_EVENTS=0 leaves this out.
"""
import ctypes
import os
import re
import sys
import threading
import time

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

    def start(self):
        c = _Create(ctypes.sizeof(_Create), _OPTIONS, len(_OPTIONS), None)
        self._check(_CALL(self.api.create)(ctypes.addressof(c)), "create")
        self.handle = c.profiler
        h = _Handle(ctypes.sizeof(_Handle), self.handle)
        self._check(_CALL(self.api.start)(ctypes.addressof(h)), "start")

    def stop(self):
        """Stops and returns the serialized XSpace (bytes)."""
        h = _Handle(ctypes.sizeof(_Handle), self.handle)
        self._check(_CALL(self.api.stop)(ctypes.addressof(h)), "stop")
        c = _Collect(ctypes.sizeof(_Collect), self.handle, None, 0)
        self._check(_CALL(self.api.collect_data)(ctypes.addressof(c)), "collect")
        size = c.buffer_size_in_bytes
        if c.buffer:  # the plugin's own copy
            data = ctypes.string_at(c.buffer, size)
        else:
            buf = ctypes.create_string_buffer(max(size, 1))
            c.buffer = ctypes.addressof(buf)
            self._check(_CALL(self.api.collect_data)(ctypes.addressof(c)), "collect")
            data = buf.raw[:size]
        d = _Handle(ctypes.sizeof(_Handle), self.handle)
        _CALL(self.api.destroy)(ctypes.addressof(d))
        self.handle = None
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


class XlaEvents:
    """The plugin's profiler while the program runs, the live arrays'
    tracebacks sampled every `every` seconds, and the file written at
    exit."""

    def __init__(self, path, every=0.5):
        self.path = path
        self.pid = os.getpid()
        self.profiler = None
        self.samples = []  # (ts, ptr, traceback)
        self.seen = {}  # id(array) -> ptr, for arrays sampled
        self.every = every
        self.done = threading.Event()
        self.thread = None
        self.mismatch = 0
        self.count = 0

    def start(self):
        api = _plugin_profiler_api()
        if api is None:
            raise RuntimeError("JAX's GPU plugin has no profiler extension")
        self.profiler = _Profiler(api)
        self.profiler.start()
        self.thread = threading.Thread(target=self._run, name="vramscope-xla", daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.wait(self.every):
            try:
                self.sample(False)
            except Exception:
                pass

    def sample(self, final):
        """Buffers of the live arrays ready now (all at exit), with their
        creation tracebacks."""
        jax = sys.modules.get("jax")
        if jax is None:
            return
        ts = time.time_ns()
        for arr in jax.live_arrays():
            key = id(arr)
            try:
                if not final and not arr.is_ready():
                    continue
                ptr = arr.unsafe_buffer_pointer()
            except Exception:
                continue
            if self.seen.get(key) == ptr:
                continue
            self.seen[key] = ptr
            tb = getattr(arr, "traceback", None)
            if tb is not None:
                self.samples.append((ts, ptr, tb))

    def finish(self, installed):
        """Stops the profiler and writes the file; returns meta items."""
        self.done.set()
        try:
            self.sample(True)
        except Exception:
            pass
        data = self.profiler.stop()
        from jax.profiler import ProfileData
        try:
            pd = ProfileData.from_serialized_xspace(data)
        except Exception:
            if not data.endswith(b"\0"):
                raise
            # The plugin's own copy is one byte longer than the XSpace,
            # a zero at its end.
            pd = ProfileData.from_serialized_xspace(data[:-1])
        events = _read(pd)
        self._write(events, installed)
        return {"xla.allocator_level": "events", "xla.event_count": self.count,
                "xla.event_mismatch": self.mismatch}

    def _write(self, events, installed):
        # The latest allocation at each address before each sample.
        by_addr = {}
        for i, e in enumerate(events):
            if e[2]:
                by_addr.setdefault(e[4], []).append(i)
        tb_of = {}  # event index -> traceback
        group_tb = {}  # executable run -> traceback
        for ts, ptr, tb in self.samples:
            best = None
            for i in by_addr.get(ptr, ()):
                if events[i][0] <= ts:
                    best = i
            if best is not None and best not in tb_of:
                tb_of[best] = tb
                if events[best][7] is not None:
                    group_tb.setdefault(events[best][7], tb)
        stacks = {}
        live = {}  # ptr -> (dev, bytes): device addresses are unique
        in_use = {}  # dev -> bytes
        regions = {}  # dev -> [(base, end)]
        out = ["allocator xla"]
        for i, (ts, _, alloc, dev, ptr, nbytes, stats, run, frame) in enumerate(events):
            if not alloc:
                held = live.pop(ptr, None)
                if held is None:
                    continue  # allocated before the profiler started
                dev, size = held
                in_use[dev] = in_use.get(dev, 0) - size
                out.append("f %d %d %d %d" % (ts, dev, ptr, size))
            else:
                if not any(b <= ptr < e for b, e in regions.get(dev, ())):
                    r = _address_range(dev, ptr)
                    if r is not None:
                        regions.setdefault(dev, []).append((r[0], r[0] + r[1]))
                        out.append("S %d %d %d %d" % (ts, dev, r[0], r[1]))
                tb = tb_of.get(i) or (group_tb.get(run) if run is not None else None)
                key = (frame, id(tb) if tb is not None else 0)
                sid = stacks.get(key)
                if sid is None:
                    sid = len(stacks) + 1
                    stacks[key] = sid
                    out.append("stack %d" % sid)
                    if frame:
                        out.append("label %s" % " ".join(frame.split()))
                    for fr in (tb.frames if tb is not None else ()):
                        out.append("frame %d %s\t%s" % (
                            fr.line_num or 0, installed(fr.file_name).replace("\t", " "),
                            fr.function_name.replace("\t", " ")))
                live[ptr] = (dev, nbytes)
                in_use[dev] = in_use.get(dev, 0) + nbytes
                out.append("a %d %d %d %d %d %d" % (ts, dev, ptr, nbytes,
                                                    stats.get("requested_bytes", nbytes), sid))
            self.count += 1
            if "bytes_allocated" in stats and in_use[dev] != stats["bytes_allocated"]:
                self.mismatch += 1
        with open(self.path, "w") as f:
            f.write("\n".join(out) + "\n")


def _read(pd):
    """The allocator's events of the XSpace, in time order: (ts, order,
    is_alloc, device, addr, bytes, stats, executable run, frame name)."""
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
                events.append((int(ts), 0, alloc, int(m.group(1)) if m else -1,
                               int(stats["addr"]), nbytes, stats, run, frame))
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
