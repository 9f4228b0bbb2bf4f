/* SPDX-License-Identifier: MIT */
/* vs-python.h — Python frames of the calling thread, without building
 * against Python.
 *
 * The C API is looked up with dlsym in whatever the host already loaded
 * (the python executable or libpython); a host without Python has none and
 * every call here is a cheap no-op.  The interpreter is touched only from a
 * thread that holds the GIL (PyGILState_Check and a current thread state):
 * a thread that released it (PyTorch releases it around most operators) or
 * never had it (autograd's backward threads) gets no Python frames.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* One captured frame: the code object (borrowed identity, used for
 * hashing) and the line being executed. */
typedef struct
{
  uintptr_t code;
  int64_t line;
} VsPyRef;

/* Looks up the C API; returns true when the host runs Python. */
bool vs_python_init (void);

/* True when pc lies in the interpreter's evaluation loop
 * (_PyEval_EvalFrameDefault): such native frames are replaced by the
 * Python frames. */
bool vs_python_is_eval_pc (uint64_t pc);

/* Captures up to max Python frames of the calling thread, innermost
 * first, if it holds the GIL.  Returns the count (0 without Python or
 * GIL). */
int vs_python_capture (VsPyRef *out, int max);

/* Copies the file name and qualified function name of a code object seen
 * by vs_python_capture in this same callback (the GIL is still held) into
 * fresh malloc'd strings.  Returns false when they cannot be read. */
bool vs_python_describe (uintptr_t code, char **file, char **function);

/* Calls module.function() (a module the program already loaded; nothing is
 * imported) from any thread, taking the GIL as a foreign thread does.
 * Returns false when the host runs no Python, the interpreter is
 * finalizing, the module or function is missing or the call raised (the
 * exception is cleared).  May wait as long as another thread holds the
 * GIL: callers bound it themselves. */
bool vs_python_call_hook (const char *module, const char *function);
