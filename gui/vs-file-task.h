/* SPDX-License-Identifier: MIT */
/* vs-file-task.h — a GTask that works on a local file in a worker thread
 * (a trace loaded, a snapshot imported): the file kept on the task, a
 * file with no local path refused.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Keeps file on task (vs_file_task_get_file()) and runs func in a worker
 * thread; when file has no local path, returns G_IO_ERROR_NOT_SUPPORTED
 * ("URI is not a local file.") on task instead. */
void vs_file_task_run (GTask *task, GFile *file, GTaskThreadFunc func);

/* The file vs_file_task_run() kept on task (a GTask, or its
 * GAsyncResult); owned by the task. */
GFile *vs_file_task_get_file (gpointer task);

G_END_DECLS
