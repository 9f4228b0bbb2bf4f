/* vs-record-window.c — `record --window DURATION`: parsing the duration and
 * bounding the trace once the run's trace is written (the method is in
 * schemas/vs-trace-window.c). */
#include "vs-record-window.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <sqlite3.h>

#include "vs-growth.h"
#include "vs-trace-window.h"
#include "vs-trace.h"

int64_t
vs_record_parse_duration (const char *text)
{
  static const struct
  {
    const char *unit;
    double ns;
  } units[] = { { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 } };
  if (text == NULL || !g_ascii_isdigit (text[0]))
    return -1;
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  if (end == text || !isfinite (v) || v <= 0)
    return -1;
  for (size_t k = 0; k < G_N_ELEMENTS (units); k++)
    if (strcmp (end, units[k].unit) == 0)
      {
        double ns = v * units[k].ns;
        if (ns < 1 || ns > 10 * 365.25 * 86400e9)
          return -1;
        return (int64_t)llround (ns);
      }
  return -1;
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
vs_record_apply_window (const char *path, int64_t window_ns, bool quiet, char *err, size_t errlen)
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
  int rc = vs_trace_window_iterations (db, window_ns, starts, nstarts, &st, err, errlen);
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
