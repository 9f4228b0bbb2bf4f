#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-frameworks-hook.py HOOK_DIR — the JAX/CuPy hook
(collector/python/vs_frameworks.py, installed by sitecustomize.py), without
a GPU: programs run with HOOK_DIR first on PYTHONPATH and a spool, as
`vramscope record` runs them, and what the hook leaves in the spool
(vsfw-PID.info) is read back.

  * an uncaught JAX RESOURCE_EXHAUSTED (the text jaxlib 0.11 raises) is a
    failure of `xla` on the device the message names, with the request
    the message gives and the traceback's frames, innermost first;
  * an uncaught CuPy OutOfMemoryError (a stand-in `cupy` package with
    CuPy's API: pool, get/set_allocator, runtime.getDevice) is a failure
    of `cupy` with the request in bytes; the pool's high-water marks are
    kept by the wrapper the hook sets as CuPy's allocator (which calls the
    pool's own malloc), read at exit with the pool's figures, and the
    hook's own frame is not in the traceback's stack;
  * a program that imports neither and fails leaves nothing;
  * the program's own excepthook still runs.
TAP output.
"""
import os
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_fake_frameworks import CUPY_CUDA_INIT, CUPY_INIT_TAIL, CUPY_RUNTIME  # noqa: E402

hook_dir = os.path.abspath(sys.argv[1])

FAKE_CUPY = {
    "cupy/__init__.py": '''
        from cupy import cuda

        class _Ptr:
            def __init__(self, size):
                self.device_id = 0
                self.size = size

        class _Pool:
            def __init__(self):
                self.used = 0
                self.total = 0

            def malloc(self, size):
                if self.used + size > 1 << 30:
                    raise cuda.memory.OutOfMemoryError(
                        "Out of memory allocating %s bytes (allocated so far: %s bytes)."
                        % (format(size, ","), format(self.used, ",")))
                self.used += size
                self.total = max(self.total, self.used)
                return _Ptr(size)

            def free(self, size):
                self.used -= size

            def used_bytes(self):
                return self.used

            def total_bytes(self):
                return self.total

            def get_limit(self):
                return 1 << 30

        _pool = _Pool()''' + CUPY_INIT_TAIL,
    "cupy/cuda/__init__.py": CUPY_CUDA_INIT,
    "cupy/cuda/memory.py": '''
        class OutOfMemoryError(MemoryError):
            pass
        ''',
    "cupy/cuda/runtime.py": CUPY_RUNTIME,
}


def run(program, files=None):
    """Runs program as record would; returns (exit status, stderr, the
    lines of vsfw-PID.info or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        spool = os.path.join(tmp, "spool")
        os.mkdir(spool)
        for name, text in (files or {}).items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))
        with open(os.path.join(tmp, "prog.py"), "w") as f:
            f.write(textwrap.dedent(program))
        env = dict(os.environ, PYTHONPATH=hook_dir, VRAMSCOPE_SPOOL_DIR=spool,
                   VRAMSCOPE_TORCH="1")
        p = subprocess.run([sys.executable, "prog.py"], cwd=tmp, env=env, capture_output=True,
                           text=True)
        infos = [n for n in os.listdir(spool) if n.startswith("vsfw-") and n.endswith(".info")]
        lines = None
        if infos:
            with open(os.path.join(spool, infos[0])) as f:
                lines = f.read().splitlines()
        return p.returncode, p.stderr, lines


def meta(lines, key):
    for line in lines:
        if line.startswith("meta %s " % key):
            return line[len("meta %s " % key):]
    return None


# JAX: the error's type and text as jaxlib 0.11 raises them.
rc, err, lines = run('''
    import sys
    seen = []
    sys.excepthook = lambda *a, prev=sys.excepthook: (seen.append(1), sys.stderr.write("OWN HOOK\\n"), prev(*a))

    class JaxRuntimeError(RuntimeError):
        pass

    def step():
        raise JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2.00GiB "
                              "with allocator GPU_1_bfc on device 1. [executable_name='jit_f']")

    def train():
        step()

    import json  # a framework is not needed for its error to be recognised
    train()
    ''')
ok(rc == 1 and lines is not None, "JAX: the program fails and the hook leaves its file", err)
failed = [l for l in (lines or []) if l.startswith("failed ")]
ok(len(failed) == 1 and failed[0].split()[2:5] == ["1", "2147483648", "xla"],
   "JAX: a failure of xla on device 1 for 2.00 GiB", failed)
frames = [l for l in (lines or []) if l.startswith("frame ")]
ok([f.split("\t")[1] for f in frames] == ["step", "train", "<module>"]
   and frames[0].startswith("frame 10 ") and frames[0].split(" ", 2)[2].split("\t")[0].endswith(
       "prog.py"),
   "JAX: the traceback's frames, innermost first, with their lines", frames)
ok((meta(lines or [], "program.last_error") or "").startswith("JaxRuntimeError: RESOURCE_EXHAUSTED"),
   "JAX: the program's last error is kept", lines)
ok("OWN HOOK" in err and "Traceback" in err, "the program's own excepthook and Python's still run",
   err)

# CuPy, through a stand-in package with CuPy's API.
rc, err, lines = run('''
    import cupy
    pool = cupy.get_default_memory_pool()
    alloc = cupy.cuda.get_allocator()
    a = alloc(300 << 20)
    b = alloc(500 << 20)
    pool.free(500 << 20)
    c = alloc(100 << 20)
    def grow():
        return [alloc(256 << 20) for _ in range(4)]
    grow()
    ''', FAKE_CUPY)
ok(rc == 1 and lines is not None, "CuPy: the program fails and the hook leaves its file", err)
failed = [l for l in (lines or []) if l.startswith("failed ")]
ok(len(failed) == 1 and failed[0].split()[2:5] == ["0", "268435456", "cupy"],
   "CuPy: a failure of cupy on device 0 for 268,435,456 bytes", failed)
frames = [l.split("\t")[1] for l in (lines or []) if l.startswith("frame ")]
ok(frames[-3:] == ["<listcomp>", "grow", "<module>"] or frames[-2:] == ["grow", "<module>"],
   "CuPy: the program's frames end the stack", frames)
ok(not any("vs_frameworks" in l for l in (lines or []) if l.startswith("frame ")),
   "CuPy: the hook's own wrapper is not in the stack", lines)
# 300 + 500 MiB, 500 freed, 100, then 256 MiB each: 656, 912, then refused.
ok(meta(lines or [], "cupy.peak_used_bytes.0") == str(912 << 20),
   "CuPy: the peak of used_bytes, read after every malloc",
   meta(lines or [], "cupy.peak_used_bytes.0"))
ok(meta(lines or [], "cupy.num_allocs.0") == "5", "CuPy: the allocations counted (5 succeeded)",
   meta(lines or [], "cupy.num_allocs.0"))
ok(meta(lines or [], "cupy.used_bytes.0.at_failure") == str((400 << 20) + (512 << 20)),
   "CuPy: the pool's used bytes at the failure", meta(lines or [], "cupy.used_bytes.0.at_failure"))
ok(meta(lines or [], "cupy.allocator") == "pool", "CuPy: its allocator is still the pool",
   meta(lines or [], "cupy.allocator"))

rc, err, lines = run('''
    raise ValueError("not memory")
    ''')
ok(rc == 1 and lines is None, "a program using neither framework leaves nothing", lines)
done()
