/* SPDX-License-Identifier: MIT */
/* vs-symbolize.h — turning the raw native frames of a trace into
 * functions, files and lines when a run finishes.
 *
 * The collector stores native frames as (module, return address) only;
 * `vramscope record` calls vs_symbolize_file() on each process's trace
 * once the program has exited, on the machine that ran it, so the files of
 * every module are still there.  Afterwards the trace is self-contained.
 * Uses elfutils (libdw), linked statically into `vramscope`.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;

typedef struct
{
  int64_t frames;           /* native frames looked at */
  int64_t symbolized;       /* of which a function name was found */
  int64_t with_line;        /* of which a source file and line were found */
  int64_t inlined;          /* inline frames added */
  int64_t stacks_rewritten; /* stacks whose frames changed shape */
  int64_t elapsed_ns;
} VsSymbolizeStats;

/* Symbolizes every native frame of the trace db that has no function yet:
 *   - function (C++ names demangled when the host has libstdc++),
 *     source file and line from DWARF where the module has debug info,
 *     else the nearest ELF symbol, else nothing (the frame keeps module +
 *     address and is shown as module+0xoffset);
 *   - inlined calls become frames of kind inline inside the stack;
 *   - innermost frames inside CUDA's runtime (its shared libraries, or a
 *     statically linked cudart) are dropped, so each stack starts at the
 *     code that called the CUDA API;
 *   - a stack with no Python frame that runs inside PyTorch's autograd
 *     engine gets a label frame "backward pass" (naming the autograd node
 *     when a frame shows it) as its outermost frame.
 * Stack ids used by events are rewritten where their frames changed.
 * Runs in one transaction; sets meta 'symbolized' to 1 and does nothing on
 * a trace that already has it.  Returns 0, or -1 with err filled. */
int vs_symbolize_db (struct sqlite3 *db, VsSymbolizeStats *stats, char *err, size_t errlen);

/* Opens the trace at path read-write and runs vs_symbolize_db on it. */
int vs_symbolize_file (const char *path, VsSymbolizeStats *stats, char *err, size_t errlen);

/* Symbolizes each of the process traces paths[0..n) of a run (what
 * `record` calls before merging them) and adds the cost to each one's meta
 * (collector_symbolize_ns, collector_symbolized_frames, summed by the
 * merge).  A trace that fails keeps its raw frames; unless quiet, one line
 * on stderr says so. */
void vs_symbolize_traces (const char *const *paths, size_t n, bool quiet);
