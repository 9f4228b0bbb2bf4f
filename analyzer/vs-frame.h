/* SPDX-License-Identifier: MIT */
/* vs-frame.h — what a frame is: the user's own code or a library's, and
 * how its path is shown.
 *
 * The user's own code is everything outside Python's standard library,
 * installed packages (site-packages, dist-packages), system and CUDA
 * libraries, and the profiler's and allocator's own frames — PyTorch's
 * `stacks="all"` snapshots put its C++ frames first (torch::unwind,
 * CapturedTraceback, CUDACachingAllocator, frames in `??` or in a .cpp file
 * with line 0) and interleave them with the Python frames.
 *
 * Paths are shown short: a library file relative to its package
 * (`torch/nn/functional.py`), a standard library file from `pythonX.Y/`,
 * the program's own files relative to its working directory; the full
 * path on request.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether a frame at file (or, for native frames, in module) belongs to the
 * user's own code rather than Python's standard library, installed packages
 * or system and CUDA libraries, judged by the paths alone.  Both may be
 * NULL (then FALSE). */
gboolean vs_frame_is_user_code (const char *file, const char *module);

/* Whether a frame of kind (VsFrameKind) is the user's own code: its paths
 * pass vs_frame_is_user_code(), it is not a label, and it is not one of the
 * profiler's, allocator's or interpreter's own native frames (an unknown
 * file `??`, a C/C++ source with line 0 or unknown, a function of the
 * c10::, at::, torch::, pybind11::, std:: namespaces or of CPython's C
 * API, or a frame vs_frame_is_runtime() names).  Any string may be NULL;
 * line is VS_UNKNOWN when unknown. */
gboolean vs_frame_is_user (int kind, const char *file, const char *module, const char *function,
                           gint64 line);

/* Whether a frame of kind (VsFrameKind) is the interpreter's or the C and
 * C++ runtime's own, or unsymbolized: never a site.  That is a native
 * frame in CPython's sources (`Objects/`, `Python/`, `Modules/`, a
 * `python-3.x/` tree), its C API or static helpers (`_PyObject_*`,
 * `cfunction_call`), the modules python3.x, libpython, libc, libstdc++,
 * libgcc_s, ld-linux; glibc's sources (`sysdeps/`, `nptl/`) and thread
 * start-up (`start_thread`, `clone3`, libstdc++'s `thread48.o`
 * `execute_native_thread_routine`); a frame with neither file nor
 * function, or named by module+offset (`python3.10+0x1a2b3`).  Python
 * frames and labels never are.  Any string may be NULL. */
gboolean vs_frame_is_runtime (int kind, const char *file, const char *module, const char *function,
                              gint64 line);

/* The path as reports show it: with full, path itself; else a path inside
 * an installed package relative to the folder holding the package
 * (`…/site-packages/torch/nn/functional.py` → `torch/nn/functional.py`),
 * a standard library file from its `pythonX.Y/` folder, a path under base
 * (the program's working directory; NULL when unknown) relative to it, and
 * any other path unchanged.  Returns a new string. */
char *vs_frame_display_path (const char *path, const char *base, gboolean full);

G_END_DECLS
