/* SPDX-License-Identifier: MIT */
/* vs-oom-explain.c — a failed allocation's cause and its words, for every
 * reader alike (see vs-oom-explain.h).
 *
 * The cause is decided by vs_oom_classify() or, for a framework's pool,
 * by its finding; this file adds the words a reader shows around it: a
 * heading per cause, what would have fitted when the cause is unknown,
 * and the device's memory as CUDA reported it with the device's capacity
 * where the failure did not carry it.
 */
#include "vs-config.h"

#include "vs-oom-explain.h"

#include <glib/gi18n-lib.h>

#include "vs-format.h"
#include "vs-framework-oom.h"
#include "vs-settings.h"

/* What would have fitted: the larger of the largest free block inside
 * reserved memory and CUDA's free memory, against the request.  Figures
 * only; the cause is not judged here (it is unknown). */
static char *
fit_text (const VsOom *o)
{
  gint64 largest = o->allocator.largest_free_bytes;
  gint64 dev_free = o->device_free_bytes;
  gint64 best = MAX (largest == VS_UNKNOWN ? 0 : largest, dev_free == VS_UNKNOWN ? 0 : dev_free);
  g_autofree char *req = vs_format_bytes (o->requested_bytes);
  g_autofree char *best_s = vs_format_bytes (best);
  g_autofree char *more = NULL;

  if (largest == VS_UNKNOWN && dev_free == VS_UNKNOWN)
    return g_strdup_printf (_("the trace does not know how much memory was free for this %s "
                              "request"),
                            req);
  if (o->requested_bytes <= best)
    return g_strdup_printf (_("%s requested, and %s was free (the largest free block inside "
                              "reserved memory or CUDA’s free memory): the trace does not show "
                              "what refused it"),
                            req, best_s);
  more = vs_format_bytes (o->requested_bytes - best);
  return g_strdup_printf (
      _("requests up to %s would have fitted (the largest free block inside "
        "reserved memory or CUDA’s free memory); this one (%s) needed %s more"),
      best_s, req, more);
}

/* See vs-oom-explain.h. */
void
vs_oom_explain (VsTrace *trace, const VsOom *o, const GPtrArray *device_failures,
                VsOomExplanation *out)
{
  VsAllocatorSettings settings;
  gint64 pool = 0;

  g_return_if_fail (trace != NULL && o != NULL && out != NULL);
  out->cause = VS_OOM_CAUSE_UNKNOWN;
  out->allocator_id = o->allocator_id;
  out->evidence = NULL;
  if (vs_framework_oom_classify (trace, o, &pool, &out->cause, &out->evidence))
    {
      out->allocator_id = pool;
      return;
    }
  vs_allocator_settings_read (trace, o->device_id, &settings);
  out->cause = vs_oom_classify (trace, o, device_failures, settings.limit_bytes, &out->evidence);
  vs_allocator_settings_clear (&settings);
  if (out->cause == VS_OOM_CAUSE_UNKNOWN || out->evidence == NULL)
    {
      g_free (out->evidence);
      out->evidence = fit_text (o);
    }
}

/* See vs-oom-explain.h. */
void
vs_oom_explanation_clear (VsOomExplanation *e)
{
  g_return_if_fail (e != NULL);
  g_clear_pointer (&e->evidence, g_free);
}

/* See vs-oom-explain.h. */
const char *
vs_oom_cause_title (VsOomCause cause)
{
  switch (cause)
    {
    case VS_OOM_CAUSE_DEVICE_FULL:
      return _("Cause: the device was full");
    case VS_OOM_CAUSE_ALLOCATOR_LIMIT:
      return _("Cause: the allocator’s limit");
    case VS_OOM_CAUSE_FRAGMENTATION:
      return _("Cause: fragmentation");
    case VS_OOM_CAUSE_UNKNOWN:
    default:
      return _("Cause unknown");
    }
}

/* See vs-oom-explain.h. */
char *
vs_oom_device_memory_text (VsTrace *trace, const VsOom *o)
{
  gint64 capacity;
  g_autofree char *f = NULL;
  g_autofree char *total = NULL;

  g_return_val_if_fail (trace != NULL && o != NULL, NULL);
  capacity = vs_oom_capacity (trace, o);
  f = o->device_free_bytes == VS_UNKNOWN ? g_strdup (_("unknown"))
                                         : vs_format_bytes (o->device_free_bytes);
  total = capacity == VS_UNKNOWN ? g_strdup (_("unknown")) : vs_format_bytes (capacity);
  return g_strdup_printf (_("%s free of %s"), f, total);
}
