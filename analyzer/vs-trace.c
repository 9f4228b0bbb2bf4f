/* vs-trace.c — opening and validating a trace; devices, allocators, meta,
 * and the seq/time lookups every query builds on.
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
#include "vs-trace-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

G_DEFINE_QUARK (vs-trace-error-quark, vs_trace_error)

static void
device_info_free (gpointer data)
{
  VsDeviceInfo *d = data;

  g_free (d->uuid);
  g_free (d->name);
  g_free (d);
}

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
  return g_strdup ((const char *) sqlite3_column_text (stmt, i));
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

static gboolean
is_corruption (int rc)
{
  rc &= 0xff;
  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_IOERR ||
         rc == SQLITE_FORMAT || rc == SQLITE_RANGE;
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
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                 "Cannot read %s (SQLite: %s)", trace->path,
                 sqlite3_errmsg (trace->db));
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
  if (sqlite3_prepare_v3 (trace->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                          &stmt, NULL) != SQLITE_OK)
    {
      vs_trace_sql_error (trace, error);
      sqlite3_finalize (stmt);
      return NULL;
    }
  g_hash_table_insert (trace->statements, (gpointer) sql, stmt);
  return stmt;
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
  g_clear_pointer (&trace->devices, g_ptr_array_unref);
  g_clear_pointer (&trace->allocators, g_ptr_array_unref);
  g_clear_pointer (&trace->retired, g_ptr_array_unref);
  if (trace->db != NULL)
    sqlite3_close_v2 (trace->db);
  if (trace->source != NULL)
    sqlite3_close_v2 (trace->source);
  g_free (trace->stamp);
  g_free (trace->path);
  g_free (trace);
}

static guint32
read_be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
         ((guint32) p[2] << 8) | (guint32) p[3];
}

/* Checks what the file's first 100 bytes and its size can tell: present,
 * not empty, SQLite, not shorter than the header says. */
static gboolean
check_file (const char *path, GError **error)
{
  GStatBuf st;
  guint8 header[100];
  FILE *f;
  size_t n;

  if (g_stat (path, &st) != 0)
    {
      int saved = errno;

      g_set_error (error, VS_TRACE_ERROR,
                   saved == ENOENT ? VS_TRACE_ERROR_NOT_FOUND : VS_TRACE_ERROR_FAILED,
                   saved == ENOENT ? "%s: no such file" : "Cannot open %s: %s",
                   path, g_strerror (saved));
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

      /* A recording killed before its first checkpoint keeps everything in
       * the write-ahead log; SQLite reads it from there. */
      if (g_stat (wal, &wst) == 0 && wst.st_size > 0)
        return TRUE;
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is empty, not a vramscope trace", path);
      return FALSE;
    }

  f = g_fopen (path, "rb");
  if (f == NULL)
    {
      int saved = errno;

      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                   "Cannot open %s: %s", path, g_strerror (saved));
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
    guint32 page_size = ((guint32) header[16] << 8) | header[17];
    guint32 pages = read_be32 (header + 28);
    gboolean size_valid = read_be32 (header + 24) == read_be32 (header + 92);

    if (page_size == 1)
      page_size = 65536;
    if (size_valid && pages > 0 &&
        (guint64) pages * page_size > (guint64) st.st_size)
      {
        g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                     "%s is truncated: its header says %" G_GUINT64_FORMAT
                     " bytes but the file has %" G_GUINT64_FORMAT,
                     path, (guint64) pages * page_size, (guint64) st.st_size);
        return FALSE;
      }
  }
  return TRUE;
}

/* Runs a one-row, one-column query; *out gets the value (VS_UNKNOWN for
 * NULL or no row). */
static gboolean
query_int (VsTrace *trace, const char *sql, gint64 *out, GError **error)
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

/* Opens trace->db read-only on file (the trace's path, or its private
 * copy when following a recording). */
static gboolean
open_connection (VsTrace *trace, const char *file, GError **error)
{
  int rc = sqlite3_open_v2 (file, &trace->db, SQLITE_OPEN_READONLY, NULL);

  if (rc != SQLITE_OK)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                   "Cannot open %s (SQLite: %s)", trace->path,
                   trace->db ? sqlite3_errmsg (trace->db) : sqlite3_errstr (rc));
      return FALSE;
    }
  sqlite3_extended_result_codes (trace->db, 1);
  return TRUE;
}

static void
close_connection (VsTrace *trace)
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

/* Whether the file and its directory can be written (SQLite needs the
 * directory for its journal). */
static gboolean
is_writable (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  return g_access (path, W_OK) == 0 && g_access (dir, W_OK) == 0;
}

static gboolean
finalize_in_place (VsTrace *trace, GError **error)
{
  sqlite3 *db = NULL;
  char err[512] = "";
  int rc;

  if (!is_writable (trace->path))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_FINALIZED,
                   "%s was not finalized (its recording was interrupted) and "
                   "cannot be written here; copy it to a writable place and "
                   "open it again", trace->path);
      return FALSE;
    }
  rc = sqlite3_open_v2 (trace->path, &db, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, 5000);
      rc = vs_trace_finalize (db, NULL, NULL, err, sizeof err) == 0
             ? SQLITE_OK : SQLITE_ERROR;
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
                   "finalizing it failed: %s", trace->path, err);
      return FALSE;
    }
  return TRUE;
}

/* Reads the first and last entry of every table the analyzer uses, so a
 * missing table or a file cut short fails here rather than mid-report. */
static gboolean
touch_tables (VsTrace *trace, GError **error)
{
  /* One min() or max() per query: SQLite answers those from the ends of
   * the b-tree, but a query with both reads the whole table. */
  static const char *probes[] = {
    "SELECT min(key) FROM meta", "SELECT max(key) FROM meta",
    "SELECT min(id) FROM device", "SELECT max(id) FROM device",
    "SELECT min(id) FROM allocator", "SELECT max(id) FROM allocator",
    "SELECT min(id) FROM frame", "SELECT max(id) FROM frame",
    "SELECT min(id) FROM stack", "SELECT max(id) FROM stack",
    "SELECT min(id) FROM module", "SELECT max(id) FROM module",
    "SELECT min(id) FROM block", "SELECT max(id) FROM block",
    "SELECT min(id) FROM failed_alloc", "SELECT max(id) FROM failed_alloc",
    "SELECT min(id) FROM kernel", "SELECT max(id) FROM kernel",
    "SELECT min(id) FROM nvtx_range", "SELECT max(id) FROM nvtx_range",
    "SELECT min(device_id) FROM series", "SELECT max(device_id) FROM series",
    "SELECT min(device_id) FROM series_level", "SELECT max(device_id) FROM series_level",
    "SELECT min(device_id) FROM summary", "SELECT max(device_id) FROM summary",
  };
  gint64 v;

  for (guint i = 0; i < G_N_ELEMENTS (probes); i++)
    if (!query_int (trace, probes[i], &v, error))
      return FALSE;
  return TRUE;
}

static gboolean
load_devices (VsTrace *trace, GError **error)
{
  static const char *devices_sql =
    "SELECT id, idx, uuid, name, total_bytes FROM device ORDER BY idx, id";
  static const char *allocators_sql =
    "SELECT a.id, a.device_id, a.process_id, a.kind, a.name"
    " FROM allocator a LEFT JOIN device d ON d.id = a.device_id"
    " ORDER BY d.idx, a.device_id, a.name, a.id";
  sqlite3_stmt *stmt;
  int rc;

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
static gboolean
load_extent (VsTrace *trace, GError **error)
{
  static const char *start_sql =
    "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'";
  static const char *start_fallback_sql =
    "SELECT min(t) FROM ("
    " SELECT min(ts) AS t FROM mem_event UNION ALL"
    " SELECT min(ts) FROM alloc_event UNION ALL"
    " SELECT min(ts) FROM failed_alloc UNION ALL"
    " SELECT min(start_ns) FROM kernel UNION ALL"
    " SELECT min(start_ns) FROM nvtx_range)";
  static const char *series_ends_sql =
    "SELECT s.device_id, s.allocator_id,"
    " (SELECT seq FROM series x WHERE x.device_id = s.device_id"
    "   AND x.allocator_id = s.allocator_id ORDER BY ts DESC, seq DESC LIMIT 1),"
    " (SELECT ts FROM series x WHERE x.device_id = s.device_id"
    "   AND x.allocator_id = s.allocator_id ORDER BY ts DESC, seq DESC LIMIT 1)"
    " FROM summary s";
  static const char *ranges_end_sql = "SELECT max(end_ns) FROM nvtx_range";
  static const char *end_meta_sql =
    "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns'";
  static const char *end_sql =
    "SELECT max(t) FROM ("
    " SELECT max(ts) AS t FROM failed_alloc UNION ALL"
    " SELECT max(end_ns) FROM kernel UNION ALL"
    " SELECT max(end_ns) FROM nvtx_range UNION ALL"
    " SELECT max(ts) FROM pool_event)";
  sqlite3_stmt *stmt;
  gint64 v, end = VS_UNKNOWN;
  int rc;

  if (!query_int (trace, start_sql, &v, error))
    return FALSE;
  if (v == VS_UNKNOWN && !query_int (trace, start_fallback_sql, &v, error))
    return FALSE;
  trace->start_abs_ns = v == VS_UNKNOWN ? 0 : v;

  stmt = vs_trace_statement (trace, series_ends_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 seq = vs_column_int (stmt, 2), ts = vs_column_int (stmt, 3);

      if (seq != VS_UNKNOWN && seq > trace->last_seq)
        trace->last_seq = seq;
      if (ts != VS_UNKNOWN && (end == VS_UNKNOWN || ts > end))
        end = ts;
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);

  /* The finalizer records the end (series, kernels, failures); ranges are
   * added here.  Without it, every table is read. */
  if (!query_int (trace, end_meta_sql, &v, error))
    return FALSE;
  if (v != VS_UNKNOWN && (end == VS_UNKNOWN || v > end))
    end = v;
  if (!query_int (trace, v != VS_UNKNOWN ? ranges_end_sql : end_sql, &v, error))
    return FALSE;
  if (v != VS_UNKNOWN && (end == VS_UNKNOWN || v > end))
    end = v;
  trace->duration_ns = end == VS_UNKNOWN ? 0 : MAX (0, end - trace->start_abs_ns);
  return TRUE;
}

static gboolean
validate (VsTrace *trace, gboolean *finalized, GError **error)
{
  static const char *finalized_sql =
    "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'finalized'";
  gint64 app_id, version, fin;

  if (!query_int (trace, "PRAGMA application_id", &app_id, error))
    {
      g_clear_error (error);
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is not a vramscope trace (not a readable SQLite database)",
                   trace->path);
      return FALSE;
    }
  if (app_id != VS_TRACE_APPLICATION_ID)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s is an SQLite database of another application, not a "
                   "vramscope trace", trace->path);
      return FALSE;
    }
  if (!query_int (trace, "PRAGMA user_version", &version, error))
    return FALSE;
  if (version > VS_TRACE_SCHEMA_VERSION)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NEWER_SCHEMA,
                   "%s was written by a newer vramscope (schema %" G_GINT64_FORMAT
                   ", this build reads up to %d)", trace->path, version,
                   VS_TRACE_SCHEMA_VERSION);
      return FALSE;
    }
  if (version < 1)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_A_TRACE,
                   "%s has no schema version, not a complete vramscope trace",
                   trace->path);
      return FALSE;
    }
  if (!query_int (trace, finalized_sql, &fin, error))
    return FALSE;
  *finalized = fin == 1;
  return TRUE;
}

/* Size and modification time of path and its WAL: what changes when a
 * writer commits. */
static char *
file_stamp (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  const char *paths[] = { path, wal };
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      GStatBuf st;

      if (g_stat (paths[i], &st) == 0)
        g_string_append_printf (s, "%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
                                ".%" G_GINT64_FORMAT ";", (gint64) st.st_size,
                                (gint64) st.st_mtim.tv_sec,
                                (gint64) st.st_mtim.tv_nsec);
      else
        g_string_append (s, "-;");
    }
  return g_string_free (s, FALSE);
}

/* Whether another process holds a lock on file over [start, start + len):
 * F_GETLK reports locks of other processes only. */
static gboolean
locked_by_other (const char *file, off_t start, off_t len)
{
  struct flock fl = { 0 };
  int fd = g_open (file, O_RDONLY, 0);
  gboolean locked;

  if (fd < 0)
    return FALSE;
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  locked = fcntl (fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close (fd);
  return locked;
}

/* Whether another process has the database at path open: SQLite keeps a
 * shared lock on the file's lock bytes (from offset 0x40000000) while a
 * connection is open in WAL mode, and on the WAL index's "dead man switch"
 * byte (offset 128 of the -shm file).  A recording killed mid-way holds
 * neither, so it is finalized in place as before. */
static gboolean
is_being_written (const char *path)
{
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);

  return locked_by_other (path, 0x40000000, 512)
         || locked_by_other (shm, 128, 1);
}

static VsTrace *
trace_new (const char *path)
{
  VsTrace *trace = g_new0 (VsTrace, 1);

  trace->path = g_strdup (path);
  trace->statements = g_hash_table_new (NULL, NULL);
  trace->devices = g_ptr_array_new_with_free_func (device_info_free);
  trace->allocators = g_ptr_array_new_with_free_func (allocator_info_free);
  trace->stacks = NULL;
  trace->level_shifts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                               (GDestroyNotify) g_array_unref);
  trace->retired = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  trace->kernel_max_ns = -1;
  return trace;
}

/* What every way of opening ends with: probes, devices, extent. */
static gboolean
load_tables (VsTrace *trace, GError **error)
{
  return touch_tables (trace, error) && load_devices (trace, error) &&
         load_extent (trace, error);
}

/* PRAGMA data_version on the source connection: changes whenever another
 * connection commits to the file. */
static gboolean
source_version (VsTrace *trace, gint64 *out, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (trace->source, "PRAGMA data_version", -1,
                               &stmt, NULL);

  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  if (rc != SQLITE_ROW)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                   "Cannot read %s (SQLite: %s)", trace->path,
                   sqlite3_errmsg (trace->source));
      return FALSE;
    }
  return TRUE;
}

/* Copies what is committed in the source into a new private temporary
 * database, finalizes the copy, and opens trace->db read-only on it (the
 * file is unlinked at once: the connection keeps it while needed, and
 * nothing is left behind by a crash).  The source is only read, through a
 * read-only connection: in WAL mode that never blocks the writer, and the
 * copy is one consistent snapshot of its last commit.  When the copy
 * cannot be made the previous trace->db is kept. */
static gboolean
copy_committed (VsTrace *trace, GError **error)
{
  g_autofree char *tmp = NULL;
  sqlite3 *dst = NULL;
  sqlite3_backup *backup;
  char err[512] = "";
  gint64 version;
  int fd, rc, tries = 0;

  if (trace->source == NULL)
    {
      rc = sqlite3_open_v2 (trace->path, &trace->source, SQLITE_OPEN_READONLY,
                            NULL);
      if (rc != SQLITE_OK)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                       "Cannot open %s (SQLite: %s)", trace->path,
                       trace->source ? sqlite3_errmsg (trace->source)
                                     : sqlite3_errstr (rc));
          g_clear_pointer (&trace->source, sqlite3_close_v2);
          return FALSE;
        }
      sqlite3_busy_timeout (trace->source, 5000);
      sqlite3_extended_result_codes (trace->source, 1);
    }
  if (!source_version (trace, &version, error))
    return FALSE;

  fd = g_file_open_tmp ("vramscope-live-XXXXXX.db", &tmp, error);
  if (fd < 0)
    return FALSE;
  close (fd);
  rc = sqlite3_open_v2 (tmp, &dst, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK)
    {
      backup = sqlite3_backup_init (dst, "main", trace->source, "main");
      if (backup == NULL)
        rc = sqlite3_errcode (dst);
      else
        {
          /* A writer in the middle of a checkpoint may hold the source
           * briefly: wait for it rather than fail. */
          while ((rc = sqlite3_backup_step (backup, -1)) == SQLITE_BUSY
                 || rc == SQLITE_LOCKED)
            {
              if (++tries > 500)
                break;
              sqlite3_sleep (10);
            }
          sqlite3_backup_finish (backup);
          if (rc == SQLITE_DONE)
            rc = SQLITE_OK;
        }
      if (rc != SQLITE_OK)
        g_strlcpy (err, sqlite3_errmsg (trace->source), sizeof err);
    }
  else
    g_strlcpy (err, dst ? sqlite3_errmsg (dst) : sqlite3_errstr (rc), sizeof err);
  /* The copy is private and thrown away on failure: no journal, no syncs.
   * Leaving WAL first keeps the read-only connection from needing one. */
  if (rc == SQLITE_OK
      && sqlite3_exec (dst, "PRAGMA journal_mode=DELETE; PRAGMA journal_mode=OFF;"
                            " PRAGMA synchronous=OFF", NULL, NULL, NULL) != SQLITE_OK)
    {
      rc = SQLITE_ERROR;
      g_strlcpy (err, sqlite3_errmsg (dst), sizeof err);
    }
  if (rc == SQLITE_OK && vs_trace_finalize (dst, NULL, NULL, err, sizeof err) != 0)
    {
      rc = SQLITE_ERROR;
      if (err[0] == '\0')
        g_strlcpy (err, sqlite3_errmsg (dst), sizeof err);
    }
  sqlite3_close_v2 (dst);
  if (rc != SQLITE_OK)
    {
      g_unlink (tmp);
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                   "Cannot read %s while it is being recorded: %s",
                   trace->path, err);
      return FALSE;
    }

  /* Only now is the previous copy let go, so a failed refresh leaves the
   * trace as it was. */
  close_connection (trace);
  if (open_connection (trace, tmp, error))
    {
      gboolean finalized = FALSE;

      if (!validate (trace, &finalized, error))
        {
          close_connection (trace);
          rc = SQLITE_ERROR;
        }
    }
  else
    rc = SQLITE_ERROR;
  g_unlink (tmp);
  if (rc != SQLITE_OK)
    return FALSE;
  trace->source_version = version;
  return TRUE;
}

/* Opens trace (fresh from trace_new) as a live copy. */
static VsTrace *
open_live (VsTrace *trace_in, GError **error)
{
  g_autoptr (VsTrace) trace = trace_in;

  trace->live = TRUE;
  trace->stamp = file_stamp (trace->path);
  if (!copy_committed (trace, error) || !load_tables (trace, error))
    return NULL;
  return g_steal_pointer (&trace);
}

VsTrace *
vs_trace_open (const char *path, GError **error)
{
  g_autoptr (VsTrace) trace = NULL;
  gboolean finalized = FALSE;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_file (path, error))
    return NULL;

  trace = trace_new (path);
  trace->stamp = file_stamp (path);
  if (!open_connection (trace, path, error) || !validate (trace, &finalized, error))
    return NULL;
  if (!finalized)
    {
      close_connection (trace);
      /* Finalizing a file its recorder is still writing would race with
       * it: read a private copy of what is committed instead. */
      if (is_being_written (path))
        return open_live (g_steal_pointer (&trace), error);
      if (!finalize_in_place (trace, error) || !open_connection (trace, path, error) ||
          !validate (trace, &finalized, error))
        return NULL;
      if (!finalized)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                       "%s could not be finalized", path);
          return NULL;
        }
      g_free (trace->stamp);
      trace->stamp = file_stamp (path);
    }
  if (!load_tables (trace, error))
    return NULL;
  return g_steal_pointer (&trace);
}

VsTrace *
vs_trace_open_live (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_file (path, error))
    return NULL;
  return open_live (trace_new (path), error);
}

gboolean
vs_trace_is_live (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  return trace->live && !trace->live_ended;
}

/* Moves the caches whose contents callers may still point into to the
 * retired list and starts new ones. */
static void
retire_caches (VsTrace *trace)
{
  g_ptr_array_add (trace->retired, trace->devices);
  g_ptr_array_add (trace->retired, trace->allocators);
  trace->devices = g_ptr_array_new_with_free_func (device_info_free);
  trace->allocators = g_ptr_array_new_with_free_func (allocator_info_free);
  if (trace->stacks != NULL)
    {
      /* A hash table is kept alive by a one-element array that unrefs it. */
      GPtrArray *holder = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);

      g_ptr_array_add (holder, g_steal_pointer (&trace->stacks));
      g_ptr_array_add (trace->retired, holder);
    }
  g_hash_table_remove_all (trace->level_shifts);
  trace->kernel_max_ns = -1;
  trace->last_seq = 0;
  trace->duration_ns = 0;
}

gboolean
vs_trace_refresh (VsTrace *trace, gboolean *changed, GError **error)
{
  g_autofree char *stamp = NULL;
  gboolean finalized = FALSE;

  g_return_val_if_fail (trace != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (changed != NULL)
    *changed = FALSE;
  if (trace->live)
    {
      gint64 version;

      if (trace->live_ended)
        return TRUE;
      if (!g_file_test (trace->path, G_FILE_TEST_EXISTS))
        {
          /* The recorder merged this file into the final trace and
           * removed it: what was read last is all there is. */
          trace->live_ended = TRUE;
          return TRUE;
        }
      if (!source_version (trace, &version, error))
        return FALSE;
      if (version == trace->source_version)
        return TRUE;
      if (!copy_committed (trace, error))
        return FALSE;
    }
  else
    {
      stamp = file_stamp (trace->path);
      if (g_strcmp0 (stamp, trace->stamp) == 0)
        return TRUE;
      if (!check_file (trace->path, error))
        return FALSE;
      close_connection (trace);
      if (!open_connection (trace, trace->path, error) ||
          !validate (trace, &finalized, error))
        return FALSE;
      if (!finalized)
        {
          close_connection (trace);
          if (is_being_written (trace->path))
            {
              trace->live = TRUE;
              if (!copy_committed (trace, error))
                return FALSE;
            }
          else if (!finalize_in_place (trace, error) ||
                   !open_connection (trace, trace->path, error))
            return FALSE;
        }
      g_free (trace->stamp);
      trace->stamp = file_stamp (trace->path);
    }
  retire_caches (trace);
  if (!load_tables (trace, error))
    return FALSE;
  if (changed != NULL)
    *changed = TRUE;
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

GArray *
vs_trace_level_shifts (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                       GError **error)
{
  static const char *sql =
    "SELECT shift FROM series_level WHERE device_id = ?1 AND allocator_id = ?2"
    " AND shift > ?3 ORDER BY shift LIMIT 1";
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                          device_id, allocator_id);
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
      sqlite3_bind_int64 (stmt, 1, device_id);
      sqlite3_bind_int64 (stmt, 2, allocator_id);
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
      last = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (shifts, last);
      if (last >= 62)
        break;
    }
  g_hash_table_insert (trace->level_shifts, g_steal_pointer (&key), shifts);
  return shifts;
}

gint64
vs_trace_seq_at_time (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                      gint64 time_ns, GError **error)
{
  /* Served by the index series_ts (device_id, allocator_id, ts); the seq
   * breaks ties between changes at the same ts. */
  static const char *sql =
    "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
    " AND ts <= ?3 ORDER BY ts DESC, seq DESC LIMIT 1";
  sqlite3_stmt *stmt;
  gint64 seq = 0;
  int rc;

  g_return_val_if_fail (trace != NULL, -1);
  stmt = vs_trace_statement (trace, sql, error);
  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, vs_trace_abs (trace, time_ns));
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    seq = sqlite3_column_int64 (stmt, 0);
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
first_row_from (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                gint64 abs_ts, gboolean *found, gint64 *seq, gint64 *ts,
                GError **error)
{
  static const char *sql =
    "SELECT seq, ts FROM series WHERE device_id = ?1 AND allocator_id = ?2"
    " AND ts >= ?3 ORDER BY ts, seq LIMIT 1";
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, abs_ts);
  rc = sqlite3_step (stmt);
  *found = rc == SQLITE_ROW;
  if (*found)
    {
      *seq = sqlite3_column_int64 (stmt, 0);
      *ts = sqlite3_column_int64 (stmt, 1);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  return TRUE;
}

gboolean
vs_trace_series_row_at_seq (VsTrace *trace, gint64 device_id,
                            gint64 allocator_id, gint64 seq,
                            gint64 *row_seq, gint64 *row_ts, GError **error)
{
  static const char *at_ts_sql =
    "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
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
      gint64 mid = lo + (gint64) (((guint64) hi - (guint64) lo + 1) / 2);

      if (!first_row_from (trace, device_id, allocator_id, mid, &found, &s, &t, error))
        return FALSE;
      if (found && s <= seq)
        lo = t; /* t >= mid: jump to the row's own time */
      else
        hi = mid - 1;
    }
  stmt = vs_trace_statement (trace, at_ts_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, lo);
  sqlite3_bind_int64 (stmt, 4, seq);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      *row_seq = sqlite3_column_int64 (stmt, 0);
      *row_ts = lo;
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  return TRUE;
}

gint64
vs_trace_time_of_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                      gint64 seq, GError **error)
{
  gint64 row_seq, row_ts;

  g_return_val_if_fail (trace != NULL, VS_UNKNOWN);
  if (!vs_trace_series_row_at_seq (trace, device_id, allocator_id, seq,
                                   &row_seq, &row_ts, error))
    return VS_UNKNOWN;
  return vs_trace_rel (trace, row_ts);
}

gboolean
vs_trace_can_use_bins (VsTrace *trace, gint64 seq)
{
  /* Interval bins (block.span_bin) cover positions below 2^48. */
  return seq >= 0 && seq < (G_GINT64_CONSTANT (1) << 48);
}
