/* SPDX-License-Identifier: MIT */
/* vs-activity.c — kernel statistics and NVTX ranges with their memory.
 *
 * Kernel statistics are one GROUP BY.  For ranges, the memory at entry and
 * exit are point lookups and the peak inside is vs_series_extremes(), a
 * handful of indexed queries per range whatever its length.
 */
#include "vs-activity.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

static const char *kernels_sql = "SELECT k.device_id, k.name, count(*), sum(k.end_ns - k.start_ns),"
                                 " min(k.end_ns - k.start_ns), max(k.end_ns - k.start_ns)"
                                 " FROM kernel k LEFT JOIN device d ON d.id = k.device_id"
                                 " WHERE ?1 = 0 OR k.device_id = ?1"
                                 " GROUP BY k.device_id, k.name"
                                 " ORDER BY min(d.idx), 4 DESC, k.name";

static void
kernel_stats_free (gpointer data)
{
  VsKernelStats *k = data;

  g_free (k->name);
  g_free (k);
}

GPtrArray *
vs_kernel_stats (VsTrace *trace, gint64 device_id, GError **error)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (kernel_stats_free);
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, kernels_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsKernelStats *k = g_new0 (VsKernelStats, 1);

      k->device_id = vs_column_int (stmt, 0);
      k->name = vs_column_dup (stmt, 1);
      if (k->name == NULL)
        k->name = g_strdup ("");
      k->count = sqlite3_column_int64 (stmt, 2);
      k->total_ns = sqlite3_column_int64 (stmt, 3);
      k->min_ns = sqlite3_column_int64 (stmt, 4);
      k->max_ns = sqlite3_column_int64 (stmt, 5);
      k->avg_ns = k->count > 0 ? k->total_ns / k->count : 0;
      g_ptr_array_add (list, k);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&list);
}

static const char *ranges_sql = "SELECT id, process_id, tid, domain, name, depth, start_ns, end_ns"
                                " FROM nvtx_range ORDER BY start_ns, id";

static void
range_memory_free (gpointer data)
{
  VsRangeMemory *r = data;

  g_free (r->domain);
  g_free (r->name);
  g_free (r);
}

static gboolean
fill_memory (VsTrace *trace, VsRangeMemory *r, GError **error)
{
  VsSeriesPoint p;
  VsTimelineBucket ext;
  gint64 end = r->end_ns != VS_UNKNOWN ? r->end_ns : vs_trace_get_duration_ns (trace);

  /* Entry: the state just before the range began, so what the range itself
   * allocates at its first instant shows as growth. */
  if (!vs_series_at_time (trace, r->device_id, r->allocator_id, r->start_ns - 1, &p, error))
    return FALSE;
  r->allocated_at_start = p.allocated_bytes;
  r->reserved_at_start = p.reserved_bytes;
  if (end < r->start_ns)
    end = r->start_ns;
  if (!vs_series_extremes (trace, r->device_id, r->allocator_id, r->start_ns, end, &ext, error))
    return FALSE;
  r->allocated_at_end = ext.last_allocated;
  r->reserved_at_end = ext.last_reserved;
  r->peak_allocated = ext.max_allocated;
  r->peak_reserved = ext.max_reserved;
  return TRUE;
}

GPtrArray *
vs_range_memory (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  g_autoptr (GPtrArray) ranges = NULL;
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (range_memory_free);
  const GPtrArray *devices;

  g_return_val_if_fail (trace != NULL, NULL);
  ranges = vs_range_list (trace, error);
  if (ranges == NULL)
    return NULL;
  devices = vs_trace_get_devices (trace);

  for (guint i = 0; i < ranges->len; i++)
    for (guint d = 0; d < devices->len; d++)
      {
        const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
        const VsRangeInfo *src = g_ptr_array_index (ranges, i);
        VsRangeMemory *r;

        if (device_id != 0 && dev->id != device_id)
          continue;
        if (allocator_id != 0)
          {
            const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, allocator_id);

            if (a == NULL || a->device_id != dev->id)
              continue;
          }
        r = g_new0 (VsRangeMemory, 1);
        r->id = src->id;
        r->process_id = src->process_id;
        r->tid = src->tid;
        r->domain = g_strdup (src->domain);
        r->name = g_strdup (src->name);
        r->depth = src->depth;
        r->start_ns = src->start_ns;
        r->end_ns = src->end_ns;
        r->device_id = dev->id;
        r->allocator_id = allocator_id;
        g_ptr_array_add (list, r);
        if (!fill_memory (trace, r, error))
          return NULL;
      }
  return g_steal_pointer (&list);
}

/* The longest kernel of the trace, read once: how far before a range a
 * kernel overlapping it can start. */
static gboolean
kernel_max_ns (VsTrace *trace, gint64 *out, GError **error)
{
  static const char *sql = "SELECT max(end_ns - start_ns) FROM kernel";
  sqlite3_stmt *stmt;
  int rc;

  if (trace->kernel_max_ns >= 0)
    {
      *out = trace->kernel_max_ns;
      return TRUE;
    }
  stmt = vs_trace_statement (trace, sql, error);
  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    return vs_trace_sql_error (trace, error);
  trace->kernel_max_ns = MAX (0, sqlite3_column_int64 (stmt, 0));
  sqlite3_reset (stmt);
  *out = trace->kernel_max_ns;
  return TRUE;
}

GArray *
vs_kernel_density (VsTrace *trace, gint64 device_id, gint64 from_ns, gint64 to_ns, guint n_buckets,
                   GError **error)
{
  /* Served by the kernels' order by start (kernel_exec's key since schema
   * 3, the index kernel_start before); the device test is applied to the
   * rows of the range. */
  static const char *sql = "SELECT start_ns, end_ns FROM kernel"
                           " WHERE start_ns >= ?2 AND start_ns < ?3 AND (?1 = 0 OR device_id = ?1)";
  g_autoptr (GArray) buckets = NULL;
  sqlite3_stmt *stmt;
  gint64 longest = 0, span, abs_from, abs_to;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  if (from_ns >= to_ns || n_buckets < 1 || n_buckets > 1000000)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "A kernel density needs from < to and 1 to 1000000 buckets");
      return NULL;
    }
  if (device_id != 0 && vs_trace_lookup_device (trace, device_id) == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no device with id %" G_GINT64_FORMAT, vs_trace_get_path (trace),
                   device_id);
      return NULL;
    }
  if (!kernel_max_ns (trace, &longest, error))
    return NULL;

  if (__builtin_sub_overflow (to_ns, from_ns, &span))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "The kernel density range is too wide");
      return NULL;
    }
  buckets = g_array_sized_new (FALSE, TRUE, sizeof (VsKernelBucket), n_buckets);
  g_array_set_size (buckets, n_buckets);
  for (guint i = 0; i < n_buckets; i++)
    {
      VsKernelBucket *b = &g_array_index (buckets, VsKernelBucket, i);

      b->from_ns = from_ns + (gint64)((double)span * i / n_buckets);
      b->to_ns
          = i + 1 == n_buckets ? to_ns : from_ns + (gint64)((double)span * (i + 1) / n_buckets);
    }

  abs_from = vs_trace_abs (trace, from_ns);
  abs_to = vs_trace_abs (trace, to_ns);
  stmt = vs_trace_statement (trace, sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, abs_from > G_MININT64 + longest ? abs_from - longest : G_MININT64);
  sqlite3_bind_int64 (stmt, 3, abs_to);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 s = sqlite3_column_int64 (stmt, 0) - abs_from;
      gint64 e = sqlite3_column_type (stmt, 1) == SQLITE_NULL
                     ? s
                     : sqlite3_column_int64 (stmt, 1) - abs_from;
      gint64 i;

      if (e <= 0 && s < 0)
        continue; /* ended before the range */
      /* Bucket boundaries are within one ns of i * span / n: start from
       * that estimate and step to the exact bucket. */
      i = s <= 0 ? 0 : (gint64)((double)s * n_buckets / span);
      i = CLAMP (i, 0, (gint64)n_buckets - 1);
      while (i > 0 && g_array_index (buckets, VsKernelBucket, i).from_ns > from_ns + s)
        i--;
      while (i + 1 < n_buckets && g_array_index (buckets, VsKernelBucket, i).to_ns <= from_ns + s)
        i++;
      if (s >= 0)
        g_array_index (buckets, VsKernelBucket, i).count++;
      /* Busy time: the kernel's interval clipped to each bucket it
       * overlaps. */
      for (; i < n_buckets; i++)
        {
          VsKernelBucket *b = &g_array_index (buckets, VsKernelBucket, i);
          gint64 lo = MAX (from_ns + s, b->from_ns);
          gint64 hi = MIN (from_ns + e, b->to_ns);

          if (hi > lo)
            b->busy_ns += hi - lo;
          if (from_ns + e <= b->to_ns)
            break;
        }
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&buckets);
}

static void
range_info_free (gpointer data)
{
  VsRangeInfo *r = data;

  g_free (r->domain);
  g_free (r->name);
  g_free (r);
}

GPtrArray *
vs_range_list (VsTrace *trace, GError **error)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (range_info_free);
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, ranges_sql, error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsRangeInfo *r = g_new0 (VsRangeInfo, 1);

      r->id = sqlite3_column_int64 (stmt, 0);
      r->process_id = vs_column_int (stmt, 1);
      r->tid = vs_column_int (stmt, 2);
      r->domain = vs_column_dup (stmt, 3);
      /* Never NULL, whatever the file holds: callers hash and draw it. */
      r->name = vs_column_dup (stmt, 4);
      if (r->name == NULL)
        r->name = g_strdup ("");
      r->depth = sqlite3_column_int64 (stmt, 5);
      r->start_ns = vs_trace_rel (trace, sqlite3_column_int64 (stmt, 6));
      r->end_ns = vs_trace_rel (trace, vs_column_int (stmt, 7));
      g_ptr_array_add (list, r);
      /* Callers take end - start: it must fit 64 bits. */
      gint64 duration;
      if (r->end_ns != VS_UNKNOWN && __builtin_sub_overflow (r->end_ns, r->start_ns, &duration))
        {
          vs_trace_corrupt_error (trace, stmt, error,
                                  "NVTX range %" G_GINT64_FORMAT " lasts more than 2^63 ns", r->id);
          return NULL;
        }
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&list);
}
