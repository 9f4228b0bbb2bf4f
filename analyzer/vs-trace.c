/* SPDX-License-Identifier: MIT */
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
#include "vs-framework-pools.h"
#include "vs-trace-private.h"

#include <glib/gstdio.h>

/* The quark's name is one string of words and dashes, as GLib spells
 * its own; clang-format would space the dashes. */
/* clang-format off */
G_DEFINE_QUARK (vs-trace-error-quark, vs_trace_error)
/* clang-format on */

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
  gint64 rel;

  if (abs_ns == VS_UNKNOWN)
    return VS_UNKNOWN;
  /* Times in a file may be anything: saturate rather than overflow. */
  if (__builtin_sub_overflow (abs_ns, trace->start_abs_ns, &rel))
    return abs_ns < 0 ? G_MININT64 + 1 : G_MAXINT64;
  return rel == VS_UNKNOWN ? G_MININT64 + 1 : rel;
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

  if ((rc & 0xff) == SQLITE_INTERRUPT)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                 "%s took too long to read (a query ran over %d s): its tables or views are"
                 " malformed or far larger than they should be",
                 trace->path, vs_trace_query_limit_s ());
  else if ((rc & 0xff) == SQLITE_NOMEM)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                 "%s needs more memory to read than the limit of %d MiB: its tables or"
                 " views are malformed or far larger than they should be",
                 trace->path, (int)(VS_TRACE_SQLITE_HEAP_LIMIT >> 20));
  else if (is_corruption (rc))
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                 "%s is damaged or truncated (SQLite: %s)", trace->path,
                 sqlite3_errmsg (trace->db));
  else
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot read %s (SQLite: %s)",
                 trace->path, sqlite3_errmsg (trace->db));
  return FALSE;
}

gboolean
vs_trace_step_done (VsTrace *trace, sqlite3_stmt *stmt, int rc, GError **error)
{
  sqlite3_reset (stmt);
  return rc == SQLITE_DONE || vs_trace_sql_error (trace, error);
}

gboolean
vs_trace_step_ended (VsTrace *trace, sqlite3_stmt *stmt, int rc, GError **error)
{
  sqlite3_reset (stmt);
  return rc == SQLITE_ROW || rc == SQLITE_DONE || vs_trace_sql_error (trace, error);
}

gboolean
vs_trace_corrupt_error (VsTrace *trace, sqlite3_stmt *stmt, GError **error, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list args;

  if (stmt != NULL)
    sqlite3_reset (stmt);
  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT, "%s is inconsistent: %s", trace->path,
               what);
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
  trace->query_deadline
      = g_get_monotonic_time () + (gint64)vs_trace_query_limit_s () * G_USEC_PER_SEC;
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
  int rc;

  /* Process-wide, and only lowered: a host program may have set its own. */
  if (sqlite3_hard_heap_limit64 (-1) == 0
      || sqlite3_hard_heap_limit64 (-1) > VS_TRACE_SQLITE_HEAP_LIMIT)
    sqlite3_hard_heap_limit64 (VS_TRACE_SQLITE_HEAP_LIMIT);
  rc = sqlite3_open_v2 (file, db, flags, NULL);

  if (rc == SQLITE_OK)
    sqlite3_db_config (*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  return rc;
}

int
vs_trace_query_limit_s (void)
{
  const char *env = g_getenv (VS_TRACE_QUERY_LIMIT_ENV);
  gint64 v = env != NULL ? g_ascii_strtoll (env, NULL, 10) : 0;

  return v >= 1 && v <= 86400 ? (int)v : VS_TRACE_QUERY_LIMIT_S;
}

/* The progress handler of a reader's connection: interrupts the running
 * query once the time budget vs_trace_statement() started is spent. */
static int
check_deadline (void *data)
{
  VsTrace *trace = data;

  return g_get_monotonic_time () > trace->query_deadline;
}

/* Reads the header and schema on db: the first access, where a hot
 * journal, a missing WAL index or a lock shows.  Returns the extended
 * result code. */
static int
probe (sqlite3 *db)
{
  if (sqlite3_exec (db, "PRAGMA schema_version", NULL, NULL, NULL) == SQLITE_OK)
    return SQLITE_OK;
  return sqlite3_extended_errcode (db);
}

/* Whether path + suffix exists and is not empty. */
static gboolean
side_file_used (const char *path, const char *suffix)
{
  g_autofree char *side = g_strconcat (path, suffix, NULL);
  GStatBuf st;

  return g_stat (side, &st) == 0 && st.st_size > 0;
}

/* Whether the header of the database at path says WAL mode (file format
 * bytes 18 and 19 are 2). */
static gboolean
header_says_wal (const char *path)
{
  guint8 h[20];
  FILE *f = g_fopen (path, "rb");
  gboolean wal;

  if (f == NULL)
    return FALSE;
  wal = fread (h, 1, sizeof h, f) == sizeof h && h[18] == 2 && h[19] == 2;
  fclose (f);
  return wal;
}

/* Rolls back the hot journal a writer killed mid-transaction left beside
 * file, through a read-write connection of its own (SQLite does it on
 * first access); a read-only connection cannot. */
static int
recover_hot_journal (const char *file)
{
  sqlite3 *db = NULL;
  int rc = vs_trace_sqlite_open (file, &db, SQLITE_OPEN_READWRITE);

  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, vs_trace_query_limit_s () * 1000);
      rc = probe (db);
    }
  sqlite3_close_v2 (db);
  return rc;
}

/* Opens trace->db read-only on file (the trace's path, or its private
 * copy when following a recording), then reads its header: a hot journal
 * is rolled back first where the file can be written, and a WAL-mode file
 * that has no WAL content and whose folder cannot be written (no WAL
 * index can be made there) is read as the immutable file it is. */
gboolean
vs_trace_open_connection (VsTrace *trace, const char *file, GError **error)
{
  int rc = vs_trace_sqlite_open (file, &trace->db, SQLITE_OPEN_READONLY);
  const char *why = NULL;

  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (trace->db, vs_trace_query_limit_s () * 1000);
      rc = probe (trace->db);
    }
  if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY && side_file_used (file, "-journal"))
    {
      g_clear_pointer (&trace->db, sqlite3_close_v2);
      if (recover_hot_journal (file) != SQLITE_OK)
        why = "it has a journal left by a write that was interrupted, which only a connection"
              " that can write the file and its folder can roll back; copy both to a writable"
              " place";
      else if ((rc = vs_trace_sqlite_open (file, &trace->db, SQLITE_OPEN_READONLY)) == SQLITE_OK)
        rc = probe (trace->db);
    }
  if (why == NULL && rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_NOTADB
      && !side_file_used (file, "-wal") && header_says_wal (file))
    {
      g_autofree char *escaped = g_uri_escape_string (file, "/", FALSE);
      g_autofree char *uri = g_strconcat ("file:", escaped, "?immutable=1", NULL);

      g_clear_pointer (&trace->db, sqlite3_close_v2);
      rc = vs_trace_sqlite_open (uri, &trace->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
      if (rc == SQLITE_OK)
        rc = probe (trace->db);
    }
  if (rc != SQLITE_OK)
    {
      if (why == NULL && (rc & 0xff) == SQLITE_BUSY)
        why = "another process holds it locked (it is being finalized or written); try again"
              " when it is done";
      if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                     "%s is not a vramscope trace (not a readable SQLite database: %s)",
                     trace->path, trace->db ? sqlite3_errmsg (trace->db) : sqlite3_errstr (rc));
      else
        g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot open %s: %s",
                     trace->path,
                     why != NULL ? why
                     : trace->db ? sqlite3_errmsg (trace->db)
                                 : sqlite3_errstr (rc));
      g_clear_pointer (&trace->db, sqlite3_close_v2);
      return FALSE;
    }
  sqlite3_extended_result_codes (trace->db, 1);
  trace->query_deadline
      = g_get_monotonic_time () + (gint64)vs_trace_query_limit_s () * G_USEC_PER_SEC;
  sqlite3_progress_handler (trace->db, 10000, check_deadline, trace);
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
      /* Kept alive by a one-element array that frees it. */
      GPtrArray *holder = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_stack_cache_free);

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
  g_clear_pointer (&trace->stacks, vs_stack_cache_free);
  g_clear_pointer (&trace->framework_pools, vs_framework_pools_free);
  g_clear_pointer (&trace->level_shifts, g_hash_table_unref);
  g_clear_pointer (&trace->shared_series, g_hash_table_unref);
  g_clear_pointer (&trace->devices, g_ptr_array_unref);
  g_clear_pointer (&trace->allocators, g_ptr_array_unref);
  g_clear_pointer (&trace->mem_kinds, g_ptr_array_unref);
  g_clear_pointer (&trace->retired, g_ptr_array_unref);
  g_free (trace->path_base);
  if (trace->db != NULL)
    sqlite3_close_v2 (trace->db);
  if (trace->source != NULL)
    sqlite3_close_v2 (trace->source);
  g_free (trace->stamp);
  g_free (trace->path);
  g_free (trace);
}

gboolean
vs_trace_has_device_level (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  return trace->device_level;
}
