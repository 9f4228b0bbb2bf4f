/* SPDX-License-Identifier: MIT */
/* vs-trace-describe.c — what a trace describes, read once per open or
 * refresh and cached on the VsTrace: its devices and allocators, its extent
 * (start, duration, last seq), and meta values and device/allocator lookups
 * over those caches.
 */
#include "vs-trace-private.h"

/* Fills trace->mem_kinds from the trace's own mem_kind table, the one
 * place (schemas/trace.sql) that names the memory kinds.  Names are
 * interned: they outlive the trace and every refresh. */
static gboolean
load_mem_kinds (VsTrace *trace, GError **error)
{
  static const char *mem_kinds_sql = "SELECT id, name FROM mem_kind WHERE id >= 0 ORDER BY id";
  sqlite3_stmt *stmt;
  int rc;

  g_assert (trace->mem_kinds->len == 0);
  stmt = vs_trace_statement (trace, mem_kinds_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      const char *name = (const char *)sqlite3_column_text (stmt, 1);

      /* The schema's kinds are small; a huge id is a damaged file. */
      if (id > 1024)
        continue;
      if ((guint)id >= trace->mem_kinds->len)
        g_ptr_array_set_size (trace->mem_kinds, (guint)id + 1);
      g_ptr_array_index (trace->mem_kinds, id) = (gpointer)g_intern_string (name ? name : "?");
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  return TRUE;
}

/* Fills trace->devices and trace->allocators from the device and
 * allocator tables, and the memory kinds' names. */
gboolean
vs_trace_load_devices (VsTrace *trace, GError **error)
{
  static const char *devices_sql
      = "SELECT id, idx, uuid, name, total_bytes FROM device ORDER BY idx, id";
  static const char *allocators_sql = "SELECT a.id, a.device_id, a.process_id, a.kind, a.name"
                                      " FROM allocator a LEFT JOIN device d ON d.id = a.device_id"
                                      " ORDER BY d.idx, a.device_id, a.name, a.id";
  sqlite3_stmt *stmt;
  int rc;

  if (!load_mem_kinds (trace, error))
    return FALSE;
  stmt = vs_trace_statement (trace, devices_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsDeviceInfo *d = g_new0 (VsDeviceInfo, 1);

      d->id = sqlite3_column_int64 (stmt, 0);
      d->idx = sqlite3_column_int64 (stmt, 1);
      d->uuid = vs_column_dup (stmt, 2);
      d->name = vs_column_dup (stmt, 3);
      d->total_bytes = vs_column_int (stmt, 4);
      g_ptr_array_add (trace->devices, d);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);

  stmt = vs_trace_statement (trace, allocators_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsAllocatorInfo *a = g_new0 (VsAllocatorInfo, 1);

      a->id = sqlite3_column_int64 (stmt, 0);
      a->device_id = sqlite3_column_int64 (stmt, 1);
      a->process_id = vs_column_int (stmt, 2);
      a->kind = vs_column_dup (stmt, 3);
      a->name = vs_column_dup (stmt, 4);
      if (a->kind == NULL)
        a->kind = g_strdup ("");
      if (a->name == NULL)
        a->name = g_strdup_printf ("allocator:%" G_GINT64_FORMAT, a->id);
      g_ptr_array_add (trace->allocators, a);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  return TRUE;
}

/* Start, duration and last seq.  The ends of every series are read through
 * the series' primary key, so this stays O(series count). */
gboolean
vs_trace_load_extent (VsTrace *trace, GError **error)
{
  static const char *start_sql = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'";
  static const char *start_fallback_sql = "SELECT min(t) FROM ("
                                          " SELECT min(ts) AS t FROM mem_event UNION ALL"
                                          " SELECT min(ts) FROM alloc_event UNION ALL"
                                          " SELECT min(ts) FROM failed_alloc UNION ALL"
                                          " SELECT min(start_ns) FROM kernel UNION ALL"
                                          " SELECT min(start_ns) FROM nvtx_range)";
  static const char *series_ends_sql
      = "SELECT s.device_id, s.allocator_id,"
        " (SELECT seq FROM series x WHERE x.device_id = s.device_id"
        "   AND x.allocator_id = s.series_allocator_id ORDER BY ts DESC, seq DESC LIMIT 1),"
        " (SELECT ts FROM series x WHERE x.device_id = s.device_id"
        "   AND x.allocator_id = s.series_allocator_id ORDER BY ts DESC, seq DESC LIMIT 1),"
        " s.series_allocator_id"
        " FROM summary s";
  static const char *ranges_end_sql = "SELECT max(end_ns) FROM nvtx_range";
  static const char *imported_sql
      = "SELECT count(*) FROM meta WHERE key = 'source' AND value = 'import'";
  static const char *end_meta_sql = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns'";
  static const char *end_sql = "SELECT max(t) FROM ("
                               " SELECT max(ts) AS t FROM failed_alloc UNION ALL"
                               " SELECT max(end_ns) FROM kernel UNION ALL"
                               " SELECT max(end_ns) FROM nvtx_range UNION ALL"
                               " SELECT max(ts) FROM pool_event)";
  sqlite3_stmt *stmt;
  gint64 v, end = VS_UNKNOWN;
  int rc;

  if (!vs_trace_query_int (trace, start_sql, &v, error))
    return FALSE;
  if (v == VS_UNKNOWN && !vs_trace_query_int (trace, start_fallback_sql, &v, error))
    return FALSE;
  trace->start_abs_ns = v == VS_UNKNOWN ? 0 : v;
  if (trace->start_abs_ns < 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s is inconsistent: its start time is negative", trace->path);
      return FALSE;
    }
  if (!vs_trace_query_int (trace, imported_sql, &v, error))
    return FALSE;
  trace->device_level = v == 0;

  stmt = vs_trace_statement (trace, series_ends_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 seq = vs_column_int (stmt, 2), ts = vs_column_int (stmt, 3);
      gint64 allocator_id = (gint64)sqlite3_column_int64 (stmt, 1);

      if (allocator_id != 0 && sqlite3_column_int64 (stmt, 4) == 0)
        g_hash_table_add (trace->shared_series,
                          g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                           (gint64)sqlite3_column_int64 (stmt, 0), allocator_id));

      if (seq != VS_UNKNOWN && seq > trace->last_seq)
        trace->last_seq = seq;
      if (ts != VS_UNKNOWN && (end == VS_UNKNOWN || ts > end))
        end = ts;
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);

  /* The finalizer records the end (series, kernels, failures); ranges are
   * added here.  Without it, every table is read. */
  if (!vs_trace_query_int (trace, end_meta_sql, &v, error))
    return FALSE;
  if (v != VS_UNKNOWN && (end == VS_UNKNOWN || v > end))
    end = v;
  if (!vs_trace_query_int (trace, v != VS_UNKNOWN ? ranges_end_sql : end_sql, &v, error))
    return FALSE;
  if (v != VS_UNKNOWN && (end == VS_UNKNOWN || v > end))
    end = v;
  /* start_abs_ns >= 0: the difference cannot overflow. */
  trace->duration_ns = end == VS_UNKNOWN ? 0 : MAX (0, end - trace->start_abs_ns);
  return TRUE;
}

const char *
vs_trace_get_path (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);
  return trace->path;
}

gint64
vs_trace_get_start_abs_ns (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, 0);
  return trace->start_abs_ns;
}

gint64
vs_trace_get_duration_ns (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, 0);
  return trace->duration_ns;
}

gint64
vs_trace_get_last_seq (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, 0);
  return trace->last_seq;
}

char *
vs_trace_dup_meta (VsTrace *trace, const char *key)
{
  static const char *sql = "SELECT value FROM meta WHERE key = ?1";
  sqlite3_stmt *stmt;
  char *value = NULL;

  g_return_val_if_fail (trace != NULL && key != NULL, NULL);
  stmt = vs_trace_statement (trace, sql, NULL);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = vs_column_dup (stmt, 0);
  sqlite3_reset (stmt);
  return value;
}

gboolean
vs_trace_time_is_event_order (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  g_autofree char *axis = vs_trace_dup_meta (trace, "time_axis");
  return g_strcmp0 (axis, "order") == 0;
}

const GPtrArray *
vs_trace_get_devices (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);
  return trace->devices;
}

const GPtrArray *
vs_trace_get_allocators (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);
  return trace->allocators;
}

const VsDeviceInfo *
vs_trace_lookup_device (VsTrace *trace, gint64 device_id)
{
  g_return_val_if_fail (trace != NULL, NULL);
  for (guint i = 0; i < trace->devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (trace->devices, i);

      if (d->id == device_id)
        return d;
    }
  return NULL;
}

const VsDeviceInfo *
vs_trace_find_device_by_idx (VsTrace *trace, gint64 idx)
{
  g_return_val_if_fail (trace != NULL, NULL);
  for (guint i = 0; i < trace->devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (trace->devices, i);

      if (d->idx == idx)
        return d;
    }
  return NULL;
}

const VsAllocatorInfo *
vs_trace_lookup_allocator (VsTrace *trace, gint64 allocator_id)
{
  g_return_val_if_fail (trace != NULL, NULL);
  for (guint i = 0; i < trace->allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (trace->allocators, i);

      if (a->id == allocator_id)
        return a;
    }
  return NULL;
}

const char *
vs_trace_allocator_name (VsTrace *trace, gint64 allocator_id)
{
  const VsAllocatorInfo *a;

  if (allocator_id == 0)
    return "all";
  a = vs_trace_lookup_allocator (trace, allocator_id);
  return a != NULL ? a->name : "?";
}

const char *
vs_trace_mem_kind_name (VsTrace *trace, gint64 kind)
{
  const char *name;

  g_return_val_if_fail (trace != NULL, "?");
  if (kind < 0 || kind >= (gint64)trace->mem_kinds->len)
    return "?";
  name = g_ptr_array_index (trace->mem_kinds, kind);
  return name != NULL ? name : "?";
}
