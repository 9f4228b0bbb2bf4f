/* SPDX-License-Identifier: MIT */
/* vs-chart-data.c — the reduced data one timeline chart draws.
 *
 * Built once per query (a few thousand buckets at most) by the loader thread
 * and then only read, so it is a reference-counted box with no locking.
 */
#include "vs-chart-data.h"

#include "vs-rc-box.h"

static void
clear_range (gpointer p)
{
  VsChartRange *r = p;
  g_free (r->name);
}

/* Releases what a VsChartData owns; called by g_atomic_rc_box. */
static void
data_clear (gpointer p)
{
  VsChartData *data = p;
  g_free (data->title);
  g_free (data->whatif_label);
  g_free (data->limit_label);
  g_array_unref (data->fragmentation);
  g_clear_pointer (&data->compare, vs_chart_data_unref);
  g_free (data->label);
  g_free (data->compare_label);
  g_free (data->buckets);
  g_array_unref (data->markers);
  g_array_unref (data->ranges);
}

VS_DEFINE_RC_BOX_TYPE (VsChartData, vs_chart_data, data_clear)

/* See vs-chart-data.h. */
VsChartData *
vs_chart_data_new (gint64 t0, gint64 t1, guint n_buckets)
{
  VsChartData *data;

  g_return_val_if_fail (t1 > t0, NULL);
  g_return_val_if_fail (n_buckets > 0, NULL);

  data = g_atomic_rc_box_new0 (VsChartData);
  data->t0 = t0;
  data->t1 = t1;
  data->trace_end_ns = t1;
  data->n_buckets = n_buckets;
  data->buckets = g_new0 (VsChartBucket, n_buckets);
  data->markers = g_array_new (FALSE, FALSE, sizeof (VsChartMarker));
  data->ranges = g_array_new (FALSE, FALSE, sizeof (VsChartRange));
  data->fragmentation = g_array_new (FALSE, FALSE, sizeof (VsChartFragmentation));
  g_array_set_clear_func (data->ranges, clear_range);
  return data;
}

/* See vs-chart-data.h. */
void
vs_chart_data_add_marker (VsChartData *data, VsChartMarkerKind kind, gint64 ts, gint64 bytes)
{
  VsChartMarker m = { kind, ts, bytes };
  g_array_append_val (data->markers, m);
}

/* See vs-chart-data.h. */
void
vs_chart_data_add_range (VsChartData *data, gint64 start_ns, gint64 end_ns, guint depth,
                         const char *name)
{
  VsChartRange r = { start_ns, end_ns, depth, g_strdup (name) };
  g_array_append_val (data->ranges, r);
  data->max_range_depth = MAX (data->max_range_depth, depth + 1);
}

/* See vs-chart-data.h. */
gint
vs_chart_data_bucket_at (const VsChartData *data, gint64 t)
{
  if (t < data->t0 || t >= data->t1)
    return -1;
  /* In double: (t - t0) * n_buckets can pass 2^63 on long traces. */
  return (gint)(((double)(t - data->t0) * data->n_buckets) / (double)(data->t1 - data->t0));
}

/* See vs-chart-data.h. */
gboolean
vs_chart_data_span (const VsChartData *data, gint64 a, gint64 b, VsChartBucket *out)
{
  double per = (double)(data->t1 - data->t0) / data->n_buckets;
  gint64 first, last;
  VsChartBucket acc = { 0 };
  gboolean any = FALSE, any_whatif = FALSE;
  gint64 min_w = 0, max_w = 0, last_w = 0;

  if (b <= data->t0 || a >= data->t1)
    return FALSE;
  first = (gint64)((MAX (a, data->t0) - data->t0) / per);
  last = (gint64)((MIN (b, data->t1) - data->t0) / per);
  /* b is exclusive: a bucket starting exactly at b is not in the span. */
  if (last > first && data->t0 + (gint64)(last * per) >= b)
    last--;
  first = CLAMP (first, 0, (gint64)data->n_buckets - 1);
  last = CLAMP (last, first, (gint64)data->n_buckets - 1);

  for (gint64 i = first; i <= last; i++)
    {
      const VsChartBucket *bk = &data->buckets[i];
      if (bk->has_whatif)
        {
          min_w = any_whatif ? MIN (min_w, bk->min_whatif) : bk->min_whatif;
          max_w = any_whatif ? MAX (max_w, bk->max_whatif) : bk->max_whatif;
          last_w = bk->last_whatif;
          any_whatif = TRUE;
        }
      if (!bk->has_data)
        continue;
      if (!any)
        {
          acc = *bk;
          any = TRUE;
          continue;
        }
      acc.min_reserved = MIN (acc.min_reserved, bk->min_reserved);
      acc.max_reserved = MAX (acc.max_reserved, bk->max_reserved);
      acc.min_allocated = MIN (acc.min_allocated, bk->min_allocated);
      acc.max_allocated = MAX (acc.max_allocated, bk->max_allocated);
      acc.last_reserved = bk->last_reserved;
      acc.last_allocated = bk->last_allocated;
      acc.kernels += bk->kernels;
    }
  acc.has_whatif = any_whatif;
  acc.min_whatif = min_w;
  acc.max_whatif = max_w;
  acc.last_whatif = last_w;
  if (any)
    *out = acc;
  return any;
}

/* See vs-chart-data.h. */
void
vs_chart_data_add_fragmentation (VsChartData *data, gint64 ts, gint64 allocated_bytes,
                                 gint64 reserved_bytes)
{
  VsChartFragmentation f = { ts, allocated_bytes, reserved_bytes };

  g_return_if_fail (data != NULL);
  g_array_append_val (data->fragmentation, f);
}
