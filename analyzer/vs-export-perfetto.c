/* SPDX-License-Identifier: MIT */
/* vs-export-perfetto.c — a trace as Chrome / Perfetto JSON trace events.
 *
 * Layout of the tracks (what ui.perfetto.dev shows):
 *   one process per GPU, pid VS_PERFETTO_DEVICE_PID + device index, named
 *   "GPU N · name", holding
 *     counters "<allocator> reserved_bytes" / "allocated_bytes" (and the
 *     device's "all device_bytes"): one "C" event per instant the series
 *     changes, with the state after the last change at that instant;
 *     a thread "failed allocations" (tid 0): one instant per failure;
 *     a thread "stream S" (tid S + 1) per stream: kernels as "X" slices;
 *   one process per profiled process (its pid), one thread per thread
 *   that opened NVTX ranges: the ranges as "X" slices.
 * Times are microseconds since the trace's start written with exactly
 * three decimals, so each nanosecond value reads back exactly.  Everything
 * is streamed from indexed reads; nothing is held per event.
 */
#include "vs-export.h"

#include <string.h>

#include "vs-framework-pools.h"
#include "vs-stack.h"
#include "vs-summary.h"
#include "vs-trace-private.h"

/* The pid of device idx 0's process: above any Linux pid (pid_max is at
 * most 2^22), so device tracks never merge with a profiled process. */
#define VS_PERFETTO_DEVICE_PID 1073741824
/* The pid of the GPU tracks of events whose device the trace does not know. */
#define VS_PERFETTO_UNKNOWN_DEVICE_PID (VS_PERFETTO_DEVICE_PID - 1)

/* Column i as gint64 (0 for NULL), for the G_GINT64_FORMAT formats. */
static inline gint64
col_int (sqlite3_stmt *st, int i)
{
  return (gint64)sqlite3_column_int64 (st, i);
}

typedef struct
{
  VsTrace *trace;
  FILE *out;
  gboolean first; /* no event written yet */
} Writer;

/* Writes s as a JSON string (quoted, escaped; invalid UTF-8 replaced). */
static void
put_string (FILE *out, const char *s)
{
  g_autofree char *valid = g_utf8_make_valid (s ? s : "", -1);
  fputc ('"', out);
  for (const unsigned char *p = (const unsigned char *)valid; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (out, "\\%c", *p);
      else if (*p == '\n')
        fputs ("\\n", out);
      else if (*p == '\t')
        fputs ("\\t", out);
      else if (*p < 0x20 || *p == 0x7f)
        fprintf (out, "\\u%04x", *p);
      else
        fputc (*p, out);
    }
  fputc ('"', out);
}

/* Writes ns as microseconds with three decimals: exact, sign included. */
static void
put_us (FILE *out, gint64 ns)
{
  guint64 mag = ns < 0 ? (guint64)0 - (guint64)ns : (guint64)ns;
  fprintf (out, "%s%" G_GUINT64_FORMAT ".%03u", ns < 0 ? "-" : "", mag / 1000,
           (unsigned)(mag % 1000));
}

/* Starts the next event object (the caller writes its members and '}'). */
static void
begin_event (Writer *w, const char *ph, gint64 pid, gint64 tid)
{
  fputs (w->first ? "\n{" : ",\n{", w->out);
  w->first = FALSE;
  fprintf (w->out, "\"ph\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT, ph, pid,
           tid);
}

/* A metadata event naming a process (tid < 0) or a thread. */
static void
put_name (Writer *w, gint64 pid, gint64 tid, const char *name)
{
  begin_event (w, "M", pid, tid < 0 ? 0 : tid);
  fprintf (w->out,
           ",\"name\":\"%s\",\"args\":{\"name\":", tid < 0 ? "process_name" : "thread_name");
  put_string (w->out, name);
  fputs ("}}", w->out);
}

/* The pid of device d's process: VS_PERFETTO_DEVICE_PID + its index, or
 * the unknown device's when the index is negative or would overflow (a
 * trace edited by hand; CUDA numbers devices from 0). */
static gint64
pid_of_device (const VsDeviceInfo *d)
{
  gint64 pid;

  if (d == NULL || d->idx < 0 || __builtin_add_overflow (VS_PERFETTO_DEVICE_PID, d->idx, &pid))
    return VS_PERFETTO_UNKNOWN_DEVICE_PID;
  return pid;
}

static gint64
device_pid (VsTrace *trace, gint64 device_id)
{
  return pid_of_device (device_id == VS_UNKNOWN ? NULL : vs_trace_lookup_device (trace, device_id));
}

static const char *series_sql
    = "SELECT ts, reserved_bytes, allocated_bytes, device_bytes, seq FROM series"
      " WHERE device_id = ?1 AND allocator_id = ?2 ORDER BY ts, seq";

/* The counters of one (device, allocator): one event per distinct ts,
 * carrying the state after the last change at that ts.  A device's `all`
 * counts a framework pool seen from the device level as reserved only,
 * as every report does (vs-framework-pools.h). */
static gboolean
put_series (Writer *w, const VsDeviceInfo *dev, gint64 allocator_id, GError **error)
{
  sqlite3_stmt *st = vs_trace_statement (w->trace, series_sql, error);
  if (st == NULL)
    return FALSE;
  vs_trace_bind_series (w->trace, st, dev->id, allocator_id);
  gboolean with_device = allocator_id == 0;
  gboolean pools = allocator_id == 0 && vs_framework_pools_hold_segments (w->trace, dev->id);
  const char *name = vs_trace_allocator_name (w->trace, allocator_id);
  gint64 pid = pid_of_device (dev);
  gboolean have = FALSE;
  gint64 ts = 0, reserved = 0, allocated = 0, device = VS_UNKNOWN;
  int rc;
  for (;;)
    {
      rc = sqlite3_step (st);
      gboolean row = rc == SQLITE_ROW;
      gint64 row_ts = row ? col_int (st, 0) : 0;
      if (have && (!row || row_ts != ts))
        {
          begin_event (w, "C", pid, 0);
          fputs (",\"name\":", w->out);
          put_string (w->out, name);
          fputs (",\"ts\":", w->out);
          put_us (w->out, vs_trace_rel (w->trace, ts));
          fprintf (w->out,
                   ",\"args\":{\"reserved_bytes\":%" G_GINT64_FORMAT
                   ",\"allocated_bytes\":%" G_GINT64_FORMAT,
                   reserved, allocated);
          if (device != VS_UNKNOWN)
            fprintf (w->out, ",\"device_bytes\":%" G_GINT64_FORMAT, device);
          fputs ("}}", w->out);
        }
      if (!row)
        break;
      have = TRUE;
      ts = row_ts;
      reserved = col_int (st, 1);
      allocated = col_int (st, 2);
      if (pools)
        allocated = MAX (
            allocated - vs_framework_pools_reserved_at (w->trace, dev->id, col_int (st, 4)), 0);
      device = with_device ? vs_column_int (st, 3) : VS_UNKNOWN;
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);
  return TRUE;
}

static const char *streams_sql
    = "SELECT DISTINCT device_id, stream FROM kernel ORDER BY device_id, stream";
static const char *kernels_sql
    = "SELECT start_ns, end_ns, device_id, stream, name, correlation,"
      " grid_x, grid_y, grid_z, block_x, block_y, block_z FROM kernel ORDER BY start_ns, id";

/* Whether stream has a thread of its own: known, and small enough that
 * its tid (stream + 1) neither overflows nor loses precision in the
 * readers' doubles (2^53). */
static gboolean
stream_known (gint64 stream)
{
  return stream != VS_UNKNOWN && stream >= 0 && stream < (G_GINT64_CONSTANT (1) << 53) - 1;
}

/* The tid of a stream's thread: stream + 1 (tid 0 holds failures; a
 * kernel without a stream, or with one out of that range, goes on tid 1,
 * "stream ?"). */
static gint64
stream_tid (gint64 stream)
{
  return stream_known (stream) ? stream + 1 : 1;
}

static gboolean
put_kernels (Writer *w, GError **error)
{
  sqlite3_stmt *st = vs_trace_statement (w->trace, streams_sql, error);
  if (st == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 stream = vs_column_int (st, 1);
      g_autofree char *name = !stream_known (stream)
                                  ? g_strdup ("stream ?")
                                  : g_strdup_printf ("stream %" G_GINT64_FORMAT, stream);
      put_name (w, device_pid (w->trace, vs_column_int (st, 0)), stream_tid (stream), name);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);

  st = vs_trace_statement (w->trace, kernels_sql, error);
  if (st == NULL)
    return FALSE;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 start = col_int (st, 0), end = col_int (st, 1);
      begin_event (w, "X", device_pid (w->trace, vs_column_int (st, 2)),
                   stream_tid (vs_column_int (st, 3)));
      fputs (",\"cat\":\"kernel\",\"name\":", w->out);
      put_string (w->out, (const char *)sqlite3_column_text (st, 4));
      fputs (",\"ts\":", w->out);
      put_us (w->out, vs_trace_rel (w->trace, start));
      fputs (",\"dur\":", w->out);
      put_us (w->out, MAX (end - start, 0));
      fputs (",\"args\":{", w->out);
      gint64 corr = vs_column_int (st, 5);
      if (corr != VS_UNKNOWN)
        fprintf (w->out, "\"correlation\":%" G_GINT64_FORMAT ",", corr);
      fprintf (w->out,
               "\"grid\":[%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "],"
               "\"block\":[%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]}}",
               col_int (st, 6), col_int (st, 7), col_int (st, 8), col_int (st, 9), col_int (st, 10),
               col_int (st, 11));
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);
  return TRUE;
}

static const char *processes_sql
    = "SELECT p.pid, p.command_line, p.rank FROM process p"
      " WHERE EXISTS (SELECT 1 FROM nvtx_range r WHERE r.process_id = p.id) ORDER BY p.id";
static const char *threads_sql
    = "SELECT DISTINCT p.pid, r.tid FROM nvtx_range r LEFT JOIN process p ON p.id = r.process_id"
      " ORDER BY 1, 2";
static const char *ranges_sql
    = "SELECT p.pid, r.tid, r.domain, r.name, r.start_ns, r.end_ns, r.depth"
      " FROM nvtx_range r LEFT JOIN process p ON p.id = r.process_id ORDER BY r.start_ns, r.id";

static gboolean
put_ranges (Writer *w, GError **error)
{
  sqlite3_stmt *st = vs_trace_statement (w->trace, processes_sql, error);
  if (st == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 pid = col_int (st, 0), rank = vs_column_int (st, 2);
      const char *cmd = (const char *)sqlite3_column_text (st, 1);
      g_autoptr (GString) name = g_string_new (cmd && cmd[0] ? cmd : "process");
      if (rank != VS_UNKNOWN)
        g_string_append_printf (name, " (rank %" G_GINT64_FORMAT ")", rank);
      put_name (w, pid, -1, name->str);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);

  st = vs_trace_statement (w->trace, threads_sql, error);
  if (st == NULL)
    return FALSE;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 tid = vs_column_int (st, 1);
      g_autofree char *name
          = tid == VS_UNKNOWN ? g_strdup ("NVTX") : g_strdup_printf ("NVTX %" G_GINT64_FORMAT, tid);
      put_name (w, vs_column_int (st, 0) == VS_UNKNOWN ? 0 : col_int (st, 0),
                tid == VS_UNKNOWN ? 0 : tid, name);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);

  gint64 trace_end = vs_trace_get_duration_ns (w->trace);
  st = vs_trace_statement (w->trace, ranges_sql, error);
  if (st == NULL)
    return FALSE;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 pid = vs_column_int (st, 0), tid = vs_column_int (st, 1);
      gint64 start = vs_trace_rel (w->trace, col_int (st, 4));
      gint64 end_abs = vs_column_int (st, 5);
      gint64 end
          = end_abs == VS_UNKNOWN ? MAX (trace_end, start) : vs_trace_rel (w->trace, end_abs);
      const char *domain = (const char *)sqlite3_column_text (st, 2);
      begin_event (w, "X", pid == VS_UNKNOWN ? 0 : pid, tid == VS_UNKNOWN ? 0 : tid);
      fputs (",\"cat\":", w->out);
      put_string (w->out, domain ? domain : "nvtx");
      fputs (",\"name\":", w->out);
      put_string (w->out, (const char *)sqlite3_column_text (st, 3));
      fputs (",\"ts\":", w->out);
      put_us (w->out, start);
      fputs (",\"dur\":", w->out);
      put_us (w->out, MAX (end - start, 0));
      fprintf (w->out, ",\"args\":{\"depth\":%" G_GINT64_FORMAT "%s}}", col_int (st, 6),
               end_abs == VS_UNKNOWN ? ",\"unclosed\":true" : "");
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);
  return TRUE;
}

static const char *failures_sql
    = "SELECT ts, device_id, allocator_id, api, requested_bytes, error_name,"
      " device_free_bytes, stack_id FROM failed_alloc ORDER BY ts, id";

static gboolean
put_failures (Writer *w, GError **error)
{
  g_autoptr (GHashTable) named = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) pids = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *st = vs_trace_statement (w->trace, failures_sql, error);
  if (st == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 pid = device_pid (w->trace, vs_column_int (st, 1));
      gint64 allocator_id = vs_column_int (st, 2);
      const VsStackInfo *stack = vs_stack_get (w->trace, vs_column_int (st, 7), error);
      if (stack == NULL)
        return FALSE;
      g_array_append_val (pids, pid);
      begin_event (w, "i", pid, 0);
      fputs (",\"s\":\"t\",\"cat\":\"failure\",\"name\":", w->out);
      g_autofree char *name
          = g_strdup_printf ("failed %s of %" G_GINT64_FORMAT " bytes",
                             (const char *)sqlite3_column_text (st, 3), col_int (st, 4));
      put_string (w->out, name);
      fputs (",\"ts\":", w->out);
      put_us (w->out, vs_trace_rel (w->trace, col_int (st, 0)));
      fputs (",\"args\":{\"api\":", w->out);
      put_string (w->out, (const char *)sqlite3_column_text (st, 3));
      fputs (",\"allocator\":", w->out);
      put_string (w->out, allocator_id == VS_UNKNOWN
                              ? "device"
                              : vs_trace_allocator_name (w->trace, allocator_id));
      fprintf (w->out, ",\"requested_bytes\":%" G_GINT64_FORMAT, col_int (st, 4));
      if (sqlite3_column_type (st, 5) != SQLITE_NULL)
        {
          fputs (",\"error\":", w->out);
          put_string (w->out, (const char *)sqlite3_column_text (st, 5));
        }
      if (sqlite3_column_type (st, 6) != SQLITE_NULL)
        fprintf (w->out, ",\"device_free_bytes\":%" G_GINT64_FORMAT, col_int (st, 6));
      fputs (",\"stack\":", w->out);
      {
        g_autofree char *text = vs_stack_dup_text (stack);

        put_string (w->out, text);
      }
      fputs ("}}", w->out);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (w->trace, error);
  for (guint i = 0; i < pids->len; i++)
    {
      gint64 *pid = &g_array_index (pids, gint64, i);
      if (g_hash_table_contains (named, pid))
        continue;
      g_hash_table_add (named, pid);
      put_name (w, *pid, 0, "failed allocations");
    }
  return TRUE;
}

static const char *unknown_device_sql
    = "SELECT EXISTS (SELECT 1 FROM kernel WHERE device_id IS NULL)"
      " OR EXISTS (SELECT 1 FROM failed_alloc WHERE device_id IS NULL)";

gboolean
vs_export_perfetto (VsTrace *trace, FILE *out, GError **error)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  Writer w = { .trace = trace, .out = out, .first = TRUE };
  fputs ("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"vramscope\",\"start_ns\":",
         out);
  fprintf (out, "%" G_GINT64_FORMAT "},\"traceEvents\":[", vs_trace_get_start_abs_ns (trace));

  const GPtrArray *devices = vs_trace_get_devices (trace);
  for (guint d = 0; d < devices->len; d++)
    {
      const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
      g_autofree char *name = g_strdup_printf ("GPU %" G_GINT64_FORMAT "%s%s", dev->idx,
                                               dev->name ? " · " : "", dev->name ? dev->name : "");
      put_name (&w, pid_of_device (dev), -1, name);
      g_autoptr (GArray) rows = vs_summary_list (trace, dev->id, 0, error);
      if (rows == NULL)
        return FALSE;
      for (guint i = 0; i < rows->len; i++)
        if (!put_series (&w, dev, g_array_index (rows, VsSummary, i).allocator_id, error))
          return FALSE;
    }
  gint64 unknown_device = 0;
  if (!vs_trace_query_int (trace, unknown_device_sql, &unknown_device, error))
    return FALSE;
  if (unknown_device == 1)
    put_name (&w, VS_PERFETTO_UNKNOWN_DEVICE_PID, -1, "GPU ?");
  if (!put_kernels (&w, error) || !put_ranges (&w, error) || !put_failures (&w, error))
    return FALSE;
  fputs ("\n]}\n", out);
  return TRUE;
}
