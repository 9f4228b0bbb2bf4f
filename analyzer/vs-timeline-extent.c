/* SPDX-License-Identifier: MIT */
/* vs-timeline-extent.c — where memory changes: the first and last change
 * of a device's series, so that a timeline shown without a window covers
 * the run's activity rather than an idle start (see vs-timeline.h).
 */
#include "vs-timeline.h"
#include "vs-trace-private.h"

/* Two index seeks on series' primary key (device_id, allocator_id, ts). */
static const char *extent_sql
    = "SELECT (SELECT ts FROM series WHERE device_id = ?1 AND allocator_id = ?2"
      "         ORDER BY ts LIMIT 1),"
      "       (SELECT ts FROM series WHERE device_id = ?1 AND allocator_id = ?2"
      "         ORDER BY ts DESC LIMIT 1)";

gboolean
vs_timeline_active_range (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 *from_ns,
                          gint64 *to_ns, GError **error)
{
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL && from_ns != NULL && to_ns != NULL, FALSE);
  *from_ns = *to_ns = VS_UNKNOWN;
  stmt = vs_trace_statement (trace, extent_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    {
      /* Series times are absolute; reports speak from the trace's start. */
      *from_ns = sqlite3_column_int64 (stmt, 0) - vs_trace_get_start_abs_ns (trace);
      *to_ns = sqlite3_column_int64 (stmt, 1) - vs_trace_get_start_abs_ns (trace);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_ROW)
    {
      vs_trace_sql_error (trace, error);
      return FALSE;
    }
  return TRUE;
}
