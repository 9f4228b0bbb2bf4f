#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-cupy-allocator-level.py HOOK_DIR VRAMSCOPE ENDINGS_DIR — CuPy's pool
at the allocator level (collector/python/vs_frameworks.py, the events file
vsfw-PID.events) and out-of-memory errors the program catches, without a
GPU.

CuPy runs as a stand-in package that keeps CuPy's memory pool as its
memory.pyx does: sizes rounded up to 512 bytes, a new segment of exactly
the rounded size where no free chunk fits (best fit, split, merged again
when freed), a block freed the moment its PooledMemory is dropped,
free_all_blocks() giving back the segments with nothing in use, and
set_limit() refusing with OutOfMemoryError after freeing them.  The
program records the pool's own used_bytes() and total_bytes() after each
step, their peaks, and how many blocks it asked for: the truth.

  * the events replayed give the pool's peak and final used_bytes() and
    total_bytes() exactly, and no segment was left unmatched;
  * each block's stack reaches the program's own line, never the hook's;
  * the out-of-memory error the program catches is a failure, with the
    request, the text and the program's line;
  * the file made into a trace (added to the spool a killed `record` left
    on an H100, tests/data/endings/torch-kill-record, and recovered): one
    `cupy` row, whose peak and final allocated and reserved are the pool's
    figures, its allocation count the program's and its failure the
    caught error; `peak --allocator cupy` names the program's lines;
    `diagnose` names the failure (oom-allocator-limit of cupy) and no leak
    of what the pool keeps; a file cut short, or with lines no hook
    writes, is read up to them;
  * a JAX RESOURCE_EXHAUSTED the program catches is a failure too (where
    Python has sys.monitoring, 3.12 and later: found as python3.12 or
    python3.13 when the test's own Python is older).
TAP output.
"""
import csv
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402
from vs_fake_frameworks import CUPY_CUDA_INIT, CUPY_INIT_TAIL, CUPY_RUNTIME, recorded_spool  # noqa: E402

hook_dir = os.path.abspath(sys.argv[1])
vramscope, endings = sys.argv[2], sys.argv[3]

POOL_CUPY = {  # installed as a package is, in site-packages
    "cupy/__init__.py": '''
        from cupy import cuda
        from cupy.cuda import memory

        _pool = memory.MemoryPool()''' + CUPY_INIT_TAIL,
    "cupy/cuda/__init__.py": CUPY_CUDA_INIT,
    "cupy/cuda/runtime.py": CUPY_RUNTIME,
    "cupy/cuda/memory.py": '''
        import bisect


        class OutOfMemoryError(MemoryError):
            def __init__(self, size, total, limit):
                super().__init__("Out of memory allocating %s bytes (allocated so far: %s bytes, "
                                 "limit set to: %s bytes)." % (format(size, ","),
                                                               format(total, ","),
                                                               format(limit, ",")))


        class UnownedMemory:
            def __init__(self, ptr, size, owner, device_id=-1):
                self.ptr, self.size, self._owner, self.device_id = ptr, size, owner, device_id


        class PooledMemory:
            def __init__(self, ptr, size, pool):
                self.ptr, self.size, self.device_id, self.pool = ptr, size, 0, pool

            def __del__(self):
                self.pool._free(self.ptr, self.size)


        class MemoryPointer:
            def __init__(self, mem, offset):
                self.mem, self.ptr, self.device_id = mem, mem.ptr + offset, mem.device_id


        class MemoryPool:
            """CuPy's pool as memory.pyx keeps it (one device, one stream)."""

            def __init__(self):
                self.segments = {}  # start → size (cudaMalloc'd)
                self.free = {}  # chunk start → size
                self.used = self.total = self.limit = 0
                self.next = 0x7f0000000000

            def _segment(self, ptr):
                starts = sorted(self.segments)
                s = starts[bisect.bisect_right(starts, ptr) - 1]
                return s, s + self.segments[s]

            def malloc(self, size):
                size = (size + 511) // 512 * 512
                fits = [(n, p) for p, n in self.free.items() if n >= size]
                if fits:
                    n, ptr = min(fits)
                    del self.free[ptr]
                    if n > size:
                        self.free[ptr + size] = n - size
                else:
                    if self.limit and self.total + size > self.limit:
                        self.free_all_blocks()
                    if self.limit and self.total + size > self.limit:
                        raise OutOfMemoryError(size, self.total, self.limit)
                    ptr = self.next
                    self.next += size + (1 << 20)
                    self.segments[ptr] = size
                    self.total += size
                self.used += size
                return MemoryPointer(PooledMemory(ptr, size, self), 0)

            def _free(self, ptr, size):
                self.used -= size
                lo, hi = self._segment(ptr)
                after = ptr + size
                if after < hi and after in self.free:
                    size += self.free.pop(after)
                for p, n in list(self.free.items()):
                    if p + n == ptr and p >= lo:
                        del self.free[p]
                        ptr, size = p, n + size
                        break
                self.free[ptr] = size

            def free_all_blocks(self, stream=None):
                for s, n in list(self.segments.items()):
                    if self.free.get(s) == n:
                        del self.free[s], self.segments[s]
                        self.total -= n

            def used_bytes(self):
                return self.used

            def total_bytes(self):
                return self.total

            def set_limit(self, size=None, fraction=None):
                self.limit = size

            def get_limit(self):
                return self.limit
        ''',
}

PROGRAM = '''
    import json

    import cupy

    pool = cupy.get_default_memory_pool()
    pool.set_limit(size=4 << 20)
    truth = {"peak_used": 0, "peak_total": 0, "allocs": 0, "caught": None}


    def look():
        truth["peak_used"] = max(truth["peak_used"], pool.used_bytes())
        truth["peak_total"] = max(truth["peak_total"], pool.total_bytes())


    def array(n):  # as cupy.ndarray asks: through the allocator of the moment
        m = cupy.cuda.get_allocator()(n)
        truth["allocs"] += 1
        look()
        return m


    a = array(1000)
    b = array(300000)
    del a
    c = array(600)  # inside a's cached chunk
    blocks = [array(512 << 10) for _ in range(4)]
    del blocks[1:3]
    pool.free_all_blocks()  # two segments go back
    look()


    def too_big():
        return array(8 << 20)


    try:
        too_big()  # over the limit: caught, and the program goes on
    except cupy.cuda.memory.OutOfMemoryError as e:
        truth["caught"] = str(e)
    d = array(2 << 20)
    del b, blocks
    pool.free_all_blocks()
    e = array(100)
    truth["used"], truth["total"] = pool.used_bytes(), pool.total_bytes()
    print("TRUTH " + json.dumps(truth))
    '''

JAX_PROGRAM = '''
    class JaxRuntimeError(RuntimeError):
        pass

    import jax  # the stand-in: the hook watches once jax is imported

    def step():
        raise JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2.00GiB "
                              "with allocator GPU_0_bfc on device 0. [executable_name='jit_f']")

    try:
        step()
    except RuntimeError:
        pass  # caught: the program goes on
    print("went on")
    '''


def run(python, program, files, tmp):
    """Runs program as record would, in tmp; returns (process, spool)."""
    spool = os.path.join(tmp, "spool-" + os.path.basename(python))
    os.mkdir(spool)
    for name, text in files.items():
        path = os.path.join(tmp, "site-packages", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
    with open(os.path.join(tmp, "prog.py"), "w") as f:
        f.write(textwrap.dedent(program))
    env = dict(os.environ, PYTHONPATH=hook_dir + os.pathsep + os.path.join(tmp, "site-packages"),
               VRAMSCOPE_SPOOL_DIR=spool, VRAMSCOPE_TORCH="1")
    p = subprocess.run([python, "prog.py"], cwd=tmp, env=env, capture_output=True, text=True)
    return p, spool


def replay(lines):
    """Peak and final of the blocks' and the segments' bytes."""
    live, segs = {}, {}
    peak_a = peak_r = 0
    for line in lines:
        w = line.split()
        if w[0] == "a":
            live[int(w[3])] = int(w[4])
        elif w[0] == "f":
            del live[int(w[3])]
        elif w[0] == "S":
            segs[int(w[3])] = int(w[4])
        elif w[0] == "F":
            del segs[int(w[3])]
        peak_a = max(peak_a, sum(live.values()))
        peak_r = max(peak_r, sum(segs.values()))
    return peak_a, sum(live.values()), peak_r, sum(segs.values())


def stacks(lines):
    """The file's stacks: id → [(file, line, function)], innermost first."""
    out, cur = {}, None
    for line in lines:
        if line.startswith("stack "):
            cur = out.setdefault(int(line.split()[1]), [])
        elif line.startswith("frame ") and cur is not None:
            head, function = line.split("\t", 1)
            _, lineno, path = head.split(" ", 2)
            cur.append((path, int(lineno), function))
        else:
            cur = None
    return out


def table(trace, *args):
    p = subprocess.run([vramscope, "report", trace, "--format", "csv"] + list(args),
                       capture_output=True, text=True)
    return list(csv.DictReader(io.StringIO(p.stdout)))


with tempfile.TemporaryDirectory() as tmp:
    p, hook_spool = run(sys.executable, PROGRAM, POOL_CUPY, tmp)
    truth = json.loads(p.stdout.split("TRUTH ", 1)[1]) if "TRUTH " in p.stdout else {}
    ok(p.returncode == 0 and truth.get("caught"), "the program catches the error and goes on",
       p.stderr)
    info = glob.glob(os.path.join(hook_spool, "vsfw-*.info"))
    events = glob.glob(os.path.join(hook_spool, "vsfw-*.events"))
    ok(len(info) == 1 and len(events) == 1, "the hook leaves its figures and its events",
       os.listdir(hook_spool))
    lines = open(events[0]).read().splitlines() if events else []
    info_lines = open(info[0]).read().splitlines() if info else []
    peak_a, final_a, peak_r, final_r = replay(l for l in lines if l[:2] in ("a ", "f ", "S ", "F "))
    ok((peak_a, final_a) == (truth.get("peak_used"), truth.get("used")),
       "the blocks replayed: peak and final used_bytes() exactly",
       "%s, the pool %s" % ((peak_a, final_a), (truth.get("peak_used"), truth.get("used"))))
    ok((peak_r, final_r) == (truth.get("peak_total"), truth.get("total")),
       "the segments replayed: peak and final total_bytes() exactly",
       "%s, the pool %s" % ((peak_r, final_r), (truth.get("peak_total"), truth.get("total"))))
    ok(sum(1 for l in lines if l.startswith("a ")) == truth.get("allocs"),
       "one event per block asked for", truth)
    ok("meta cupy.segment_mismatch 0" in info_lines, "every segment matched total_bytes()",
       [l for l in info_lines if "mismatch" in l])
    by_id = stacks(lines)
    blocks = [int(l.split()[6]) for l in lines if l.startswith("a ")]
    ok(blocks and all(by_id.get(s) and by_id[s][0][0].endswith("prog.py") for s in blocks),
       "each block's stack starts at the program's own line", by_id)
    ok(not any("vs_frameworks" in f[0] for st in by_id.values() for f in st),
       "the hook's own frames are in no stack", by_id)
    failed = [l for l in info_lines if l.startswith("failed ")]
    ok(len(failed) == 1 and failed[0].split()[2:5] == ["0", str(8 << 20), "cupy"],
       "the caught error is a failure of cupy for 8 MiB", failed)
    frames = [l.split("\t")[1] for l in info_lines if l.startswith("frame ")]
    # Innermost: the pool's own frame where Python sees the raise (3.12's
    # sys.monitoring; CuPy's compiled pool has none), else the program's.
    ok(frames[-3:] == ["array", "too_big", "<module>"] and len(frames) <= 4,
       "its stack: down to the program's frames", frames)
    ok(any(l == "meta program.last_oom OutOfMemoryError: " + truth.get("caught", "")
           for l in info_lines), "its text is kept", [l for l in info_lines if "last_oom" in l])

    # Into a trace, beside the spool's own process and GPU.
    spool = os.path.join(tmp, "spool")
    (idx, uuid, total, name), pid, ts = recorded_spool(endings, spool)
    first = min((int(l.split()[1]) for l in lines if l[:2] in ("a ", "f ", "S ", "F ")), default=0)

    def moved(line):  # the hook's times after the spool's own
        w = line.split(" ")
        if w[0] in ("a", "f", "S", "F"):
            w[1] = str(int(w[1]) - first + ts + 1000)
        elif w[0] == "failed":
            w[1] = str(int(w[1]) - first + ts + 1000)
        return " ".join(w)

    info_text = "\n".join(["pid %d" % pid, "device %d %s %d %s" % (idx, uuid, total, name)]
                          + [moved(l) for l in info_lines
                             if not l.startswith(("pid ", "device "))]) + "\n"

    def write_hook_files(d, tail=""):  # the hook's files, moved, into spool d; tail after the events
        with open(os.path.join(d, "vsfw-%d.info" % pid), "w") as f:
            f.write(info_text)
        with open(os.path.join(d, "vsfw-%d.events" % pid), "w") as f:
            f.write("\n".join(moved(l) for l in lines) + "\n" + tail)

    write_hook_files(spool)
    out = os.path.join(tmp, "out.db")
    p = subprocess.run([vramscope, "recover", spool, "-o", out], capture_output=True, text=True)
    ok(p.returncode == 0, "recover writes the trace", p.stderr)
    rows = [r for r in table(out, "summary") if r["allocator"] == "cupy"]
    want = {"peak_allocated_bytes": truth.get("peak_used"), "final_allocated_bytes": truth.get("used"),
            "peak_reserved_bytes": truth.get("peak_total"),
            "final_reserved_bytes": truth.get("total"), "alloc_count": truth.get("allocs"),
            "failed_alloc_count": 1}
    got = {k: int(rows[0][k]) for k in want} if len(rows) == 1 else rows
    ok(got == want, "summary: one cupy row, the pool's own figures", "%s, want %s" % (got, want))
    live = table(out, "--allocator", "cupy", "peak")
    ok(live and all("prog.py:" in r["site"] for r in live)
       and sum(int(r["bytes"]) for r in live) == truth.get("peak_used"),
       "peak: the blocks live at the peak, at the program's lines", live)
    findings = table(out, "diagnose")
    cupy = [f for f in findings if f["allocator"] == "cupy"]
    ok(len(cupy) == 1 and cupy[0]["finding"] == "oom-allocator-limit"
       and int(cupy[0]["bytes"]) == 8 << 20 and "prog.py:17" in cupy[0]["site"],
       "diagnose: the caught failure, oom-allocator-limit of cupy at the program's line", findings)
    ok(not any(f["finding"] == "leak-at-exit" and f["allocator"] == "cupy" for f in findings),
       "diagnose: what the pool keeps is no leak", findings)

    # A file cut short (a process killed while writing) and lines no hook
    # writes: read up to them, the trace written all the same.
    bad = os.path.join(tmp, "bad-spool")
    shutil.copytree(os.path.join(endings, "torch-kill-record", "spool"), bad)
    write_hook_files(bad, "S 12 0\nx 1 2 3 4\nframe 3\na 99 0 1234 5")
    bad_out = os.path.join(tmp, "bad.db")
    p = subprocess.run([vramscope, "recover", bad, "-o", bad_out], capture_output=True, text=True)
    rows = [r for r in table(bad_out, "summary") if r["allocator"] == "cupy"] \
        if p.returncode == 0 else []
    ok(len(rows) == 1 and {k: int(rows[0][k]) for k in want} == want,
       "a file cut short or with foreign lines: read up to them", (p.stderr, rows))

    # JAX: a caught RESOURCE_EXHAUSTED.
    newer = sys.executable if sys.version_info >= (3, 12) else None
    for name in ("python3.13", "python3.12"):
        path = shutil.which(name)
        if newer is None and path and subprocess.run(
                [path, "-c", "import sys; sys.monitoring"], capture_output=True).returncode == 0:
            newer = path
    if newer is None:
        ok(True, "# SKIP no Python 3.12 or later for sys.monitoring")
    else:
        jtmp = os.path.join(tmp, "jax")
        os.mkdir(jtmp)
        p, jspool = run(newer, JAX_PROGRAM, {"jax/__init__.py": ""}, jtmp)
        jinfo = glob.glob(os.path.join(jspool, "vsfw-*.info"))
        jlines = open(jinfo[0]).read().splitlines() if jinfo else []
        failed = [l for l in jlines if l.startswith("failed ")]
        frames = [l.split("\t")[1] for l in jlines if l.startswith("frame ")]
        ok(p.returncode == 0 and "went on" in p.stdout and len(failed) == 1
           and failed[0].split()[2:5] == ["0", "2147483648", "xla"]
           and frames == ["step", "<module>"]
           and "meta program.last_oom JaxRuntimeError: RESOURCE_EXHAUSTED" in "\n".join(jlines),
           "JAX: the caught RESOURCE_EXHAUSTED is a failure of xla at the program's line",
           "%s %s %s" % (p.stderr, failed, frames))
done()
