/* SPDX-License-Identifier: MIT */
/* make-fixture.c — writes one of the test traces of vs-test-fixtures.h to a
 * file, for the CLI tests: make-fixture basic|unfinalized|full|expandable|
 * random|newer|other PATH ("newer": a trace of schema 99; "other": an
 * SQLite database of another application).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "vs-test-fixtures.h"

/* A trace of a schema newer than this build reads. */
static bool
make_newer (const char *path, char *err, size_t errlen)
{
  sqlite3 *db;
  bool ok;

  if (!vs_fixture_basic (path, true, err, errlen))
    return false;
  if (sqlite3_open (path, &db) != SQLITE_OK)
    return false;
  ok = sqlite3_exec (db, "PRAGMA user_version = 99", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok)
    snprintf (err, errlen, "%s", sqlite3_errmsg (db));
  sqlite3_close (db);
  return ok;
}

/* An SQLite database of some other application. */
static bool
make_other (const char *path, char *err, size_t errlen)
{
  sqlite3 *db;
  bool ok;

  if (sqlite3_open (path, &db) != SQLITE_OK)
    return false;
  ok = sqlite3_exec (db,
                     "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"
                     "INSERT INTO notes (text) VALUES ('hello');",
                     NULL, NULL, NULL)
       == SQLITE_OK;
  if (!ok)
    snprintf (err, errlen, "%s", sqlite3_errmsg (db));
  sqlite3_close (db);
  return ok;
}

int
main (int argc, char **argv)
{
  char err[512] = "";
  bool ok;

  if (argc != 3)
    {
      fprintf (stderr,
               "usage: make-fixture basic|unfinalized|full|expandable|random|newer|other PATH\n");
      return 2;
    }
  if (strcmp (argv[1], "basic") == 0)
    ok = vs_fixture_basic (argv[2], true, err, sizeof err);
  else if (strcmp (argv[1], "unfinalized") == 0)
    ok = vs_fixture_basic (argv[2], false, err, sizeof err);
  else if (strcmp (argv[1], "full") == 0)
    ok = vs_fixture_full (argv[2], err, sizeof err);
  else if (strcmp (argv[1], "expandable") == 0)
    ok = vs_fixture_expandable (argv[2], err, sizeof err);
  else if (strcmp (argv[1], "newer") == 0)
    ok = make_newer (argv[2], err, sizeof err);
  else if (strcmp (argv[1], "other") == 0)
    ok = make_other (argv[2], err, sizeof err);
  else if (strcmp (argv[1], "random") == 0)
    ok = vs_fixture_random (argv[2], 20000, 7, err, sizeof err);
  else
    {
      fprintf (stderr, "make-fixture: unknown fixture %s\n", argv[1]);
      return 2;
    }
  if (!ok)
    {
      fprintf (stderr, "make-fixture: %s\n", err);
      return 1;
    }
  return 0;
}
