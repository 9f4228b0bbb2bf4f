/* SPDX-License-Identifier: MIT */
/* vs-diagnose.c — the rules that turn a trace into findings (see
 * vs-diagnose.h for each rule and its threshold).
 *
 * Per device: the peak of allocated memory by role and by site, the
 * iterations and their growth, the allocator's settings; then the
 * findings, each from its own evidence: failed requests classified by
 * vs_oom_classify(), growth per iteration (vs_growth_judge()), leaks of
 * device memory at exit, fragmentation at the peak, memory outside every
 * allocator, other processes at a failure.
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

static const char *const finding_names[VS_N_FINDINGS] = {
  "oom-device-full",   "oom-allocator-limit",  "oom-fragmentation",
  "fragmentation",     "growth-per-iteration", "leak-at-exit",
  "outside-allocator", "other-process",        "forward-without-backward",
};

const char *
vs_finding_name (VsFindingKind kind)
{
  g_return_val_if_fail (kind < VS_N_FINDINGS, "?");
  return finding_names[kind];
}

static void
finding_free (gpointer data)
{
  VsFinding *f = data;

  g_free (f->site);
  g_free (f->evidence);
  g_free (f->remedy);
  g_free (f);
}

static void
device_diagnosis_free (gpointer data)
{
  VsDeviceDiagnosis *d = data;

  g_clear_pointer (&d->sites, g_array_unref);
  g_clear_pointer (&d->iterations, vs_iterations_free);
  vs_allocator_settings_clear (&d->settings);
  g_free (d->lower_peak);
  g_free (d);
}

void
vs_diagnosis_free (VsDiagnosis *diagnosis)
{
  if (diagnosis == NULL)
    return;
  g_ptr_array_unref (diagnosis->devices);
  g_ptr_array_unref (diagnosis->findings);
  g_free (diagnosis);
}

static VsFinding *
finding_new (VsFindingKind kind, gint64 device_id, gint64 allocator_id)
{
  VsFinding *f = g_new0 (VsFinding, 1);

  f->kind = kind;
  f->device_id = device_id;
  f->allocator_id = allocator_id;
  f->count = VS_UNKNOWN;
  f->run_count = VS_UNKNOWN;
  f->time_ns = VS_UNKNOWN;
  f->seq = VS_UNKNOWN;
  f->stack_id = VS_UNKNOWN;
  f->saving_bytes = VS_UNKNOWN;
  return f;
}

static char *
bytes (gint64 n)
{
  return vs_format_bytes (MAX (n, 0));
}

/* How to lower memory held by the dominant role of r (at the instant
 * `at` names), with the expected saving and its basis; NULL when no role
 * dominates. */
static char *
role_remedy (const VsRoles *r, const char *at, gboolean autocast, gint64 *saving)
{
  VsRole role = vs_roles_dominant (r);
  gint64 b = r->bytes[role];
  g_autofree char *held = bytes (b);
  g_autofree char *half = bytes (b / 2);
  g_autofree char *three_quarters = bytes (b / 4 * 3);
  int pct = r->total_bytes > 0 ? (int)(100 * b / r->total_bytes) : 0;

  *saving = VS_UNKNOWN;
  if (r->total_bytes <= 0 || b * 10 < r->total_bytes * 4)
    return NULL;
  switch (role)
    {
    case VS_ROLE_ACTIVATIONS:
      *saving = b / 2;
      if (autocast) /* never propose what is already in effect */
        return g_strdup_printf (
            "activations hold %s (%d%%) %s, with autocast already on (its frames are in the "
            "stacks): half the batch with 2-step gradient accumulation saves ~%s (activations "
            "scale with batch size); activation checkpointing saves more, at the cost of "
            "recomputing the forward pass",
            held, pct, at, half);
      return g_strdup_printf (
          "activations hold %s (%d%%) %s: bf16 autocast, or half the batch with 2-step gradient "
          "accumulation, saves ~%s (activations scale with bytes per value and batch size); "
          "activation checkpointing saves more, at the cost of recomputing the forward pass",
          held, pct, at, half);
    case VS_ROLE_OPTIMIZER_STATE:
      *saving = b / 4 * 3;
      return g_strdup_printf (
          "optimizer state holds %s (%d%%) %s: an 8-bit optimizer saves ~%s (1 byte per value "
          "instead of 4); sharding it over N GPUs (ZeRO-1, FSDP) keeps 1/N; a fused optimizer "
          "avoids its temporaries",
          held, pct, at, three_quarters);
    case VS_ROLE_PARAMETERS:
    case VS_ROLE_GRADIENTS:
      {
        gint64 pg = r->bytes[VS_ROLE_PARAMETERS] + r->bytes[VS_ROLE_GRADIENTS];
        g_autofree char *both = bytes (pg);
        g_autofree char *both_half = bytes (pg / 2);

        *saving = pg / 2;
        return g_strdup_printf (
            "parameters and gradients hold %s %s: bf16 weights and gradients save ~%s (2 bytes "
            "per value instead of 4); sharding them over N GPUs (FSDP, ZeRO-3) keeps 1/N",
            both, at, both_half);
      }
    case VS_ROLE_OTHER:
    default:
      return NULL;
    }
}

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

/* A frame of torch.autocast's context manager: the program ran under
 * mixed precision. */
static const char *autocast_sql
    = "SELECT 1 FROM frame WHERE file LIKE '%torch/amp/autocast_mode.py'"
      " OR file LIKE '%torch/cuda/amp/autocast_mode.py' LIMIT 1";

static gboolean
uses_autocast (VsTrace *trace)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, autocast_sql, NULL);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  found = sqlite3_step (stmt) == SQLITE_ROW;
  sqlite3_reset (stmt);
  return found;
}

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
      g_autofree char *per = bytes (dd->growth.bytes_per_iteration);

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
          g_autofree char *free_in = bytes (o->allocator.free_bytes);

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
  g_autofree char *request = bytes (o->requested_bytes);
  g_autofree char *role_text = NULL;
  gint64 role_saving = VS_UNKNOWN;

  if (s == NULL)
    return NULL;
  f = finding_new (kind, dd->device->id, o->allocator_id);
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

      role_text = role_remedy (&roles, at, dd->autocast, &role_saving);
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

static gboolean
diagnose_failures (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
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
                  VsFinding *f = finding_new (VS_FINDING_OTHER_PROCESS, device_id, 0);
                  g_autofree char *o_text = bytes (others);
                  g_autofree char *m_text = bytes (mine);
                  g_autofree char *t_text = bytes (o->device_total_bytes);
                  g_autofree char *fr_text = bytes (o->device_free_bytes);

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

/* ------------------------------------------------------------- growth */

static void
diagnose_growth (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings)
{
  const VsGrowth *g = &dd->growth;
  VsFinding *f;
  g_autofree char *per = NULL;
  g_autofree char *site_bytes = NULL;
  g_autofree char *how = NULL;
  const char *site;

  if (g->bytes_per_iteration <= 0)
    return;
  f = finding_new (VS_FINDING_GROWTH_PER_ITERATION, dd->device->id, dd->iterations->allocator_id);
  per = bytes (g->bytes_per_iteration);
  f->bytes = g->bytes_per_iteration;
  f->count = g->iterations;
  f->unit = dd->iterations->unit;
  f->time_ns = g->first_time_ns;
  f->seq = g->first_seq;
  /* A site of no known stack has an empty name. */
  site = g->site != NULL && g->site[0] != '\0' ? g->site : NULL;
  f->site = g_strdup (site);
  f->stack_id = g->site_stack_id;
  site_bytes = bytes (g->site_bytes);
  const char *unit = dd->iterations->unit;
  how = g->stepped ? g_strdup_printf ("rose in %" G_GINT64_FORMAT " steps over %" G_GINT64_FORMAT
                                      " %ss and never came back down: %s per %s on average",
                                      g->growing, g->iterations, unit, per, unit)
                   : g_strdup_printf ("grew in %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                      " %ss, by %s per %s",
                                      g->growing, g->iterations, unit, per, unit);
  f->evidence = g_strdup_printf ("allocated memory at the start of each %s (%s) %s; %s "
                                 "allocated since then is still live, most of it from %s",
                                 unit, dd->iterations->what, how, site_bytes,
                                 site != NULL ? site : "an unknown site");
  if (dd->settings.pytorch)
    f->remedy = g_strdup ("keep no tensor that holds its autograd graph across iterations: "
                          ".item() for logged values, .detach() (or .cpu()) for kept outputs, "
                          "torch.no_grad() around evaluation; clear caches and lists that grow");
  else
    f->remedy = g_strdup ("free in each iteration what it allocates (or allocate once and "
                          "reuse the buffer)");
  f->saving_bytes = g->site_bytes;
  g_ptr_array_add (findings, f);
}

/* ------------------------------------------- forward without backward */

/* peak_blocks: the live blocks at the device's peak of allocated memory
 * (vs_live_blocks() of every allocator), NULL when it has none. */
static gboolean
diagnose_unused_activations (VsTrace *trace, VsDeviceDiagnosis *dd, GArray *peak_blocks,
                             GPtrArray *findings, GError **error)
{
  VsUnusedActivations u;
  const VsStackInfo *s;
  VsFinding *f;
  g_autofree char *b = NULL, *all = NULL;
  gint64 peak = dd->all.peak_allocated_bytes;

  if (!dd->settings.pytorch || peak_blocks == NULL)
    return TRUE;
  if (!vs_unused_activations_of_blocks (trace, peak_blocks, &u, error))
    return FALSE;
  if (u.bytes < 64 * MiB || u.bytes * 4 < peak || u.count < 8)
    return TRUE;
  s = vs_stack_get (trace, u.stack_id, error);
  if (s == NULL)
    return FALSE;
  f = finding_new (VS_FINDING_FORWARD_WITHOUT_BACKWARD, dd->device->id, dd->allocator_id);
  b = bytes (u.bytes);
  all = bytes (peak);
  f->bytes = u.bytes;
  f->count = u.count;
  f->time_ns = dd->all.peak_allocated_time_ns;
  f->seq = dd->all.peak_allocated_seq;
  f->site = s->site[0] != '\0' ? g_strdup (s->site) : NULL;
  f->stack_id = u.stack_id > 0 ? u.stack_id : VS_UNKNOWN;
  f->evidence = g_strdup_printf (
      "at the peak (%s), %s in %" G_GINT64_FORMAT " blocks are activations a forward pass saved "
      "for a backward pass that never came: no backward allocation happened before they were "
      "freed",
      all, b, u.count);
  f->remedy = g_strdup ("run evaluation and inference under torch.no_grad() or "
                        "torch.inference_mode(): the forward pass then keeps no activations "
                        "for backward");
  f->saving_bytes = u.bytes;
  g_ptr_array_add (findings, f);
  return TRUE;
}

/* ------------------------------------------------------- leak at exit */

static gboolean
diagnose_leaks (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  /* Device-level memory of no allocator still live at the end, by stack
   * (index on (device_id, level, free_seq)). */
  /* Only of processes that exited on their own: memory a process held
   * when a signal (exit status 128 + N) or the end of recording stopped
   * it was in use, not left behind. */
  static const char *leaked_sql
      = "SELECT stack_id, count(*), sum(bytes) FROM block"
        " WHERE device_id = ?1 AND level = 1 AND free_seq IS NULL AND allocator_id IS NULL"
        " AND kind IN (1, 5, 6) AND stack_id IS NOT NULL AND stack_id > 0"
        " AND process_id IN (SELECT id FROM process WHERE exit_status BETWEEN 0 AND 127)"
        " GROUP BY stack_id ORDER BY sum(bytes) DESC, stack_id LIMIT 8";
  static const char *freed_sql
      = "SELECT count(*) FROM block WHERE device_id = ?1 AND level = 1"
        " AND free_seq IS NOT NULL AND allocator_id IS NULL AND kind IN (1, 5, 6)";
  g_autoptr (GArray) groups = g_array_new (FALSE, TRUE, sizeof (gint64) * 3);
  sqlite3_stmt *stmt = vs_trace_statement (trace, leaked_sql, error);
  gint64 freed = 0;
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, dd->device->id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 g[3] = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                      sqlite3_column_int64 (stmt, 2) };

      g_array_append_vals (groups, g, 1);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  if (groups->len == 0)
    return TRUE;
  /* A program that frees device memory but not these: a leak.  One that
   * never frees any (a caching allocator seen from below keeps its
   * segments to the end) says nothing by keeping them. */
  stmt = vs_trace_statement (trace, freed_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, dd->device->id);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    freed = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (freed == 0)
    return TRUE;
  for (guint i = 0; i < groups->len; i++)
    {
      const gint64 *g = (const gint64 *)groups->data + 3 * i;
      gint64 stack_id = g[0], count = g[1], held_bytes = g[2];
      const VsStackInfo *s;

      /* What a pool still holds at the end is never a leak. */
      if (count < 2 || vs_framework_pool_of_stack (trace, dd->device->id, stack_id) != 0)
        continue;
      s = vs_stack_get (trace, stack_id, error);
      if (s == NULL)
        return FALSE;
      {
        VsFinding *f = finding_new (VS_FINDING_LEAK_AT_EXIT, dd->device->id, 0);
        g_autofree char *held = bytes (held_bytes);

        f->bytes = held_bytes;
        f->count = count;
        f->time_ns = vs_trace_get_duration_ns (trace);
        f->seq = vs_trace_get_last_seq (trace);
        f->site = g_strdup (s->site);
        f->stack_id = stack_id;
        f->evidence = g_strdup_printf ("%" G_GINT64_FORMAT " allocations (%s) from one stack "
                                       "were still allocated at the end, while the program "
                                       "freed %" G_GINT64_FORMAT " other device allocations",
                                       count, held, freed);
        f->remedy = g_strdup ("free them (cudaFree) on every path, or keep one buffer and "
                              "reuse it");
        f->saving_bytes = held_bytes;
        g_ptr_array_add (findings, f);
      }
    }
  return TRUE;
}

/* ------------------------------------------------------ fragmentation */

static gboolean
diagnose_fragmentation (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  const VsSummary *s = &dd->allocator;
  gint64 held = s->peak_reserved_bytes - s->peak_allocated_bytes;
  VsFragmentation frag, worst;
  VsFinding *f;
  g_autofree char *r = NULL, *a = NULL, *h = NULL, *l = NULL, *fr = NULL;
  g_autofree char *w_at = NULL, *w_free = NULL, *w_res = NULL, *w_largest = NULL;

  if (dd->allocator_id == 0 || s->peak_reserved_seq == VS_UNKNOWN
      || s->peak_allocated_bytes == VS_UNKNOWN)
    return TRUE;
  /* The caching allocator of a healthy loop holds 20–35 % more than it
   * ever hands out at once (measured on the samples): not a finding. */
  if (held < 64 * MiB || held * 10 < s->peak_reserved_bytes * 4)
    return TRUE;
  /* Fragmentation only where free memory hurt: a request its free blocks
   * could not serve while at least as much was free. */
  if (!vs_fragmentation_worst (trace, dd->device->id, dd->allocator_id, &worst, error))
    return FALSE;
  if (worst.seq == 0 || worst.free_bytes < 64 * MiB || worst.largest_free_bytes == VS_UNKNOWN
      || worst.largest_free_bytes >= worst.free_bytes)
    return TRUE;
  if (!vs_fragmentation_at (trace, dd->device->id, dd->allocator_id, s->peak_reserved_seq, &frag,
                            NULL, error))
    return FALSE;
  f = finding_new (VS_FINDING_FRAGMENTATION, dd->device->id, dd->allocator_id);
  r = bytes (s->peak_reserved_bytes);
  a = bytes (s->peak_allocated_bytes);
  h = bytes (held);
  l = bytes (frag.largest_free_bytes);
  f->bytes = held;
  f->time_ns = s->peak_reserved_time_ns;
  f->seq = s->peak_reserved_seq;
  fr = bytes (frag.free_bytes);
  w_at = vs_format_duration (worst.time_ns);
  w_free = bytes (worst.free_bytes);
  w_res = bytes (worst.reserved_bytes);
  w_largest = bytes (worst.largest_free_bytes);
  f->evidence = g_strdup_printf (
      "peak reserved %s vs peak allocated %s: %s (%d%%) reserved but never in use at once; at "
      "peak reserved %" G_GINT64_FORMAT " segments hold %s free, the largest free block %s. "
      "It blocked requests: at %s (the worst), %s was free inside %s reserved in blocks of at "
      "most %s, yet the next request took a new segment or failed",
      r, a, h, (int)(100 * held / MAX (s->peak_reserved_bytes, 1)), frag.segment_count, fr,
      frag.largest_free_bytes != VS_UNKNOWN ? l : "unknown", w_at, w_free, w_res, w_largest);
  if (dd->settings.expandable_segments != 1)
    {
      f->remedy = g_strdup ("PYTORCH_CUDA_ALLOC_CONF=" VS_ALLOC_CONF_EXPANDABLE " (segments grow "
                            "in place, so freed memory is reused for any size)");
      f->saving_bytes = held;
    }
  else
    f->remedy = g_strdup ("expandable segments are already on: "
                          "PYTORCH_CUDA_ALLOC_CONF=" VS_ALLOC_CONF_GC " returns "
                          "cached blocks sooner; allocate sizes that repeat");
  g_ptr_array_add (findings, f);
  return TRUE;
}

/* ---------------------------------------------------- outside allocators */

/* Fills dd's allocator_at_peak_bytes and outside_at_peak_bytes: at the
 * device's peak reserved, the PyTorch allocator's reserved and what every
 * allocator together did not hold.  FALSE with error set when the trace
 * cannot be read. */
static gboolean
measure_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GError **error)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  const VsSummary *s = &dd->all;
  gint64 inside = 0;
  gboolean any = FALSE;
  VsSeriesPoint p;

  dd->allocator_at_peak_bytes = dd->outside_at_peak_bytes = VS_UNKNOWN;
  if (s->peak_reserved_seq == VS_UNKNOWN)
    return TRUE;
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id != dd->device->id)
        continue;
      any = TRUE;
      if (!vs_series_at_seq (trace, dd->device->id, a->id, s->peak_reserved_seq, &p, error))
        return FALSE;
      if (p.seq != 0)
        inside += p.reserved_bytes;
      if (a->id == dd->allocator_id)
        dd->allocator_at_peak_bytes = p.seq != 0 ? p.reserved_bytes : 0;
    }
  /* Pools seen from the device level are allocators too. */
  inside += vs_framework_pools_reserved_at (trace, dd->device->id, s->peak_reserved_seq);
  if (!any || !vs_trace_has_device_level (trace))
    return TRUE;
  dd->outside_at_peak_bytes = s->peak_reserved_bytes - inside;
  if (s->static_bytes != VS_UNKNOWN)
    dd->outside_at_peak_bytes += s->static_bytes;
  return TRUE;
}

static gboolean
diagnose_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  const VsSummary *s = &dd->all;
  gint64 outside = dd->outside_at_peak_bytes;
  g_autoptr (GArray) live = NULL;
  g_autoptr (GArray) unowned = NULL;
  g_autoptr (GArray) sites = NULL;
  VsFinding *f;
  g_autofree char *out_text = NULL, *all_text = NULL;
  GString *names;

  if (outside == VS_UNKNOWN)
    return TRUE;
  /* cuBLAS's and cuDNN's workspaces of any PyTorch program take about
   * 130 MiB (measured on the samples): not a finding by themselves. */
  if (outside < 256 * MiB || outside * 10 < s->peak_reserved_bytes)
    return TRUE;
  live = vs_live_blocks (trace, dd->device->id, 0, s->peak_reserved_seq, error);
  if (live == NULL)
    return FALSE;
  unowned = g_array_new (FALSE, FALSE, sizeof (VsBlock));
  for (guint i = 0; i < live->len; i++)
    {
      const VsBlock *b = &g_array_index (live, VsBlock, i);

      if (b->level == 1 && b->allocator_id == 0)
        g_array_append_val (unowned, *b);
    }
  sites = vs_group_blocks (trace, unowned, VS_GROUP_BY_STACK, error);
  if (sites == NULL)
    return FALSE;
  names = g_string_new (NULL);
  for (guint i = 0; i < sites->len && i < 2; i++)
    {
      const VsGroup *g = &g_array_index (sites, VsGroup, i);
      g_autofree char *b = bytes (g->bytes);

      /* C++ signatures can be long: the name up to its parameters. */
      const char *where = g->top_frame[0] != '\0' ? g->top_frame : "an unknown stack";
      g_autofree char *name = g_strndup (where, strcspn (where, "("));

      g_string_append_printf (names, "%s%s from %s", i > 0 ? ", " : "; largest: ", b, name);
    }
  f = finding_new (VS_FINDING_OUTSIDE_ALLOCATOR, dd->device->id, 0);
  out_text = bytes (outside);
  all_text = bytes (s->peak_reserved_bytes);
  f->bytes = outside;
  f->time_ns = s->peak_reserved_time_ns;
  f->seq = s->peak_reserved_seq;
  if (sites->len > 0)
    {
      const VsGroup *g = &g_array_index (sites, VsGroup, 0);

      f->site = g->site != NULL && g->site[0] != '\0' ? g_strdup (g->site) : NULL;
      f->stack_id = g->stack_id;
    }
  f->evidence = g_strdup_printf (
      "at the device's peak, %s of its %s was held outside every allocator (libraries' own "
      "cudaMalloc: cuBLAS/cuDNN workspaces, NCCL buffers; module globals)%s",
      out_text, all_text, names->str);
  g_string_free (names, TRUE);
  f->remedy = g_strdup ("count it when sizing batches and limits: the allocator cannot reuse "
                        "it (NCCL_BUFFSIZE shrinks NCCL's buffers, "
                        "CUBLAS_WORKSPACE_CONFIG cuBLAS's workspaces)");
  g_ptr_array_add (findings, f);
  return TRUE;
}

/* ------------------------------------------------------------ devices */

static gint64
pytorch_allocator (VsTrace *trace, gint64 device_id)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device_id && g_strcmp0 (a->kind, "pytorch") == 0)
        return a->id;
    }
  return 0;
}

static int
finding_rank (const VsFinding *f)
{
  switch (f->kind)
    {
    case VS_FINDING_GROWTH_PER_ITERATION:
      /* Growth that goes on would exhaust any cap: the root cause of a
       * failure it comes with, so it comes first. */
      return 0;
    case VS_FINDING_OOM_DEVICE_FULL:
    case VS_FINDING_OOM_ALLOCATOR_LIMIT:
    case VS_FINDING_OOM_FRAGMENTATION:
      return 1;
    case VS_FINDING_OTHER_PROCESS:
      return 2;
    case VS_FINDING_FORWARD_WITHOUT_BACKWARD:
      return 2;
    case VS_FINDING_LEAK_AT_EXIT:
      return 3;
    case VS_FINDING_FRAGMENTATION:
      return 4;
    case VS_FINDING_OUTSIDE_ALLOCATOR:
    default:
      return 5;
    }
}

static gint
finding_cmp (gconstpointer a, gconstpointer b)
{
  const VsFinding *x = *(VsFinding *const *)a, *y = *(VsFinding *const *)b;
  int rx = finding_rank (x), ry = finding_rank (y);

  if (rx != ry)
    return rx < ry ? -1 : 1;
  if (x->device_id != y->device_id)
    return x->device_id < y->device_id ? -1 : 1;
  return 0;
}

static gboolean
diagnose_device (VsTrace *trace, const VsDeviceInfo *device, VsDiagnosis *dx, GError **error)
{
  VsDeviceDiagnosis *dd = g_new0 (VsDeviceDiagnosis, 1);
  g_autoptr (GArray) blocks = NULL; /* live at the peak of allocated memory */
  guint first;

  dd->device = device;
  vs_allocator_settings_read (trace, device->id, &dd->settings);
  if (!vs_summary_get (trace, device->id, 0, &dd->all, NULL))
    {
      device_diagnosis_free (dd);
      return TRUE; /* nothing recorded on this device */
    }
  g_ptr_array_add (dx->devices, dd);
  dd->allocator_id = pytorch_allocator (trace, device->id);
  dd->allocator = dd->all;
  if (dd->allocator_id != 0
      && !vs_summary_get (trace, device->id, dd->allocator_id, &dd->allocator, error))
    return FALSE;
  dd->lower_peak_saving = VS_UNKNOWN;
  dd->autocast = uses_autocast (trace);
  if (dd->all.peak_allocated_seq != VS_UNKNOWN)
    {
      /* Read once: roles, sites and unused activations all look at them. */
      blocks = vs_live_blocks (trace, device->id, 0, dd->all.peak_allocated_seq, error);
      if (blocks == NULL
          || !vs_roles_of_blocks (trace, device->id, 0, dd->all.peak_allocated_seq, blocks,
                                  &dd->roles, error))
        return FALSE;
      dd->sites = vs_group_blocks (trace, blocks, VS_GROUP_BY_SITE, error);
      if (dd->sites == NULL)
        return FALSE;
      /* Advice for a peak worth lowering only. */
      if (dd->all.peak_allocated_bytes >= 256 * MiB)
        {
          g_autofree char *when = vs_format_duration (dd->all.peak_allocated_time_ns);
          g_autofree char *at = g_strdup_printf ("at the peak (%s)", when);

          dd->lower_peak = role_remedy (&dd->roles, at, dd->autocast, &dd->lower_peak_saving);
        }
    }
  dd->iterations = vs_iterations_find (trace, device->id, dd->allocator_id, error);
  if (dd->iterations == NULL || !vs_growth_judge (trace, dd->iterations, &dd->growth, error))
    return FALSE;

  first = dx->findings->len;
  if (!measure_outside (trace, dd, error) || !diagnose_failures (trace, dd, dx->findings, error))
    return FALSE;
  diagnose_growth (trace, dd, dx->findings);
  if (!diagnose_unused_activations (trace, dd, blocks, dx->findings, error)
      || !diagnose_leaks (trace, dd, dx->findings, error)
      || !diagnose_fragmentation (trace, dd, dx->findings, error)
      || !diagnose_outside (trace, dd, dx->findings, error)
      || !vs_diagnose_whatif (trace, dd, dx->findings, first, error)
      || !vs_diagnose_predict (trace, dd, dx->findings, first, error))
    return FALSE;
  return TRUE;
}

VsDiagnosis *
vs_diagnose (VsTrace *trace, gint64 device_id, GError **error)
{
  g_autoptr (VsDiagnosis) dx = g_new0 (VsDiagnosis, 1);
  const GPtrArray *devices;

  g_return_val_if_fail (trace != NULL, NULL);
  dx->devices = g_ptr_array_new_with_free_func (device_diagnosis_free);
  dx->findings = g_ptr_array_new_with_free_func (finding_free);
  devices = vs_trace_get_devices (trace);
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (devices, i);

      if (device_id != 0 && d->id != device_id)
        continue;
      if (!diagnose_device (trace, d, dx, error))
        return NULL;
    }
  g_ptr_array_sort (dx->findings, finding_cmp);
  return g_steal_pointer (&dx);
}

VsTable *
vs_diagnosis_table (VsTrace *trace, const VsDiagnosis *dx)
{
  VsTable *t = vs_table_new ("Findings: what failed and why, growth per iteration, leaks, "
                             "fragmentation, memory outside the allocators and other processes, "
                             "each with its evidence and remedy.");

  g_return_val_if_fail (trace != NULL && dx != NULL, NULL);
  vs_table_add_column (t, "finding", VS_COLUMN_TEXT);
  vs_table_add_column (t, "device", VS_COLUMN_INT);
  vs_table_add_column (t, "allocator", VS_COLUMN_TEXT);
  vs_table_add_column (t, "bytes", VS_COLUMN_BYTES);
  vs_table_add_column (t, "count", VS_COLUMN_INT);
  vs_table_add_column (t, "time_ns", VS_COLUMN_TIME);
  vs_table_add_column (t, "site", VS_COLUMN_TEXT);
  vs_table_add_column (t, "evidence", VS_COLUMN_TEXT);
  vs_table_add_column (t, "remedy", VS_COLUMN_TEXT);
  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dx->findings, i);
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, f->device_id);
      guint c = 0;

      vs_table_add_row (t);
      vs_table_set_text (t, c++, vs_finding_name (f->kind));
      vs_table_set_int (t, c++, d != NULL ? d->idx : VS_UNKNOWN);
      vs_table_set_text (t, c++, vs_trace_allocator_name (trace, f->allocator_id));
      vs_table_set_int (t, c++, f->bytes);
      vs_table_set_int (t, c++, f->count);
      vs_table_set_int (t, c++, f->time_ns);
      vs_table_set_text (t, c++, f->site);
      vs_table_set_text (t, c++, f->evidence);
      vs_table_set_text (t, c++, f->remedy);
    }
  return t;
}
