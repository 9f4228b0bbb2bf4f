/* SPDX-License-Identifier: MIT */
/* vs-bench-stats.h — the figures the viewer's benchmarks (viewer-bench.c,
 * blocks-bench.c, state-bench.c) take from what they measured: sorted
 * times, percentiles, the process's peak resident memory.  Header only.
 */
#pragma once

#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* g_array_sort order of two doubles, ascending. */
static inline int
vs_bench_cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The p-th quantile (0 to 1, nearest rank) of the doubles in a, sorting
 * a; 0 when a is empty. */
static inline double
vs_bench_percentile (GArray *a, double p)
{
  if (a->len == 0)
    return 0;
  g_array_sort (a, vs_bench_cmp_double);
  return g_array_index (a, double, (guint)(p * (a->len - 1) + 0.5));
}

/* The process's peak resident memory in KiB (VmHWM), -1 when it cannot
 * be read. */
static inline long
vs_bench_peak_rss_kb (void)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  p = strstr (status, "VmHWM:");
  return p != NULL ? strtol (p + 6, NULL, 10) : -1;
}
