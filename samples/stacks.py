"""stacks.py — Python frames at device-level allocations.

A known chain of Python functions, main → train → layer, ends in a
cudaMalloc made through ctypes.PyDLL (which keeps the GIL, so the collector
may read the thread's Python frames).  The four 32 MiB allocations stay
live until the end: the peak's one stack is layer ← train ← main, each at
the line printed as STACK_TRUTH.  With --torch, a small PyTorch model then
runs forward and backward, so some segments are allocated on autograd's
backward thread.
"""
import ctypes
import ctypes.util
import sys

LINES = {}


def load_cudart():
    names = ["libcudart.so.13", "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"]
    for name in names:
        try:
            return ctypes.PyDLL(name)
        except OSError:
            continue
    sys.exit("stacks.py: no libcudart found")


CUDART = load_cudart()


def layer(nbytes):
    ptr = ctypes.c_void_p()
    LINES["layer"] = sys._getframe().f_lineno + 1
    rc = CUDART.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes))
    if rc != 0:
        sys.exit(f"cudaMalloc failed: {rc}")
    return ptr


def train(n):
    ptrs = []
    for _ in range(n):
        LINES["train"] = sys._getframe().f_lineno + 1
        ptrs.append(layer(32 << 20))
    return ptrs


def torch_part():
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.ReLU(),
                                torch.nn.Linear(8192, 2048)).cuda()
    x = torch.randn(4096, 2048, device="cuda")
    for _ in range(2):
        loss = model(x).square().mean()
        loss.backward()
    torch.cuda.synchronize()


def main():
    LINES["main"] = sys._getframe().f_lineno + 1
    ptrs = train(4)
    CUDART.cudaDeviceSynchronize()
    print("STACK_TRUTH file=%s layer=%d train=%d main=%d bytes=%d" % (
        __file__, LINES["layer"], LINES["train"], LINES["main"], 4 * (32 << 20)),
        flush=True)
    if "--torch" in sys.argv:
        torch_part()
    for p in ptrs:
        CUDART.cudaFree(p)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
