/* SPDX-License-Identifier: MIT */
/* vs-unwind.h — call stacks at allocation time, and their rows in the trace.
 *
 * Two halves, one per side of the queue:
 *
 *   application thread: vs_stack_capture() walks the native stack
 *     (libunwind's unw_backtrace, shipped beside the collector), drops the
 *     frames of the collector and of CUDA's own libraries, adds the Python
 *     frames of the thread when it holds the GIL (vs-python.c), and hashes
 *     the result.  A stack is sent to the writer (a VS_ITEM_STACK item
 *     owning a VsStackBlob) only the first time its hash is seen; every
 *     event then carries just the 64-bit hash.
 *
 *   writer thread: VsStacks turns a blob into module, frame and stack rows
 *     and remembers hash → stack id, so rows written later (MEMORY2
 *     records, failed allocations) get their stack_id.
 *
 * Native frames are stored raw (module + absolute return address);
 * `vramscope record` symbolizes them when the run ends (vs-symbolize.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-collector-private.h"

#define VS_STACK_MAX_NATIVE 128
#define VS_STACK_MAX_PYTHON 128

/* One Python frame as captured: strings are owned by the blob. */
typedef struct
{
  char *file;
  char *function;
  int64_t line;
} VsPyFrame;

/* A new stack, sent once to the writer.  Frames innermost first: the native
 * return addresses pcs[0..n_native) with the interpreter's evaluation frames
 * already removed, and the Python frames py[0..n_python) belonging between
 * pcs[python_at - 1] and pcs[python_at]. */
typedef struct
{
  uint64_t hash;
  uint32_t n_native, n_python, python_at;
  uint64_t pcs[VS_STACK_MAX_NATIVE];
  VsPyFrame py[];
} VsStackBlob;

/* Frees a blob and its strings. */
void vs_stack_blob_free (VsStackBlob *b);

/* --- capture (application threads) -------------------------------------- */

typedef enum
{
  VS_UNWIND_NONE = 0,  /* no way to unwind: events carry no stack */
  VS_UNWIND_LIBUNWIND, /* unw_backtrace */
  VS_UNWIND_GLIBC,     /* glibc backtrace(), slower fallback */
} VsUnwinder;

/* Loads the unwinder (libunwind.so.8 from the collector's own directory,
 * else from the system, else glibc's backtrace), notes the address ranges
 * of CUDA's and the collector's libraries, and finds the Python runtime if
 * the host has one.  Safe to call more than once; returns what it found. */
VsUnwinder vs_unwind_init (void);

/* Turns capturing on or off for every thread (off in a fork child). */
void vs_stack_set_enabled (bool enabled);

/* Captures the calling thread's stack (frames of the caller of this
 * function outwards) and returns its hash, or 0 when nothing could be
 * captured or capturing is off.  When the hash is new, pushes a
 * VS_ITEM_STACK item to q first, so the writer always knows a stack before
 * any event naming it.  Never blocks on the writer. */
uint64_t vs_stack_capture (VsQueue *q);

/* Captures up to max raw native return addresses of the caller (no
 * filtering); for benchmarks and tests.  Returns the count. */
int vs_unwind_raw (uint64_t *pcs, int max);

/* --- rows (writer thread) ----------------------------------------------- */

typedef struct VsStacks VsStacks;

/* Keeps the stacks of process process_id in w (w is not owned). */
VsStacks *vs_stacks_new (VsWriter *w, int64_t process_id);
void vs_stacks_free (VsStacks *st);

/* Writes the module (on first use, and when a frame lies in an object
 * loaded since), frame and stack rows of a new stack.  Returns its stack
 * id, VS_UNKNOWN for an empty stack, or -1 when the writer failed.  The
 * blob stays the caller's; the caller keeps hash → id. */
int64_t vs_stacks_add (VsStacks *st, const VsStackBlob *b);

/* Reads the GNU build-id of the object loaded at base with the given
 * program headers into out as lowercase hex; returns false when it has
 * none.  (Used for module rows; exposed for tests.) */
struct dl_phdr_info;
bool vs_module_build_id (const struct dl_phdr_info *info, char *out, size_t len);
