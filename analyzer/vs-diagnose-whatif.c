/* SPDX-License-Identifier: MIT */
/* vs-diagnose-whatif.c — the diagnosis's allocator-setting remedies backed
 * by a replay of the caching-allocator model.
 *
 * A finding whose remedy is a PYTORCH_CUDA_ALLOC_CONF setting
 * (expandable_segments:True for fragmentation, garbage_collection_threshold
 * when segments already expand) or a larger limit (a failure at the
 * allocator's limit) gets the replay's answer: the peak reserved under that
 * setting, its difference to the trace's own replay, and how many of the
 * failed requests would still fail.  The settings are the trace's own with
 * the one key changed, the limit the one derived from the trace (or the
 * device's capacity for a larger limit), exactly as `vramscope whatif FILE
 * --alloc-conf CONF` (or `--limit BYTES`) replays them, so that both print
 * the same numbers.  All settings of a device are replayed from one
 * learning pass over the trace's history, at once (vs_whatif_plan_new,
 * vs_whatif_plan_run), as `vramscope whatif` replays them.
 */
#include "vs-alloc-conf.h"
#include "vs-diagnose-private.h"
#include "vs-format.h"
#include "vs-whatif.h"

#include <string.h>

enum
{
  TRY_EXPANDABLE,
  TRY_GC,
  N_TRIES
};

static const char *const try_keys[N_TRIES] = {
  VS_ALLOC_CONF_EXPANDABLE,
  VS_ALLOC_CONF_GC,
};

/* The setting a finding's remedy proposes, or -1 (a larger limit or none). */
static int
finding_try (const VsDeviceDiagnosis *dd, const VsFinding *f)
{
  if (f->remedy == NULL)
    return -1;
  /* Any failure of the caching allocator: expandable segments may avoid
   * it under the same limit (free memory inside reserved becomes usable),
   * and the replay says whether they do. */
  if ((f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT || f->kind == VS_FINDING_OOM_DEVICE_FULL)
      && dd->settings.expandable_segments != 1)
    {
      /* A request larger than the device (or the limit) fits under no
       * setting: nothing to replay. */
      gint64 cap = dd->settings.limit_bytes != VS_UNKNOWN && dd->settings.limit_bytes > 0
                       ? dd->settings.limit_bytes
                       : dd->device->total_bytes;

      return cap > 0 && f->bytes < cap ? TRY_EXPANDABLE : -1;
    }
  if (f->kind == VS_FINDING_OOM_FRAGMENTATION || f->kind == VS_FINDING_FRAGMENTATION)
    {
      if (dd->settings.expandable_segments != 1)
        return TRY_EXPANDABLE;
      if (f->kind == VS_FINDING_FRAGMENTATION)
        return TRY_GC;
    }
  return -1;
}

static gboolean
finding_is_ours (const VsDeviceDiagnosis *dd, const VsFinding *f)
{
  return f->device_id == dd->device->id && f->allocator_id == dd->allocator_id;
}

/* Appends the replay's answer for one setting (named for people as
 * `setting`) to f's remedy. */
static void
append_prediction (VsFinding *f, const char *setting, const VsWhatifResult *own,
                   const VsWhatifResult *r)
{
  g_autofree char *peak = vs_format_bytes (r->peak_reserved_bytes);
  g_autofree char *delta
      = vs_format_bytes (ABS (r->peak_reserved_bytes - own->peak_reserved_bytes));
  const char *sign = r->peak_reserved_bytes < own->peak_reserved_bytes ? "-" : "+";
  gboolean is_oom = f->kind == VS_FINDING_OOM_FRAGMENTATION
                    || f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT
                    || f->kind == VS_FINDING_OOM_DEVICE_FULL;
  gboolean helps;
  GString *s = g_string_new (f->remedy);

  if (is_oom)
    helps = r->failed_alloc_count < own->failed_alloc_count;
  else
    helps = r->peak_reserved_bytes < own->peak_reserved_bytes;
  g_string_append_printf (s, ". Replayed %s: the peak reserved would be %s (%s%s)", setting, peak,
                          sign, delta);
  if (own->failed_alloc_count > 0)
    {
      if (r->failed_alloc_count == 0)
        g_string_append_printf (s, " and the %s would fit",
                                own->failed_alloc_count == 1 ? "failed request"
                                                             : "failed requests");
      else
        g_string_append_printf (s,
                                " and %" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT
                                " failed requests would still fail",
                                r->failed_alloc_count, own->failed_alloc_count);
    }
  else if (r->failed_alloc_count > 0)
    g_string_append_printf (s, " and %" G_GINT64_FORMAT " requests would fail",
                            r->failed_alloc_count);
  if (!helps)
    g_string_append (s, is_oom ? ": it would not avoid the failure"
                               : ": it would not lower the peak reserved");
  /* The expected saving is the replayed difference, or none: a saving
   * beside a peak that does not fall would contradict the replay. */
  f->saving_bytes = r->peak_reserved_bytes < own->peak_reserved_bytes
                        ? own->peak_reserved_bytes - r->peak_reserved_bytes
                        : VS_UNKNOWN;
  g_free (f->remedy);
  f->remedy = g_string_free (s, FALSE);
}

gboolean
vs_diagnose_whatif (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, guint first,
                    GError **error)
{
  gboolean wanted[N_TRIES] = { FALSE };
  gboolean want_limit = FALSE, any = FALSE;
  g_autofree char *own_conf = NULL;
  g_autofree char *confs[N_TRIES] = { NULL };
  /* The trace's own replay first, then each setting tried, then the
   * trace's own settings under the device's capacity. */
  VsWhatifSetting settings[N_TRIES + 2] = { { NULL, VS_UNKNOWN } };
  VsWhatifResult results[N_TRIES + 2];
  int index_of[N_TRIES];
  int at_cap = -1;
  g_autoptr (VsWhatifPlan) plan = NULL;
  guint n = 1;

  g_return_val_if_fail (trace != NULL && dd != NULL && findings != NULL, FALSE);
  if (dd->allocator_id == 0)
    return TRUE;
  {
    const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, dd->allocator_id);

    if (a == NULL || g_strcmp0 (a->kind, "pytorch") != 0)
      return TRUE;
  }
  for (guint i = first; i < findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (findings, i);
      int t;

      if (!finding_is_ours (dd, f))
        continue;
      t = finding_try (dd, f);
      if (t >= 0)
        wanted[t] = any = TRUE;
      if (f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT && f->remedy != NULL
          && dd->device->total_bytes > 0)
        want_limit = TRUE;
    }
  if (!any && !want_limit)
    return TRUE;
  own_conf = vs_whatif_own_alloc_conf (trace, dd->allocator_id, error);
  if (own_conf == NULL)
    return FALSE;

  for (int t = 0; t < N_TRIES; t++)
    {
      index_of[t] = -1;
      if (!wanted[t])
        continue;
      confs[t] = own_conf[0] != '\0' ? g_strconcat (own_conf, ",", try_keys[t], NULL)
                                     : g_strdup (try_keys[t]);
      index_of[t] = (int)n;
      settings[n++] = (VsWhatifSetting){ confs[t], VS_UNKNOWN };
    }
  /* A larger limit: the whole device, under the trace's own settings. */
  if (want_limit)
    {
      at_cap = (int)n;
      settings[n++] = (VsWhatifSetting){ NULL, dd->device->total_bytes };
    }
  plan = vs_whatif_plan_new (trace, dd->allocator_id, VS_WHATIF_NONE, error);
  if (plan == NULL || !vs_whatif_plan_run (plan, settings, n, results, error))
    return FALSE;

  for (guint i = first; i < findings->len; i++)
    {
      VsFinding *f = g_ptr_array_index (findings, i);
      int t;

      if (!finding_is_ours (dd, f))
        continue;
      t = finding_try (dd, f);
      if (t >= 0 && index_of[t] > 0)
        {
          g_autofree char *setting
              = g_strdup_printf ("under the same limit with PYTORCH_CUDA_ALLOC_CONF=%s", confs[t]);

          append_prediction (f, setting, &results[0], &results[index_of[t]]);
        }
      if (want_limit && f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT && f->remedy != NULL)
        {
          g_autofree char *cap = vs_format_bytes (dd->device->total_bytes);
          g_autofree char *setting = g_strdup_printf ("with no cap below the device's %s", cap);

          append_prediction (f, setting, &results[0], &results[at_cap]);
        }
    }
  for (guint k = 0; k < n; k++)
    vs_whatif_result_clear (&results[k]);
  return TRUE;
}
