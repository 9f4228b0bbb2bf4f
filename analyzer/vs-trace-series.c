/* SPDX-License-Identifier: MIT */
/* vs-trace-series.c — the seq/time lookups every query builds on: the
 * summary levels available for a series, the seq of the state at a time,
 * the series row at or before a seq, and whether the finalizer's interval
 * bins cover a seq.  Each lookup is a handful of primary-key or index
 * seeks on the series tables, never a scan.
 */
#include "vs-trace-private.h"

gint64
vs_trace_series_id (VsTrace *trace, gint64 device_id, gint64 allocator_id)
{
  g_autofree char *key = NULL;

  if (allocator_id == 0)
    return 0;
  key = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, device_id, allocator_id);
  return g_hash_table_contains (trace->shared_series, key) ? 0 : allocator_id;
}

void
vs_trace_bind_series (VsTrace *trace, sqlite3_stmt *stmt, gint64 device_id, gint64 allocator_id)
{
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, vs_trace_series_id (trace, device_id, allocator_id));
}

sqlite3_stmt *
vs_trace_series_statement (VsTrace *trace, const char *sql, gint64 device_id, gint64 allocator_id,
                           gint64 p3, gint64 p4, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);

  if (stmt == NULL)
    return NULL;
  vs_trace_bind_series (trace, stmt, device_id, allocator_id);
  sqlite3_bind_int64 (stmt, 3, p3);
  sqlite3_bind_int64 (stmt, 4, p4);
  return stmt;
}

GArray *
vs_trace_level_shifts (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  static const char *sql
      = "SELECT shift FROM series_level WHERE device_id = ?1 AND allocator_id = ?2"
        " AND shift > ?3 ORDER BY shift LIMIT 1";
  g_autofree char *key
      = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, device_id, allocator_id);
  GArray *shifts = g_hash_table_lookup (trace->level_shifts, key);
  gint64 last = -1;

  if (shifts != NULL)
    return shifts;
  shifts = g_array_new (FALSE, FALSE, sizeof (gint64));
  /* Each step is one seek in the primary key (device, allocator, shift,
   * bucket); a DISTINCT over the table would read all of it. */
  for (;;)
    {
      sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);
      int rc;

      if (stmt == NULL)
        {
          g_array_unref (shifts);
          return NULL;
        }
      vs_trace_bind_series (trace, stmt, device_id, allocator_id);
      sqlite3_bind_int64 (stmt, 3, last);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_DONE)
        break;
      if (rc != SQLITE_ROW)
        {
          vs_trace_sql_error (trace, error);
          g_array_unref (shifts);
          return NULL;
        }
      /* A shift must be an integer above the last one, or this loop
       * would not end. */
      if (sqlite3_column_type (stmt, 0) != SQLITE_INTEGER || sqlite3_column_int64 (stmt, 0) <= last)
        {
          vs_trace_corrupt_error (trace, stmt, error,
                                  "its series_level table has a shift that is not an"
                                  " integer");
          g_array_unref (shifts);
          return NULL;
        }
      last = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (shifts, last);
      if (last >= 62)
        break;
    }
  g_hash_table_insert (trace->level_shifts, g_steal_pointer (&key), shifts);
  return shifts;
}

gint64
vs_trace_seq_at_time (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 time_ns,
                      GError **error)
{
  /* Served by the index series_ts (device_id, allocator_id, ts); the seq
   * breaks ties between changes at the same ts. */
  static const char *sql = "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
                           " AND ts <= ?3 ORDER BY ts DESC, seq DESC LIMIT 1";
  sqlite3_stmt *stmt;
  gint64 seq = 0;
  int rc;

  g_return_val_if_fail (trace != NULL, -1);
  stmt = vs_trace_statement (trace, sql, error);
  if (stmt == NULL)
    return -1;
  vs_trace_bind_series (trace, stmt, device_id, allocator_id);
  sqlite3_bind_int64 (stmt, 3, vs_trace_abs (trace, time_ns));
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      seq = sqlite3_column_int64 (stmt, 0);
      /* Every caller takes -1 for a failure with error set: a seq the
       * replay cannot have written is the trace's fault, said as such. */
      if (sqlite3_column_type (stmt, 0) != SQLITE_INTEGER || seq < 0)
        {
          vs_trace_corrupt_error (trace, stmt, error,
                                  "its series table has a seq that is not a"
                                  " non-negative integer");
          return -1;
        }
    }
  else if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      seq = -1;
    }
  sqlite3_reset (stmt);
  return seq;
}

/* The first series row of (device, allocator) at or after abs_ts, in
 * replay order: its seq and ts; *found FALSE when there is none. */
static gboolean
first_row_from (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 abs_ts,
                gboolean *found, gint64 *seq, gint64 *ts, GError **error)
{
  static const char *sql = "SELECT seq, ts FROM series WHERE device_id = ?1 AND allocator_id = ?2"
                           " AND ts >= ?3 ORDER BY ts, seq LIMIT 1";
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  vs_trace_bind_series (trace, stmt, device_id, allocator_id);
  sqlite3_bind_int64 (stmt, 3, abs_ts);
  rc = sqlite3_step (stmt);
  *found = rc == SQLITE_ROW;
  if (*found)
    {
      *seq = sqlite3_column_int64 (stmt, 0);
      *ts = sqlite3_column_int64 (stmt, 1);
      /* Anything but an integer sorts after every integer: the binary
       * search below relies on ts >= abs_ts holding for the row found. */
      if (sqlite3_column_type (stmt, 0) != SQLITE_INTEGER
          || sqlite3_column_type (stmt, 1) != SQLITE_INTEGER || *ts < abs_ts)
        {
          vs_trace_corrupt_error (trace, stmt, error,
                                  "its series table has a seq or ts that is not an"
                                  " integer");
          return FALSE;
        }
    }
  return vs_trace_step_ended (trace, stmt, rc, error);
}

gboolean
vs_trace_series_row_at_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                            gint64 *row_seq, gint64 *row_ts, GError **error)
{
  static const char *at_ts_sql = "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
                                 " AND ts = ?3 AND seq <= ?4 ORDER BY seq DESC LIMIT 1";
  gint64 lo, hi, s, t;
  gboolean found;
  sqlite3_stmt *stmt;
  int rc;

  *row_seq = 0;
  *row_ts = VS_UNKNOWN;
  /* The series is keyed by (ts, seq) and ts never decreases with seq, so
   * "the first row at or after time t has seq <= P" holds exactly for
   * t <= ts of the wanted row: binary search that time, each probe one
   * primary-key seek, then pick the row at that ts. */
  if (!first_row_from (trace, device_id, allocator_id, G_MININT64, &found, &s, &t, error))
    return FALSE;
  if (!found || s > seq)
    return TRUE; /* no change up to seq */
  lo = t;
  hi = G_MAXINT64;
  while (lo < hi)
    {
      gint64 mid = lo + (gint64)(((guint64)hi - (guint64)lo + 1) / 2);

      if (!first_row_from (trace, device_id, allocator_id, mid, &found, &s, &t, error))
        return FALSE;
      if (found && s <= seq)
        lo = t; /* t >= mid: jump to the row's own time */
      else
        hi = mid - 1;
    }
  stmt = vs_trace_series_statement (trace, at_ts_sql, device_id, allocator_id, lo, seq, error);
  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      *row_seq = sqlite3_column_int64 (stmt, 0);
      *row_ts = lo;
    }
  return vs_trace_step_ended (trace, stmt, rc, error);
}

gboolean
vs_trace_is_compacted (VsTrace *trace)
{
  return trace->schema_version >= VS_TRACE_SCHEMA_COMPACTED;
}

gboolean
vs_trace_can_use_bins (VsTrace *trace, gint64 seq)
{
  /* Interval bins (block.span_bin) cover positions below 2^48. */
  return seq >= 0 && seq < (G_GINT64_CONSTANT (1) << 48);
}
