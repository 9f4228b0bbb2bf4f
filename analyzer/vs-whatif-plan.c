/* SPDX-License-Identifier: MIT */
/* vs-whatif-plan.c — several replays from one learning pass, at once
 * (see vs_whatif_plan_run in vs-whatif.h).
 *
 * Each replay reads the whole request stream, so on a large trace one
 * costs as much as the learning pass.  Up to one thread per processor
 * replays the settings, taking them in turn, each thread reading through a
 * read-only connection of its own (a trace's connection caches its
 * statements and is used by one thread at a time).  A replay that fails on
 * a thread is made again on the plan's own trace, so that its error is
 * the one a replay there gives.
 */
#include "vs-whatif-private.h"

#include <string.h>

#include "vs-trace-private.h"

typedef struct
{
  VsWhatifPlan *plan;
  const VsWhatifSetting *settings;
  VsWhatifResult *results;
  gboolean *done; /* per setting: results[k] is set */
  guint n;
  gint next; /* the next setting to take (atomic) */
} Shared;

typedef struct
{
  Shared *s;
  VsTrace *trace;
} Worker;

static gpointer
work (gpointer data)
{
  Worker *w = data;
  Shared *s = w->s;

  for (guint k; (k = (guint)g_atomic_int_add (&s->next, 1)) < s->n;)
    s->done[k] = vs_whatif_plan_replay (s->plan, w->trace, s->settings[k].alloc_conf,
                                        s->settings[k].limit_bytes, &s->results[k], NULL);
  return NULL;
}

/* The replays that read the trace, replayed on up to n_threads threads;
 * those left (no connection could be opened) stay not done. */
static void
run_parallel (Shared *s, guint n_threads)
{
  VsTrace *trace = vs_whatif_plan_trace (s->plan);
  const char *file = sqlite3_db_filename (trace->db, "main");
  g_autofree Worker *workers = g_new0 (Worker, n_threads);
  g_autofree GThread **threads = g_new0 (GThread *, n_threads);

  if (file == NULL || *file == '\0' || vs_trace_is_recording (trace))
    return;
  for (guint i = 0; i < n_threads; i++)
    {
      workers[i].s = s;
      workers[i].trace = vs_trace_open (file, NULL);
      if (workers[i].trace != NULL)
        threads[i] = g_thread_try_new ("vs-whatif-replay", work, &workers[i], NULL);
    }
  for (guint i = 0; i < n_threads; i++)
    {
      if (threads[i] != NULL)
        g_thread_join (threads[i]);
      g_clear_pointer (&workers[i].trace, vs_trace_free);
    }
}

gboolean
vs_whatif_plan_run (VsWhatifPlan *plan, const VsWhatifSetting *settings, guint n,
                    VsWhatifResult *results, GError **error)
{
  g_return_val_if_fail (plan != NULL && (n == 0 || (settings != NULL && results != NULL)), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_autofree gboolean *done = g_new0 (gboolean, MAX (n, 1));
  Shared s = { plan, settings, results, done, n, 0 };
  guint n_threads = MIN (n, (guint)g_get_num_processors ());

  if (n > 0)
    memset (results, 0, n * sizeof *results);
  if (n_threads >= 2)
    run_parallel (&s, n_threads);
  for (guint k = 0; k < n; k++)
    if (!done[k]
        && !vs_whatif_plan_replay (plan, NULL, settings[k].alloc_conf, settings[k].limit_bytes,
                                   &results[k], error))
      {
        for (guint j = 0; j < n; j++)
          vs_whatif_result_clear (&results[j]);
        return FALSE;
      }
  return TRUE;
}
