/* SPDX-License-Identifier: MIT */
/* vs-pool-series.c — a device-level framework pool's state at one instant
 * (see vs-pool-series.h), from its steps (vs_framework_pool_steps()).
 */
#include "vs-pool-series.h"
#include "vs-framework-pools.h"
#include "vs-trace-private.h"

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
