/* SPDX-License-Identifier: MIT */
/* vs-test-db.h — reading one number out of a trace, for the tests of the
 * writer and of the merge.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdint.h>

/* The integer the query sql gives on the trace at path (opened read-only);
 * asserts that it gives a row. */
static inline int64_t
vs_test_count (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *s = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (s), ==, SQLITE_ROW);
  int64_t v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  sqlite3_close (db);
  return v;
}
