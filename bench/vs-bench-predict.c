/* SPDX-License-Identifier: MIT */
/* vs-bench-predict.c — times `vramscope predict`'s stages on one trace:
 * building the model from two runs (the trace read twice, as two runs at
 * batches 1 and 2, and matched), from one run (the roles of every block),
 * one replay, and the search for the largest batch under a limit.
 *
 * Usage: vs-bench-predict TRACE
 * Prints "predict_<stage>_ms N cpu_ms C main_thread_cpu_ms M" per stage:
 * wall time, the CPU time of all threads, and that of the calling thread
 * (on a shared machine wall time stretches with the load; CPU time does
 * not; the calling thread's is what the other threads' work is not
 * overlapped with, given free cores),
 * then predict_two_runs_total_ms, the whole of a two-run prediction of
 * one batch with the largest batch (what `vramscope predict T@1 T@2
 * --batch 4` does, the process start aside).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

#include "vs-analyzer.h"

static double
now_ms (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct
{
  double wall, cpu, thread;
} Mark;

static Mark
mark (void)
{
  Mark m = { now_ms (CLOCK_MONOTONIC), now_ms (CLOCK_PROCESS_CPUTIME_ID),
             now_ms (CLOCK_THREAD_CPUTIME_ID) };
  return m;
}

static void
report (const char *stage, Mark from)
{
  Mark to = mark ();
  printf ("predict_%s_ms %.0f cpu_ms %.0f main_thread_cpu_ms %.0f\n", stage, to.wall - from.wall,
          to.cpu - from.cpu, to.thread - from.thread);
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsPredictModel) two = NULL;
  g_autoptr (VsPredictModel) one = NULL;
  g_autoptr (GArray) allocators = NULL;
  VsPredictPoint p;
  Mark t, total;

  if (argc != 2)
    {
      fprintf (stderr, "usage: vs-bench-predict TRACE\n");
      return 2;
    }
  sqlite3_config (SQLITE_CONFIG_MULTITHREAD); /* as `vramscope predict` runs */
  total = mark ();
  g_autoptr (VsTrace) a = vs_trace_open (argv[1], &error);
  g_autoptr (VsTrace) b = a != NULL ? vs_trace_open (argv[1], &error) : NULL;
  if (b == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  allocators = vs_whatif_allocators (a);
  if (allocators->len == 0)
    {
      fprintf (stderr, "%s has no PyTorch allocator\n", argv[1]);
      return 1;
    }
  gint64 id = g_array_index (allocators, gint64, 0);
  t = mark ();
  two = vs_predict_model_new (a, id, 1, b, id, 2, &error);
  if (two == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  report ("two_runs_model", t);
  printf ("allocations %" G_GINT64_FORMAT "\n", vs_predict_model_get_n_allocations (two));
  t = mark ();
  if (!vs_predict_model_replay (two, 4, VS_UNKNOWN, FALSE, &p, &error))
    return 1;
  report ("replay", t);
  t = mark ();
  gint64 limit = p.peak_reserved_bytes - p.peak_reserved_bytes / 10;
  gint64 largest = vs_predict_model_largest (two, limit, TRUE, 1 << 24, &p, &error);
  if (largest < 0)
    return 1;
  report ("largest", t);
  report ("two_runs_total", total);
  t = mark ();
  one = vs_predict_model_new (a, id, 1, NULL, 0, 0, &error);
  if (one == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  report ("one_run_model", t);
  return 0;
}
