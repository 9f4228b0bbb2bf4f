"""vramscope's PyTorch hook, loaded as `sitecustomize` by `vramscope record`.

`vramscope record --torch=auto|on` puts the folder holding this file first on
PYTHONPATH, so every Python process of the run imports it at start-up.  It
does nothing until the program imports `torch`; then it asks PyTorch to run
`_on_cuda_init` right after CUDA initialises (torch.cuda._lazy_call, so
importing torch never initialises CUDA by itself and a program that forks
before using CUDA keeps working).  That is before the first CUDA allocation:

  * the caching allocator records its history with Python stacks
    (torch.cuda.memory._record_memory_history, stacks='python');
  * an out-of-memory observer dumps a snapshot the moment an OOM happens, so
    the state at the failure is kept even if the process is then killed;
  * at exit (also after an uncaught OutOfMemoryError) a final snapshot is
    dumped.

Snapshots go to $VRAMSCOPE_SPOOL_DIR as torch-<pid>-<seq>.pickle with a
torch-<pid>-<seq>.info beside it (pid and, per CUDA device index, the GPU's
uuid, memory and name, so `record` can put the allocator's events on the
same process and devices as the collector's CUPTI events; and "meta KEY
VALUE" lines with the allocator's settings, which `record` writes into the
trace's meta table: pytorch.alloc_conf (PYTORCH_CUDA_ALLOC_CONF as set),
pytorch.expandable_segments ("1"/"0"), pytorch.allocator_settings (the
snapshot's allocator_settings as JSON) and pytorch.memory_fraction.<device>,
the per-process fraction set with torch.cuda.set_per_process_memory_fraction,
which the hook wraps to see it).  Each file is written under a temporary
name and renamed when complete.

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
    try:
        import pickle
        torch = _torch
        _seq += 1
        base = os.path.join(_spool, "torch-%d-%06d" % (_pid, _seq))
        snapshot = torch.cuda.memory._snapshot()
        lines = ["pid %d" % _pid, "reason %s" % why]
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            lines.append("device %d %s %d %s" % (i, _uuid(p), p.total_memory, p.name))
        try:
            lines.extend(_meta_lines(snapshot))
        except Exception as e:
            _say("could not read PyTorch's allocator settings (%s: %s)" % (type(e).__name__, e))
        with open(base + ".info.tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(base + ".pickle.tmp", "wb") as f:
            pickle.dump(snapshot, f, protocol=4)
        os.rename(base + ".info.tmp", base + ".info")
        os.rename(base + ".pickle.tmp", base + ".pickle")
    except Exception as e:
        _say("could not save PyTorch's memory snapshot (%s: %s)" % (type(e).__name__, e))


def _on_oom(device, alloc, device_allocated, device_free):
    _dump("oom")


def _at_exit():
    if os.getpid() == _pid and _torch is not None and _torch.cuda.is_initialized():
        _dump("exit")


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
    try:
        entries = int(os.environ.get("VRAMSCOPE_TORCH_MAX_ENTRIES", "1000000"))
        torch.cuda.memory._record_memory_history(max_entries=entries, stacks="python")
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


class _TorchFinder:
    """A meta path finder that lets the real finders load `torch` and runs
    _on_torch_imported once its package has executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = None
        for finder in sys.meta_path:
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
            _on_torch_imported(module)

        spec.loader.exec_module = exec_module
        return spec


def _install():
    if not _spool or os.environ.get("VRAMSCOPE_TORCH", "0") == "0":
        return
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchFinder())


try:
    _install()
except Exception as e:
    _say("could not install the PyTorch hook (%s: %s)" % (type(e).__name__, e))
try:
    _chain()
except Exception as e:
    _say("the program's own sitecustomize failed (%s: %s)" % (type(e).__name__, e))
