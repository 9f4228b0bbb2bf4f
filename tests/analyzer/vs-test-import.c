/* SPDX-License-Identifier: MIT */
/* vs-test-import.c — snapshots imported for the analyzer tests (see
 * vs-test-import.h). */
#include "vs-test-import.h"

#include <glib/gstdio.h>

#include "vs-import.h"

char *
vs_test_import_snapshot (const char *subdir, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *file = g_strconcat (name, ".pickle", NULL);
  g_autofree char *db = g_strconcat (name, ".db", NULL);
  g_autofree char *pickle = g_test_build_filename (G_TEST_DIST, "..", "data", subdir, file, NULL);
  g_autofree char *dir = g_dir_make_tmp ("vs-test-import-XXXXXX", &error);
  char *path;

  g_assert_no_error (error);
  path = g_build_filename (dir, db, NULL);
  g_assert_true (vs_import_snapshot (pickle, path, TRUE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return path;
}

void
vs_test_import_remove (char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
}
