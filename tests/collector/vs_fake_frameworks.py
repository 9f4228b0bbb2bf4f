# SPDX-License-Identifier: MIT
"""vs_fake_frameworks.py — what the framework hook tests without a GPU
share: the parts of the stand-in CuPy package they install (written as a
package is in site-packages), and the spool of a real run they merge the
hook's files into (the endings fixture torch-kill-record)."""

import glob
import os
import shutil
import sqlite3

# cupy/__init__.py after the pool's own definition (_pool): CuPy's
# allocator is the pool's malloc, and the default pool is that pool.
CUPY_INIT_TAIL = '''
        cuda._allocator = _pool.malloc

        def get_default_memory_pool():
            return _pool
        '''

# cupy/cuda/__init__.py: the allocator CuPy allocates through, as
# get_allocator and set_allocator see it.
CUPY_CUDA_INIT = '''
        from cupy.cuda import memory, runtime
        _allocator = None

        def get_allocator():
            return _allocator

        def set_allocator(a):
            global _allocator
            _allocator = a
        '''

# cupy/cuda/runtime.py: one GPU, device 0.
CUPY_RUNTIME = '''
        def getDevice():
            return 0
        '''


def recorded_spool(endings, spool):
    """Copies the spool of the recorded run endings/torch-kill-record to
    spool; returns (idx, uuid, total_bytes, name) of its process trace's
    device, its pid and the time of its newest memory event."""
    shutil.copytree(os.path.join(endings, "torch-kill-record", "spool"), spool)
    proc = glob.glob(os.path.join(spool, "process-*.db"))[0]
    db = sqlite3.connect(proc)
    device = db.execute("SELECT idx, uuid, total_bytes, name FROM device").fetchone()
    pid, = db.execute("SELECT pid FROM process").fetchone()
    ts, = db.execute("SELECT max(ts) FROM mem_event").fetchone()
    db.close()
    return device, pid, ts
