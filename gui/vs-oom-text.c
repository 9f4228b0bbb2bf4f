/* vs-oom-text.c — a failed allocation in words: its title, when and where
 * it happened, the state of memory then and what would have fitted.
 *
 * "What would have fitted" is the larger of the largest free block inside
 * reserved memory and the device's free memory as CUDA reported it; a
 * request no larger than that was refused by a limit of the allocator.
 */
#include "vs-oom-text.h"

#include <glib/gi18n.h>

#include "vs-table.h"
#include "vs-time-format.h"

static char *
bytes_or_unknown (gint64 b)
{
  return b == VS_UNKNOWN ? g_strdup (_ ("unknown")) : vs_format_bytes (b);
}

/* See vs-oom-text.h. */
char *
vs_oom_title (const VsOom *oom)
{
  g_autofree char *req = NULL;

  g_return_val_if_fail (oom != NULL, NULL);
  req = vs_format_bytes (oom->requested_bytes);
  return g_strdup_printf (_ ("%s of %s failed"), oom->api ? oom->api : _ ("allocation"), req);
}

/* See vs-oom-text.h. */
char *
vs_oom_when (VsDocument *doc, const VsOom *oom)
{
  g_autofree char *t = NULL;
  GPtrArray *devices;
  gint64 idx = -1;

  g_return_val_if_fail (VS_IS_DOCUMENT (doc), NULL);
  g_return_val_if_fail (oom != NULL, NULL);
  t = vs_format_time (oom->time_ns);
  devices = vs_document_get_devices (doc);
  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (devices, i);
      if (d->id == oom->device_id)
        idx = d->idx;
    }
  if (idx >= 0)
    return g_strdup_printf (_ ("at %s on GPU %lld%s%s"), t, (long long)idx,
                            oom->error_name ? " · " : "", oom->error_name ? oom->error_name : "");
  return g_strdup_printf (_ ("at %s%s%s"), t, oom->error_name ? " · " : "",
                          oom->error_name ? oom->error_name : "");
}

/* See vs-oom-text.h. */
char *
vs_oom_state_text (const VsFragmentation *f)
{
  g_autofree char *r = NULL;
  g_autofree char *a = NULL;
  g_autofree char *fr = NULL;
  g_autofree char *lg = NULL;

  g_return_val_if_fail (f != NULL, NULL);
  r = bytes_or_unknown (f->reserved_bytes);
  a = bytes_or_unknown (f->allocated_bytes);
  fr = bytes_or_unknown (f->free_bytes);
  lg = bytes_or_unknown (f->largest_free_bytes);
  return g_strdup_printf (_ ("reserved %s · allocated %s · free inside reserved "
                             "%s · largest free block %s"),
                          r, a, fr, lg);
}

/* See vs-oom-text.h. */
char *
vs_oom_fit_text (const VsOom *o)
{
  g_autofree char *req = NULL;
  g_autofree char *best_s = NULL;
  gint64 largest, dev_free, best;

  g_return_val_if_fail (o != NULL, NULL);
  req = vs_format_bytes (o->requested_bytes);
  largest = o->allocator.largest_free_bytes;
  dev_free = o->device_free_bytes;
  best = MAX (largest == VS_UNKNOWN ? 0 : largest, dev_free == VS_UNKNOWN ? 0 : dev_free);
  best_s = vs_format_bytes (best);
  if (largest == VS_UNKNOWN && dev_free == VS_UNKNOWN)
    return g_strdup_printf (_ ("The trace does not know how much was free for "
                               "this %s request."),
                            req);
  if (largest != VS_UNKNOWN && o->requested_bytes <= largest)
    return g_strdup_printf (_ ("The request (%s) fits in the largest free block "
                               "inside reserved memory (%s): it failed elsewhere "
                               "(another stream, another allocator or the "
                               "device)."),
                            req, best_s);
  if (o->requested_bytes <= best)
    /* Free on the device, yet refused: the allocator's own limit. */
    return g_strdup_printf (_ ("The device had %s free as CUDA reported it, enough "
                               "for this %s request: a limit of the allocator "
                               "refused it (a memory fraction, for example)."),
                            best_s, req);
  {
    g_autofree char *more = vs_format_bytes (o->requested_bytes - best);
    return g_strdup_printf (_ ("Requests up to %s would have fitted; this one "
                               "(%s) needed %s more.%s"),
                            best_s, req, more,
                            o->allocator.free_bytes != VS_UNKNOWN
                                    && o->allocator.free_bytes >= o->requested_bytes
                                ? _ (" The free memory inside reserved was "
                                     "enough in total but fragmented.")
                                : "");
  }
}

/* See vs-oom-text.h. */
const char *
vs_oom_cause_title (VsOomCause cause)
{
  switch (cause)
    {
    case VS_OOM_CAUSE_DEVICE_FULL:
      return _ ("Cause: the device was full");
    case VS_OOM_CAUSE_ALLOCATOR_LIMIT:
      return _ ("Cause: the allocator’s limit");
    case VS_OOM_CAUSE_FRAGMENTATION:
      return _ ("Cause: fragmentation");
    case VS_OOM_CAUSE_UNKNOWN:
    default:
      return _ ("Cause unknown");
    }
}
