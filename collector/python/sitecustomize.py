# SPDX-License-Identifier: MIT
"""vramscope's PyTorch hook, loaded as `sitecustomize` by `vramscope record`.

`vramscope record --torch=auto|on` puts the folder holding this file first on
PYTHONPATH, so every Python process of the run imports it at start-up.  It
does nothing until the program imports `torch`; then it asks PyTorch to run
`_on_cuda_init` right after CUDA initialises (torch.cuda._lazy_call, so
importing torch never initialises CUDA by itself and a program that forks
before using CUDA keeps working).  That is before the first CUDA allocation:

  * every event of the caching allocator is streamed, as it happens, to
    torch-<pid>.stream through a trace tracker attached to the allocator
    (vs_torch_stream.cpp, built once per installed torch with the C++
    compiler against torch's own headers and Python's, and cached), each
    with the Python stack of the thread that made it: the tracker walks
    that thread's frames itself, without the GIL, and interns each new
    stack once into torch-<pid>.stacks (vs_torch_stacks.hpp).  Both files
    survive every way the process ends — SIGKILL, SIGTERM, abort(), a
    segfault, os._exit — and `record` takes the stream as the allocator
    level, with its stacks;
  * PyTorch's own history (torch.cuda.memory._record_memory_history,
    stacks='python') is recorded only where the stream cannot gather the
    stacks (no Python headers, a Python the walker does not know: one line
    says so), or when VRAMSCOPE_TORCH_HISTORY=1 asks for it, to compare:
    then `record` takes the final snapshot, with the history's stacks, as
    it did before the stream had its own.  VRAMSCOPE_TORCH_HISTORY=0 never
    records it; VRAMSCOPE_TORCH_STACKS=0 turns the stream's stacks off;
  * an out-of-memory observer dumps a snapshot the moment an OOM happens, so
    the state at the failure is kept even if the process is then killed;
  * at exit (also after an uncaught OutOfMemoryError) a final snapshot is
    dumped, and so it is at SIGTERM, SIGHUP and SIGQUIT: the collector's
    control thread calls _on_signal() before the signal ends the process.
    Without the history a snapshot is the segments alone, cheap: it marks
    in the stream where the program's work ended (what Python frees while
    it shuts down is left out) and gives the allocator's settings.  Where
    the stream cannot be built (no compiler, no torch headers, an
    allocator without trace trackers) one line says so and the history
    and snapshots are kept, as before.

Snapshots go to $VRAMSCOPE_SPOOL_DIR as torch-<pid>-<seq>.pickle with a
torch-<pid>-<seq>.info beside it (pid and, per CUDA device index, the GPU's
uuid, memory and name, so `record` can put the allocator's events on the
same process and devices as the collector's CUPTI events; and "meta KEY
VALUE" lines with the allocator's settings, which `record` writes into the
trace's meta table: pytorch.alloc_conf (PYTORCH_CUDA_ALLOC_CONF as set),
pytorch.expandable_segments ("1"/"0"), pytorch.allocator_settings (the
snapshot's allocator_settings as JSON) and pytorch.memory_fraction.<device>,
the per-process fraction set with torch.cuda.set_per_process_memory_fraction,
which the hook wraps to see it), and "timing take_ns N" / "timing write_ns
N": how long taking the snapshot and writing it took (`record --timings`
prints them).  Each file is written under a temporary name and renamed
when complete, the .info first.  The stream's
torch-<pid>.stream.info has the same pid, device and meta lines, and
"stacks 0|1" (whether the stream gathers Python stacks) and "history 0|1"
(whether PyTorch records its history: when it does not, `record` takes the
stream as the allocator level whatever snapshots the process left).

The same start-up also installs vs_frameworks.py, the hook for JAX/XLA's
and CuPy's allocators (their settings, statistics and uncaught
out-of-memory errors; see that file).

Another sitecustomize that this one shadows (Debian and Ubuntu ship one) is
found further along sys.path and run as well.  Nothing here may break the
program: every failure prints one line on stderr and the program runs on.
"""
import os
import sys


def _say(msg):
    try:
        sys.stderr.write("vramscope: %s\n" % msg)
    except Exception:
        pass


def _chain():
    """Runs the sitecustomize this file shadows, if there is one."""
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_spool = os.environ.get("VRAMSCOPE_SPOOL_DIR", "")
_pid = os.getpid()
_seq = 0
_torch = None
_stream_lib = None


def _uuid(props):
    """The device's uuid as nvidia-smi and the collector write it."""
    u = props.uuid
    raw = getattr(u, "bytes", None)
    if isinstance(raw, str) and len(raw) == 16:
        raw = raw.encode("latin-1")
    if isinstance(raw, (bytes, bytearray)) and len(raw) == 16:
        h = bytes(raw).hex()
        return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    s = str(u)
    return s if s.startswith(("GPU-", "MIG-")) else "GPU-" + s


_fractions = {}


def _devices_and_settings(snapshot):
    """The info file's "device" lines, then its "meta" lines of the
    allocator's settings (from snapshot, or the environment's alone when
    None)."""
    torch = _torch
    lines = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        lines.append("device %d %s %d %s" % (i, _uuid(p), p.total_memory, p.name))
    try:
        lines.extend(_meta_lines(snapshot))
    except Exception as e:
        _say("could not read PyTorch's allocator settings (%s: %s)" % (type(e).__name__, e))
    return lines


def _meta_lines(snapshot):
    """The "meta KEY VALUE" lines of the allocator's settings."""
    import json
    torch = _torch
    meta = {}
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        if name in os.environ:
            meta["pytorch.alloc_conf"] = os.environ[name]
            break
    settings = snapshot.get("allocator_settings") if isinstance(snapshot, dict) else None
    if isinstance(settings, dict):
        meta["pytorch.allocator_settings"] = json.dumps(settings, sort_keys=True, default=str)
        if "expandable_segments" in settings:
            meta["pytorch.expandable_segments"] = "1" if settings["expandable_segments"] else "0"
    if "pytorch.expandable_segments" not in meta:
        conf = meta.get("pytorch.alloc_conf", "").replace(" ", "").lower()
        meta["pytorch.expandable_segments"] = "1" if "expandable_segments:true" in conf else "0"
    get = getattr(torch.cuda, "get_per_process_memory_fraction", None)
    for i in range(torch.cuda.device_count()):
        fraction = _fractions.get(i)
        if fraction is None and get is not None:
            try:
                fraction = float(get(i))
            except Exception:
                fraction = None
        if fraction is not None:
            meta["pytorch.memory_fraction.%d" % i] = repr(float(fraction))
    return ["meta %s %s" % (k, " ".join(str(v).split())) for k, v in sorted(meta.items())]


def _dump(why):
    """Writes a snapshot of every device and its .info; never raises."""
    global _seq
    if os.getpid() != _pid or not _spool:
        return
    import gc
    collecting = gc.isenabled()
    try:
        import pickle
        import time
        torch = _torch
        _seq += 1
        base = os.path.join(_spool, "torch-%d-%06d" % (_pid, _seq))
        # The snapshot is hundreds of thousands of new objects and no
        # cycles: the cyclic collector would only walk the program's heap
        # again and again while they are made and written.
        gc.disable()
        t0 = time.monotonic_ns()
        snapshot = torch.cuda.memory._snapshot()
        t1 = time.monotonic_ns()
        lines = ["pid %d" % _pid, "reason %s" % why] + _devices_and_settings(snapshot)
        with open(base + ".pickle.tmp", "wb") as f:
            pickle.dump(snapshot, f, protocol=4)
        # What the snapshot cost the program (`record --timings` prints it).
        lines.append("timing take_ns %d" % (t1 - t0))
        lines.append("timing write_ns %d" % (time.monotonic_ns() - t1))
        with open(base + ".info.tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(base + ".info.tmp", base + ".info")
        os.rename(base + ".pickle.tmp", base + ".pickle")
    except Exception as e:
        _say("could not save PyTorch's memory snapshot (%s: %s)" % (type(e).__name__, e))
    finally:
        if collecting:
            gc.enable()


def _cache_dirs():
    """Where built stream libraries are kept, most preferred first."""
    dirs = []
    if os.environ.get("VRAMSCOPE_CACHE_DIR"):
        dirs.append(os.environ["VRAMSCOPE_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    dirs.append(os.path.join(xdg, "vramscope"))
    dirs.append(_spool)
    return dirs


def _cuda_include():
    """A folder holding cuda_runtime_api.h: the toolkit, or the CUDA
    runtime that came with the torch wheel."""
    import glob
    cands = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "include"))
    cands.append("/usr/local/cuda/include")
    for site in sys.path:
        cands.extend(sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))))
    for c in cands:
        if os.path.isfile(os.path.join(c, "cuda_runtime_api.h")):
            return c
    return None


def _stream_library():
    """The stream library for the installed torch, built if needed."""
    import ctypes
    import hashlib
    import subprocess
    torch = _torch
    import sysconfig
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "vs_torch_stream.cpp")
    code = b""
    for name in ("vs_torch_stream.cpp", "vs_torch_stacks.hpp"):
        with open(os.path.join(here, name), "rb") as f:
            code += f.read()
    tdir = os.path.dirname(os.path.abspath(torch.__file__))
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    cuda_inc = _cuda_include()
    # Python's headers: the tracker gathers Python stacks itself with them.
    py_inc = sysconfig.get_paths().get("include") or ""
    if not os.path.isfile(os.path.join(py_inc, "Python.h")):
        py_inc = ""
    key = hashlib.sha256(code + ("|%s|%s|%d|%s|%s|%s" % (torch.__version__, tdir, abi, cuda_inc,
                                                          py_inc, sys.version))
                         .encode()).hexdigest()[:16]
    name = "vs_torch_stream-%s.so" % key
    for d in _cache_dirs():
        if os.path.isfile(os.path.join(d, name)):
            lib = ctypes.CDLL(os.path.join(d, name), use_errno=True)
            break
    else:
        for d in _cache_dirs():
            log = os.path.join(d, name[:-3] + ".log")
            if os.path.isfile(log):
                raise RuntimeError("building it failed before, see %s (remove it to try again)"
                                   % log)
        if cuda_inc is None:
            raise RuntimeError("no CUDA headers (cuda_runtime_api.h) found: set CUDA_HOME")
        cxx = os.environ.get("CXX", "g++")
        lib_dir = os.path.join(tdir, "lib")
        out = None
        for d in _cache_dirs():
            try:
                os.makedirs(d, exist_ok=True)
                if os.access(d, os.W_OK):
                    out = os.path.join(d, name)
                    break
            except OSError:
                pass
        if out is None:
            raise RuntimeError("no writable folder to build it in")
        tmp = "%s.tmp-%d" % (out, os.getpid())
        _say("building PyTorch's allocator stream for torch %s (once)" % torch.__version__)
        # Headers of one torch need C++17, of a later one perhaps C++20;
        # with Python's headers first (the tracker's own Python stacks),
        # without them if that cannot build (the history then gives stacks).
        tries = [(std, py) for py in ([py_inc] if py_inc else []) + [""]
                 for std in ("c++17", "c++20")]
        first_failure = None
        for std, py in tries:
            cmd = [cxx, "-O2", "-std=" + std, "-shared", "-fPIC", "-fvisibility=hidden",
                   "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi,
                   "-I", os.path.join(tdir, "include"), "-I", cuda_inc, src, "-o", tmp,
                   "-L", lib_dir, "-lc10_cuda", "-lc10", "-Wl,-rpath," + lib_dir]
            if py:
                cmd[1:1] = ["-DVS_PYTHON_STACKS=1", "-I", here, "-I", py]
            try:
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=float(os.environ.get("VRAMSCOPE_BUILD_TIMEOUT", "300")))
            except FileNotFoundError:
                raise RuntimeError("no C++ compiler (%s)" % cxx)
            if r.returncode == 0:
                break
            if first_failure is None:
                first_failure = " ".join(cmd).encode() + b"\n" + r.stdout
        if r.returncode == 0 and first_failure is not None and py_inc and not py:
            # Built, but without Python stacks: say why, once.
            with open(out[:-3] + ".stacks.log", "wb") as f:
                f.write(first_failure)
            _say("the allocator stream was built without its own Python stacks (see %s)"
                 % (out[:-3] + ".stacks.log"))
        if r.returncode != 0:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            log = out[:-3] + ".log"
            with open(log, "wb") as f:
                f.write(" ".join(cmd).encode() + b"\n" + r.stdout)
            errs = [l for l in r.stdout.decode(errors="replace").splitlines() if "error" in l]
            raise RuntimeError("%s failed: %s (all of it in %s)"
                               % (cxx, (errs or ["exit %d" % r.returncode])[0], log))
        os.rename(tmp, out)
        lib = ctypes.CDLL(out, use_errno=True)
    lib.vs_torch_stream_start.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
    lib.vs_torch_stream_start.restype = ctypes.c_int
    return lib


def _stacks(path, on):
    """Turns the stream's own Python stacks on (writing them to path) or
    off.  Returns True when they are gathered; raises when they cannot be."""
    import ctypes
    # PyDLL: called with the GIL held (the first call checks the frame
    # walker against the interpreter's own frame API).
    fn = getattr(ctypes.PyDLL(_stream_lib._name, use_errno=True), "vs_torch_stream_stacks", None)
    if fn is None:
        raise RuntimeError("the stream library has no stacks")
    fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
    fn.restype = ctypes.c_int
    r = fn(path.encode() if path else None, 1 if on else 0)
    if r < 0:
        e = ctypes.get_errno()
        import errno
        if e == errno.ENOTSUP:
            raise RuntimeError("not with this library or Python %d.%d" % sys.version_info[:2])
        raise OSError(e, os.strerror(e))
    return r == 1


def _history(wanted, stacks):
    """Whether PyTorch's own history is recorded: VRAMSCOPE_TORCH_HISTORY
    (wanted) 1 always, 0 never (a measurement knob), unset only where the
    stream gathers no stacks."""
    return wanted == "1" or (wanted != "0" and not stacks)


def _start_stream(wanted):
    """Streams the caching allocator's events to torch-PID.stream, with
    their Python stacks in torch-PID.stacks (unless VRAMSCOPE_TORCH_STACKS
    is 0) and a torch-PID.stream.info beside it.  Returns (streaming,
    stacks): whether the stream runs, and whether it gathers the stacks."""
    global _stream_lib
    if os.environ.get("VRAMSCOPE_TORCH_STREAM", "1") == "0":
        return False, False
    try:
        torch = _torch
        lib = _stream_library()
        base = os.path.join(_spool, "torch-%d.stream" % _pid)
        limit = int(os.environ.get("VRAMSCOPE_TORCH_STREAM_MAX_MB", "4096")) << 20
        if lib.vs_torch_stream_start(base.encode(), limit) != 0:
            import ctypes
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        _stream_lib = lib
    except Exception as e:
        _say("PyTorch's allocator level is kept only when Python exits normally or at an "
             "OOM: its event stream could not start (%s)" % (e,))
        return False, False
    stacks = False
    if os.environ.get("VRAMSCOPE_TORCH_STACKS", "1") != "0":
        try:
            stacks = _stacks(os.path.join(_spool, "torch-%d.stacks" % _pid), True)
        except Exception as e:
            _say("the allocator stream gathers no Python stacks (%s): PyTorch's own history "
                 "gives them" % (e,))
    try:
        # The settings known at start: what the environment sets (the
        # snapshot's own list is not there to read).
        lines = ["pid %d" % _pid, "reason stream", "stacks %d" % int(stacks),
                 "history %d" % int(_history(wanted, stacks))] + _devices_and_settings(None)
        with open(base + ".info.tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(base + ".info.tmp", base + ".info")
    except Exception as e:
        _say("could not describe the allocator stream (%s: %s)" % (type(e).__name__, e))
    return True, stacks


def _on_oom(device, alloc, device_allocated, device_free):
    _dump("oom")


def _on_signal():
    """Called by the collector's control thread on SIGTERM, SIGHUP or
    SIGQUIT, just before the signal ends the process (vs-collector.c,
    signal_snapshot): the final snapshot, with Python stacks."""
    if os.getpid() == _pid and _torch is not None and _torch.cuda.is_initialized():
        _dump("signal")


def _at_exit():
    if os.getpid() == _pid and _torch is not None and _torch.cuda.is_initialized():
        _dump("exit")
        # What Python frees as it shuts down comes after the exit snapshot
        # and is not kept: no stacks for it (nor once frames are gone).
        if _stream_lib is not None:
            try:
                _stacks(None, False)
            except Exception:
                pass


def _on_cuda_init():
    """Runs inside torch.cuda's lazy initialisation, before any allocation."""
    global _pid
    torch = _torch
    _pid = os.getpid()
    try:
        backend = torch.cuda.get_allocator_backend()
    except Exception:
        backend = "native"
    if backend != "native":
        # cudaMallocAsync keeps no history; the collector sees its pool
        # (size and utilized bytes) and every allocation through CUPTI.
        return
    # PyTorch's own history is needed only for stacks the stream cannot
    # gather, or when asked for (VRAMSCOPE_TORCH_HISTORY=1: today's
    # snapshots with their history, to compare).
    wanted = os.environ.get("VRAMSCOPE_TORCH_HISTORY", "")
    streaming, stacks = _start_stream(wanted)
    try:
        if _history(wanted, stacks):
            entries = int(os.environ.get("VRAMSCOPE_TORCH_MAX_ENTRIES", "1000000"))
            # Stacks of allocations and frees ("all", the default); "alloc"
            # keeps no stacks of frees (a measurement knob: it costs less).
            context = os.environ.get("VRAMSCOPE_TORCH_CONTEXT", "all")
            if context not in ("all", "alloc"):
                context = "all"
            torch.cuda.memory._record_memory_history(max_entries=entries, stacks="python",
                                                     context=context)
        torch._C._cuda_attach_out_of_memory_observer(_on_oom)
        import atexit
        atexit.register(_at_exit)
    except Exception as e:
        _say("could not enable PyTorch's allocation history (%s: %s)" % (type(e).__name__, e))


def _wrap_memory_fraction(module):
    """Wraps torch.cuda.set_per_process_memory_fraction to note each
    device's fraction (the allocator's own limit) for the trace's meta."""
    original = module.cuda.set_per_process_memory_fraction

    def set_per_process_memory_fraction(fraction, device=None):
        result = original(fraction, device)
        try:
            index = module.cuda._utils._get_device_index(device, optional=True)
            _fractions[int(index)] = float(fraction)
        except Exception:
            pass
        return result

    set_per_process_memory_fraction.__doc__ = original.__doc__
    set_per_process_memory_fraction.__wrapped__ = original
    module.cuda.set_per_process_memory_fraction = set_per_process_memory_fraction
    memory = getattr(module.cuda, "memory", None)
    if memory is not None and getattr(memory, "set_per_process_memory_fraction", None) is original:
        memory.set_per_process_memory_fraction = set_per_process_memory_fraction


def _on_torch_imported(module):
    global _torch
    _torch = module
    try:
        module.cuda._lazy_call(_on_cuda_init)
    except Exception as e:
        _say("could not hook PyTorch (%s: %s)" % (type(e).__name__, e))
    try:
        _wrap_memory_fraction(module)
    except Exception as e:
        _say("could not watch the per-process memory fraction (%s: %s)" % (type(e).__name__, e))


def _install():
    if not _spool or os.environ.get("VRAMSCOPE_TORCH", "0") == "0":
        return
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
    else:
        # Once the real finders have loaded it (vs_frameworks.py, beside
        # this file).
        import vs_frameworks
        sys.meta_path.insert(0, vs_frameworks.Watcher({"torch": _on_torch_imported}))


# The collector finds _on_signal here: `sitecustomize` may name another
# module once _chain() has run.
sys.modules["_vramscope_hook"] = sys.modules[__name__]
try:
    _install()
except Exception as e:
    _say("could not install the PyTorch hook (%s: %s)" % (type(e).__name__, e))
try:
    # JAX/XLA's and CuPy's allocators: their settings, statistics and
    # out-of-memory errors (vs_frameworks.py, beside this file).
    import vs_frameworks
    vs_frameworks.install()
except Exception as e:
    _say("could not install the JAX/CuPy hook (%s: %s)" % (type(e).__name__, e))
try:
    _chain()
except Exception as e:
    _say("the program's own sitecustomize failed (%s: %s)" % (type(e).__name__, e))
