/* SPDX-License-Identifier: MIT */
/* vs-file-task.c — work on a local file in a worker thread (see
 * vs-file-task.h).
 */
#include "vs-file-task.h"

#define FILE_KEY "vs-file-task-file"

/* See vs-file-task.h. */
void
vs_file_task_run (GTask *task, GFile *file, GTaskThreadFunc func)
{
  g_autofree char *path = g_file_get_path (file);

  g_object_set_data_full (G_OBJECT (task), FILE_KEY, g_object_ref (file), g_object_unref);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                               "%s is not a local file.", uri);
      return;
    }
  g_task_run_in_thread (task, func);
}

/* See vs-file-task.h. */
GFile *
vs_file_task_get_file (gpointer task)
{
  return g_object_get_data (G_OBJECT (task), FILE_KEY);
}
