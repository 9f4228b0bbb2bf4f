/* SPDX-License-Identifier: MIT */
/* vs-trace-build.h — building a trace: one owner for the steps every
 * command that makes a trace takes.
 *
 *   temporary file beside the output → fill (an import, a merge, a
 *   recovery writes the raw trace and finalizes it) → window (optional)
 *   → compact → commit under the output's name
 *
 * The fill is the caller's; everything around it is here: the temporary
 * (vs-output.h), the finalizer's options (a row sink that codes the
 * derived rows into chunks as they come, when compaction follows with no
 * window between), compaction (vs-trace-compact.h), the commit, and on
 * any failure or cancellation the removal of the temporary, so that
 * nothing is left under the output's name.  Plain C, no GLib.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-finalize.h"

/* Writes the raw trace at tmp (an empty file) and, unless fo is NULL (the
 * build of a raw trace: VsTraceBuildOptions.finalize false), finalizes it
 * with fo (vs_trace_close_finalized or vs_trace_finalize_with).  Returns
 * 0, or -1 with err filled. */
typedef int (*VsTraceFill) (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err,
                            size_t errlen);

/* Applies a window to the finalized trace at tmp (record --window).
 * Returns 0, or -1 with err filled. */
typedef int (*VsTraceWindow) (const char *tmp, void *data, char *err, size_t errlen);

typedef struct
{
  const char *output; /* where the trace goes */
  bool force;         /* replace a regular file there */
  const char *force_flag;
  /* false: the trace stays raw (not finalized, windowed or compacted) */
  bool finalize;
  /* NULL: no window; else applied before compaction */
  VsTraceWindow window;
  void *window_data;
  /* the finalizer's progress and cancellation, and where the finalizer
   * and compaction mark their phases (NULL: none) */
  VsProgressFunc progress;
  void *progress_data;
  VsTimings *timings;
  /* Called once the trace is complete, just before it is committed under
   * the output's name (NULL: nothing): recover defers signals from there
   * on, as the spool is removed next. */
  void (*committing) (void *data);
  void *committing_data;
  /* Set by a signal handler to cancel (NULL: none): looked at after each
   * step and just before the commit, so that a cancel during the window
   * or compaction, where no progress is reported, still leaves nothing. */
  const volatile sig_atomic_t *cancel;
} VsTraceBuildOptions;

/* Builds the trace at o->output from what fill writes: see above.  tmp, if
 * not NULL, gets the temporary's name (tmplen bytes) as soon as it exists,
 * for a caller that guards it against signals (vs_output_guard) or must
 * find it.  Returns 0 with the trace in place, or -1 with err filled and
 * nothing left (the temporary removed); err is "interrupted" when
 * o->cancel was set. */
int vs_trace_build (const VsTraceBuildOptions *o, VsTraceFill fill, void *data, char *tmp,
                    size_t tmplen, char *err, size_t errlen);
