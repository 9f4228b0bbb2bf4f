/* SPDX-License-Identifier: MIT */
/* vs-test-source.c — fingerprints of a trace file and its meta
 * 'finalized', read without disturbing the writer (vs-test-source.h).
 */
#include "vs-test-source.h"

#include <sys/stat.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

/* The bytes and times of path and its WAL, to prove nothing but the
 * recorder wrote them. */
char *
vs_test_source_fingerprint (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  const char *paths[] = { path, wal };
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autofree char *data = NULL;
      g_autofree char *sum = NULL;
      gsize len = 0;
      GStatBuf st;

      if (g_stat (paths[i], &st) != 0)
        {
          g_string_append (s, "absent;");
          continue;
        }
      g_assert_true (g_file_get_contents (paths[i], &data, &len, NULL));
      sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *)data, len);
      g_string_append_printf (s, "%s:%" G_GSIZE_FORMAT ":%ld.%ld;", sum, len,
                              (long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    }
  return g_string_free (s, FALSE);
}

/* The source's meta 'finalized', read with a plain read-only connection. */
gint64
vs_test_source_finalized (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 v = -1;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (
      sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = 'finalized'", -1, &stmt, NULL),
      ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return v;
}
