/* SPDX-License-Identifier: MIT */
/* vs-bench-whatif-line.c — times the viewer's what-if replay of one GPU
 * (vs_whatif_line_new: the allocator's replay with its reserved line and
 * progress reports, the trace's own replay beside it) under the trace's
 * own settings and under expandable segments.
 *
 * Usage: vs-bench-whatif-line TRACE
 * Prints "whatif_line_<what>_ms N cpu_ms C steps S progress_calls P" per
 * setting: wall and CPU time (on a shared machine wall time stretches
 * with the load; CPU time does not).
 */
#include <stdio.h>
#include <time.h>

#include "vs-analyzer.h"

static gboolean
count_call (double fraction, gpointer data)
{
  (*(guint *)data)++;
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  const char *confs[] = { NULL, "expandable_segments:True" };
  const char *names[] = { "own", "expandable" };

  if (argc != 2)
    {
      fprintf (stderr, "usage: vs-bench-whatif-line TRACE\n");
      return 2;
    }
  g_autoptr (VsTrace) trace = vs_trace_open (argv[1], &error);
  if (trace == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  const VsDeviceInfo *dev = g_ptr_array_index (vs_trace_get_devices (trace), 0);
  for (guint i = 0; i < G_N_ELEMENTS (confs); i++)
    {
      guint calls = 0;
      gint64 t0 = g_get_monotonic_time ();
      clock_t c0 = clock ();
      g_autoptr (VsWhatifLine) line
          = vs_whatif_line_new (trace, dev->id, confs[i], VS_UNKNOWN, count_call, &calls, &error);
      gint64 t1 = g_get_monotonic_time ();
      clock_t c1 = clock ();
      if (line == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      printf ("whatif_line_%s_ms %" G_GINT64_FORMAT " cpu_ms %.0f steps %u progress_calls %u\n",
              names[i], (t1 - t0) / 1000, (double)(c1 - c0) * 1000 / CLOCKS_PER_SEC,
              line->steps->len, calls);
    }
  return 0;
}
