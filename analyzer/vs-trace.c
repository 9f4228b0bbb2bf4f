/* vs-trace.c — the VsTrace object itself: creating and freeing it, its
 * read-only connection and the cache of prepared statements on it, and the
 * helpers every query uses (nullable columns, relative and absolute times,
 * SQLite failures turned into GErrors that name the file).
 *
 * Opening and validating a trace is in vs-trace-open.c, following one that
 * is being written in vs-trace-recording.c, what the trace describes (devices,
 * allocators, meta, extent) in vs-trace-describe.c, and the seq/time
 * lookups on the series in vs-trace-series.c.
 */
#include "vs-trace-private.h"

G_DEFINE_QUARK (vs - trace - error - quark, vs_trace_error)

/* Frees a VsDeviceInfo (a GDestroyNotify for the devices array). */
static void
device_info_free (gpointer data)
{
  VsDeviceInfo *d = data;

  g_free (d->uuid);
  g_free (d->name);
  g_free (d);
}

/* Frees a VsAllocatorInfo (a GDestroyNotify for the allocators array). */
static void
allocator_info_free (gpointer data)
{
  VsAllocatorInfo *a = data;

  g_free (a->kind);
  g_free (a->name);
  g_free (a);
}

void
vs_bind_int (sqlite3_stmt *stmt, int index, gint64 value)
{
  if (value == VS_UNKNOWN)
    sqlite3_bind_null (stmt, index);
  else
    sqlite3_bind_int64 (stmt, index, value);
}

gint64
vs_column_int (sqlite3_stmt *stmt, int i)
{
  if (sqlite3_column_type (stmt, i) == SQLITE_NULL)
    return VS_UNKNOWN;
  return sqlite3_column_int64 (stmt, i);
}

char *
vs_column_dup (sqlite3_stmt *stmt, int i)
{
  if (sqlite3_column_type (stmt, i) == SQLITE_NULL)
    return NULL;
  return g_strdup ((const char *)sqlite3_column_text (stmt, i));
}

gint64
vs_trace_rel (VsTrace *trace, gint64 abs_ns)
{
  if (abs_ns == VS_UNKNOWN)
    return VS_UNKNOWN;
  return abs_ns - trace->start_abs_ns;
}

gint64
vs_trace_abs (VsTrace *trace, gint64 rel_ns)
{
  if (rel_ns == VS_UNKNOWN)
    return VS_UNKNOWN;
  if (rel_ns > 0 && trace->start_abs_ns > G_MAXINT64 - rel_ns)
    return G_MAXINT64;
  if (rel_ns < 0 && trace->start_abs_ns < G_MININT64 + 1 - rel_ns)
    return G_MININT64 + 1;
  return trace->start_abs_ns + rel_ns;
}

/* Whether an extended result code means the file is damaged rather than
 * unreadable for another reason. */
static gboolean
is_corruption (int rc)
{
  rc &= 0xff;
  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_IOERR || rc == SQLITE_FORMAT
         || rc == SQLITE_RANGE;
}

gboolean
vs_trace_sql_error (VsTrace *trace, GError **error)
{
  int rc = sqlite3_extended_errcode (trace->db);

  if (is_corruption (rc))
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                 "%s is damaged or truncated (SQLite: %s)", trace->path,
                 sqlite3_errmsg (trace->db));
  else
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot read %s (SQLite: %s)",
                 trace->path, sqlite3_errmsg (trace->db));
  return FALSE;
}

sqlite3_stmt *
vs_trace_statement (VsTrace *trace, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = g_hash_table_lookup (trace->statements, sql);

  if (trace->db == NULL)
    {
      /* Only after a refresh failed to reopen the file. */
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                   "Cannot read %s: it could not be opened again", trace->path);
      return NULL;
    }
  if (stmt != NULL)
    {
      sqlite3_reset (stmt);
      sqlite3_clear_bindings (stmt);
      return stmt;
    }
  if (sqlite3_prepare_v3 (trace->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK)
    {
      vs_trace_sql_error (trace, error);
      sqlite3_finalize (stmt);
      return NULL;
    }
  g_hash_table_insert (trace->statements, (gpointer)sql, stmt);
  return stmt;
}

/* Runs a one-row, one-column query; *out gets the value (VS_UNKNOWN for
 * NULL or no row). */
gboolean
vs_trace_query_int (VsTrace *trace, const char *sql, gint64 *out, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *out = vs_column_int (stmt, 0);
  else if (rc == SQLITE_DONE)
    *out = VS_UNKNOWN;
  else
    return vs_trace_sql_error (trace, error);
  sqlite3_reset (stmt);
  return TRUE;
}

int
vs_trace_sqlite_open (const char *file, sqlite3 **db, int flags)
{
  int rc = sqlite3_open_v2 (file, db, flags, NULL);

  if (rc == SQLITE_OK)
    sqlite3_db_config (*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  return rc;
}

/* Opens trace->db read-only on file (the trace's path, or its private
 * copy when following a recording). */
gboolean
vs_trace_open_connection (VsTrace *trace, const char *file, GError **error)
{
  /* A VsTrace is used from one thread at a time (vs-trace.h): SQLite's
   * per-call mutex would only cost time on every row read. */
  int rc = vs_trace_sqlite_open (file, &trace->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);

  if (rc != SQLITE_OK)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot open %s (SQLite: %s)",
                   trace->path, trace->db ? sqlite3_errmsg (trace->db) : sqlite3_errstr (rc));
      return FALSE;
    }
  sqlite3_extended_result_codes (trace->db, 1);
  return TRUE;
}

/* Finalizes every cached statement and closes trace->db (set to NULL). */
void
vs_trace_close_connection (VsTrace *trace)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, trace->statements);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    sqlite3_finalize (value);
  g_hash_table_remove_all (trace->statements);
  sqlite3_close_v2 (trace->db);
  trace->db = NULL;
}

/* A new VsTrace for path with empty caches and no connection. */
VsTrace *
vs_trace_new (const char *path)
{
  VsTrace *trace = g_new0 (VsTrace, 1);

  trace->path = g_strdup (path);
  trace->statements = g_hash_table_new (NULL, NULL);
  trace->devices = g_ptr_array_new_with_free_func (device_info_free);
  trace->allocators = g_ptr_array_new_with_free_func (allocator_info_free);
  trace->mem_kinds = g_ptr_array_new ();
  trace->stacks = NULL;
  trace->level_shifts
      = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
  trace->shared_series = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  trace->retired = g_ptr_array_new_with_free_func ((GDestroyNotify)g_ptr_array_unref);
  trace->kernel_max_ns = -1;
  return trace;
}

/* Moves the caches whose contents callers may still point into to the
 * retired list and starts new ones. */
void
vs_trace_retire_caches (VsTrace *trace)
{
  g_ptr_array_add (trace->retired, trace->devices);
  g_ptr_array_add (trace->retired, trace->allocators);
  trace->devices = g_ptr_array_new_with_free_func (device_info_free);
  trace->allocators = g_ptr_array_new_with_free_func (allocator_info_free);
  /* Interned names stay valid for callers still holding them. */
  g_ptr_array_set_size (trace->mem_kinds, 0);
  if (trace->stacks != NULL)
    {
      /* A hash table is kept alive by a one-element array that unrefs it. */
      GPtrArray *holder = g_ptr_array_new_with_free_func ((GDestroyNotify)g_hash_table_unref);

      g_ptr_array_add (holder, g_steal_pointer (&trace->stacks));
      g_ptr_array_add (trace->retired, holder);
    }
  g_hash_table_remove_all (trace->level_shifts);
  g_hash_table_remove_all (trace->shared_series);
  trace->kernel_max_ns = -1;
  trace->last_seq = 0;
  trace->duration_ns = 0;
}

void
vs_trace_free (VsTrace *trace)
{
  GHashTableIter iter;
  gpointer value;

  if (trace == NULL)
    return;
  if (trace->statements != NULL)
    {
      g_hash_table_iter_init (&iter, trace->statements);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        sqlite3_finalize (value);
      g_hash_table_unref (trace->statements);
    }
  g_clear_pointer (&trace->stacks, g_hash_table_unref);
  g_clear_pointer (&trace->level_shifts, g_hash_table_unref);
  g_clear_pointer (&trace->shared_series, g_hash_table_unref);
  g_clear_pointer (&trace->devices, g_ptr_array_unref);
  g_clear_pointer (&trace->allocators, g_ptr_array_unref);
  g_clear_pointer (&trace->mem_kinds, g_ptr_array_unref);
  g_clear_pointer (&trace->retired, g_ptr_array_unref);
  if (trace->db != NULL)
    sqlite3_close_v2 (trace->db);
  if (trace->source != NULL)
    sqlite3_close_v2 (trace->source);
  g_free (trace->stamp);
  g_free (trace->path);
  g_free (trace);
}
