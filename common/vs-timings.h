/* SPDX-License-Identifier: MIT */
/* vs-timings.h — wall-clock time per named phase of a piece of work.
 *
 * Plain C, no GLib: the finalizer marks its phases here and it runs in
 * the collector too.  A VsTimings is off unless a caller made it the
 * active one (vs_timings_set_active); vs_timings_phase() then adds the
 * time since the previous mark to the named phase, and otherwise costs a
 * test of one pointer.  The active recorder is per thread (a recorder is
 * not thread-safe): work that other threads do beside is not marked;
 * `vramscope record` times its post-run work with it, `import
 * --timings` the finalizer's passes.
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

/* Makes t (NULL: none) the recorder vs_timings_phase() marks into on
 * the calling thread.  Returns the previous one. */
VsTimings *vs_timings_set_active (VsTimings *t);

/* The active recorder, or NULL. */
VsTimings *vs_timings_active (void);

/* Marks phase name into the active recorder, if there is one. */
void vs_timings_phase (const char *name);

/* The total of every phase of t, in nanoseconds. */
int64_t vs_timings_total (const VsTimings *t);

/* Prints each phase of t to f, one line each: its name, its wall time in
 * ms and its share of t's total. */
void vs_timings_print (const VsTimings *t, FILE *f);
