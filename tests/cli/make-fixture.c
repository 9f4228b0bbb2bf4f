/* SPDX-License-Identifier: MIT */
/* make-fixture.c — writes one of the test traces of vs-test-fixtures.h to a
 * file, for the CLI tests: make-fixture basic|unfinalized|full|expandable|
 * random|newer|other PATH ("newer": a trace of schema 99; "other": an
 * SQLite database of another application), or one of the framework
 * pools of vs-test-pool-fixtures.h (see POOL_FIXTURES).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "vs-test-fixtures.h"
#include "vs-test-pool-fixtures.h"

#define MiB INT64_C (1048576)

/* The pool loops of vs_fixture_pool_steps() the CLI tests read: 10 steps
 * each; -level: with the allocator level; kept: its blocks kept. */
static const struct
{
  const char *name, *framework;
  bool backed;
  int64_t grow;
  bool keep;
} POOL_FIXTURES[] = {
  { "pool-grow-cupy", "cupy", false, 32 * MiB, false },
  { "pool-grow-xla", "xla", false, 48 * MiB, false },
  { "pool-flat-xla", "xla", false, 0, false },
  { "pool-grow-cupy-level", "cupy", true, 32 * MiB, false },
  { "pool-kept-cupy-level", "cupy", true, 32 * MiB, true },
};

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

/* Writes the pool loop named name to path (*ok: whether it was written);
 * false when no pool loop has that name. */
static bool
make_pool (const char *name, const char *path, bool *ok, char *err, size_t errlen)
{
  for (size_t i = 0; i < sizeof POOL_FIXTURES / sizeof POOL_FIXTURES[0]; i++)
    if (strcmp (name, POOL_FIXTURES[i].name) == 0)
      {
        *ok = vs_fixture_pool_steps (path, POOL_FIXTURES[i].framework, POOL_FIXTURES[i].backed, 10,
                                     POOL_FIXTURES[i].grow, POOL_FIXTURES[i].keep, err, errlen);
        return true;
      }
  return false;
}

int
main (int argc, char **argv)
{
  char err[512] = "";
  bool ok;

  if (argc != 3)
    {
      fprintf (stderr,
               "usage: make-fixture basic|unfinalized|full|expandable|random|newer|other|pool-NAME"
               " PATH\n");
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
  else if (strcmp (argv[1], "pool-release") == 0)
    ok = vs_fixture_pool_release (argv[2], err, sizeof err);
  else if (!make_pool (argv[1], argv[2], &ok, err, sizeof err))
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
