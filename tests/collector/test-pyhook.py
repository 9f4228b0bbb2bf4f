#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-pyhook.py — the collector calling into Python from its own thread
(vs_python_call_hook, vs-python.c), as it calls the PyTorch hook's
_on_signal() at SIGTERM, SIGHUP and SIGQUIT.

Usage: test-pyhook.py LIBRARY HOOK_DIR   (TAP output)
  LIBRARY   vs-test-pyhook.so;  HOOK_DIR  the folder of sitecustomize.py
"""
import ctypes
import os
import sys
import threading
import types

lib = ctypes.CDLL(sys.argv[1])
call = lib.vs_test_call_hook_from_thread
call.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
n = 0
failed = False


def ok(cond, what):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    failed |= not cond


seen = []
mod = types.ModuleType("_vs_test_mod")
mod.f = lambda: seen.append(threading.get_ident())


def boom():
    raise ValueError("raised on purpose")


mod.boom = boom
sys.modules["_vs_test_mod"] = mod
ok(call(b"_vs_test_mod", b"f") == 1 and len(seen) == 1
   and seen[0] != threading.get_ident(), "a loaded module's function runs on the collector's thread")
ok(call(b"_vs_no_such_module", b"f") == 0 and "_vs_no_such_module" not in sys.modules,
   "a module the program did not load is not imported, and nothing is called")
ok(call(b"_vs_test_mod", b"missing") == 0, "a missing function: false")
ok(call(b"_vs_test_mod", b"boom") == 0 and sys.exc_info() == (None, None, None),
   "a function that raises: false, the exception cleared")

# The PyTorch hook registers itself where the collector looks for it.
# Loaded from its file under a name of its own: Python may have imported
# the system's sitecustomize already.
os.environ["VRAMSCOPE_TORCH"] = "0"  # it installs nothing then
import importlib.util  # noqa: E402
spec = importlib.util.spec_from_file_location("vs_hook_under_test",
                                              os.path.join(sys.argv[2], "sitecustomize.py"))
hook = importlib.util.module_from_spec(spec)
sys.modules["vs_hook_under_test"] = hook
spec.loader.exec_module(hook)
ok(sys.modules.get("_vramscope_hook") is hook and hasattr(hook, "_on_signal"),
   "the hook is module _vramscope_hook")
ok(call(b"_vramscope_hook", b"_on_signal") == 1,
   "its _on_signal runs from the collector's thread (no torch: it saves nothing)")
print("1..%d" % n)
sys.exit(1 if failed else 0)
