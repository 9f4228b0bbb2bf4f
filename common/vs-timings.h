/* SPDX-License-Identifier: MIT */
/* vs-timings.h — wall-clock time per named phase of a piece of work.
 *
 * Plain C, no GLib: the finalizer marks its phases here and it runs in
 * the collector too.  A recorder is passed to the work it times, never
 * found through global or per-thread state: the finalizer takes it in
 * VsFinalizeOptions.timings, the window and the merge as an argument, and
 * NULL means "not timed" (vs_timings_phase() then costs a test of one
 * pointer).  A recorder is not thread-safe: work that other threads do
 * beside is not marked.  `vramscope record --timings` times its post-run
 * work with one, `import --timings` the import's stages and the
 * finalizer's passes.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

#define VS_TIMINGS_MAX 32

typedef struct
{
  char name[64];
  int64_t ns;
} VsTimingsPhase;

typedef struct
{
  int n;
  VsTimingsPhase phase[VS_TIMINGS_MAX];
  int64_t last_ns;
} VsTimings;

/* Monotonic wall-clock time in nanoseconds. */
int64_t vs_timings_now (void);

/* Empties t and starts its clock: the next mark measures from now. */
void vs_timings_start (VsTimings *t);

/* Adds ns to phase name (created at the end, in first-mark order, when
 * new; ignored once VS_TIMINGS_MAX phases exist). */
void vs_timings_add (VsTimings *t, const char *name, int64_t ns);

/* Adds the time since the previous mark (or the start) to phase name and
 * restarts the clock. */
void vs_timings_mark (VsTimings *t, const char *name);

/* Restarts t's clock without charging the time since the last mark to
 * any phase. */
void vs_timings_skip (VsTimings *t);

/* vs_timings_mark (t, name) when t is not NULL; nothing otherwise. */
void vs_timings_phase (VsTimings *t, const char *name);

/* The total of every phase of t, in nanoseconds. */
int64_t vs_timings_total (const VsTimings *t);

/* Prints each phase of t to f, one line each: its name, its wall time in
 * ms and its share of t's total. */
void vs_timings_print (const VsTimings *t, FILE *f);
