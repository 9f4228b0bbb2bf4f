/* vs-snapshot-open.c — a PyTorch memory snapshot opened in the viewer:
 * imported in a worker thread into a cached trace (see
 * vs-snapshot-open.h).
 *
 * The cache is a trace written by the importer, whose meta records the
 * snapshot's size and modification time (import_file_size,
 * import_file_mtime_us) and the version that wrote it (tool_version): it is
 * reused only while all three still hold.  A new cache is written under a
 * temporary name and renamed into place, so a cancelled or failed import
 * never leaves a trace that looks complete.
 */
#include "vs-snapshot-open.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-config.h"
#include "vs-import.h"
#include "vs-pickle.h"

/* See vs-snapshot-open.h. */
gboolean
vs_snapshot_open_is_snapshot (GFile *file)
{
  g_autofree char *path = g_file_get_path (file);
  guint8 head[2];
  int fd;

  if (path == NULL)
    return FALSE;
  fd = g_open (path, O_RDONLY, 0);
  if (fd >= 0)
    {
      ssize_t n = read (fd, head, sizeof head);
      close (fd);
      if (n == 2)
        return head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
    }
  return g_str_has_suffix (path, ".pickle") || g_str_has_suffix (path, ".pkl");
}

/* See vs-snapshot-open.h. */
char *
vs_snapshot_open_cache_beside (const char *path)
{
  return g_strconcat (path, ".vramscope.db", NULL);
}

/* See vs-snapshot-open.h. */
char *
vs_snapshot_open_cache_in_user_dir (const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, abs, -1);
  g_autofree char *base = g_path_get_basename (abs);
  g_autofree char *name = g_strdup_printf ("%.16s-%s.vramscope.db", sum, base);
  return g_build_filename (g_get_user_cache_dir (), "vramscope", "snapshots", name, NULL);
}

/* ---------------------------------------------------------- progress -- */

typedef struct
{
  VsDocumentProgressFunc func;
  gpointer data;
  GMainContext *context;
  GCancellable *cancellable;
} Progress;

typedef struct
{
  VsDocumentProgressFunc func;
  gpointer data;
  char *what;
  double fraction;
} ProgressCall;

static gboolean
progress_dispatch (gpointer p)
{
  ProgressCall *c = p;
  c->func (c->what, c->fraction, c->data);
  return G_SOURCE_REMOVE;
}

static void
progress_call_free (gpointer p)
{
  ProgressCall *c = p;
  g_free (c->what);
  g_free (c);
}

/* The importer's progress (worker thread), shown on the caller's context;
 * FALSE cancels the import when the caller cancelled. */
static gboolean
on_import_progress (const char *stage, double fraction, gpointer data)
{
  Progress *pr = data;
  if (pr->func != NULL)
    {
      ProgressCall *c = g_new0 (ProgressCall, 1);
      c->func = pr->func;
      c->data = pr->data;
      /* TRANSLATORS: %s is the importer's stage: reading, importing or
       * finalizing. */
      c->what = g_strdup_printf (_ ("Importing the snapshot: %s"), stage);
      c->fraction = fraction;
      g_main_context_invoke_full (pr->context, G_PRIORITY_DEFAULT, progress_dispatch, c,
                                  progress_call_free);
    }
  return !g_cancellable_is_cancelled (pr->cancellable);
}

/* ------------------------------------------------------------- cache -- */

/* TRUE when the trace at cache was imported by this version from the
 * snapshot as it is now (sb). */
static gboolean
cache_is_current (const char *cache, const struct stat *sb)
{
  if (!g_file_test (cache, G_FILE_TEST_IS_REGULAR))
    return FALSE;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (cache, &error);
  if (trace == NULL)
    return FALSE;
  g_autofree char *size = vs_trace_dup_meta (trace, "import_file_size");
  g_autofree char *mtime = vs_trace_dup_meta (trace, "import_file_mtime_us");
  g_autofree char *version = vs_trace_dup_meta (trace, "tool_version");
  gint64 mtime_us = (gint64)sb->st_mtim.tv_sec * G_USEC_PER_SEC + sb->st_mtim.tv_nsec / 1000;
  return size != NULL && mtime != NULL && g_ascii_strtoll (size, NULL, 10) == (gint64)sb->st_size
         && g_ascii_strtoll (mtime, NULL, 10) == mtime_us && g_strcmp0 (version, VS_VERSION) == 0;
}

/* Imports path into cache through a temporary file.  FALSE with error set
 * on failure; *cannot_write set when the trace could not be created there
 * (a read-only folder), as opposed to a bad snapshot. */
static gboolean
import_to (const char *path, const char *cache, Progress *pr, gboolean *cannot_write,
           GError **error)
{
  g_autofree char *tmp = g_strdup_printf ("%s.tmp-%d", cache, (int)getpid ());
  g_autoptr (GError) local = NULL;
  gboolean ok = vs_import_snapshot (path, tmp, TRUE, on_import_progress, pr, NULL, &local);

  *cannot_write = FALSE;
  if (ok && g_rename (tmp, cache) != 0)
    {
      ok = FALSE;
      g_set_error (&local, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE, "cannot write %s: %s", cache,
                   g_strerror (errno));
    }
  if (ok)
    return TRUE;
  g_unlink (tmp);
  if (g_cancellable_is_cancelled (pr->cancellable)
      || g_error_matches (local, VS_IMPORT_ERROR, VS_IMPORT_ERROR_CANCELLED)
      || g_error_matches (local, VS_PICKLE_ERROR, VS_PICKLE_ERROR_CANCELLED))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      return FALSE;
    }
  *cannot_write = g_error_matches (local, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE);
  /* As `vramscope import` says it, after its name. */
  g_set_error (error, local->domain, local->code, "%s: %s", path, local->message);
  return FALSE;
}

/* ------------------------------------------------------------ thread -- */

static void
progress_free (gpointer p)
{
  Progress *pr = p;
  g_main_context_unref (pr->context);
  g_clear_object (&pr->cancellable);
  g_free (pr);
}

static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Progress *pr = task_data;
  GFile *file = g_object_get_data (G_OBJECT (task), "file");
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *beside = vs_snapshot_open_cache_beside (path);
  g_autofree char *user = vs_snapshot_open_cache_in_user_dir (path);
  g_autofree char *dir = g_path_get_dirname (path);
  GError *error = NULL;
  gboolean cannot_write = TRUE;
  struct stat sb;

  if (g_stat (path, &sb) != 0 || !S_ISREG (sb.st_mode))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s: %s", path,
                               g_file_test (path, G_FILE_TEST_EXISTS) ? "not a regular file"
                                                                      : "no such file");
      return;
    }
  /* A cache that is still current, beside the snapshot or in the user's
   * cache folder. */
  if (cache_is_current (beside, &sb))
    {
      g_task_return_pointer (task, g_file_new_for_path (beside), g_object_unref);
      return;
    }
  if (cache_is_current (user, &sb))
    {
      g_task_return_pointer (task, g_file_new_for_path (user), g_object_unref);
      return;
    }
  /* A new one: beside when that folder can be written, else in the user's
   * cache folder. */
  if (access (dir, W_OK) == 0 && import_to (path, beside, pr, &cannot_write, &error))
    {
      g_task_return_pointer (task, g_file_new_for_path (beside), g_object_unref);
      return;
    }
  if (!cannot_write)
    {
      g_task_return_error (task, error);
      return;
    }
  g_clear_error (&error);
  g_autofree char *user_dir = g_path_get_dirname (user);
  if (g_mkdir_with_parents (user_dir, 0700) != 0)
    {
      g_task_return_new_error (task, G_IO_ERROR, g_io_error_from_errno (errno),
                               "%s: cannot write its trace in %s or %s: %s", path, dir, user_dir,
                               g_strerror (errno));
      return;
    }
  if (import_to (path, user, pr, &cannot_write, &error))
    g_task_return_pointer (task, g_file_new_for_path (user), g_object_unref);
  else
    g_task_return_error (task, error);
}

/* See vs-snapshot-open.h. */
void
vs_snapshot_open_async (GFile *file, GCancellable *cancellable, VsDocumentProgressFunc progress,
                        gpointer progress_data, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (G_IS_FILE (file));
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  Progress *pr = g_new0 (Progress, 1);
  g_autofree char *path = g_file_get_path (file);

  pr->func = progress;
  pr->data = progress_data;
  pr->context = g_main_context_ref_thread_default ();
  pr->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  g_task_set_task_data (task, pr, progress_free);
  g_object_set_data_full (G_OBJECT (task), "file", g_object_ref (file), g_object_unref);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                               "%s is not a local file.", uri);
      return;
    }
  g_task_run_in_thread (task, open_thread);
}

/* See vs-snapshot-open.h. */
GFile *
vs_snapshot_open_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
