/* SPDX-License-Identifier: MIT */
/* vs-diagnose-failures.c — the diagnosis's rules on failed requests (see
 * vs-diagnose.h): each group of out-of-memory failures of one allocator
 * and cause becomes a finding with its figures, PyTorch's own message and
 * a remedy; failures the program survived are said so; other processes
 * holding the device at a failure are a finding of their own.
 */
#include "vs-alloc-conf.h"
#include "vs-diagnose-private.h"
#include "vs-format.h"
#include "vs-framework-oom.h"
#include "vs-framework-pools.h"
#include "vs-fragmentation.h"
#include "vs-oom.h"
#include "vs-stack.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"
#include "vs-whatif.h"
#include "vs-windowed.h"

#include <sqlite3.h>
#include <string.h>

#define MiB (G_GINT64_CONSTANT (1) << 20)
#define GiB (G_GINT64_CONSTANT (1) << 30)

/* ------------------------------------------------------------ failures */

typedef struct
{
  VsFinding *finding;
  VsOomCause cause;
  gint64 allocator_id;
  gboolean fatal;       /* it holds the failure that ended the run */
  gint64 first_time_ns; /* its earliest failure */
  char *message;        /* PyTorch's figures at the failure it describes, or NULL */
} OomGroup;

static const char *exit_status_sql = "SELECT exit_status FROM process WHERE id = ?1";

/* Whether process_id ended with a nonzero exit status, or one the trace
 * does not know (a run killed while recording). */
static gboolean
process_failed (VsTrace *trace, gint64 process_id)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, exit_status_sql, NULL);
  gboolean failed = TRUE;

  if (stmt == NULL)
    return TRUE;
  sqlite3_bind_int64 (stmt, 1, process_id);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    failed = sqlite3_column_int64 (stmt, 0) != 0;
  sqlite3_reset (stmt);
  return failed;
}

/* The figures of PyTorch's out-of-memory message for a failure whose
 * allocator state the replay gives (w), each in PyTorch's own format so
 * that it reads as in the message the user holds. */
static char *
torch_message (const VsWhatifFailure *w, gint64 device_free, gint64 device_total, gint64 limit)
{
  g_autofree char *tried = vs_oom_torch_size (w->alloc_bytes);
  g_autofree char *req = vs_format_bytes (w->requested_bytes);
  g_autofree char *alloc = vs_oom_torch_size (w->allocated_bytes);
  g_autofree char *alloc_req = vs_format_bytes (w->requested_live_bytes);
  g_autofree char *unalloc = vs_oom_torch_size (MAX (w->reserved_bytes - w->allocated_bytes, 0));
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "As PyTorch printed it: tried to allocate %s (%s requested)", tried,
                          req);
  if (device_total > 0 && device_free != VS_UNKNOWN)
    {
      g_autofree char *total = vs_oom_torch_size (device_total);
      g_autofree char *free_ = vs_oom_torch_size (device_free);

      g_string_append_printf (s, "; a total capacity of %s of which %s is free", total, free_);
    }
  if (limit != VS_UNKNOWN && limit > 0)
    {
      g_autofree char *allowed = vs_oom_torch_size (limit);

      g_string_append_printf (s, "; %s allowed", allowed);
    }
  g_string_append_printf (s,
                          "; %s allocated by PyTorch (blocks at their rounded sizes; %s "
                          "requested), %s reserved but unallocated",
                          alloc, alloc_req, unalloc);
  return g_string_free (s, FALSE);
}

/* The replayed state at failure o, the index-th failure of its allocator:
 * the replay's failure of that index when it is the same request. */
static const VsWhatifFailure *
replayed_failure (const VsWhatifResult *replay, guint index, const VsOom *o)
{
  const VsWhatifFailure *w;

  if (replay->failures == NULL || index >= replay->failures->len)
    return NULL;
  w = &g_array_index (replay->failures, VsWhatifFailure, index);
  return w->requested_bytes == o->requested_bytes && w->time_ns == o->time_ns ? w : NULL;
}

/* A windowed trace keeps the detail of some failures only (the first and
 * last few, those near its peaks and in its window); its summary counts
 * every failure of the run.  Each failure finding of an allocator that
 * lost some says how many there were in the whole run, and in its
 * evidence which it describes (the dropped ones' causes are unknown). */
static gboolean
windowed_failure_counts (VsTrace *trace, gint64 device_id, GArray *groups, GError **error)
{
  VsWindowedInfo info;

  if (groups->len == 0)
    return TRUE;
  if (!vs_windowed_info (trace, &info, error))
    return FALSE;
  if (!info.windowed)
    return TRUE;
  for (guint i = 0; i < groups->len; i++)
    {
      OomGroup *g = &g_array_index (groups, OomGroup, i);
      VsSummary s;
      gint64 kept = 0;

      for (guint k = 0; k < groups->len; k++)
        if (g_array_index (groups, OomGroup, k).allocator_id == g->allocator_id)
          kept += g_array_index (groups, OomGroup, k).finding->count;
      if (!vs_summary_get (trace, device_id, g->allocator_id, &s, error))
        return FALSE;
      if (s.failed_alloc_count > kept)
        {
          char *evidence = g_strdup_printf (
              "%s. The run had %" G_GINT64_FORMAT " failed requests here; the windowed trace "
              "keeps the detail of %" G_GINT64_FORMAT " (record --window), which this finding "
              "describes",
              g->finding->evidence, s.failed_alloc_count, kept);

          g_free (g->finding->evidence);
          g->finding->evidence = evidence;
          g->finding->run_count = s.failed_alloc_count;
        }
    }
  return TRUE;
}

/* The remedy of a failure finding f of cause, o the failure it describes. */
static char *
failure_remedy (VsDeviceDiagnosis *dd, VsFinding *f, VsOomCause cause, const VsOom *o,
                const char *role_text, gint64 role_saving)
{
  GString *remedy = g_string_new (NULL);

  if (dd->growth.bytes_per_iteration > 0)
    {
      g_autofree char *per = vs_diagnose_bytes (dd->growth.bytes_per_iteration);

      /* Growth would exhaust any cap: a larger one only postpones this. */
      g_string_append_printf (remedy,
                              "first stop the growth of %s per %s (growth-per-iteration): "
                              "more memory only postpones this failure",
                              per, dd->iterations->unit);
    }
  if (cause == VS_OOM_CAUSE_FRAGMENTATION)
    {
      if (dd->settings.expandable_segments != 1)
        {
          g_autofree char *free_in = vs_diagnose_bytes (o->allocator.free_bytes);

          g_string_append_printf (
              remedy,
              "%sPYTORCH_CUDA_ALLOC_CONF=" VS_ALLOC_CONF_EXPANDABLE " lets the allocator grow "
              "segments in place instead of leaving holes (up to the %s free inside "
              "reserved becomes usable)",
              remedy->len > 0 ? "; " : "", free_in);
        }
      else
        g_string_append_printf (remedy,
                                "%sexpandable segments are already on: allocate the "
                                "largest tensors first or reuse buffers of one size",
                                remedy->len > 0 ? "; " : "");
    }
  else if (cause == VS_OOM_CAUSE_ALLOCATOR_LIMIT && dd->growth.bytes_per_iteration <= 0)
    {
      if (dd->settings.memory_fraction > 0)
        g_string_append_printf (remedy,
                                "raise the per-process memory fraction (%.3g) or remove "
                                "the cap",
                                dd->settings.memory_fraction);
      else
        g_string_append (remedy, "raise the allocator's limit (PyTorch: "
                                 "torch.cuda.set_per_process_memory_fraction)");
    }
  if (dd->growth.bytes_per_iteration <= 0 && role_text != NULL
      && cause != VS_OOM_CAUSE_FRAGMENTATION)
    {
      g_string_append_printf (remedy, "%s%s", remedy->len > 0 ? "; or lower the need: " : "",
                              role_text);
      f->saving_bytes = role_saving;
    }
  if (remedy->len == 0 && cause == VS_OOM_CAUSE_DEVICE_FULL)
    g_string_append (remedy, "the device had no room for it: request less (a smaller "
                             "batch or tensor), free memory first, or use a GPU with "
                             "more memory");
  return remedy->len > 0 ? g_string_free (remedy, FALSE) : (g_string_free (remedy, TRUE), NULL);
}

/* A new finding for failure o of cause (evidence: the cause's sentence),
 * or NULL with error set. */
static VsFinding *
failure_finding (VsTrace *trace, VsDeviceDiagnosis *dd, const VsOom *o, VsOomCause cause,
                 const char *evidence, GError **error)
{
  VsFindingKind kind = cause == VS_OOM_CAUSE_DEVICE_FULL     ? VS_FINDING_OOM_DEVICE_FULL
                       : cause == VS_OOM_CAUSE_FRAGMENTATION ? VS_FINDING_OOM_FRAGMENTATION
                                                             : VS_FINDING_OOM_ALLOCATOR_LIMIT;
  VsFinding *f;
  const VsStackInfo *s = vs_stack_get (trace, o->stack_id, error);
  VsRoles roles;
  g_autofree char *request = vs_diagnose_bytes (o->requested_bytes);
  g_autofree char *role_text = NULL;
  gint64 role_saving = VS_UNKNOWN;

  if (s == NULL)
    return NULL;
  f = vs_diagnose_finding_new (kind, dd->device->id, o->allocator_id);
  f->bytes = o->requested_bytes;
  f->count = 1;
  f->time_ns = o->time_ns;
  f->seq = o->seq;
  f->site = s->site[0] != '\0' ? g_strdup (s->site) : NULL;
  f->stack_id = o->stack_id > 0 ? o->stack_id : VS_UNKNOWN;
  f->evidence = g_strdup_printf ("%s failed: %s", request, evidence);
  if (o->seq != VS_UNKNOWN
      && vs_roles_at (trace, dd->device->id, o->allocator_id, o->seq, &roles, NULL))
    {
      g_autofree char *when = vs_format_duration (o->time_ns);
      g_autofree char *at = g_strdup_printf ("at this failure (%s)", when);

      role_text = vs_diagnose_role_remedy (&roles, at, dd->autocast, &role_saving);
    }
  f->remedy = failure_remedy (dd, f, cause, o, role_text, role_saving);
  if (cause == VS_OOM_CAUSE_FRAGMENTATION && dd->settings.expandable_segments != 1)
    f->saving_bytes = o->allocator.free_bytes;
  return f;
}

/* Says in g's evidence which failure it describes: the one that ended the
 * run, with the ones survived before it, or failures all survived. */
static void
say_survived (VsTrace *trace, OomGroup *g, const char *message)
{
  VsFinding *f = g->finding;
  g_autofree char *first = vs_format_duration (g->first_time_ns);
  g_autofree char *when = vs_format_duration (f->time_ns);
  GString *s = g_string_new (NULL);

  (void)trace;
  if (g->fatal)
    {
      g_string_append_printf (s, "the failure that ended the run, at %s", when);
      if (f->count > 1)
        g_string_append_printf (s,
                                " (%" G_GINT64_FORMAT " earlier ones of this kind were survived, "
                                "the first at %s)",
                                f->count - 1, first);
      g_string_append_printf (s, ": %s", f->evidence);
      if (message != NULL)
        g_string_append_printf (s, ". %s", message);
    }
  else
    {
      if (f->count > 1)
        g_string_append_printf (s,
                                "survived: the program went on after all %" G_GINT64_FORMAT
                                " failures of this kind (the first at %s, the last at %s): ",
                                f->count, first, when);
      else
        g_string_append_printf (s, "survived: the program went on after it (at %s): ", when);
      g_string_append (s, f->evidence);
      if (message != NULL)
        g_string_append_printf (s, ". %s", message);
    }
  g_free (f->evidence);
  f->evidence = g_string_free (s, FALSE);
}

gboolean
vs_diagnose_failures (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  gint64 device_id = dd->device->id;
  g_autoptr (GPtrArray) all = vs_oom_list (trace, device_id, 0, error);
  g_autoptr (GArray) groups = g_array_new (FALSE, TRUE, sizeof (OomGroup));
  g_auto (VsWhatifResult) replay = { 0 };
  g_autofree VsOomCause *causes = NULL;
  g_autofree char **evidences = NULL;
  g_autofree gboolean *fatal = NULL;
  g_autofree gint *replay_index = NULL;
  gboolean has_allocator_failures = FALSE;
  guint n_ours = 0;
  guint first_finding = findings->len;

  if (all == NULL)
    return FALSE;
  causes = g_new0 (VsOomCause, all->len + 1);
  evidences = g_new0 (char *, all->len + 1);
  fatal = g_new0 (gboolean, all->len + 1);
  replay_index = g_new0 (gint, all->len + 1);
  for (guint i = 0; i < all->len; i++)
    {
      const VsOom *o = g_ptr_array_index (all, i);

      replay_index[i] = -1;
      if (o->allocator_id != 0)
        has_allocator_failures = TRUE;
      if (dd->allocator_id != 0 && o->allocator_id == dd->allocator_id)
        replay_index[i] = (gint)n_ours++;
    }
  /* The allocator's state at each failure as PyTorch printed it: a
   * replay following the recorded run (one that cannot follow it leaves
   * those figures out). */
  if (n_ours > 0)
    {
      g_autoptr (GError) replay_error = NULL;

      if (!vs_whatif_run (trace, dd->allocator_id, NULL, VS_UNKNOWN, VS_WHATIF_FAILURES, &replay,
                          &replay_error))
        vs_whatif_result_clear (&replay);
    }
  for (guint i = 0; i < all->len; i++)
    {
      const VsOom *o = g_ptr_array_index (all, i);

      gint64 pool;

      /* PyTorch retries its cudaMalloc failures after emptying its cache
       * and reports its own failure: those count there. */
      if (o->allocator_id == 0 && has_allocator_failures)
        continue;
      /* A framework's pool: vs_framework_oom_findings() below. */
      if (vs_framework_pool_failure (trace, o, &pool))
        continue;
      causes[i] = vs_oom_classify (trace, o, all, dd->settings.limit_bytes, &evidences[i]);
    }
  /* The failure that ended the run: the last one of a process that
   * failed. */
  for (guint i = 0; i < all->len; i++)
    {
      const VsOom *o = g_ptr_array_index (all, i);
      gboolean last = causes[i] != VS_OOM_CAUSE_UNKNOWN;

      for (guint k = i + 1; last && k < all->len; k++)
        if (causes[k] != VS_OOM_CAUSE_UNKNOWN
            && ((const VsOom *)g_ptr_array_index (all, k))->process_id == o->process_id)
          last = FALSE;
      fatal[i] = last && process_failed (trace, o->process_id);
    }

  /* Newest first, so that each finding describes the last failure of its
   * kind: the fatal one where it is of that kind. */
  for (guint j = all->len; j-- > 0;)
    {
      const VsOom *o = g_ptr_array_index (all, j);
      OomGroup *g = NULL;

      if (causes[j] == VS_OOM_CAUSE_UNKNOWN)
        continue;
      for (guint k = 0; k < groups->len && g == NULL; k++)
        {
          OomGroup *x = &g_array_index (groups, OomGroup, k);

          if (x->cause == causes[j] && x->allocator_id == o->allocator_id && !fatal[j])
            g = x;
        }
      if (g != NULL)
        {
          g->finding->count++;
          g->first_time_ns = o->time_ns;
        }
      else
        {
          OomGroup ng = { 0 };
          VsFinding *f = failure_finding (trace, dd, o, causes[j], evidences[j], error);
          const VsWhatifFailure *w
              = replay_index[j] >= 0 ? replayed_failure (&replay, (guint)replay_index[j], o) : NULL;
          g_autofree char *message = NULL;

          if (f == NULL)
            {
              for (guint k = 0; k < all->len; k++)
                g_free (evidences[k]);
              for (guint k = 0; k < groups->len; k++)
                g_free (g_array_index (groups, OomGroup, k).message);
              return FALSE;
            }
          if (w != NULL)
            message = torch_message (w, o->device_free_bytes,
                                     o->device_total_bytes > 0 ? o->device_total_bytes
                                                               : dd->device->total_bytes,
                                     dd->settings.limit_bytes);
          ng.finding = f;
          ng.cause = causes[j];
          ng.allocator_id = o->allocator_id;
          ng.fatal = fatal[j];
          ng.first_time_ns = o->time_ns;
          /* The message's figures are said once all failures are counted. */
          ng.message = g_steal_pointer (&message);
          g_array_append_val (groups, ng);
          g_ptr_array_add (findings, f);
        }

      /* Another process on the device at this failure. */
      if (o->device_free_bytes != VS_UNKNOWN && o->device_total_bytes > 0 && o->seq != VS_UNKNOWN)
        {
          VsSeriesPoint p;
          gint64 mine, others;

          if (!vs_series_at_seq (trace, device_id, 0, o->seq, &p, error))
            {
              for (guint k = 0; k < all->len; k++)
                g_free (evidences[k]);
              for (guint k = 0; k < groups->len; k++)
                g_free (g_array_index (groups, OomGroup, k).message);
              return FALSE;
            }
          mine = p.device_bytes != VS_UNKNOWN ? p.device_bytes : p.reserved_bytes;
          others = o->device_total_bytes - o->device_free_bytes - mine;
          if (others >= GiB && others * 20 >= o->device_total_bytes)
            {
              gboolean seen = FALSE;

              for (guint k = 0; k < findings->len; k++)
                if (((VsFinding *)g_ptr_array_index (findings, k))->kind == VS_FINDING_OTHER_PROCESS
                    && ((VsFinding *)g_ptr_array_index (findings, k))->device_id == device_id)
                  seen = TRUE;
              if (!seen)
                {
                  VsFinding *f = vs_diagnose_finding_new (VS_FINDING_OTHER_PROCESS, device_id, 0);
                  g_autofree char *o_text = vs_diagnose_bytes (others);
                  g_autofree char *m_text = vs_diagnose_bytes (mine);
                  g_autofree char *t_text = vs_diagnose_bytes (o->device_total_bytes);
                  g_autofree char *fr_text = vs_diagnose_bytes (o->device_free_bytes);

                  f->bytes = others;
                  f->time_ns = o->time_ns;
                  f->seq = o->seq;
                  f->evidence = g_strdup_printf (
                      "at the failure CUDA reported %s free of %s; this process held %s, so "
                      "%s was used by other processes (and this process's CUDA context)",
                      fr_text, t_text, m_text, o_text);
                  f->remedy = g_strdup ("run on a GPU of its own (CUDA_VISIBLE_DEVICES), or stop "
                                        "the other processes (nvidia-smi lists them)");
                  f->saving_bytes = others;
                  g_ptr_array_add (findings, f);
                }
            }
        }
    }
  for (guint k = 0; k < all->len; k++)
    g_free (evidences[k]);
  for (guint k = 0; k < groups->len; k++)
    {
      OomGroup *g = &g_array_index (groups, OomGroup, k);
      g_autofree char *message = g_steal_pointer (&g->message);

      say_survived (trace, g, message);
    }
  /* The fatal failure heads the failures. */
  for (guint k = first_finding; k < findings->len; k++)
    for (guint m = 0; m < groups->len; m++)
      {
        OomGroup *g = &g_array_index (groups, OomGroup, m);

        if (g->fatal && g_ptr_array_index (findings, k) == g->finding && k != first_finding)
          {
            gpointer x = g_ptr_array_steal_index (findings, k);

            g_ptr_array_insert (findings, (gint)first_finding, x);
          }
      }
  if (!vs_framework_oom_findings (trace, device_id, all, findings, error))
    return FALSE;
  return windowed_failure_counts (trace, device_id, groups, error);
}
