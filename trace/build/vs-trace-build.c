/* SPDX-License-Identifier: MIT */
/* vs-trace-build.c — building a trace (vs-trace-build.h). */
#include "vs-trace-build.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "vs-output.h"
#include "vs-timings.h"
#include "vs-trace-compact.h"

/* Whether the build was cancelled (o->cancel set); if so *rc is -1 and
 * err says so. */
static bool
cancelled (const VsTraceBuildOptions *o, char *err, size_t errlen, int *rc)
{
  if (o->cancel == NULL || !*o->cancel)
    return false;
  snprintf (err, errlen, "interrupted");
  *rc = -1;
  return true;
}

int
vs_trace_build (const VsTraceBuildOptions *o, VsTraceFill fill, void *data, char *tmp,
                size_t tmplen, char *err, size_t errlen)
{
  assert (o != NULL && o->output != NULL && fill != NULL);
  char path[4096];
  if (vs_output_temp (o->output, path, sizeof path, err, errlen) < 0)
    return -1;
  if (tmp != NULL && tmplen > 0)
    snprintf (tmp, tmplen, "%s", path);

  /* Compacted next, with no window between (the window reads the
   * tables): the finalizer codes the derived rows into chunks as it
   * derives them. */
  VsRowChunker chunker;
  vs_row_chunker_init (&chunker);
  VsFinalizeOptions fo = { .progress = o->progress,
                           .progress_data = o->progress_data,
                           .sink = o->finalize && o->window == NULL ? &chunker.sink : NULL,
                           .timings = o->timings };
  int rc = fill (path, o->finalize ? &fo : NULL, data, err, errlen);
  vs_row_chunker_clear (&chunker);
  if (rc == 0 && o->finalize && o->window != NULL && !cancelled (o, err, errlen, &rc))
    rc = o->window (path, o->window_data, err, errlen);
  if (rc == 0 && o->finalize && !cancelled (o, err, errlen, &rc))
    {
      rc = vs_trace_compact_file (path, err, errlen) < 0 ? -1 : 0;
      if (o->timings != NULL)
        vs_timings_mark (o->timings, "compacting");
    }
  if (rc == 0)
    cancelled (o, err, errlen, &rc);
  if (rc == 0 && o->committing != NULL)
    o->committing (o->committing_data);
  if (rc == 0)
    rc = vs_output_commit (path, o->output, o->force, o->force_flag, err, errlen);
  if (rc != 0)
    vs_output_remove (path);
  return rc;
}
