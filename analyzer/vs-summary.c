/* SPDX-License-Identifier: MIT */
/* vs-summary.c — reading the derived `summary` table.
 *
 * Rows are few (devices × allocators), so one query with a join for the
 * ordering serves both the list and single lookups.
 */
#include "vs-summary.h"
#include "vs-framework-pools.h"
#include "vs-trace-private.h"

#define SUMMARY_COLUMNS                                                                            \
  "SELECT s.device_id, s.allocator_id, d.total_bytes,"                                             \
  " s.peak_reserved_bytes, s.peak_reserved_ts, s.peak_reserved_seq,"                               \
  " s.peak_allocated_bytes, s.peak_allocated_ts, s.peak_allocated_seq,"                            \
  " s.final_reserved_bytes, s.final_allocated_bytes, s.alloc_count,"                               \
  " s.free_count, s.failed_alloc_count, s.peak_device_bytes,"                                      \
  " s.peak_device_ts, s.static_bytes, s.peak_pinned_bytes,"                                        \
  " s.peak_managed_bytes,"
#define SUMMARY_FROM                                                                               \
  " FROM summary s JOIN device d ON d.id = s.device_id"                                            \
  " LEFT JOIN allocator a ON a.id = s.allocator_id"                                                \
  " WHERE (?1 = 0 OR s.device_id = ?1) AND (?2 = 0 OR s.allocator_id = ?2)"                        \
  " ORDER BY d.idx, d.id, s.allocator_id != 0, a.name, s.allocator_id"

/* Schema version 2; a version 1 trace has no before_trace columns. */
static const char *summary_sql
    = SUMMARY_COLUMNS " s.before_trace_bytes, s.before_trace_count" SUMMARY_FROM;
static const char *summary_v1_sql = SUMMARY_COLUMNS " NULL, NULL" SUMMARY_FROM;

static void
read_row (VsTrace *trace, sqlite3_stmt *stmt, VsSummary *s)
{
  s->device_id = sqlite3_column_int64 (stmt, 0);
  s->allocator_id = sqlite3_column_int64 (stmt, 1);
  s->capacity_bytes = vs_column_int (stmt, 2);
  s->peak_reserved_bytes = vs_column_int (stmt, 3);
  s->peak_reserved_time_ns = vs_trace_rel (trace, vs_column_int (stmt, 4));
  s->peak_reserved_seq = vs_column_int (stmt, 5);
  s->peak_allocated_bytes = vs_column_int (stmt, 6);
  s->peak_allocated_time_ns = vs_trace_rel (trace, vs_column_int (stmt, 7));
  s->peak_allocated_seq = vs_column_int (stmt, 8);
  s->final_reserved_bytes = vs_column_int (stmt, 9);
  s->final_allocated_bytes = vs_column_int (stmt, 10);
  s->alloc_count = vs_column_int (stmt, 11);
  s->free_count = vs_column_int (stmt, 12);
  s->failed_alloc_count = vs_column_int (stmt, 13);
  s->peak_device_bytes = vs_column_int (stmt, 14);
  s->peak_device_time_ns = vs_trace_rel (trace, vs_column_int (stmt, 15));
  s->static_bytes = vs_column_int (stmt, 16);
  s->peak_pinned_bytes = vs_column_int (stmt, 17);
  s->peak_managed_bytes = vs_column_int (stmt, 18);
  s->before_trace_bytes = vs_column_int (stmt, 19);
  s->before_trace_count = vs_column_int (stmt, 20);
}

GArray *
vs_summary_list (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  g_autoptr (GArray) rows = NULL;
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, summary_sql, NULL);
  if (stmt == NULL)
    stmt = vs_trace_statement (trace, summary_v1_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  rows = g_array_new (FALSE, TRUE, sizeof (VsSummary));
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsSummary s;

      read_row (trace, stmt, &s);
      g_array_append_val (rows, s);
    }
  if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      return NULL;
    }
  sqlite3_reset (stmt);
  /* Pools seen from the device level: their rows, and `all` without them. */
  if (!vs_framework_pools_adjust_summary (trace, rows, device_id, allocator_id, error))
    return NULL;
  return g_steal_pointer (&rows);
}

gboolean
vs_summary_get (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsSummary *out,
                GError **error)
{
  g_autoptr (GArray) rows = NULL;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  g_return_val_if_fail (device_id > 0, FALSE);
  rows = vs_summary_list (trace, device_id, allocator_id, error);
  if (rows == NULL)
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    {
      VsSummary *s = &g_array_index (rows, VsSummary, i);

      if (s->allocator_id == allocator_id)
        {
          *out = *s;
          return TRUE;
        }
    }
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
               "%s has no memory recorded for device %" G_GINT64_FORMAT " and allocator %s",
               trace->path, device_id, vs_trace_allocator_name (trace, allocator_id));
  return FALSE;
}
