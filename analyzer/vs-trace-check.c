/* SPDX-License-Identifier: MIT */
/* vs-trace-check.c — the steps every way of opening a trace takes: file
 * checks, the application id and schema version, readability of every
 * table, finalizing an interrupted recording in place, and loading the
 * tables every reader needs (vs-trace-private.h).  vs-trace-open.c and
 * vs-trace-recording.c put them in order.
 *
 * Validation is ordered from cheap to less cheap so that the common wrong
 * inputs fail fast with a precise sentence: the file must exist and not be
 * empty, start with the SQLite magic, not be shorter than its header says
 * (a truncated copy), carry our application_id and a schema version this
 * build knows, and its tables must be readable at both ends of their
 * b-trees.  A full integrity check is not run: it reads every page, which
 * takes seconds on a 1 GB trace; damage found later by a query is still
 * reported as an error naming the file, never a crash.
 */
#include "vs-framework-pools.h"
#include "vs-trace-private.h"
#include "vs-chunk-vtab.h"
#include "vs-trace-compact.h"
#include "vs-trace-finalize.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

static guint32
read_be32 (const guint8 *p)
{
  return ((guint32)p[0] << 24) | ((guint32)p[1] << 16) | ((guint32)p[2] << 8) | (guint32)p[3];
}

/* Checks what the file's first 100 bytes and its size can tell: present,
 * not empty, SQLite, not shorter than the header says. */
gboolean
vs_trace_check_file (const char *path, GError **error)
{
  GStatBuf st;
  guint8 header[100];
  FILE *f;
  size_t n;

  if (g_stat (path, &st) != 0)
    {
      int saved = errno;

      g_set_error (
          error, VS_TRACE_ERROR, saved == ENOENT ? VS_TRACE_ERROR_NOT_FOUND : VS_TRACE_ERROR_FAILED,
          saved == ENOENT ? "%s: no such file" : "Cannot open %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is not a regular file, not a vramscope trace", path);
      return FALSE;
    }
  if (st.st_size == 0)
    {
      g_autofree char *wal = g_strconcat (path, "-wal", NULL);
      GStatBuf wst;

      /* SQLite writes a WAL-mode file's header before any log (switching
       * to WAL mode writes page 1), so an empty file beside a log is a
       * damaged copy.  SQLite would delete that log on opening: it is left
       * alone for the user to salvage. */
      if (g_stat (wal, &wst) == 0 && wst.st_size > 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                       "%s is empty but has a write-ahead log %s; the file was cut short"
                       " (the log is left untouched)",
                       path, wal);
          return FALSE;
        }
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is empty, not a vramscope trace", path);
      return FALSE;
    }

  f = g_fopen (path, "rb");
  if (f == NULL)
    {
      int saved = errno;

      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot open %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  n = fread (header, 1, sizeof header, f);
  fclose (f);
  if (n < sizeof header || memcmp (header, "SQLite format 3", 16) != 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is not a vramscope trace (not an SQLite database)", path);
      return FALSE;
    }

  {
    guint32 page_size = ((guint32)header[16] << 8) | header[17];
    guint32 pages = read_be32 (header + 28);
    gboolean size_valid = read_be32 (header + 24) == read_be32 (header + 92);

    if (page_size == 1)
      page_size = 65536;
    if (size_valid && pages > 0 && (guint64)pages * page_size > (guint64)st.st_size)
      {
        g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                     "%s is truncated: its header says %" G_GUINT64_FORMAT
                     " bytes but the file has %" G_GUINT64_FORMAT,
                     path, (guint64)pages * page_size, (guint64)st.st_size);
        return FALSE;
      }
  }
  return TRUE;
}

/* Whether the file and its directory can be written (SQLite needs the
 * directory for its journal). */
static gboolean
is_writable (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  return g_access (path, W_OK) == 0 && g_access (dir, W_OK) == 0;
}

/* Finalizes the interrupted recording at trace->path in place, through a
 * read-write connection of its own; trace->db must be closed. */
gboolean
vs_trace_finalize_in_place (VsTrace *trace, GError **error)
{
  sqlite3 *db = NULL;
  char err[512] = "";
  int rc;

  if (!is_writable (trace->path))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_FINALIZED,
                   "%s was not finalized (its recording was interrupted) and "
                   "cannot be written here; copy it to a writable place and "
                   "open it again",
                   trace->path);
      return FALSE;
    }
  rc = vs_trace_sqlite_open (trace->path, &db, SQLITE_OPEN_READWRITE);
  if (rc == SQLITE_OK)
    {
      /* A compacted trace is finalized as plain tables, then compacted
       * again (vs-trace-compact.h). */
      gboolean compacted = trace->schema_version >= VS_TRACE_SCHEMA_COMPACTED;
      VsRowChunker chunker;

      /* Another reader finalizing it first is waited for as long as a
       * query may take. */
      sqlite3_busy_timeout (db, vs_trace_query_limit_s () * 1000);
      vs_row_chunker_init (&chunker);
      rc = !compacted || vs_trace_expand (db, err, sizeof err) == 0 ? SQLITE_OK : SQLITE_ERROR;
      if (rc == SQLITE_OK)
        {
          VsFinalizeOptions fo = { .sink = compacted ? &chunker.sink : NULL };

          rc = vs_trace_finalize_with (db, &fo, err, sizeof err) == 0 ? SQLITE_OK : SQLITE_ERROR;
        }
      vs_row_chunker_clear (&chunker);
      if (rc == SQLITE_OK && compacted && vs_trace_compact (db, err, sizeof err) < 0)
        rc = SQLITE_ERROR;
      if (rc != SQLITE_OK && err[0] == '\0')
        g_strlcpy (err, sqlite3_errmsg (db), sizeof err);
    }
  else
    g_strlcpy (err, db ? sqlite3_errmsg (db) : sqlite3_errstr (rc), sizeof err);
  sqlite3_close_v2 (db);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s was not finalized (its recording was interrupted) and "
                   "finalizing it failed: %s",
                   trace->path, err);
      return FALSE;
    }
  return TRUE;
}

/* The first table the analyzer reads whose shape is not what its queries
 * rely on: a table (not a view) keyed as the schema keys it — `id INTEGER
 * PRIMARY KEY` (each id once: walks over parent links stay linear), or the
 * primary key of the tables without rowid.  Checked on the schema alone;
 * ?1 is the schema version (kernels: one table before version 3, two
 * tables under the view `kernel` since; from version 5 the chunked tables
 * are virtual tables, checked as they connect: vs-chunk-vtab.c). */
static const char *shape_sql
    = "WITH t (name, pk) AS (VALUES ('device', 'id'), ('allocator', 'id'), ('process', 'id'),"
      "  ('module', 'id'), ('frame', 'id'), ('stack', 'id'), ('block', 'id'),"
      "  ('failed_alloc', 'id'), (iif (?1 >= 3, 'kernel_exec', 'kernel'),"
      "   iif (?1 >= 3, 'start_ns,id', 'id')),"
      "  (iif (?1 >= 3, 'kernel_config', 'kernel'), 'id'), ('nvtx_range', 'id'),"
      "  ('mem_event', 'id'),"
      "  ('alloc_event', 'id'), ('pool_event', 'id'), ('meta', 'key'),"
      "  ('series', 'device_id,allocator_id,ts,seq'),"
      "  ('series_level', 'device_id,allocator_id,shift,bucket'),"
      "  ('summary', 'device_id,allocator_id'))"
      " SELECT t.name FROM t WHERE (?1 < 5"
      "  OR t.name NOT IN ('alloc_event', 'mem_event', 'kernel_exec', 'series', 'block'))"
      " AND NOT (?1 >= 5 AND t.name = 'series_level' AND EXISTS (SELECT 1 FROM sqlite_master m"
      "  WHERE m.name = 'series_level_chunk' AND m.type = 'table'))"
      " AND (NOT EXISTS (SELECT 1 FROM sqlite_master m"
      "  WHERE m.name = t.name AND m.type = 'table')"
      " OR (SELECT group_concat (name) FROM (SELECT p.name FROM pragma_table_info (t.name) p"
      "  WHERE p.pk > 0 ORDER BY p.pk)) IS NOT t.pk"
      " OR (t.pk = 'id' AND (SELECT upper (p.type) FROM pragma_table_info (t.name) p"
      "  WHERE p.pk = 1) IS NOT 'INTEGER'))"
      " LIMIT 1";

/* Reads the first and last entry of every table the analyzer uses, so a
 * missing table or a file cut short fails here rather than mid-report. */
static gboolean
touch_tables (VsTrace *trace, GError **error)
{
  /* One min() or max() per query: SQLite answers those from the ends of
   * the b-tree, but a query with both reads the whole table. */
  static const char *probes[] = {
    "SELECT min(key) FROM meta",          "SELECT max(key) FROM meta",
    "SELECT min(id) FROM device",         "SELECT max(id) FROM device",
    "SELECT min(id) FROM allocator",      "SELECT max(id) FROM allocator",
    "SELECT min(id) FROM frame",          "SELECT max(id) FROM frame",
    "SELECT min(id) FROM stack",          "SELECT max(id) FROM stack",
    "SELECT min(id) FROM module",         "SELECT max(id) FROM module",
    "SELECT min(id) FROM failed_alloc",   "SELECT max(id) FROM failed_alloc",
    "SELECT min(id) FROM nvtx_range",     "SELECT max(id) FROM nvtx_range",
    "SELECT min(device_id) FROM summary", "SELECT max(device_id) FROM summary",
  };
  /* Kernels: one table before schema version 3, two since. */
  static const char *kernel_probes[] = {
    "SELECT min(id) FROM kernel",
    "SELECT max(id) FROM kernel",
  };
  /* The tables chunked from version 5 on: their plain tables before,
   * their chunk tables since (a min() over a virtual table reads it all). */
  static const char *plain_probes[] = {
    "SELECT min(id) FROM block",
    "SELECT max(id) FROM block",
    "SELECT min(device_id) FROM series",
    "SELECT max(device_id) FROM series",
    "SELECT min(start_ns) FROM kernel_exec",
    "SELECT max(start_ns) FROM kernel_exec",
    "SELECT min(device_id) FROM series_level",
    "SELECT max(device_id) FROM series_level",
  };
  static const char *chunk_probes[] = {
    "SELECT min(seq) FROM block_chunk",        "SELECT max(seq) FROM block_chunk",
    "SELECT min(seq) FROM series_chunk",       "SELECT max(seq) FROM series_chunk",
    "SELECT min(seq) FROM kernel_exec_chunk",  "SELECT max(seq) FROM kernel_exec_chunk",
    "SELECT min(seq) FROM series_level_chunk", "SELECT max(seq) FROM series_level_chunk",
  };
  static const char *kernel_v3_probes[] = {
    "SELECT min(id) FROM kernel_config",
    "SELECT max(id) FROM kernel_config",
    "SELECT count(*) FROM (SELECT id, end_ns, name FROM kernel LIMIT 1)",
  };
  gint64 v;
  gboolean v3 = trace->schema_version >= 3;
  const char **more = v3 ? kernel_v3_probes : kernel_probes;
  guint n_more = v3 ? G_N_ELEMENTS (kernel_v3_probes) : G_N_ELEMENTS (kernel_probes);
  sqlite3_stmt *stmt = vs_trace_statement (trace, shape_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, trace->schema_version);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s is not a well-formed vramscope trace: its %s table is missing, is a view"
                   " or is not keyed as the schema keys it",
                   trace->path, (const char *)sqlite3_column_text (stmt, 0));
      sqlite3_reset (stmt);
      return FALSE;
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (probes); i++)
    if (!vs_trace_query_int (trace, probes[i], &v, error))
      return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (plain_probes); i++)
    {
      /* series_level (the last two) stayed plain in the compacted
       * traces written before it was chunked. */
      gboolean chunked = trace->schema_version >= 5
                         && (i < 6 || !vs_chunk_kept_plain (trace->db, "series_level"));
      const char *probe = chunked ? chunk_probes[i] : plain_probes[i];

      /* Kernels had one table of another shape before version 3. */
      if (!v3 && i >= 4 && i < 6)
        continue;
      if (!vs_trace_query_int (trace, probe, &v, error))
        return FALSE;
    }
  for (guint i = 0; i < n_more; i++)
    if (!vs_trace_query_int (trace, more[i], &v, error))
      return FALSE;
  return TRUE;
}

/* vs_trace_validate()'s reads, inside its read transaction. */
static gboolean validate_version (VsTrace *trace, gboolean *finalized, GError **error);

/* Checks trace->db's application id and schema version, and reads meta
 * 'finalized' into *finalized: in one read transaction, so that a reader
 * finalizing the trace at the same time (which brings an older schema to
 * the current one) is seen wholly before or wholly after. */
gboolean
vs_trace_validate (VsTrace *trace, gboolean *finalized, GError **error)
{
  gboolean in_txn = sqlite3_exec (trace->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
  gboolean ok = validate_version (trace, finalized, error);

  if (in_txn)
    sqlite3_exec (trace->db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
  if (ok && trace->schema_version >= VS_TRACE_SCHEMA_COMPACTED)
    {
      char *msg = NULL;

      /* The chunked tables under their old names (vs-chunk-vtab.h). */
      if (vs_chunk_attach (trace->db, &msg) != SQLITE_OK)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT, "%s: %s", trace->path,
                       msg ? msg : sqlite3_errmsg (trace->db));
          sqlite3_free (msg);
          return FALSE;
        }
    }
  return ok;
}

static gboolean
validate_version (VsTrace *trace, gboolean *finalized, GError **error)
{
  static const char *finalized_sql
      = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'finalized'";
  gint64 app_id, version, fin;

  if (!vs_trace_query_int (trace, "PRAGMA application_id", &app_id, error))
    return FALSE;
  if (app_id != VS_TRACE_APPLICATION_ID)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is an SQLite database of another application, not a "
                   "vramscope trace",
                   trace->path);
      return FALSE;
    }
  if (!vs_trace_query_int (trace, "PRAGMA user_version", &version, error))
    return FALSE;
  trace->schema_version = version;
  if (version > VS_TRACE_SCHEMA_COMPACTED)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NEWER_SCHEMA,
                   "%s was written by a newer vramscope (schema %" G_GINT64_FORMAT
                   ", this build reads up to %d)",
                   trace->path, version, VS_TRACE_SCHEMA_COMPACTED);
      return FALSE;
    }
  if (version < 1)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is not a complete vramscope trace (it has no schema version: the"
                   " program writing it was interrupted)",
                   trace->path);
      return FALSE;
    }
  /* a version this build reads: the reader's queries below rely on it */
  g_assert (trace->schema_version >= 1 && trace->schema_version <= VS_TRACE_SCHEMA_COMPACTED);
  if (!vs_trace_query_int (trace, finalized_sql, &fin, error))
    return FALSE;
  *finalized = fin == 1;
  return TRUE;
}

/* What every way of opening ends with: probes, devices, extent, the
 * pools seen from the device level. */
gboolean
vs_trace_load_tables (VsTrace *trace, GError **error)
{
  return touch_tables (trace, error) && vs_trace_load_devices (trace, error)
         && vs_trace_load_extent (trace, error) && vs_framework_pools_load (trace, error);
}
