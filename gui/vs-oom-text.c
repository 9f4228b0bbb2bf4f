/* SPDX-License-Identifier: MIT */
/* vs-oom-text.c — a failed allocation in words: its title, when and where
 * it happened, the state of memory then and what would have fitted.
 *
 * Only words around the analyzer's figures: why a request failed, and the
 * words for it, are the analyzer's (vs-oom-explain.h), as `report oom`
 * says them.
 */
#include "vs-oom-text.h"

#include <glib/gi18n.h>

#include "vs-table.h"
#include "vs-time-format.h"

static char *
bytes_or_unknown (gint64 b)
{
  return b == VS_UNKNOWN ? g_strdup (_("unknown")) : vs_format_bytes (b);
}

/* See vs-oom-text.h. */
char *
vs_oom_title (const VsOom *oom)
{
  g_autofree char *req = NULL;

  g_return_val_if_fail (oom != NULL, NULL);
  req = vs_format_bytes (oom->requested_bytes);
  return g_strdup_printf (_("%s of %s failed"), oom->api ? oom->api : _("allocation"), req);
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
    return g_strdup_printf (_("at %s on GPU %lld%s%s"), t, (long long)idx,
                            oom->error_name ? " · " : "", oom->error_name ? oom->error_name : "");
  return g_strdup_printf (_("at %s%s%s"), t, oom->error_name ? " · " : "",
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
  return g_strdup_printf (_("reserved %s · allocated %s · free inside reserved "
                            "%s · largest free block %s"),
                          r, a, fr, lg);
}
