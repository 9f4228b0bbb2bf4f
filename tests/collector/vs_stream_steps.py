# SPDX-License-Identifier: MIT
"""vs_stream_steps.py — steps of PyTorch's allocator stream that the
stream makers (make-torch-stream.py, make-window-stream.py) write alike."""


def free_block(rec, addr, size, ts):
    """Writes through rec (action, addr, size, ts) the free of the block of
    size bytes at addr as PyTorch's allocator records it — free requested,
    then completed — 1000 and 2000 ns after ts; returns the last time."""
    rec(2, addr, size, ts + 1000)
    rec(3, addr, size, ts + 2000)
    return ts + 2000
