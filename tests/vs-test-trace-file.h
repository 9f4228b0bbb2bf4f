/* SPDX-License-Identifier: MIT */
/* vs-test-trace-file.h — a trace file in a temporary folder of its own,
 * for the C tests: made (and its writer created), and removed with the
 * files SQLite keeps beside it.  Header only; include it as
 * "../vs-test-trace-file.h" from tests/AREA/.
 */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

#include "vs-trace-writer.h"

/* Makes a new folder from tmpl (g_dir_make_tmp: its XXXXXX replaced) and
 * sets *dir to it and *path to the file name inside it; the caller frees
 * both (vs_test_trace_file_remove). */
static inline void
vs_test_trace_file (const char *tmpl, const char *name, char **dir, char **path)
{
  *dir = g_dir_make_tmp (tmpl, NULL);
  g_assert_nonnull (*dir);
  *path = g_build_filename (*dir, name, NULL);
}

/* vs_test_trace_file, then a writer creating the trace at *path;
 * asserts that it could. */
static inline VsWriter *
vs_test_trace_file_create (const char *tmpl, const char *name, char **dir, char **path)
{
  char err[256] = "";
  VsWriter *w;

  vs_test_trace_file (tmpl, name, dir, path);
  w = vs_writer_create (*path, err, sizeof err);
  if (w == NULL)
    g_error ("%s: %s", *path, err);
  return w;
}

/* Removes the trace at path with its -wal and -shm files (those that
 * are there), then the folder dir, which must hold nothing else; frees
 * both strings. */
static inline void
vs_test_trace_file_remove (char *dir, char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);

  g_unlink (path);
  g_unlink (wal);
  g_unlink (shm);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

/* Removes the file at path, then its folder, which must hold nothing
 * else. */
static inline void
vs_test_file_remove_with_folder (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}
