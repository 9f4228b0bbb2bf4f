/* SPDX-License-Identifier: MIT */
/* vs-trace-window.h — the flight recorder: bounding a trace to a window.
 *
 * `record --window DURATION` keeps every event of the last DURATION, of
 * the neighbourhoods of each peak and of the first and last few failures
 * (the detail intervals), and for the whole run per-slice aggregates; see
 * vs-trace-window.c for what is dropped and why the answers inside the
 * detail stay exact.  Plain C and SQLite, as the rest of schemas/.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-timings.h"

struct sqlite3;

/* Failures whose neighbourhood keeps its detail: the first and the last
 * this many of each device. */
#define VS_WINDOW_FAILURES_KEPT 3
/* The most slices the run before the window is cut into. */
#define VS_WINDOW_MAX_SLICES 1024

typedef struct
{
  int64_t window_ns;        /* what was asked */
  int64_t slice_ns;         /* fixed slices: their length (0: nothing dropped, or iterations) */
  int64_t slice_iterations; /* slices that follow iterations: how many each holds, else 0 */
  int64_t detail_from;      /* where the window's detail begins (meta start_ns when complete) */
  int64_t blocks_kept;      /* allocations left with their events */
  int64_t blocks_dropped;   /* allocations dropped with their events */
  int64_t kernels_dropped, copies_dropped, failures_dropped, ranges_dropped;
} VsTraceWindowStats;

/* Applies a window of window_ns (> 0) to the finalized trace db, which the
 * caller has open read-write and nothing else writes: computes the detail
 * intervals and the aggregates from the complete trace, deletes what lies
 * outside the detail, finalizes again and vacuums.  A run no longer than
 * the window is left whole (meta window_ns records the request either
 * way).  *stats (may be NULL) gets what was done.  Returns 0, or -1 with
 * err filled and the trace unchanged. */
int vs_trace_window (struct sqlite3 *db, int64_t window_ns, VsTraceWindowStats *stats, char *err,
                     size_t errlen);

/* vs_trace_window() with slices that follow the program's iterations:
 * starts holds the absolute start times of its iterations, sorted (from
 * the analyzer, vs-growth.h); each slice is then a group of iterations,
 * as few per group as leave at most VS_WINDOW_MAX_SLICES before the
 * window.  With fewer than two starts, fixed time slices as
 * vs_trace_window().  Its steps are marked into timings (NULL: not
 * timed). */
int vs_trace_window_iterations (struct sqlite3 *db, int64_t window_ns, const int64_t *starts,
                                size_t nstarts, VsTraceWindowStats *stats, VsTimings *timings,
                                char *err, size_t errlen);

/* What one vs_trace_window_trim() did. */
typedef struct
{
  int64_t from, to;  /* the aggregates kept covered [start, from); now [start, to) */
  int64_t keep_from; /* what ended before this and may not become detail went */
  int64_t blocks_dropped, kernels_dropped, copies_dropped, failures_dropped, ranges_dropped;
  int64_t pieces; /* pieces kept in all */
} VsTraceTrimStats;

/* The window applied while the program runs (`record --window`), to the
 * trace of the run so far, db: finalized, open read-write, written by
 * nothing else meanwhile.  frontier_ns: every event before it is in db
 * (later ones may still come); now_ns: the time now, on the trace's clock.
 * Adds the aggregates of [the last frontier, frontier) (on the grid) to
 * the pieces kept in db, then drops what ended before both the frontier's
 * reach and the window's, outside the neighbourhoods of the peaks and of
 * the first and last failures so far (which may still become detail):
 * whatever the run does next, vs_trace_window() at its end gives what it
 * gives on the whole run's trace.  The caller finalizes again before the
 * next call (the derived tables do not follow the drop).  0, or -1 with
 * err filled and db unchanged. */
int vs_trace_window_trim (struct sqlite3 *db, int64_t window_ns, int64_t frontier_ns,
                          int64_t now_ns, VsTraceTrimStats *stats, char *err, size_t errlen);

/* Where the aggregates vs_trace_window_trim() kept in db end: every event
 * before it has been counted; INT64_MIN when db keeps none. */
int64_t vs_trace_window_trimmed_to (struct sqlite3 *db);
