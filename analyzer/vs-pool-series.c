/* SPDX-License-Identifier: MIT */
/* vs-pool-series.c — a device-level framework pool's state at one instant
 * (see vs-pool-series.h), from its steps (vs_framework_pool_steps()).
 */
#include "vs-pool-series.h"
#include "vs-framework-pools.h"
#include "vs-trace-private.h"

#include <stdlib.h>

void
vs_pool_series_at (VsTrace *trace, gint64 pool_id, gint64 seq, gint64 time_ns, VsSeriesPoint *out)
{
  g_autoptr (GArray) steps = NULL;

  g_return_if_fail (trace != NULL && out != NULL);
  out->seq = 0;
  out->time_ns = VS_UNKNOWN;
  out->reserved_bytes = 0;
  out->allocated_bytes = VS_UNKNOWN;
  out->device_bytes = out->static_bytes = out->pinned_bytes = out->managed_bytes = VS_UNKNOWN;
  steps = vs_framework_pool_steps (trace, pool_id);
  if (steps == NULL)
    {
      out->reserved_bytes = VS_UNKNOWN;
      return;
    }
  /* Steps come in replay order, so in time order too. */
  for (guint k = 0; k < steps->len; k++)
    {
      const VsPoolStep *st = &g_array_index (steps, VsPoolStep, k);
      gboolean after = seq != VS_UNKNOWN
                           ? st->seq > seq
                           : st->ts != VS_UNKNOWN && vs_trace_rel (trace, st->ts) > time_ns;

      if (after)
        break;
      out->seq = st->seq;
      out->time_ns = st->ts != VS_UNKNOWN ? vs_trace_rel (trace, st->ts) : VS_UNKNOWN;
      out->reserved_bytes = st->held;
    }
}

static int
delta_cmp (const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

  return x < y ? -1 : x > y;
}

void
vs_pool_held_init (VsPoolHeld *h, VsTrace *trace, gint64 device_id)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  g_return_if_fail (h != NULL && trace != NULL);
  h->deltas = g_array_new (FALSE, FALSE, 2 * sizeof (gint64));
  h->next = 0;
  h->held = 0;
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);
      g_autoptr (GArray) steps = NULL;
      gint64 before = 0;

      if (a->device_id != device_id || !vs_framework_pool_is (trace, a->id))
        continue;
      steps = vs_framework_pool_steps (trace, a->id);
      for (guint k = 0; steps != NULL && k < steps->len; k++)
        {
          const VsPoolStep *st = &g_array_index (steps, VsPoolStep, k);
          gint64 d[2] = { st->seq, st->held - before };

          g_array_append_vals (h->deltas, d, 1);
          before = st->held;
        }
    }
  /* By seq alone: what matters is the sum of the changes at or before a
   * step. */
  if (h->deltas->len > 1)
    qsort (h->deltas->data, h->deltas->len, 2 * sizeof (gint64), delta_cmp);
}

gint64
vs_pool_held_after (VsPoolHeld *h, gint64 seq)
{
  g_return_val_if_fail (h != NULL && h->deltas != NULL, 0);
  for (; h->next < h->deltas->len; h->next++)
    {
      const gint64 *d = (const gint64 *)(gpointer)h->deltas->data + 2 * h->next;

      if (d[0] > seq)
        break;
      h->held += d[1];
    }
  return h->held;
}

void
vs_pool_held_clear (VsPoolHeld *h)
{
  g_clear_pointer (&h->deltas, g_array_unref);
}
