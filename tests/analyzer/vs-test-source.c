/* SPDX-License-Identifier: MIT */
/* vs-test-source.c — fingerprints of a trace file and its meta
 * 'finalized', read without disturbing the writer (vs-test-source.h).
 */
#include "vs-test-source.h"

#include <sqlite3.h>

#include "vs-trace-private.h"

/* The SHA-256 of file's bytes, "absent" when there is no such file. */
static char *
checksum (const char *file)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  if (!g_file_test (file, G_FILE_TEST_EXISTS))
    return g_strdup ("absent");
  g_assert_true (g_file_get_contents (file, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *)data, len);
}

/* The bytes, sizes and times of path and its WAL (the times and sizes as
 * readers stamp them, vs_trace_file_stamp()), to prove nothing but the
 * recorder wrote them. */
char *
vs_test_source_fingerprint (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *stamp = vs_trace_file_stamp (path);
  g_autofree char *sum = checksum (path);
  g_autofree char *wal_sum = checksum (wal);

  return g_strdup_printf ("%s%s;%s;", stamp, sum, wal_sum);
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
