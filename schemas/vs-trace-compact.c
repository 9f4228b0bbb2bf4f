/* vs-trace-compact.c — a finalized trace's big tables into column chunks
 * (vs-trace-compact.h).
 *
 * One pass per table in its natural order (the primary key's, so a chunk
 * covers one key range and its zone map prunes well), VS_CHUNK_ROWS rows a
 * chunk, in one transaction; then VACUUM gives the pages back.  Memory: one
 * chunk of values at a time.
 */
#include "vs-trace-compact.h"
#include "vs-chunk-vtab.h"
#include "vs-chunk.h"
#include "vs-timings.h"
#include "vs-trace-writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

static void
fail (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
}

/* The integer answer of sql on db, or def when it gives none. */
static int64_t
query_int (sqlite3 *db, const char *sql, int64_t def)
{
  sqlite3_stmt *s;
  int64_t v = def;

  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return def;
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

/* Encodes the first n rows gathered in ch and appends them as chunk seq
 * through ins.  Returns 0 or -1. */
static int
flush_chunk (sqlite3 *db, VsChunkCodec *codec, sqlite3_stmt *ins, VsChunk *ch, int n, int64_t seq,
             char *err, size_t errlen)
{
  uint8_t *data, *zone;
  size_t data_len, zone_len;
  VsChunk part = *ch;

  /* The arrays are column-major with room for VS_CHUNK_ROWS rows: a
   * shorter last chunk is packed to n rows first. */
  if (n < VS_CHUNK_ROWS)
    for (int c = 1; c < ch->ncols; c++)
      {
        memmove (ch->values + (size_t)c * n, ch->values + (size_t)c * VS_CHUNK_ROWS,
                 (size_t)n * sizeof *ch->values);
        memmove (ch->nulls + (size_t)c * n, ch->nulls + (size_t)c * VS_CHUNK_ROWS, (size_t)n);
      }
  part.nrows = n;
  if (vs_chunk_encode (codec, &part, &data, &data_len, &zone, &zone_len, err, errlen) < 0)
    return -1;
  sqlite3_bind_int64 (ins, 1, seq);
  sqlite3_bind_int (ins, 2, n);
  sqlite3_bind_blob (ins, 3, zone, (int)zone_len, SQLITE_STATIC);
  sqlite3_bind_blob (ins, 4, data, (int)data_len, SQLITE_STATIC);
  int rc = sqlite3_step (ins);
  sqlite3_reset (ins);
  sqlite3_clear_bindings (ins);
  free (data);
  free (zone);
  if (rc != SQLITE_DONE)
    {
      fail (err, errlen, "cannot write a chunk: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;
}

/* Chunks table t into t_chunk.  Returns 0, 1 when a value is not an
 * integer or NULL, -1 on failure. */
static int
compact_table (sqlite3 *db, VsChunkCodec *codec, const VsChunkTable *t, char *err, size_t errlen)
{
  char sql[1024], create[256], insert[256];
  size_t len = 0;
  sqlite3_stmt *sel = NULL, *ins = NULL;
  VsChunk ch = { t->ncols, VS_CHUNK_ROWS, NULL, NULL };
  int ret = -1, n = 0, rc;
  int64_t seq = 0;

  len += (size_t)snprintf (sql + len, sizeof sql - len, "SELECT ");
  for (int c = 0; c < t->ncols; c++)
    len += (size_t)snprintf (sql + len, sizeof sql - len, "%s\"%s\"", c ? ", " : "", t->columns[c]);
  len += (size_t)snprintf (sql + len, sizeof sql - len, " FROM main.\"%s\" ORDER BY ", t->name);
  for (int k = 0; k < t->nkey; k++)
    len += (size_t)snprintf (sql + len, sizeof sql - len, "%s\"%s\"", k ? ", " : "",
                             t->columns[t->key[k]]);
  snprintf (create, sizeof create,
            "CREATE TABLE main.\"%s_chunk\" (seq INTEGER PRIMARY KEY, row_count INTEGER NOT NULL,"
            " zone BLOB NOT NULL, data BLOB NOT NULL)",
            t->name);
  snprintf (insert, sizeof insert, "INSERT INTO main.\"%s_chunk\" VALUES (?, ?, ?, ?)", t->name);

  ch.values = malloc ((size_t)t->ncols * VS_CHUNK_ROWS * sizeof *ch.values);
  ch.nulls = malloc ((size_t)t->ncols * VS_CHUNK_ROWS);
  if (ch.values == NULL || ch.nulls == NULL)
    {
      fail (err, errlen, "out of memory compacting %s", t->name);
      goto out;
    }
  if (sqlite3_exec (db, create, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, sql, -1, &sel, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, insert, -1, &ins, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot compact %s: %s", t->name, sqlite3_errmsg (db));
      goto out;
    }
  while ((rc = sqlite3_step (sel)) == SQLITE_ROW)
    {
      for (int c = 0; c < t->ncols; c++)
        {
          int type = sqlite3_column_type (sel, c);
          size_t at = (size_t)c * VS_CHUNK_ROWS + n;
          if (type == SQLITE_NULL)
            {
              ch.nulls[at] = 1;
              ch.values[at] = 0;
            }
          else if (type == SQLITE_INTEGER)
            {
              ch.nulls[at] = 0;
              ch.values[at] = sqlite3_column_int64 (sel, c);
            }
          else
            {
              ret = 1;
              goto out;
            }
        }
      if (++n == VS_CHUNK_ROWS)
        {
          if (flush_chunk (db, codec, ins, &ch, n, seq++, err, errlen) < 0)
            goto out;
          n = 0;
        }
    }
  if (rc != SQLITE_DONE)
    {
      fail (err, errlen, "cannot read %s: %s", t->name, sqlite3_errmsg (db));
      goto out;
    }
  if (n > 0 && flush_chunk (db, codec, ins, &ch, n, seq++, err, errlen) < 0)
    goto out;
  ret = 0;
out:
  sqlite3_finalize (sel);
  sqlite3_finalize (ins);
  free (ch.values);
  free (ch.nulls);
  return ret;
}

int
vs_trace_compact (sqlite3 *db, char *err, size_t errlen)
{
  static const char *finalized_sql
      = "SELECT CAST(value AS INTEGER) FROM main.meta WHERE key = 'finalized'";
  VsChunkCodec *codec = NULL;
  char sql[128];
  int ret = -1;

  if (query_int (db, "PRAGMA main.user_version", -1) != VS_TRACE_SCHEMA_VERSION
      || query_int (db, finalized_sql, 0) != 1)
    return 1;
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot compact the trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  codec = vs_chunk_codec_new ();
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      int rc = codec ? compact_table (db, codec, &vs_chunk_tables[i], err, errlen) : -1;
      if (rc != 0)
        {
          if (codec == NULL)
            fail (err, errlen, "out of memory compacting the trace");
          ret = rc;
          goto out;
        }
    }
  vs_chunk_codec_free (codec);
  codec = NULL;
  /* The view's tables are temporary virtual tables from now on, which a
   * view of the main schema cannot name: readers create it in temp. */
  if (sqlite3_exec (db, "DROP VIEW IF EXISTS main.kernel", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlfail;
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      snprintf (sql, sizeof sql, "DROP TABLE main.\"%s\"", vs_chunk_tables[i].name);
      if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
        goto sqlfail;
    }
  snprintf (sql, sizeof sql, "PRAGMA main.user_version = %d", VS_TRACE_SCHEMA_COMPACTED);
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlfail;
  /* Chunks are blobs of a few KiB, one or more to a page: small pages
   * waste less of each (16 KiB pages left a compacted trace a third
   * larger). */
  if (sqlite3_exec (db, "PRAGMA main.page_size = 4096", NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot vacuum the compacted trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;

sqlfail:
  fail (err, errlen, "cannot compact the trace: %s", sqlite3_errmsg (db));
  ret = -1;
out:
  vs_chunk_codec_free (codec);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  return ret;
}

int
vs_trace_compact_file (const char *path, char *err, size_t errlen)
{
  sqlite3 *db = NULL;
  int rc;

  /* One thread uses the connection: no mutex on each call.  The file is
   * an output not yet in place (record, recover, import): its journal can
   * stay in memory, enough to roll back, and nothing is synced until the
   * caller renames it. */
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot open %s: %s", path, db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return -1;
    }
  sqlite3_busy_timeout (db, 5000);
  sqlite3_exec (db, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF", NULL, NULL, NULL);
  rc = vs_trace_compact (db, err, errlen);
  if (sqlite3_close (db) != SQLITE_OK && rc >= 0)
    {
      fail (err, errlen, "cannot close %s", path);
      rc = -1;
    }
  vs_timings_phase ("compacting");
  return rc;
}

/* The statement that creates name in the schema (schemas/trace.sql), as
 * an in-memory database built from it holds it; malloc'ed, or NULL. */
static char *
schema_statement (sqlite3 *mem, const char *name)
{
  sqlite3_stmt *s;
  char *sql = NULL;

  if (sqlite3_prepare_v2 (mem, "SELECT sql FROM sqlite_master WHERE name = ?", -1, &s, NULL)
      != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (s, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_text (s, 0) != NULL)
    sql = strdup ((const char *)sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return sql;
}

/* The readers' indexes on block that compaction dropped with the table
 * (as vs-trace-finalize.c creates them). */
static const char *block_index_sql
    = "CREATE INDEX main.block_alloc ON block (device_id, level, alloc_seq);"
      "CREATE INDEX main.block_bin ON block (device_id, span_bin);";

int
vs_trace_expand (sqlite3 *db, char *err, size_t errlen)
{
  sqlite3 *mem = NULL;
  char *msg = NULL, sql[256];
  int ret = -1;

  if (query_int (db, "PRAGMA main.user_version", -1) != VS_TRACE_SCHEMA_COMPACTED)
    return 1;
  if (vs_chunk_attach (db, &msg) != SQLITE_OK)
    {
      fail (err, errlen, "%s", msg ? msg : sqlite3_errmsg (db));
      sqlite3_free (msg);
      return -1;
    }
  if (sqlite3_open_v2 (":memory:", &mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
      || sqlite3_exec (mem, vs_trace_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot read the schema");
      sqlite3_close (mem);
      return -1;
    }
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlfail;
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      const char *name = vs_chunk_tables[i].name;
      char *create = schema_statement (mem, name);
      int rc = create ? sqlite3_exec (db, create, NULL, NULL, NULL) : SQLITE_NOMEM;

      free (create);
      if (rc != SQLITE_OK)
        goto sqlfail;
      snprintf (sql, sizeof sql, "INSERT INTO main.\"%s\" SELECT * FROM temp.\"%s\"", name, name);
      if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
        goto sqlfail;
      snprintf (sql, sizeof sql, "DROP TABLE temp.\"%s\"; DROP TABLE main.\"%s_chunk\";", name,
                name);
      if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
        goto sqlfail;
    }
  {
    char *view = schema_statement (mem, "kernel");
    int rc = view ? SQLITE_OK : SQLITE_NOMEM;

    if (rc == SQLITE_OK)
      rc = sqlite3_exec (db, "DROP VIEW temp.kernel", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
      rc = sqlite3_exec (db, view, NULL, NULL, NULL);
    free (view);
    if (rc != SQLITE_OK)
      goto sqlfail;
  }
  snprintf (sql, sizeof sql, "PRAGMA main.user_version = %d", VS_TRACE_SCHEMA_VERSION);
  if (sqlite3_exec (db, block_index_sql, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlfail;
  sqlite3_close (mem);
  if (sqlite3_exec (db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot vacuum the expanded trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;

sqlfail:
  fail (err, errlen, "cannot expand the trace: %s", sqlite3_errmsg (db));
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close (mem);
  return ret;
}

int
vs_trace_export_plain (const char *src, const char *dst, char *err, size_t errlen)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *s = NULL;
  int rc;

  rc = sqlite3_open_v2 (src, &db, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (db, "VACUUM INTO ?", -1, &s, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (s, 1, dst, -1, SQLITE_STATIC);
      rc = sqlite3_step (s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
  if (rc != SQLITE_OK)
    fail (err, errlen, "cannot copy %s: %s", src, db ? sqlite3_errmsg (db) : "out of memory");
  sqlite3_finalize (s);
  sqlite3_close (db);
  if (rc != SQLITE_OK)
    return -1;

  db = NULL;
  if (sqlite3_open_v2 (dst, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      fail (err, errlen, "cannot open %s: %s", dst, db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return -1;
    }
  rc = vs_trace_expand (db, err, errlen);
  sqlite3_close (db);
  return rc < 0 ? -1 : 0;
}
