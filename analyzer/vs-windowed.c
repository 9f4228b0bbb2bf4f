/* SPDX-License-Identifier: MIT */
/* vs-windowed.c — reading what a windowed trace keeps (vs-windowed.h). */
#include "vs-windowed.h"

#include <string.h>

#include "vs-format.h"
#include "vs-trace-private.h"

static const char *has_sql
    = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'detail_interval'";
static const char *intervals_sql = "SELECT count(*) FROM detail_interval";
static const char *meta_sql[4]
    = { "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_ns'",
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_detail_from_ns'",
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_slice_ns'",
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_slice_iterations'" };

gboolean
vs_windowed_info (VsTrace *trace, VsWindowedInfo *out, GError **error)
{
  gint64 has = 0, n = 0, v[4];

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->window_ns = VS_UNKNOWN;
  if (!vs_trace_query_int (trace, has_sql, &has, error))
    return FALSE;
  for (int k = 0; k < 4; k++)
    if (!vs_trace_query_int (trace, meta_sql[k], &v[k], error))
      return FALSE;
  out->window_ns = v[0];
  if (has <= 0)
    return TRUE;
  if (!vs_trace_query_int (trace, intervals_sql, &n, error))
    return FALSE;
  out->windowed = n > 0;
  out->n_intervals = n > 0 ? (guint)n : 0;
  out->detail_from_ns = out->windowed ? vs_trace_rel (trace, v[1]) : 0;
  out->slice_ns = out->windowed && v[2] != VS_UNKNOWN ? v[2] : 0;
  out->slice_iterations = out->windowed && v[3] != VS_UNKNOWN ? v[3] : 0;
  return TRUE;
}

static const char *slices_sql
    = "SELECT start_ns, end_ns, peak_reserved_bytes, peak_allocated_bytes, min_reserved_bytes,"
      " min_allocated_bytes, final_reserved_bytes, final_allocated_bytes, alloc_count,"
      " free_count, failed_alloc_count FROM window_slice"
      " WHERE device_id = ?1 AND allocator_id = ?2 ORDER BY start_ns";

GArray *
vs_windowed_slices (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  VsWindowedInfo info;
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (VsWindowedSlice));
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  if (!vs_windowed_info (trace, &info, error))
    return NULL;
  if (!info.windowed)
    return g_steal_pointer (&out);
  stmt = vs_trace_statement (trace, slices_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsWindowedSlice s = {
        .start_ns = vs_trace_rel (trace, vs_column_int (stmt, 0)),
        .end_ns = vs_trace_rel (trace, vs_column_int (stmt, 1)),
        .peak_reserved_bytes = vs_column_int (stmt, 2),
        .peak_allocated_bytes = vs_column_int (stmt, 3),
        .min_reserved_bytes = vs_column_int (stmt, 4),
        .min_allocated_bytes = vs_column_int (stmt, 5),
        .final_reserved_bytes = vs_column_int (stmt, 6),
        .final_allocated_bytes = vs_column_int (stmt, 7),
        .alloc_count = vs_column_int (stmt, 8),
        .free_count = vs_column_int (stmt, 9),
        .failed_alloc_count = vs_column_int (stmt, 10),
      };
      g_array_append_val (out, s);
    }
  if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      return NULL;
    }
  return g_steal_pointer (&out);
}

char *
vs_windowed_note (VsTrace *trace)
{
  VsWindowedInfo info;

  g_return_val_if_fail (trace != NULL, NULL);
  if (!vs_windowed_info (trace, &info, NULL) || !info.windowed)
    return NULL;
  g_autofree char *window
      = info.window_ns != VS_UNKNOWN ? vs_format_duration (info.window_ns) : g_strdup ("?");
  g_autofree char *from = vs_format_duration (info.detail_from_ns);
  g_autofree char *slice = NULL;
  if (info.slice_iterations > 0)
    slice = g_strdup_printf ("slices of %" G_GINT64_FORMAT " iteration%s", info.slice_iterations,
                             info.slice_iterations == 1 ? "" : "s");
  else
    {
      g_autofree char *len = vs_format_duration (info.slice_ns);
      slice = g_strdup_printf ("%s slices", len);
    }
  return g_strdup_printf (
      "Windowed trace (record --window %s): every event from %s to the end and around the "
      "peaks and failures (%u intervals); before that, memory is in %s (peaks, counts, "
      "growth per site) and kernels, ranges and failures only inside the intervals.",
      window, from, info.n_intervals, slice);
}
