/* SPDX-License-Identifier: MIT */
/* vs-symbol-cache.c — symbolization results kept per build-id
 * (vs-symbol-cache.h).
 *
 * The cache is one SQLite file, DIR/symbols.db (user_version 1):
 *   address (module, offset, entries) — an address looked up, and how many
 *                                       entries it expands into (0: none);
 *   entry   (module, offset, seq, function, file, line) — those entries,
 *                                       innermost first (seq 0).
 * `module` is the build-id in hex, with ".dbg" appended when
 * /usr/lib/debug holds separate debug info for it.  A module's addresses
 * are read once, when symbolizing reaches it, into a sorted array; what
 * symbolizing adds is written in one transaction when it is done with the
 * module.  An address whose entries are incomplete is skipped (it is then
 * symbolized again); a file that is not a database is replaced.
 */
#include "vs-symbol-cache.h"
#include "vs-trace-writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define VS_SYMBOL_CACHE_FILE "symbols.db"
#define VS_SYMBOL_CACHE_VERSION 1
#define VS_SYMBOL_CACHE_BUSY_MS 5000

typedef struct
{
  uint64_t off;
  int n;
  bool added;
  VsSymbolCacheEntry *e;
} VsCachedAddress;

struct VsSymbolCache
{
  char *module;
  VsCachedAddress *a;
  size_t n, cap;
  bool sorted, dirty;
};

static char *cache_dir;

void
vs_symbol_cache_set_dir (const char *dir)
{
  free (cache_dir);
  cache_dir = dir != NULL && dir[0] != '\0' ? strdup (dir) : NULL;
}

char *
vs_symbol_cache_default_dir (void)
{
  const char *env = getenv ("VRAMSCOPE_CACHE_DIR");
  const char *xdg = getenv ("XDG_CACHE_HOME");
  const char *home = getenv ("HOME");
  char buf[4096];
  int len;
  if (env != NULL && env[0] != '\0')
    len = snprintf (buf, sizeof buf, "%s/symbols", env);
  else if (xdg != NULL && xdg[0] == '/')
    len = snprintf (buf, sizeof buf, "%s/vramscope/symbols", xdg);
  else if (home != NULL && home[0] == '/')
    len = snprintf (buf, sizeof buf, "%s/.cache/vramscope/symbols", home);
  else
    return NULL;
  return len > 0 && (size_t)len < sizeof buf ? strdup (buf) : NULL;
}

/* mkdir -p for the cache folder; false when it cannot be made. */
static bool
make_dirs (const char *dir)
{
  char p[4096];
  if (snprintf (p, sizeof p, "%s", dir) >= (int)sizeof p)
    return false;
  for (char *s = p + 1; *s; s++)
    if (*s == '/')
      {
        *s = '\0';
        if (mkdir (p, 0755) != 0 && errno != EEXIST)
          return false;
        *s = '/';
      }
  return mkdir (p, 0755) == 0 || errno == EEXIST;
}

static void
free_entries (VsSymbolCacheEntry *e, int n)
{
  for (int k = 0; k < n; k++)
    {
      free (e[k].function);
      free (e[k].file);
    }
  free (e);
}

static bool
append (VsSymbolCache *c, uint64_t off, VsSymbolCacheEntry *e, int n)
{
  if (c->n == c->cap)
    {
      size_t cap = c->cap ? 2 * c->cap : 256;
      VsCachedAddress *a = realloc (c->a, cap * sizeof *a);
      if (a == NULL)
        return false;
      c->a = a;
      c->cap = cap;
    }
  c->a[c->n++] = (VsCachedAddress){ off, n, false, e };
  c->sorted = false;
  return true;
}

/* The cache file's path, malloc'd; NULL when the cache is off. */
static char *
cache_path (void)
{
  if (cache_dir == NULL)
    return NULL;
  size_t len = strlen (cache_dir) + sizeof VS_SYMBOL_CACHE_FILE + 1;
  char *path = malloc (len);
  if (path != NULL)
    snprintf (path, len, "%s/%s", cache_dir, VS_SYMBOL_CACHE_FILE);
  return path;
}

/* The file's user_version, -1 when it cannot be read. */
static int
cache_version (sqlite3 *db)
{
  sqlite3_stmt *q = NULL;
  int v = -1;
  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW)
    v = sqlite3_column_int (q, 0);
  sqlite3_finalize (q);
  return v;
}

/* Reads the module's addresses from db into c.  An address whose rows do
 * not make entries 0..n-1 is left out. */
static void
load (VsSymbolCache *c, sqlite3 *db)
{
  static const char *sql
      = "SELECT a.offset, a.entries, e.seq, e.function, e.file, e.line FROM address a"
        " LEFT JOIN entry e ON e.module = a.module AND e.offset = a.offset"
        " WHERE a.module = ?1 ORDER BY a.offset, e.seq";
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &q, NULL) != SQLITE_OK)
    {
      sqlite3_finalize (q);
      return;
    }
  sqlite3_bind_text (q, 1, c->module, -1, SQLITE_STATIC);
  VsSymbolCacheEntry *e = NULL;
  uint64_t off = 0;
  int n = -1, got = 0; /* the address being read: n entries, got so far */
  bool ok = false;
  for (int rc = sqlite3_step (q);; rc = sqlite3_step (q))
    {
      bool row = rc == SQLITE_ROW;
      uint64_t row_off = row ? (uint64_t)sqlite3_column_int64 (q, 0) : 0;
      if (n >= 0 && (!row || row_off != off))
        {
          /* The address read so far is complete: kept if whole. */
          if (!ok || got != n || !append (c, off, e, n))
            free_entries (e, n);
          e = NULL;
          n = -1;
        }
      if (!row)
        break;
      if (n < 0)
        {
          off = row_off;
          n = sqlite3_column_int (q, 1);
          ok = n >= 0 && n <= VS_SYMBOL_CACHE_MAX_ENTRIES;
          got = 0;
          if (!ok)
            n = 0;
          e = n > 0 ? calloc ((size_t)n, sizeof *e) : NULL;
          ok = ok && (n == 0 || e != NULL);
        }
      if (sqlite3_column_type (q, 2) == SQLITE_NULL || !ok)
        continue;
      if (sqlite3_column_int (q, 2) != got || got >= n)
        {
          ok = false;
          continue;
        }
      const char *function = (const char *)sqlite3_column_text (q, 3);
      const char *file = (const char *)sqlite3_column_text (q, 4);
      e[got].function = function ? strdup (function) : NULL;
      e[got].file = file ? strdup (file) : NULL;
      e[got].line
          = sqlite3_column_type (q, 5) == SQLITE_NULL ? VS_UNKNOWN : sqlite3_column_int64 (q, 5);
      got++;
    }
  sqlite3_finalize (q);
}

VsSymbolCache *
vs_symbol_cache_open (const char *build_id)
{
  if (cache_dir == NULL || build_id == NULL)
    return NULL;
  size_t len = strlen (build_id);
  if (len < 8 || len > 128 || strspn (build_id, "0123456789abcdef") != len)
    return NULL;
  /* Debug info installed later gives other answers: another key. */
  char debug[512];
  struct stat st;
  snprintf (debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
  bool has_debug = stat (debug, &st) == 0;
  VsSymbolCache *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->module = malloc (len + 8);
  char *path = cache_path ();
  if (c->module == NULL || path == NULL)
    {
      free (path);
      free (c->module);
      free (c);
      return NULL;
    }
  snprintf (c->module, len + 8, "%s%s", build_id, has_debug ? ".dbg" : "");
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, VS_SYMBOL_CACHE_BUSY_MS);
      if (cache_version (db) == VS_SYMBOL_CACHE_VERSION)
        load (c, db);
    }
  sqlite3_close (db);
  free (path);
  return c;
}

static int
compare_off (const void *a, const void *b)
{
  uint64_t x = ((const VsCachedAddress *)a)->off, y = ((const VsCachedAddress *)b)->off;
  return x < y ? -1 : x > y;
}

int
vs_symbol_cache_find (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry **entries)
{
  if (c == NULL || c->n == 0)
    return -1;
  if (!c->sorted)
    {
      qsort (c->a, c->n, sizeof *c->a, compare_off);
      c->sorted = true;
    }
  VsCachedAddress key = { .off = off };
  const VsCachedAddress *hit = bsearch (&key, c->a, c->n, sizeof *c->a, compare_off);
  if (hit == NULL)
    return -1;
  *entries = hit->e;
  return hit->n;
}

void
vs_symbol_cache_add (VsSymbolCache *c, uint64_t off, const VsSymbolCacheEntry *entries, int n)
{
  if (c == NULL || n < 0)
    return;
  VsSymbolCacheEntry *e = n > 0 ? calloc ((size_t)n, sizeof *e) : NULL;
  if (n > 0 && e == NULL)
    return;
  for (int k = 0; k < n; k++)
    {
      e[k].function = entries[k].function ? strdup (entries[k].function) : NULL;
      e[k].file = entries[k].file ? strdup (entries[k].file) : NULL;
      e[k].line = entries[k].line;
    }
  if (append (c, off, e, n))
    {
      c->a[c->n - 1].added = true;
      c->dirty = true;
    }
  else
    free_entries (e, n);
}

/* Writes c's added addresses into the file at path; SQLITE_NOTADB or
 * SQLITE_CORRUPT when the file is not a usable database. */
static int
store (VsSymbolCache *c, const char *path)
{
  static const char *schema
      = "CREATE TABLE IF NOT EXISTS address (module TEXT NOT NULL, offset INTEGER NOT NULL,"
        " entries INTEGER NOT NULL, PRIMARY KEY (module, offset)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS entry (module TEXT NOT NULL, offset INTEGER NOT NULL,"
        " seq INTEGER NOT NULL, function TEXT, file TEXT, line INTEGER,"
        " PRIMARY KEY (module, offset, seq)) WITHOUT ROWID;"
        "PRAGMA user_version = 1;";
  static const char *insert_address
      = "INSERT OR IGNORE INTO address (module, offset, entries) VALUES (?1, ?2, ?3)";
  static const char *insert_entry = "INSERT INTO entry (module, offset, seq, function, file, line)"
                                    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
  sqlite3 *db = NULL;
  sqlite3_stmt *qa = NULL, *qe = NULL;
  int rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, VS_SYMBOL_CACHE_BUSY_MS);
      rc = sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    }
  /* A file from a newer version is left alone. */
  if (rc == SQLITE_OK && cache_version (db) > VS_SYMBOL_CACHE_VERSION)
    rc = SQLITE_DONE;
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, schema, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (db, insert_address, -1, &qa, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (db, insert_entry, -1, &qe, NULL);
  for (size_t i = 0; i < c->n && rc == SQLITE_OK; i++)
    {
      const VsCachedAddress *a = &c->a[i];
      if (!a->added)
        continue;
      sqlite3_reset (qa);
      sqlite3_bind_text (qa, 1, c->module, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (qa, 2, (sqlite3_int64)a->off);
      sqlite3_bind_int (qa, 3, a->n);
      rc = sqlite3_step (qa) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode (db);
      /* Stored by another run meanwhile: its entries stay. */
      if (rc != SQLITE_OK || sqlite3_changes (db) == 0)
        continue;
      for (int k = 0; k < a->n && rc == SQLITE_OK; k++)
        {
          const VsSymbolCacheEntry *e = &a->e[k];
          sqlite3_reset (qe);
          sqlite3_bind_text (qe, 1, c->module, -1, SQLITE_STATIC);
          sqlite3_bind_int64 (qe, 2, (sqlite3_int64)a->off);
          sqlite3_bind_int (qe, 3, k);
          e->function ? sqlite3_bind_text (qe, 4, e->function, -1, SQLITE_STATIC)
                      : sqlite3_bind_null (qe, 4);
          e->file ? sqlite3_bind_text (qe, 5, e->file, -1, SQLITE_STATIC)
                  : sqlite3_bind_null (qe, 5);
          e->line == VS_UNKNOWN ? sqlite3_bind_null (qe, 6) : sqlite3_bind_int64 (qe, 6, e->line);
          rc = sqlite3_step (qe) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode (db);
        }
    }
  sqlite3_finalize (qa);
  sqlite3_finalize (qe);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  else if (db != NULL)
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close (db);
  return rc;
}

void
vs_symbol_cache_close (VsSymbolCache *c)
{
  if (c == NULL)
    return;
  char *path = c->dirty ? cache_path () : NULL;
  if (path != NULL && make_dirs (cache_dir))
    {
      int rc = store (c, path);
      if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
        {
          /* Not a cache any more: made anew. */
          unlink (path);
          store (c, path);
        }
    }
  free (path);
  for (size_t i = 0; i < c->n; i++)
    free_entries (c->a[i].e, c->a[i].n);
  free (c->a);
  free (c->module);
  free (c);
}
