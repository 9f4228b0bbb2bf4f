/* SPDX-License-Identifier: MIT */
/* vs-trace-open.c — opening a trace (vs_trace_open): the steps of
 * vs-trace-check.c in order, finalizing an interrupted recording on open,
 * or, when its recorder is still writing it, reading a private copy of
 * what is committed (vs-trace-recording.c).
 */
#include "vs-trace-private.h"

VsTrace *
vs_trace_open (const char *path, GError **error)
{
  g_autoptr (VsTrace) trace = NULL;
  gboolean finalized = FALSE;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!vs_trace_check_file (path, error))
    return NULL;

  trace = vs_trace_new (path);
  trace->stamp = vs_trace_file_stamp (path);
  if (!vs_trace_open_connection (trace, path, error)
      || !vs_trace_validate (trace, &finalized, error))
    return NULL;
  if (!finalized)
    {
      vs_trace_close_connection (trace);
      /* Finalizing a file its recorder is still writing would race with
       * it: read a private copy of what is committed instead. */
      if (vs_trace_is_being_written (path))
        return vs_trace_open_recording_copy (g_steal_pointer (&trace), error);
      if (!vs_trace_finalize_in_place (trace, error)
          || !vs_trace_open_connection (trace, path, error)
          || !vs_trace_validate (trace, &finalized, error))
        return NULL;
      if (!finalized)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT, "%s could not be finalized",
                       path);
          return NULL;
        }
      g_free (trace->stamp);
      trace->stamp = vs_trace_file_stamp (path);
    }
  if (!vs_trace_load_tables (trace, error))
    return NULL;
  return g_steal_pointer (&trace);
}
