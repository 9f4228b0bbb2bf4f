/* SPDX-License-Identifier: MIT */
/* vs-trace-compact.c — a finalized trace's big tables into column chunks
 * (vs-trace-compact.h).
 *
 * One pass per table in its natural order (the primary key's, so a chunk
 * covers one key range and its zone map prunes well), VS_CHUNK_ROWS rows a
 * chunk, in one transaction; then VACUUM gives the pages back.  block's
 * rows go by device and lifetime class, each pair filling chunks of its
 * own, so that "live at step S" reads few chunks, and one device's
 * questions none of another's.  Memory: one chunk of values at a time
 * (block: one per device and class).
 */
#include "vs-trace-compact.h"
#include "vs-chunk-coder.h"
#include "vs-chunk-vtab.h"
#include "vs-chunk.h"
#include "vs-fin-given.h"
#include "vs-timings.h"
#include "vs-trace-writer.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

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

int
vs_chunk_table_reset (sqlite3 *db, const char *table, char *err, size_t errlen)
{
  char *sql
      = sqlite3_mprintf ("CREATE TABLE IF NOT EXISTS main.\"%w_chunk\" (seq INTEGER PRIMARY KEY,"
                         " row_count INTEGER NOT NULL, zone BLOB NOT NULL,"
                         " data BLOB NOT NULL); DELETE FROM main.\"%w_chunk\";",
                         table, table);
  int rc = sql != NULL ? sqlite3_exec (db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;

  sqlite3_free (sql);
  if (rc != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot write %s chunks: %s", table, sqlite3_errmsg (db));
      return -1;
    }
  return 0;
}

int
vs_chunk_table_put (sqlite3 *db, sqlite3_stmt **ins, const char *table, int64_t seq, int nrows,
                    const uint8_t *zone, size_t zone_len, const uint8_t *data, size_t data_len,
                    char *err, size_t errlen)
{
  if (*ins == NULL)
    {
      char *sql = sqlite3_mprintf ("INSERT INTO main.\"%w_chunk\" VALUES (?, ?, ?, ?)", table);
      int prc = sql != NULL ? sqlite3_prepare_v2 (db, sql, -1, ins, NULL) : SQLITE_NOMEM;
      sqlite3_free (sql);
      if (prc != SQLITE_OK)
        goto fail;
    }
  /* a chunk: 1..VS_CHUNK_ROWS rows, a zone map and a zstd frame */
  assert (seq >= 0 && nrows > 0 && nrows <= VS_CHUNK_ROWS);
  assert (zone != NULL && zone_len > 0 && zone_len <= INT_MAX);
  assert (data != NULL && data_len > 0 && data_len <= INT_MAX);
  sqlite3_bind_int64 (*ins, 1, seq);
  sqlite3_bind_int (*ins, 2, nrows);
  sqlite3_bind_blob (*ins, 3, zone, (int)zone_len, SQLITE_STATIC);
  sqlite3_bind_blob (*ins, 4, data, (int)data_len, SQLITE_STATIC);
  int rc = sqlite3_step (*ins);
  sqlite3_reset (*ins);
  sqlite3_clear_bindings (*ins);
  if (rc == SQLITE_DONE)
    return 0;
fail:
  vs_chunk_error (err, errlen, "cannot write a chunk of %s: %s", table, sqlite3_errmsg (db));
  return -1;
}

/* Encodes the first n rows gathered in ch (vs_chunk_pack) and appends
 * them as chunk seq of table through *ins.  Returns 0 or -1. */
static int
flush_chunk (sqlite3 *db, VsChunkCodec *codec, sqlite3_stmt **ins, const char *table, VsChunk *ch,
             int n, int64_t seq, char *err, size_t errlen)
{
  uint8_t *data, *zone;
  size_t data_len, zone_len;

  assert (n > 0 && n <= VS_CHUNK_ROWS && ch->ncols > 0);
  vs_chunk_pack (ch, n);
  int rc = vs_chunk_encode (codec, ch, &data, &data_len, &zone, &zone_len, err, errlen);
  ch->nrows = VS_CHUNK_ROWS;
  if (rc < 0)
    return -1;
  rc = vs_chunk_table_put (db, ins, table, seq, n, zone, zone_len, data, data_len, err, errlen);
  free (data);
  free (zone);
  return rc;
}

/* Chunks table t into t_chunk.  Returns 0, 1 when a value is not an
 * integer or NULL, -1 on failure. */
static int
compact_table (sqlite3 *db, VsChunkCodec *codec, const VsChunkTable *t, char *err, size_t errlen)
{
  char sql[1024];
  size_t len = 0;
  sqlite3_stmt *sel = NULL, *ins = NULL;
  VsChunk ch = { t->ncols, VS_CHUNK_ROWS, NULL, NULL };
  int ret = -1, n = 0, rc;
  int64_t seq = 0;
  bool block = strcmp (t->name, "block") == 0, began = false;
  VsRowChunker chunker;

  len += (size_t)snprintf (sql + len, sizeof sql - len, "SELECT ");
  for (int c = 0; c < t->ncols; c++)
    len += (size_t)snprintf (sql + len, sizeof sql - len, "%s\"%s\"", c ? ", " : "", t->columns[c]);
  len += (size_t)snprintf (sql + len, sizeof sql - len, " FROM main.\"%s\" ORDER BY ", t->name);
  assert (t->ncols > 0 && t->ncols <= VS_CHUNK_MAX_COLUMNS && t->nkey > 0);
  for (int k = 0; k < t->nkey; k++)
    len += (size_t)snprintf (sql + len, sizeof sql - len, "%s\"%s\"", k ? ", " : "",
                             t->columns[t->key[k]]);
  assert (len < sizeof sql); /* the whole query, not cut short */

  ch.values = malloc ((size_t)t->ncols * VS_CHUNK_ROWS * sizeof *ch.values);
  ch.nulls = malloc ((size_t)t->ncols * VS_CHUNK_ROWS);
  if (ch.values == NULL || ch.nulls == NULL)
    {
      vs_chunk_error (err, errlen, "out of memory compacting %s", t->name);
      goto out;
    }
  if (vs_chunk_table_reset (db, t->name, err, errlen) < 0)
    goto out;
  if (sqlite3_prepare_v2 (db, sql, -1, &sel, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot compact %s: %s", t->name, sqlite3_errmsg (db));
      goto out;
    }
  if (block)
    {
      /* block's rows go by device and lifetime class, as the finalizer's do. */
      vs_row_chunker_init (&chunker);
      if (chunker.sink.begin (&chunker.sink, VS_ROW_SINK_BLOCK, db, 0, 0) < 0)
        {
          vs_chunk_error (err, errlen, "%s", chunker.sink.err);
          goto out;
        }
      began = true;
    }
  while ((rc = sqlite3_step (sel)) == SQLITE_ROW)
    {
      int64_t v[VS_CHUNK_MAX_COLUMNS];
      uint32_t nulls = 0;
      for (int c = 0; c < t->ncols; c++)
        {
          int type = sqlite3_column_type (sel, c);
          if (type == SQLITE_NULL)
            {
              v[c] = 0;
              nulls |= 1u << c;
            }
          else if (type == SQLITE_INTEGER)
            v[c] = sqlite3_column_int64 (sel, c);
          else
            {
              ret = 1;
              goto out;
            }
        }
      if (block)
        {
          if (chunker.sink.row (&chunker.sink, v, nulls) < 0)
            {
              vs_chunk_error (err, errlen, "%s", chunker.sink.err);
              goto out;
            }
          continue;
        }
      vs_chunk_set_row (&ch, n, v, nulls);
      if (++n == VS_CHUNK_ROWS)
        {
          if (flush_chunk (db, codec, &ins, t->name, &ch, n, seq++, err, errlen) < 0)
            goto out;
          n = 0;
        }
    }
  if (rc != SQLITE_DONE)
    {
      vs_chunk_error (err, errlen, "cannot read %s: %s", t->name, sqlite3_errmsg (db));
      goto out;
    }
  if (n > 0 && flush_chunk (db, codec, &ins, t->name, &ch, n, seq++, err, errlen) < 0)
    goto out;
  if (block)
    {
      began = false;
      if (chunker.sink.end (&chunker.sink, 1) < 0)
        {
          vs_chunk_error (err, errlen, "%s", chunker.sink.err);
          goto out;
        }
    }
  ret = 0;
out:
  if (began)
    chunker.sink.end (&chunker.sink, 0);
  if (block)
    vs_row_chunker_clear (&chunker);
  sqlite3_finalize (sel);
  sqlite3_finalize (ins);
  free (ch.values);
  free (ch.nulls);
  return ret;
}

/* ------------------------------ series, series_level and block straight to chunks */

/* The rows of one series (or of series_level, of a raw event table, or
 * of one lifetime class of block) gathered for its next chunk, and the
 * chunks it has written.  A chunk of series has the seq of its series'
 * rank in key order (device, allocator) times 2^32 plus its number, so
 * seqs ascend in key order; those of series_level and the raw event
 * tables, whose rows come in key order, are numbered from 0.  block's rows
 * are gathered per lifetime class (vs_chunk_block_class), each class's
 * chunks in key order: a chunk's seq is the class's rank among the classes
 * in the order they first wrote a chunk, times 2^32, plus its number. */
struct VsChunkRows
{
  VsChunk chunk; /* room for VS_CHUNK_ROWS rows; nrows: rows gathered */
  int64_t written;
  int64_t rank; /* block: the class's rank, set at its first chunk */
};

/* The table each pass of a sink writes. */
static const char *const sink_names[] = {
  [VS_ROW_SINK_SERIES] = "series",
  [VS_ROW_SINK_SERIES_LEVEL] = "series_level",
  [VS_ROW_SINK_BLOCK] = "block",
  [VS_ROW_SINK_MEM_EVENT] = "mem_event",
  [VS_ROW_SINK_ALLOC_EVENT] = "alloc_event",
};

/* Whether a pass over table ends with its chunks written (the derived
 * tables'), rather than when the sink finishes (the raw events'). */
static bool
written_at_end (VsRowSinkTable table)
{
  return table != VS_ROW_SINK_MEM_EVENT && table != VS_ROW_SINK_ALLOC_EVENT;
}

static int chunker_put (void *data, int tag, int64_t seq, int nrows, const uint8_t *zone,
                        size_t zone_len, const uint8_t *bytes, size_t bytes_len);

/* Writes every chunk the coder has coded or is coding into db. */
static int
chunker_drain (VsRowChunker *c, sqlite3 *db)
{
  c->aside_db = db;
  int rc = vs_chunk_coder_drain (c->coder, chunker_put, c, c->sink.err, sizeof c->sink.err);
  for (size_t i = 0; i < sizeof c->aside_insert / sizeof c->aside_insert[0]; i++)
    {
      sqlite3_finalize (c->aside_insert[i]);
      c->aside_insert[i] = NULL;
    }
  c->aside_db = NULL;
  return rc;
}

static bool
chunker_is_block (const VsRowChunker *c)
{
  return c->table != NULL && strcmp (c->table->name, "block") == 0;
}

/* How many groups of rows c gathers: series', or block's (device,
 * lifetime class) pairs. */
static size_t
chunker_groups (const VsRowChunker *c)
{
  if (chunker_is_block (c))
    return (size_t)VS_CHUNK_BLOCK_DEVICES * VS_CHUNK_BLOCK_CLASSES;
  return ((size_t)c->ndev + 1) * ((size_t)c->nalloc + 1);
}

/* Lets go of the pass's state (not of the coder's chunks). */
static void
chunker_pass_clear (VsRowChunker *c)
{
  size_t n = c->rows ? chunker_groups (c) : 0;

  for (size_t i = 0; c->rows != NULL && i < n; i++)
    {
      free (c->rows[i].chunk.values);
      free (c->rows[i].chunk.nulls);
    }
  free (c->rows);
  c->rows = NULL;
  c->ndev = c->nalloc = 0;
  c->nblock_devices = 0;
  c->last_block_slot = 0;
  c->db = NULL;
}

static int
chunker_begin (VsRowSink *sink, VsRowSinkTable table, sqlite3 *db, int32_t ndev, int32_t nalloc)
{
  VsRowChunker *c = (VsRowChunker *)sink;
  const VsChunkTable *t = vs_chunk_table_find (sink_names[table]);

  chunker_pass_clear (c);
  c->db = db;
  c->table = t;
  c->pass = table;
  if (c->coder == NULL)
    c->coder = vs_chunk_coder_new ();
  if (c->coder == NULL)
    {
      vs_chunk_error (sink->err, sizeof sink->err, "cannot start a thread to code %s", t->name);
      return -1;
    }
  c->ndev = table == VS_ROW_SINK_SERIES ? ndev : 0;
  c->nalloc = table == VS_ROW_SINK_SERIES ? nalloc : 0;
  c->nranked = 0;
  c->rows = calloc (chunker_groups (c), sizeof *c->rows);
  if (t == NULL || c->rows == NULL)
    {
      vs_chunk_error (sink->err, sizeof sink->err, "out of memory");
      return -1;
    }
  /* alloc_event: the rows the finalizer took from an import come coded
   * already (vs-fin-given.h), as its first chunks; the rows handed over
   * here are those after them. */
  if (table == VS_ROW_SINK_ALLOC_EVENT)
    c->given = vs_fin_given_taken (sink->given) ? sink->given : NULL;
  if (table == VS_ROW_SINK_ALLOC_EVENT && c->given != NULL)
    c->rows[0].written = (int64_t)vs_fin_given_chunks (c->given)->n;
  return vs_chunk_table_reset (db, t->name, sink->err, sizeof sink->err);
}

/* Codes the rows gathered for group i (a series; block: a device and
 * lifetime class) into its next chunk. */
static int
chunker_flush (VsRowChunker *c, size_t i)
{
  struct VsChunkRows *r = &c->rows[i];
  int n = r->chunk.nrows;

  if (n == 0)
    return 0;
  if (chunker_is_block (c) && r->written == 0)
    r->rank = c->nranked++;
  int64_t seq
      = (int64_t)((uint64_t)(chunker_is_block (c) ? (size_t)r->rank : i) << 32) + r->written;
  /* A copy of exactly n rows for the coder's thread; the buffers stay for
   * the next chunk. */
  int ncols = r->chunk.ncols;
  VsChunk part
      = { ncols, n, malloc ((size_t)ncols * n * sizeof *part.values), malloc ((size_t)ncols * n) };
  if (part.values == NULL || part.nulls == NULL)
    {
      free (part.values);
      free (part.nulls);
      vs_chunk_error (c->sink.err, sizeof c->sink.err, "out of memory");
      return -1;
    }
  for (int col = 0; col < ncols; col++)
    {
      memcpy (part.values + (size_t)col * n, r->chunk.values + (size_t)col * VS_CHUNK_ROWS,
              (size_t)n * sizeof *part.values);
      memcpy (part.nulls + (size_t)col * n, r->chunk.nulls + (size_t)col * VS_CHUNK_ROWS,
              (size_t)n);
    }
  r->chunk.nrows = 0;
  r->written++;
  return vs_chunk_coder_push (c->coder, (int)c->pass, seq, &part, c->sink.err, sizeof c->sink.err);
}

/* The group of a block row: its device's slot (devices in the order
 * first seen; past VS_CHUNK_BLOCK_DEVICES they share the last slot) and
 * its lifetime class, so that a chunk holds one device's blocks and its
 * zone maps prune the queries of another. */
static size_t
block_group (VsRowChunker *c, const int64_t *v, uint32_t nulls)
{
  enum
  {
    DEVICE_ID = 2
  };
  int64_t dev = (nulls >> DEVICE_ID) & 1 ? -1 : v[DEVICE_ID];
  int32_t slot = c->last_block_slot;

  if (slot >= c->nblock_devices || c->block_devices[slot] != dev)
    {
      for (slot = 0; slot < c->nblock_devices && c->block_devices[slot] != dev; slot++)
        ;
      if (slot == c->nblock_devices && c->nblock_devices < VS_CHUNK_BLOCK_DEVICES)
        c->block_devices[c->nblock_devices++] = dev;
      else if (slot == c->nblock_devices)
        slot = VS_CHUNK_BLOCK_DEVICES - 1;
      c->last_block_slot = slot;
    }
  return (size_t)slot * VS_CHUNK_BLOCK_CLASSES + (size_t)vs_chunk_block_class (v, nulls);
}

static int
chunker_row (VsRowSink *sink, const int64_t *v, uint32_t nulls)
{
  VsRowChunker *c = (VsRowChunker *)sink;
  int ncols = c->table->ncols;
  size_t i = 0;

  if (chunker_is_block (c))
    i = block_group (c, v, nulls);
  else if (c->pass == VS_ROW_SINK_SERIES)
    {
      /* series: device_id and allocator_id pick the series. */
      int64_t dev = v[1], alloc = v[2];
      if (dev < 0 || dev > c->ndev || alloc < 0 || alloc > c->nalloc)
        {
          vs_chunk_error (sink->err, sizeof sink->err,
                          "a series row of device %lld, allocator %lld", (long long)dev,
                          (long long)alloc);
          return -1;
        }
      i = (size_t)dev * ((size_t)c->nalloc + 1) + (size_t)alloc;
    }
  struct VsChunkRows *r = &c->rows[i];
  if (r->chunk.values == NULL)
    {
      r->chunk.ncols = ncols;
      r->chunk.values = malloc ((size_t)ncols * VS_CHUNK_ROWS * sizeof *r->chunk.values);
      r->chunk.nulls = malloc ((size_t)ncols * VS_CHUNK_ROWS);
      if (r->chunk.values == NULL || r->chunk.nulls == NULL)
        {
          vs_chunk_error (sink->err, sizeof sink->err, "out of memory");
          return -1;
        }
    }
  vs_chunk_set_row (&r->chunk, r->chunk.nrows, v, nulls);
  r->chunk.nrows++;
  return r->chunk.nrows == VS_CHUNK_ROWS ? chunker_flush (c, i) : 0;
}

static int
chunker_end (VsRowSink *sink, int keep)
{
  VsRowChunker *c = (VsRowChunker *)sink;
  size_t n = c->rows ? chunker_groups (c) : 0;
  int rc = 0;

  /* block: the longest-lived classes first (each device's in turn), so
   * that a small trace's first chunks hold the blocks most steps have
   * live. */
  for (size_t i = 0; keep && i < n && rc == 0; i++)
    {
      size_t g = i;
      if (chunker_is_block (c))
        {
          size_t cls = VS_CHUNK_BLOCK_CLASSES - 1 - i / VS_CHUNK_BLOCK_DEVICES;
          g = (i % VS_CHUNK_BLOCK_DEVICES) * VS_CHUNK_BLOCK_CLASSES + cls;
        }
      rc = chunker_flush (c, g);
    }
  /* A table given up on: none of its chunks is written. */
  if ((!keep || rc != 0) && c->coder != NULL)
    vs_chunk_coder_forget (c->coder, (int)c->pass);
  if ((!keep || rc != 0) && c->pass == VS_ROW_SINK_ALLOC_EVENT)
    c->given = NULL;
  if (keep && rc == 0 && written_at_end (c->pass) && c->coder != NULL)
    rc = chunker_drain (c, c->db);
  chunker_pass_clear (c);
  return rc;
}

/* Writes one chunk the coder coded (VsChunkCoderPut). */
static int
chunker_put (void *data, int tag, int64_t seq, int nrows, const uint8_t *zone, size_t zone_len,
             const uint8_t *bytes, size_t bytes_len)
{
  VsRowChunker *c = data;

  return vs_chunk_table_put (c->aside_db, &c->aside_insert[tag], sink_names[tag], seq, nrows, zone,
                             zone_len, bytes, bytes_len, c->sink.err, sizeof c->sink.err);
}

static int
chunker_finish (VsRowSink *sink, sqlite3 *db)
{
  VsRowChunker *c = (VsRowChunker *)sink;
  int rc = 0;

  if (c->coder == NULL)
    return 0;
  /* alloc_event's first chunks, coded while the import wrote its rows. */
  const VsCodedChunks *given = c->given != NULL ? vs_fin_given_chunks (c->given) : NULL;
  c->aside_db = db;
  for (size_t k = 0; rc == 0 && given != NULL && k < given->n; k++)
    {
      const VsCodedChunk *g = &given->chunk[k];
      rc = chunker_put (c, VS_ROW_SINK_ALLOC_EVENT, (int64_t)k, g->nrows, g->zone, g->zone_len,
                        g->data, g->data_len);
    }
  c->given = NULL;
  int drained = chunker_drain (c, db);
  return rc < 0 ? rc : drained;
}

void
vs_row_chunker_init (VsRowChunker *c)
{
  memset (c, 0, sizeof *c);
  c->sink.begin = chunker_begin;
  c->sink.row = chunker_row;
  c->sink.end = chunker_end;
  c->sink.finish = chunker_finish;
}

void
vs_row_chunker_clear (VsRowChunker *c)
{
  chunker_pass_clear (c);
  vs_chunk_coder_free (c->coder);
  c->coder = NULL;
}

/* ------------------------------------------------------------- compaction */

/* How the finalizer left table t (VsRowChunker): CODED_DERIVED, its rows
 * written straight into chunks (t_chunk exists, t is empty);
 * CODED_BESIDE, its rows kept and coded into chunks as it loaded them
 * (t_chunk holds as many rows as t); else 0, t to be compacted here (a
 * t_chunk of another row count is dropped first). */
enum
{
  CODED_DERIVED = 1,
  CODED_BESIDE = 2
};

static int
chunked_already (sqlite3 *db, const VsChunkTable *t)
{
  char exists[256], rows[256], chunk_rows[256], drop[128];

  snprintf (exists, sizeof exists,
            "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = '%s_chunk'",
            t->name);
  if (query_int (db, exists, 0) == 0)
    return 0;
  snprintf (rows, sizeof rows, "SELECT count(*) FROM main.\"%s\"", t->name);
  snprintf (chunk_rows, sizeof chunk_rows, "SELECT sum(row_count) FROM main.\"%s_chunk\"", t->name);
  int64_t n = query_int (db, rows, -1);
  if (n == 0)
    return CODED_DERIVED;
  if (n > 0 && query_int (db, chunk_rows, -1) == n)
    return CODED_BESIDE;
  snprintf (drop, sizeof drop, "DROP TABLE main.\"%s_chunk\"", t->name);
  sqlite3_exec (db, drop, NULL, NULL, NULL);
  return 0;
}

/* Drops the chunks the finalizer coded of table t beside its rows: a trace
 * left uncompacted keeps its tables plain. */
static int
drop_coded (sqlite3 *db, const VsChunkTable *t, char *err, size_t errlen)
{
  char sql[128];

  snprintf (sql, sizeof sql, "DROP TABLE main.\"%s_chunk\"", t->name);
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot drop the chunks of %s: %s", t->name,
                      sqlite3_errmsg (db));
      return -1;
    }
  return 0;
}

/* Puts the rows of t's chunks back into t and drops the chunks: a trace
 * left uncompacted keeps its tables plain. */
static int
restore_table (sqlite3 *db, const VsChunkTable *t, char *err, size_t errlen)
{
  char sql[512];

  snprintf (sql, sizeof sql,
            "BEGIN IMMEDIATE;"
            "CREATE VIRTUAL TABLE temp.vs_restore USING vs_chunk(%s);"
            "INSERT INTO main.\"%s\" SELECT * FROM temp.vs_restore;"
            "DROP TABLE temp.vs_restore;"
            "DROP TABLE main.\"%s_chunk\";"
            "COMMIT;",
            t->name, t->name, t->name);
  if (vs_chunk_register (db) != SQLITE_OK || sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot restore %s: %s", t->name, sqlite3_errmsg (db));
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return -1;
    }
  return 0;
}

/* vs_trace_compact(); without vacuum, the file is left with the dropped
 * tables' pages free (the caller writes a vacuumed copy), its page size
 * set for the next VACUUM. */
static int
compact (sqlite3 *db, bool vacuum, char *err, size_t errlen)
{
  static const char *finalized_sql
      = "SELECT CAST(value AS INTEGER) FROM main.meta WHERE key = 'finalized'";
  VsChunkCodec *codec = NULL;
  char sql[128];
  int ret = -1;
  unsigned done = 0;   /* bit i: table i chunked by the finalizer already */
  unsigned beside = 0; /* bit i: ... with its rows kept in the table too */

  if (query_int (db, "PRAGMA main.user_version", -1) != VS_TRACE_SCHEMA_VERSION
      || query_int (db, finalized_sql, 0) != 1)
    return 1;
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot compact the trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  codec = vs_chunk_codec_new ();
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      int how = chunked_already (db, &vs_chunk_tables[i]);
      if (how != 0)
        done |= 1u << i;
      if (how == CODED_BESIDE)
        beside |= 1u << i;
    }
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      if (done & (1u << i))
        continue;
      int rc = codec ? compact_table (db, codec, &vs_chunk_tables[i], err, errlen) : -1;
      if (rc != 0)
        {
          if (codec == NULL)
            vs_chunk_error (err, errlen, "out of memory compacting the trace");
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
      || (vacuum && sqlite3_exec (db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK))
    {
      vs_chunk_error (err, errlen, "cannot vacuum the compacted trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;

sqlfail:
  vs_chunk_error (err, errlen, "cannot compact the trace: %s", sqlite3_errmsg (db));
  ret = -1;
out:
  vs_chunk_codec_free (codec);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  /* Left as it is: with its tables plain, whoever wrote them. */
  for (size_t i = 0; ret == 1 && i < vs_chunk_n_tables; i++)
    if ((done & (1u << i))
        && ((beside & (1u << i)) ? drop_coded (db, &vs_chunk_tables[i], err, errlen)
                                 : restore_table (db, &vs_chunk_tables[i], err, errlen))
               < 0)
      ret = -1;
  return ret;
}

int
vs_trace_compact (sqlite3 *db, char *err, size_t errlen)
{
  return compact (db, true, err, errlen);
}

/* The compacted trace open on db, at path, replaced by a vacuumed copy of
 * itself: VACUUM INTO writes the live pages once, where VACUUM writes
 * them to a temporary file and then back.  Falls back to VACUUM.
 * Returns 0, or -1 with err set. */
static int
vacuum_into_place (sqlite3 *db, const char *path, char *err, size_t errlen)
{
  size_t len = strlen (path) + sizeof ".vacuum";
  char *copy = malloc (len);
  sqlite3_stmt *s = NULL;
  bool ok = false;

  if (copy != NULL)
    {
      snprintf (copy, len, "%s.vacuum", path);
      remove (copy);
      ok = sqlite3_prepare_v2 (db, "VACUUM INTO ?1", -1, &s, NULL) == SQLITE_OK
           && sqlite3_bind_text (s, 1, copy, -1, SQLITE_STATIC) == SQLITE_OK
           && sqlite3_step (s) == SQLITE_DONE;
      sqlite3_finalize (s);
      ok = ok && rename (copy, path) == 0;
      if (!ok)
        remove (copy);
      free (copy);
    }
  if (!ok && sqlite3_exec (db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot vacuum the compacted trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;
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
      vs_chunk_error (err, errlen, "cannot open %s: %s", path,
                      db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return -1;
    }
  sqlite3_busy_timeout (db, 5000);
  sqlite3_exec (db, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF", NULL, NULL, NULL);
  rc = compact (db, false, err, errlen);
  if (rc == 0)
    rc = vacuum_into_place (db, path, err, errlen);
  if (sqlite3_close (db) != SQLITE_OK && rc >= 0)
    {
      vs_chunk_error (err, errlen, "cannot close %s", path);
      rc = -1;
    }
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
      vs_chunk_error (err, errlen, "%s", msg ? msg : sqlite3_errmsg (db));
      sqlite3_free (msg);
      return -1;
    }
  if (sqlite3_open_v2 (":memory:", &mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
      || sqlite3_exec (mem, vs_trace_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot read the schema");
      sqlite3_close (mem);
      return -1;
    }
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    goto sqlfail;
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    {
      const char *name = vs_chunk_tables[i].name;
      if (vs_chunk_kept_plain (db, name))
        continue;
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
      vs_chunk_error (err, errlen, "cannot vacuum the expanded trace: %s", sqlite3_errmsg (db));
      return -1;
    }
  return 0;

sqlfail:
  vs_chunk_error (err, errlen, "cannot expand the trace: %s", sqlite3_errmsg (db));
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
    vs_chunk_error (err, errlen, "cannot copy %s: %s", src,
                    db ? sqlite3_errmsg (db) : "out of memory");
  sqlite3_finalize (s);
  sqlite3_close (db);
  if (rc != SQLITE_OK)
    return -1;

  db = NULL;
  if (sqlite3_open_v2 (dst, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      vs_chunk_error (err, errlen, "cannot open %s: %s", dst,
                      db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return -1;
    }
  rc = vs_trace_expand (db, err, errlen);
  sqlite3_close (db);
  return rc < 0 ? -1 : 0;
}
