/* SPDX-License-Identifier: MIT */
/* vs-window-rounds.h — `record --window`: the window applied while the
 * program runs, so the spool and the work after the exit stay bounded.
 *
 * Every few seconds a round brings what the spool's traces (the
 * collector's process traces, record's imports of PyTorch's streams) hold
 * beyond the last round into one trace of the run, the spool's live trace
 * (vs-merge-append.h: rows appended, ids stable); finalizes it; applies the
 * window to it so far (vs_trace_window_trim: the aggregates of the run up
 * to a frontier kept in pieces, what can no longer become detail dropped);
 * then deletes the rows it took from their inputs.  Each input keeps only
 * what came since the last round, the live trace only the window, its
 * bounds and the neighbourhoods that may still become detail.  After the
 * exit the rest is appended, and the live trace becomes the trace, the
 * window applied at its end as usual: the same trace as a recording
 * windowed at the end gives (the same events kept, the same aggregates).
 *
 * The frontier (before which every event is in) lags the newest event of
 * each input that wrote since the last round ($VRAMSCOPE_WINDOW_LIVE_LAG_MS,
 * 10 s): the collector flushes CUPTI's records every 250 ms and commits
 * every 100 ms, the streams are imported every 250 ms.  An event that
 * still comes in behind the frontier is counted (meta
 * window_live_late_events) and said at the end: the aggregates then miss
 * it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-merge.h"

/* The live trace's name in the spool (not *.db: not one of the inputs). */
#define VS_WINDOW_LIVE_TRACE "live.trace"

typedef struct VsWindowRounds VsWindowRounds;

typedef struct
{
  int64_t rounds;      /* rounds completed */
  int64_t busy_ns;     /* time spent in them */
  int64_t longest_ns;  /* the longest */
  int64_t frontier_ns; /* the aggregates cover the run up to here */
  char error[512];     /* why the rounds stopped early, "" if they did not */
} VsWindowRoundsStats;

/* Starts the rounds on a thread of its own, every interval: a quarter of
 * the window, at least 5 s ($VRAMSCOPE_WINDOW_LIVE_MS sets it; 0 turns the
 * rounds off).  NULL when off or no thread could start. */
VsWindowRounds *vs_window_rounds_start (const char *spool, int64_t window_ns);

/* Stops the rounds: the round under way is cancelled (rolled back), the
 * thread joined; *stats (may be NULL) gets what they did.  Frees r. */
void vs_window_rounds_stop (VsWindowRounds *r, VsWindowRoundsStats *stats);

/* After the program ended (record, recover): when the spool holds a live
 * trace, it is copied to out (an empty file made for it) and the rest of
 * inputs[0..n-1] (sorted by name, as the spool lists them) appended to the
 * copy, the processes' ends and the run's meta written, finalized and
 * symbolized there.  The live trace is only read: a failure or a signal
 * at any point leaves the spool as the rounds left it.  Returns 1 when the
 * spool has no live trace (merge the inputs as usual, symbolized first), 0
 * when out is written, -1 with err filled. */
int vs_window_rounds_finish (const char *spool, const char *const *inputs, size_t n,
                             const VsMergeRun *run, const char *out, bool quiet,
                             VsProgressFunc progress, void *progress_data, char *err,
                             size_t errlen);

/* The fill of the trace that record and recover build from a spool
 * (vs-trace-build.h): the live trace the window's rounds kept, finished,
 * or the spool's traces merged. */
typedef struct
{
  const char *spool;
  const char *const *files; /* the spool's traces, sorted by name */
  size_t n;
  VsMergeRun *run;
  bool quiet;
  int64_t window_ns; /* record --window; 0: none */
} VsSpoolFill;

/* Fills out from f: vs_window_rounds_finish(), or where the spool has no
 * live trace f's files merged (vs_merge_traces()); the run's sink is sink
 * meanwhile.  Returns 0, or -1 with err filled. */
int vs_window_rounds_fill (const VsSpoolFill *f, const char *out, struct VsRowSink *sink,
                           VsProgressFunc progress, void *progress_data, char *err, size_t errlen);

/* Whether the spool holds a live trace (then its inputs are symbolized in
 * it, not before). */
bool vs_window_rounds_in (const char *spool);
