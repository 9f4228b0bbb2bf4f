/* SPDX-License-Identifier: MIT */
/* vs-snapshot-open.c — a PyTorch memory snapshot opened in the viewer:
 * imported in a worker thread into the user's cache, keyed by its content
 * (import/vs-snapshot-cache.h, as every command that reads a trace does;
 * see vs-snapshot-open.h).
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
#include "vs-file-task.h"
#include "vs-import.h"
#include "vs-pickle.h"
#include "vs-progress.h"
#include "vs-snapshot-cache.h"

/* See vs-snapshot-open.h. */
gboolean
vs_snapshot_open_is_snapshot (GFile *file)
{
  g_autofree char *path = g_file_get_path (file);

  return path != NULL && vs_snapshot_cache_is_snapshot (path);
}

/* ---------------------------------------------------------- progress -- */

typedef struct
{
  VsProgress progress;
  GCancellable *cancellable;
} Progress;

/* The importer's progress (worker thread), shown on the caller's context;
 * FALSE cancels the import when the caller cancelled. */
static gboolean
on_import_progress (const char *stage, double fraction, gpointer data)
{
  Progress *pr = data;

  if (pr->progress.func != NULL)
    {
      /* TRANSLATORS: %s is the importer's stage: reading, importing or
       * finalizing. */
      g_autofree char *what = g_strdup_printf (_("Importing the snapshot: %s"), stage);
      vs_progress_report (&pr->progress, what, fraction);
    }
  return !g_cancellable_is_cancelled (pr->cancellable);
}

/* ------------------------------------------------------------ thread -- */

static void
progress_free (gpointer p)
{
  Progress *pr = p;
  vs_progress_clear (&pr->progress);
  g_clear_object (&pr->cancellable);
  g_free (pr);
}

static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Progress *pr = task_data;
  GFile *file = vs_file_task_get_file (task);
  g_autofree char *path = g_file_get_path (file);
  g_autoptr (GError) error = NULL;
  g_autofree char *trace = NULL;

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s: %s", path,
                               g_file_test (path, G_FILE_TEST_EXISTS) ? "not a regular file"
                                                                      : "no such file");
      return;
    }
  trace = vs_snapshot_cache_import (path, on_import_progress, pr, &error);
  if (trace != NULL)
    {
      g_task_return_pointer (task, g_file_new_for_path (trace), g_object_unref);
      return;
    }
  if (g_cancellable_is_cancelled (pr->cancellable)
      || g_error_matches (error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_CANCELLED)
      || g_error_matches (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_CANCELLED))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      return;
    }
  g_task_return_error (task, g_steal_pointer (&error));
}

/* See vs-snapshot-open.h. */
void
vs_snapshot_open_async (GFile *file, GCancellable *cancellable, VsDocumentProgressFunc progress,
                        gpointer progress_data, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (G_IS_FILE (file));
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  Progress *pr = g_new0 (Progress, 1);

  vs_progress_init (&pr->progress, progress, progress_data);
  pr->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  g_task_set_task_data (task, pr, progress_free);
  vs_file_task_run (task, file, open_thread);
}

/* See vs-snapshot-open.h. */
GFile *
vs_snapshot_open_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
