/* SPDX-License-Identifier: MIT */
/* vs-trace-recording.c — following a trace that is being written, and reading a
 * trace again when its file changed (vs_trace_open_recording, vs_trace_refresh).
 *
 * A recording in progress is never written to: what its recorder has
 * committed is copied through a read-only connection into a private
 * temporary database, which is finalized and read.  Changes are noticed
 * through PRAGMA data_version on that read-only connection, or, for a
 * trace opened normally, through the size and modification time of the
 * file and its WAL; whether another process still has the file open is
 * told by the locks SQLite holds on it.
 */
#include "vs-trace-finalize.h"
#include "vs-trace-private.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* Size and modification time of path and its WAL: what changes when a
 * writer commits. */
char *
vs_trace_file_stamp (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  const char *paths[] = { path, wal };
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      GStatBuf st;

      if (g_stat (paths[i], &st) == 0)
        g_string_append_printf (
            s, "%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT ";",
            (gint64)st.st_size, (gint64)st.st_mtim.tv_sec, (gint64)st.st_mtim.tv_nsec);
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
gboolean
vs_trace_is_being_written (const char *path)
{
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);

  return locked_by_other (path, 0x40000000, 512) || locked_by_other (shm, 128, 1);
}

/* PRAGMA data_version on the source connection: changes whenever another
 * connection commits to the file. */
static gboolean
source_version (VsTrace *trace, gint64 *out, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (trace->source, "PRAGMA data_version", -1, &stmt, NULL);

  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  if (rc != SQLITE_ROW)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot read %s (SQLite: %s)",
                   trace->path, sqlite3_errmsg (trace->source));
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
      rc = vs_trace_sqlite_open (trace->path, &trace->source, SQLITE_OPEN_READONLY);
      if (rc != SQLITE_OK)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED, "Cannot open %s (SQLite: %s)",
                       trace->path,
                       trace->source ? sqlite3_errmsg (trace->source) : sqlite3_errstr (rc));
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
  rc = vs_trace_sqlite_open (tmp, &dst, SQLITE_OPEN_READWRITE);
  if (rc == SQLITE_OK)
    {
      backup = sqlite3_backup_init (dst, "main", trace->source, "main");
      if (backup == NULL)
        rc = sqlite3_errcode (dst);
      else
        {
          /* A writer in the middle of a checkpoint may hold the source
           * briefly: wait for it rather than fail. */
          while ((rc = sqlite3_backup_step (backup, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED)
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
      && sqlite3_exec (dst,
                       "PRAGMA journal_mode=DELETE; PRAGMA journal_mode=OFF;"
                       " PRAGMA synchronous=OFF",
                       NULL, NULL, NULL)
             != SQLITE_OK)
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
                   "Cannot read %s while it is being recorded: %s", trace->path, err);
      return FALSE;
    }

  /* Only now is the previous copy let go, so a failed refresh leaves the
   * trace as it was. */
  vs_trace_close_connection (trace);
  if (vs_trace_open_connection (trace, tmp, error))
    {
      gboolean finalized = FALSE;

      if (!vs_trace_validate (trace, &finalized, error))
        {
          vs_trace_close_connection (trace);
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

/* Opens trace (fresh from vs_trace_new) as a live copy. */
VsTrace *
vs_trace_open_recording_copy (VsTrace *trace_in, GError **error)
{
  g_autoptr (VsTrace) trace = trace_in;

  trace->live = TRUE;
  g_free (trace->stamp);
  trace->stamp = vs_trace_file_stamp (trace->path);
  if (!copy_committed (trace, error) || !vs_trace_load_tables (trace, error))
    return NULL;
  return g_steal_pointer (&trace);
}

VsTrace *
vs_trace_open_recording (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!vs_trace_check_file (path, error))
    return NULL;
  return vs_trace_open_recording_copy (vs_trace_new (path), error);
}

gboolean
vs_trace_is_recording (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  return trace->live && !trace->live_ended;
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
      stamp = vs_trace_file_stamp (trace->path);
      if (g_strcmp0 (stamp, trace->stamp) == 0)
        return TRUE;
      if (!vs_trace_check_file (trace->path, error))
        return FALSE;
      vs_trace_close_connection (trace);
      if (!vs_trace_open_connection (trace, trace->path, error)
          || !vs_trace_validate (trace, &finalized, error))
        return FALSE;
      if (!finalized)
        {
          vs_trace_close_connection (trace);
          if (vs_trace_is_being_written (trace->path))
            {
              trace->live = TRUE;
              if (!copy_committed (trace, error))
                return FALSE;
            }
          else if (!vs_trace_finalize_in_place (trace, error)
                   || !vs_trace_open_connection (trace, trace->path, error))
            return FALSE;
        }
      g_free (trace->stamp);
      trace->stamp = vs_trace_file_stamp (trace->path);
    }
  vs_trace_retire_caches (trace);
  if (!vs_trace_load_tables (trace, error))
    return FALSE;
  if (changed != NULL)
    *changed = TRUE;
  return TRUE;
}
