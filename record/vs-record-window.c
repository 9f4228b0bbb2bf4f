/* SPDX-License-Identifier: MIT */
/* vs-record-window.c — `record --window DURATION`: parsing the duration and
 * bounding the trace once the run's trace is written (the method is in
 * trace/window/vs-trace-window.c). */
#include "vs-record-window.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <sqlite3.h>

#include "vs-format.h"
#include "vs-growth.h"
#include "vs-trace-window.h"
#include "vs-trace.h"

int64_t
vs_record_parse_duration (const char *text)
{
  /* The one parser of times (vs_parse_time), less what a window cannot
   * be: signed, without a unit, zero, or longer than ten years. */
  gint64 ns = 0;
  size_t len = text != NULL ? strlen (text) : 0;
  if (len == 0 || !g_ascii_isdigit (text[0]) || !g_ascii_isalpha (text[len - 1])
      || !vs_parse_time (text, &ns, NULL))
    return -1;
  if (ns < 1 || ns > G_GINT64_CONSTANT (315576000000000000))
    return -1;
  return ns;
}

/* The starts of the program's iterations when its annotations show them
 * (a repeating family of NVTX ranges, as `diagnose` finds them), in
 * absolute ns, sorted; NULL (*n 0) otherwise. */
static int64_t *
iteration_starts (const char *path, size_t *n)
{
  *n = 0;
  /* Without any range there is nothing to find (and the allocation
   * pattern, which the analyzer would look for next, is not used here). */
  sqlite3 *db = NULL;
  sqlite3_stmt *s = NULL;
  bool ranges = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
                && sqlite3_prepare_v2 (db, "SELECT EXISTS (SELECT 1 FROM nvtx_range)", -1, &s, NULL)
                       == SQLITE_OK
                && sqlite3_step (s) == SQLITE_ROW && sqlite3_column_int (s, 0) == 1;
  sqlite3_finalize (s);
  sqlite3_close (db);
  if (!ranges)
    return NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (path, &error);
  if (trace == NULL)
    return NULL;
  const GPtrArray *devices = vs_trace_get_devices (trace);
  for (guint d = 0; d < devices->len; d++)
    {
      const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
      g_autoptr (VsIterations) it = vs_iterations_find (trace, dev->id, 0, NULL);
      if (it == NULL || it->source != VS_ITERATIONS_RANGES || it->iterations->len < 2)
        continue;
      int64_t *starts = g_new (int64_t, it->iterations->len);
      int64_t origin = vs_trace_get_start_abs_ns (trace);
      for (guint k = 0; k < it->iterations->len; k++)
        starts[(*n)++] = origin + g_array_index (it->iterations, VsIteration, k).time_ns;
      return starts;
    }
  return NULL;
}

bool
vs_record_apply_window (const char *path, int64_t window_ns, bool quiet, VsTimings *timings,
                        char *err, size_t errlen)
{
  /* A line while it works, on a terminal (the passes report no progress). */
  bool tty = !quiet && isatty (2);
  if (tty)
    fprintf (stderr, "\r\033[Kvramscope: applying the window…");
  size_t nstarts = 0;
  g_autofree int64_t *starts = iteration_starts (path, &nstarts);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      snprintf (err, errlen, "cannot open %s: %s", path,
                db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return false;
    }
  VsTraceWindowStats st;
  int rc = vs_trace_window_iterations (db, window_ns, starts, nstarts, &st, timings, err, errlen);
  sqlite3_close (db);
  if (tty)
    fprintf (stderr, "\r\033[K");
  if (rc != 0)
    return false;
  if (!quiet && (st.slice_ns > 0 || st.slice_iterations > 0))
    {
      g_autofree char *slices
          = st.slice_iterations > 0
                ? g_strdup_printf ("slices of %lld iteration%s", (long long)st.slice_iterations,
                                   st.slice_iterations == 1 ? "" : "s")
                : g_strdup_printf ("%.3f s slices", st.slice_ns / 1e9);
      fprintf (stderr,
               "vramscope: windowed: full detail from %.3f s before the end and around the "
               "peaks and failures; %lld allocations dropped before it (%lld kept), %lld "
               "kernels; the rest of the run in %s\n",
               window_ns / 1e9, (long long)st.blocks_dropped, (long long)st.blocks_kept,
               (long long)st.kernels_dropped, slices);
    }
  else if (!quiet)
    fprintf (stderr, "vramscope: the run is no longer than the window: the trace is complete\n");
  return true;
}
