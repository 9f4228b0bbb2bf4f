/* SPDX-License-Identifier: MIT */
/* vs-trace-finalize.h — deriving a trace's memory model from its raw
 * events, with every input the finalizer takes named in one struct.
 *
 * The finalizer reads nothing but its arguments: no per-thread state.  A
 * caller that wants progress, hands over rows it wrote (vs-fin-given.h),
 * has the derived rows coded into chunks as they come (vs-row-sink.h),
 * runs work beside it, or times its passes (vs-timings.h) says so in
 * VsFinalizeOptions.  Plain C and SQLite, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "vs-row-sink.h"
#include "vs-timings.h"
#include "vs-trace-writer.h"

struct sqlite3;
struct VsFinGiven;

typedef struct
{
  /* Progress of the passes, and cancellation (NULL: none). */
  VsProgressFunc progress;
  void *progress_data;
  /* alloc_event rows 1..n handed over as they were written (NULL: none);
   * only for the trace whose rows they are. */
  struct VsFinGiven *given;
  /* Where the derived rows go (NULL: their tables). */
  VsRowSink *sink;
  /* Work whose output goes in before the finalizer commits (NULL: none). */
  VsRowSinkBeside beside;
  void *beside_data;
  /* Where each pass's wall time is marked (NULL: nowhere). */
  VsTimings *timings;
} VsFinalizeOptions;

/* vs_trace_finalize_with() with progress only. */
int vs_trace_finalize (struct sqlite3 *db, VsProgressFunc progress, void *progress_data, char *err,
                       size_t errlen);

/* Derives block, series, series_level and summary from the raw tables and
 * creates the readers' indexes, replacing any earlier derivation; sets meta
 * 'finalized' to 1.  db must be open read-write on a trace; o may be NULL
 * (no options).  Safe to run again, e.g. on a trace whose recording was
 * killed.  A trace outside the limits in schemas/README.md (ids, sizes,
 * times, triggers) is refused: -1 with err saying why, and nothing
 * changed. */
int vs_trace_finalize_with (struct sqlite3 *db, const VsFinalizeOptions *o, char *err,
                            size_t errlen);

/* Commits and closes w as vs_writer_close() does, finalizing the trace
 * with o (NULL: no options) first.  Always frees w.  Returns -1 (with err
 * filled) if anything failed. */
int vs_trace_close_finalized (VsWriter *w, const VsFinalizeOptions *o, char *err, size_t errlen);
