/* SPDX-License-Identifier: MIT */
/* vs-bench-timeline.c — times one-screen timeline queries at every zoom.
 *
 * Opens a trace, then for zoom factors 1, 1/4, 1/16 … down to a window of a
 * few microseconds runs vs_timeline_query() for 1000 buckets over windows
 * spread across the trace, and prints the median and worst time per zoom
 * as "zoom_1/Z median_ms worst_ms" lines.  The target is < 50 ms each.
 *
 * Usage: vs-bench-timeline TRACE
 */
#include <stdio.h>
#include <stdlib.h>

#include "vs-trace.h"
#include "vs-timeline.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: vs-bench-timeline TRACE\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (argv[1], &error);
  if (trace == NULL)
    {
      fprintf (stderr, "vs-bench-timeline: %s\n", error->message);
      return 1;
    }
  gint64 span = vs_trace_get_duration_ns (trace);
  double worst_all = 0;
  enum
  {
    RUNS = 9
  };
  for (gint64 zoom = 1; span / zoom > 4000; zoom *= 4)
    {
      gint64 width = span / zoom;
      double ms[RUNS];
      for (int r = 0; r < RUNS; r++)
        {
          gint64 from = (span - width) / (RUNS - 1) * r;
          gint64 t0 = g_get_monotonic_time ();
          g_autoptr (GArray) buckets
              = vs_timeline_query (trace, 1, 0, from, from + width, 1000, &error);
          if (buckets == NULL)
            {
              fprintf (stderr, "vs-bench-timeline: %s\n", error->message);
              return 1;
            }
          ms[r] = (g_get_monotonic_time () - t0) / 1000.0;
        }
      qsort (ms, RUNS, sizeof ms[0], cmp_double);
      printf ("zoom_1/%" G_GINT64_FORMAT " %.2f %.2f\n", zoom, ms[RUNS / 2], ms[RUNS - 1]);
      if (ms[RUNS - 1] > worst_all)
        worst_all = ms[RUNS - 1];
    }
  printf ("timeline_worst_ms %.2f\n", worst_all);
  return 0;
}
