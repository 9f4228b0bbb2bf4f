/* vs-chunk-vtab.c — the virtual-table module "vs_chunk" (vs-chunk-vtab.h).
 *
 * A table is opened by reading every chunk's row count and zone map into
 * memory (a few bytes per column and chunk) and checking them: row counts
 * in range, the first key column sorted across chunks.  A scan walks the
 * chunks in order, skips those whose zones exclude a condition, and
 * decodes the others on demand; the first key column's bounds are found by
 * binary search over chunks and rows, so a lookup by id costs one chunk.
 * Decoded chunks stay in a cache per table of CACHE_BYTES, only the
 * columns statements asked for decoded: the viewer asks the same ranges
 * again and again, reports scan block at several steps.  A chunk that does not decode, or whose rows disagree with its
 * zone map, fails the query with one message; nothing is read past a
 * blob's end.
 */
#ifdef VS_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include "vs-chunk-vtab.h"
#include "vs-chunk.h"
#include "vs-trace-writer.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decoded chunks kept per table, in bytes: reports ask "what was live at
 * step S" at several steps, each a scan of block. */
#define CACHE_BYTES (128u << 20)
#define MAX_CONSTRAINTS 32

/* Operators a constraint may have; LIVE is block's live_seq = S. */
enum
{
  OP_EQ,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE,
  OP_ISNULL,
  OP_NOTNULL,
  OP_LIVE
};

typedef struct
{
  int64_t seq; /* the chunk's position */
  VsChunk chunk;
  int ci;           /* its index in the vtab's arrays */
  uint32_t checked; /* columns found to agree with the zone map */
  size_t bytes;     /* payload and decoded columns */
  int refs;         /* the cache's and each cursor's */
} Cached;

typedef struct
{
  sqlite3_vtab base;
  sqlite3 *db;
  const VsChunkTable *t;
  int nchunks;
  int64_t *seqs;
  int *rows;
  int64_t *first_row; /* rows before each chunk */
  int64_t total_rows;
  VsChunkZone *zones; /* nchunks × ncols */
  uint32_t sorted;    /* columns in order across the whole table: the key's first, and
                         those every chunk's zone says are sorted, their ranges in turn */
  sqlite3_stmt *read;
  VsChunkCodec *codec;
  Cached **cache;     /* per chunk, NULL when not decoded */
  size_t cache_bytes; /* what the cached chunks hold */
  uint64_t rng;       /* the state of cache_trim's draws */
} Vtab;

typedef struct
{
  int col, op;
  int64_t v;
  bool valid; /* false: not usable for pruning (SQLite checks it) */
} Cons;

typedef struct
{
  sqlite3_vtab_cursor base;
  Cons cons[MAX_CONSTRAINTS];
  int ncons;
  int rcol;       /* the column in order the scan seeks on (rows come in its order) */
  int64_t lo, hi; /* bounds on it */
  bool empty;     /* a condition no row meets */
  bool has_live;
  int64_t live;
  bool desc;     /* rows in the reverse of the natural order */
  uint32_t need; /* the columns the statement reads or constrains */
  int ci;        /* current chunk */
  Cached *cur;   /* its decoded rows, when loaded */
  int row;
  bool eof;
} Cursor;

static const char *kernel_view_sql
    = "CREATE TEMP VIEW IF NOT EXISTS kernel AS"
      "  SELECT e.id, e.start_ns, e.start_ns + e.duration_ns AS end_ns, e.process_id,"
      "         e.device_id, e.context, e.stream, e.correlation, c.name,"
      "         c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,"
      "         c.static_shared, c.dynamic_shared, c.registers"
      "  FROM kernel_exec e LEFT JOIN main.kernel_config c ON c.id = e.config_id";

static void
cached_unref (Cached *c)
{
  if (c != NULL && --c->refs == 0)
    {
      vs_chunk_clear (&c->chunk);
      sqlite3_free (c);
    }
}

static void
vtab_free (Vtab *vt)
{
  for (int i = 0; vt->cache != NULL && i < vt->nchunks; i++)
    cached_unref (vt->cache[i]);
  sqlite3_free (vt->cache);
  sqlite3_finalize (vt->read);
  vs_chunk_codec_free (vt->codec);
  sqlite3_free (vt->seqs);
  sqlite3_free (vt->rows);
  sqlite3_free (vt->first_row);
  sqlite3_free (vt->zones);
  sqlite3_free (vt);
}

static int
grow (Vtab *vt, int cap)
{
  int64_t *seqs = sqlite3_realloc64 (vt->seqs, (sqlite3_uint64)cap * sizeof *seqs);
  if (seqs)
    vt->seqs = seqs;
  int *rows = sqlite3_realloc64 (vt->rows, (sqlite3_uint64)cap * sizeof *rows);
  if (rows)
    vt->rows = rows;
  int64_t *first = sqlite3_realloc64 (vt->first_row, (sqlite3_uint64)cap * sizeof *first);
  if (first)
    vt->first_row = first;
  VsChunkZone *zones = sqlite3_realloc64 (
      vt->zones, (sqlite3_uint64)cap * (sqlite3_uint64)vt->t->ncols * sizeof *zones);
  if (zones)
    vt->zones = zones;
  return seqs && rows && first && zones ? SQLITE_OK : SQLITE_NOMEM;
}

/* Reads every chunk's row count and zone map of vt's table. */
static int
load_zones (Vtab *vt, char **pzErr)
{
  const VsChunkTable *t = vt->t;
  char *sql = sqlite3_mprintf ("SELECT seq, row_count, zone FROM main.\"%w_chunk\" ORDER BY seq",
                               t->name);
  sqlite3_stmt *s = NULL;
  int rc, cap = 0, k0 = t->key[0];

  if (sql == NULL)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2 (vt->db, sql, -1, &s, NULL);
  sqlite3_free (sql);
  if (rc != SQLITE_OK)
    {
      *pzErr = sqlite3_mprintf ("the trace's %s chunks cannot be read: %s", t->name,
                                sqlite3_errmsg (vt->db));
      return rc;
    }
  while ((rc = sqlite3_step (s)) == SQLITE_ROW)
    {
      int i = vt->nchunks;
      int64_t n = sqlite3_column_int64 (s, 1);
      const void *zone = sqlite3_column_blob (s, 2);
      int zone_len = sqlite3_column_bytes (s, 2);

      if (i == cap && grow (vt, cap = cap ? cap * 2 : 64) != SQLITE_OK)
        {
          rc = SQLITE_NOMEM;
          break;
        }
      VsChunkZone *z = vt->zones + (size_t)i * t->ncols;
      if (n < 1 || n > VS_CHUNK_ROWS || zone == NULL
          || vs_chunk_zone_decode (zone, (size_t)zone_len, t->ncols, z) < 0 || z[k0].has_null
          || !z[k0].has_value
          || (i > 0 && vt->zones[(size_t)(i - 1) * t->ncols + k0].max > z[k0].min))
        {
          *pzErr = sqlite3_mprintf ("the trace is damaged: %s chunk %lld has a bad row count or"
                                    " zone map",
                                    t->name, (long long)sqlite3_column_int64 (s, 0));
          rc = SQLITE_CORRUPT;
          break;
        }
      vt->seqs[i] = sqlite3_column_int64 (s, 0);
      vt->rows[i] = (int)n;
      vt->first_row[i] = vt->total_rows;
      vt->total_rows += n;
      vt->nchunks++;
    }
  if (rc == SQLITE_DONE)
    {
      vt->sorted = 1u << k0;
      for (int c = 0; c < t->ncols && vt->nchunks > 0; c++)
        {
          bool in_order = true;
          for (int i = 0; i < vt->nchunks && in_order; i++)
            {
              const VsChunkZone *z = vt->zones + (size_t)i * t->ncols + c;
              in_order = z->sorted
                         && (i == 0 || vt->zones[(size_t)(i - 1) * t->ncols + c].max <= z->min);
            }
          if (in_order)
            vt->sorted |= 1u << c;
        }
    }
  if (rc != SQLITE_DONE && rc != SQLITE_CORRUPT && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf ("the trace's %s chunks cannot be read: %s", t->name,
                              sqlite3_errmsg (vt->db));
  sqlite3_finalize (s);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* xCreate and xConnect: argv[3] names the table. */
static int
vtab_connect (sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
              char **pzErr)
{
  const VsChunkTable *t = argc > 3 ? vs_chunk_table_find (argv[3]) : NULL;
  Vtab *vt;
  char *decl;
  int rc;

  if (t == NULL)
    {
      *pzErr = sqlite3_mprintf ("vs_chunk: no chunked table %s", argc > 3 ? argv[3] : "named");
      return SQLITE_ERROR;
    }
  decl = sqlite3_mprintf ("CREATE TABLE x(");
  for (int c = 0; c < t->ncols && decl; c++)
    {
      char *next = sqlite3_mprintf ("%s%s\"%w\" INTEGER", decl, c ? ", " : "", t->columns[c]);
      sqlite3_free (decl);
      decl = next;
    }
  if (decl)
    {
      char *next = sqlite3_mprintf ("%s%s)", decl, t->live_seq ? ", live_seq HIDDEN" : "");
      sqlite3_free (decl);
      decl = next;
    }
  if (decl == NULL)
    return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab (db, decl);
  sqlite3_free (decl);
  if (rc != SQLITE_OK)
    return rc;
  /* Reading chunks has no side effect: views may use the tables even
   * with trusted_schema off (every reader's setting). */
  sqlite3_vtab_config (db, SQLITE_VTAB_INNOCUOUS);

  vt = sqlite3_malloc (sizeof *vt);
  if (vt == NULL)
    return SQLITE_NOMEM;
  memset (vt, 0, sizeof *vt);
  vt->db = db;
  vt->t = t;
  vt->codec = vs_chunk_codec_new ();
  rc = vt->codec ? load_zones (vt, pzErr) : SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    {
      vt->cache = sqlite3_malloc64 ((sqlite3_uint64)(vt->nchunks + 1) * sizeof *vt->cache);
      if (vt->cache != NULL)
        memset (vt->cache, 0, (size_t)(vt->nchunks + 1) * sizeof *vt->cache);
      char *sql = sqlite3_mprintf ("SELECT row_count, data FROM main.\"%w_chunk\" WHERE seq = ?",
                                   t->name);
      rc = sql && vt->cache ? sqlite3_prepare_v2 (db, sql, -1, &vt->read, NULL) : SQLITE_NOMEM;
      sqlite3_free (sql);
    }
  if (rc != SQLITE_OK)
    {
      vtab_free (vt);
      return rc;
    }
  *out = &vt->base;
  return SQLITE_OK;
}

static int
vtab_disconnect (sqlite3_vtab *base)
{
  vtab_free ((Vtab *)base);
  return SQLITE_OK;
}

/* The column a constraint or ORDER BY term names (-1, the rowid, is the
 * id column of a rowid table), or -1 when none. */
static int
real_column (const VsChunkTable *t, int col)
{
  if (col < 0)
    return t->id_col;
  return col;
}

static int
vtab_best_index (sqlite3_vtab *base, sqlite3_index_info *info)
{
  Vtab *vt = (Vtab *)base;
  const VsChunkTable *t = vt->t;
  /* The columns the statement reads (bit 63: any beyond the 63rd). */
  uint32_t used = (info->colUsed >> 63) ? UINT32_MAX : (uint32_t)(info->colUsed & UINT32_MAX);
  char *idx = sqlite3_mprintf ("%u;", (unsigned)used);
  int nargs = 0;
  bool fixed[VS_CHUNK_MAX_COLUMNS + 1] = { false };
  double rows = (double)vt->total_rows + 1;
  bool unique = false;

  for (int i = 0; i < info->nConstraint && idx != NULL; i++)
    {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      int col = real_column (t, c->iColumn), op;

      if (!c->usable || col < 0 || nargs == MAX_CONSTRAINTS)
        continue;
      switch (c->op)
        {
        case SQLITE_INDEX_CONSTRAINT_EQ:
          op = OP_EQ;
          break;
        case SQLITE_INDEX_CONSTRAINT_LT:
          op = OP_LT;
          break;
        case SQLITE_INDEX_CONSTRAINT_LE:
          op = OP_LE;
          break;
        case SQLITE_INDEX_CONSTRAINT_GT:
          op = OP_GT;
          break;
        case SQLITE_INDEX_CONSTRAINT_GE:
          op = OP_GE;
          break;
        case SQLITE_INDEX_CONSTRAINT_ISNULL:
          op = OP_ISNULL;
          break;
        case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
          op = OP_NOTNULL;
          break;
        default:
          continue;
        }
      if (col == t->ncols)
        {
          /* live_seq: only `=`, and the module answers it exactly. */
          if (op != OP_EQ)
            continue;
          op = OP_LIVE;
          info->aConstraintUsage[i].omit = 1;
          rows /= 20;
        }
      else if (op == OP_EQ)
        {
          if (col == t->id_col)
            unique = true;
          rows /= col == t->key[0] ? 200 : 10;
          if (!sqlite3_vtab_in (info, i, -1))
            fixed[col] = true;
        }
      else if (op != OP_ISNULL && op != OP_NOTNULL)
        rows /= col == t->key[0] ? 4 : 2;
      info->aConstraintUsage[i].argvIndex = ++nargs;
      char *next = sqlite3_mprintf ("%s%d:%d,", idx, col, op);
      sqlite3_free (idx);
      idx = next;
    }
  if (idx == NULL)
    return SQLITE_NOMEM;
  info->idxStr = idx;
  info->needToFreeIdxStr = 1;

  /* ORDER BY the natural order (key columns fixed by = skipped) is free. */
  bool ordered = info->nOrderBy > 0;
  int k = 0;
  for (int i = 0; i < info->nOrderBy && ordered; i++)
    {
      int col = real_column (t, info->aOrderBy[i].iColumn);
      while (k < t->nkey && fixed[t->key[k]] && t->key[k] != col)
        k++;
      if (info->aOrderBy[i].desc || col < 0 || k == t->nkey || t->key[k] != col)
        ordered = false;
      else
        k++;
    }
  /* ... and so is its reverse, all terms descending. */
  bool reversed = info->nOrderBy > 0;
  k = 0;
  for (int i = 0; i < info->nOrderBy && reversed; i++)
    {
      int col = real_column (t, info->aOrderBy[i].iColumn);
      while (k < t->nkey && fixed[t->key[k]] && t->key[k] != col)
        k++;
      if (!info->aOrderBy[i].desc || col < 0 || k == t->nkey || t->key[k] != col)
        reversed = false;
      else
        k++;
    }
  /* A column in order across the table (vt->sorted) comes in order in
   * either scan, ties in key order: ORDER BY it (then the key) is free. */
  if (!ordered && !reversed && info->nOrderBy >= 1 && info->nOrderBy <= 1 + t->nkey)
    {
      int c0 = real_column (t, info->aOrderBy[0].iColumn);
      bool desc = info->aOrderBy[0].desc, fits = c0 >= 0 && (vt->sorted & (1u << c0));
      for (int i = 1; i < info->nOrderBy && fits; i++)
        fits = info->aOrderBy[i].desc == desc
               && real_column (t, info->aOrderBy[i].iColumn) == t->key[i - 1];
      if (fits)
        {
          ordered = !desc;
          reversed = desc;
        }
    }
  info->orderByConsumed = ordered || reversed;
  info->idxNum = reversed ? 1 : 0;

  if (unique)
    {
      info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
      rows = 1;
    }
  if (rows < 1)
    rows = 1;
  info->estimatedRows = (sqlite3_int64)rows;
  info->estimatedCost = 10 + rows;
  return SQLITE_OK;
}

static int
cursor_open (sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
  Cursor *cur = sqlite3_malloc (sizeof *cur);

  if (cur == NULL)
    return SQLITE_NOMEM;
  memset (cur, 0, sizeof *cur);
  cur->eof = true;
  *out = &cur->base;
  return SQLITE_OK;
}

static int
cursor_close (sqlite3_vtab_cursor *base)
{
  Cursor *cur = (Cursor *)base;

  cached_unref (cur->cur);
  sqlite3_free (cur);
  return SQLITE_OK;
}

/* Whether a value v (null: NULL) meets constraint c. */
static bool
meets (const Cons *c, bool null, int64_t v)
{
  switch (c->op)
    {
    case OP_ISNULL:
      return null;
    case OP_NOTNULL:
      return !null;
    case OP_EQ:
      return !null && v == c->v;
    case OP_LT:
      return !null && v < c->v;
    case OP_LE:
      return !null && v <= c->v;
    case OP_GT:
      return !null && v > c->v;
    case OP_GE:
      return !null && v >= c->v;
    default:
      return true;
    }
}

/* Whether a chunk with zones z may hold a row meeting c. */
static bool
zone_may (const Cons *c, const VsChunkZone *z)
{
  switch (c->op)
    {
    case OP_ISNULL:
      return z->has_null;
    case OP_NOTNULL:
      return z->has_value;
    case OP_EQ:
      return z->has_value && z->min <= c->v && c->v <= z->max;
    case OP_LT:
      return z->has_value && z->min < c->v;
    case OP_LE:
      return z->has_value && z->min <= c->v;
    case OP_GT:
      return z->has_value && z->max > c->v;
    case OP_GE:
      return z->has_value && z->max >= c->v;
    default:
      return true;
    }
}

/* Column indices of block's alloc_seq and free_seq. */
enum
{
  BLOCK_ALLOC_SEQ = 9,
  BLOCK_FREE_SEQ = 10
};

static bool
chunk_may (const Vtab *vt, const Cursor *cur, int ci)
{
  const VsChunkZone *z = vt->zones + (size_t)ci * vt->t->ncols;

  for (int i = 0; i < cur->ncons; i++)
    if (cur->cons[i].valid && cur->cons[i].op != OP_LIVE
        && !zone_may (&cur->cons[i], &z[cur->cons[i].col]))
      return false;
  if (cur->has_live)
    {
      const VsChunkZone *a = &z[BLOCK_ALLOC_SEQ], *f = &z[BLOCK_FREE_SEQ];
      if (!a->has_value || a->min > cur->live)
        return false;
      if (!f->has_null && f->max <= cur->live)
        return false;
    }
  return true;
}

static bool
row_meets (const Cursor *cur, const VsChunk *ch, int row)
{
  for (int i = 0; i < cur->ncons; i++)
    {
      const Cons *c = &cur->cons[i];
      size_t at = (size_t)c->col * ch->nrows + row;
      if (c->valid && c->op != OP_LIVE && !meets (c, ch->nulls[at], ch->values[at]))
        return false;
    }
  if (cur->has_live)
    {
      size_t a = (size_t)BLOCK_ALLOC_SEQ * ch->nrows + row;
      size_t f = (size_t)BLOCK_FREE_SEQ * ch->nrows + row;
      if (ch->nulls[a] || ch->values[a] > cur->live)
        return false;
      if (!ch->nulls[f] && ch->values[f] <= cur->live)
        return false;
    }
  return true;
}

/* The bytes a cached chunk holds. */
static size_t
cached_size (const Cached *c)
{
  size_t n = (size_t)__builtin_popcount (c->chunk.decoded);
  size_t payload = 0;

  for (int i = 0; i < c->chunk.ncols; i++)
    payload += c->chunk.len[i];
  return payload + n * (size_t)c->chunk.nrows * (sizeof (int64_t) + 1);
}

/* Drops chunks from the cache until it holds at most CACHE_BYTES - room
 * (cursors keep their own reference).  The chunk dropped is drawn at
 * random: reports scan block whole at several steps, a cycle in which
 * dropping the least recently used would drop every chunk before its
 * next use, while a random one keeps about the share that fits. */
static void
cache_trim (Vtab *vt, size_t room)
{
  while (vt->cache_bytes + room > CACHE_BYTES && vt->cache_bytes > 0)
    {
      uint64_t x = (vt->rng += 0x9E3779B97F4A7C15ull);
      x ^= x >> 31;
      x *= 0xBF58476D1CE4E5B9ull;
      x ^= x >> 29;
      int start = (int)(x % (uint64_t)vt->nchunks), victim = -1;
      for (int k = 0; k < vt->nchunks && victim < 0; k++)
        if (vt->cache[(start + k) % vt->nchunks] != NULL)
          victim = (start + k) % vt->nchunks;
      if (victim < 0)
        return;
      vt->cache_bytes -= vt->cache[victim]->bytes;
      cached_unref (vt->cache[victim]);
      vt->cache[victim] = NULL;
    }
}

/* Decodes the columns of need in c not decoded yet and checks each
 * against the chunk's zone map (and the first key column's order). */
static int
ensure_columns (Vtab *vt, Cached *c, uint32_t need)
{
  VsChunk *ch = &c->chunk;
  const VsChunkZone *z = vt->zones + (size_t)c->ci * vt->t->ncols;
  int k0 = vt->t->key[0];
  char err[256];

  need &= ch->ncols >= 32 ? UINT32_MAX : (1u << ch->ncols) - 1;
  if ((need & ~c->checked) == 0)
    return SQLITE_OK;
  if (vs_chunk_columns (ch, need, err, sizeof err) < 0)
    goto bad;
  for (int col = 0; col < ch->ncols; col++)
    {
      bool has_null = false, has_value = false;
      if (!(ch->decoded & (1u << col)) || (c->checked & (1u << col)))
        continue;
      for (int i = 0; i < ch->nrows; i++)
        {
          size_t at = (size_t)col * ch->nrows + i;
          if (ch->nulls[at])
            has_null = true;
          else
            {
              has_value = true;
              if (ch->values[at] < z[col].min || ch->values[at] > z[col].max)
                goto bad;
              if ((col == k0 || z[col].sorted) && i > 0 && ch->values[at - 1] > ch->values[at])
                goto bad;
            }
        }
      if (has_null != z[col].has_null || has_value != z[col].has_value
          || (z[col].sorted && has_null))
        goto bad;
      c->checked |= 1u << col;
    }
  vt->cache_bytes -= c->bytes;
  c->bytes = cached_size (c);
  vt->cache_bytes += c->bytes;
  return SQLITE_OK;

bad:
  sqlite3_free (vt->base.zErrMsg);
  vt->base.zErrMsg = sqlite3_mprintf ("the trace is damaged: %s chunk %lld does not decode",
                                      vt->t->name, (long long)c->seq);
  return SQLITE_ERROR;
}

/* Makes chunk ci the cursor's, decoding it unless cached. */
static int
load_chunk (Vtab *vt, Cursor *cur, int ci)
{
  int64_t seq = vt->seqs[ci];
  char err[256];
  int rc;

  cached_unref (cur->cur);
  cur->cur = NULL;
  if (vt->cache[ci] != NULL)
    {
      vt->cache[ci]->refs++;
      cur->cur = vt->cache[ci];
      return ensure_columns (vt, cur->cur, cur->need);
    }

  Cached *c = sqlite3_malloc (sizeof *c);
  if (c == NULL)
    return SQLITE_NOMEM;
  memset (c, 0, sizeof *c);
  c->seq = seq;
  c->ci = ci;
  sqlite3_bind_int64 (vt->read, 1, seq);
  rc = sqlite3_step (vt->read);
  if (rc == SQLITE_ROW)
    {
      const void *data = sqlite3_column_blob (vt->read, 1);
      int len = sqlite3_column_bytes (vt->read, 1);
      if (sqlite3_column_int64 (vt->read, 0) != vt->rows[ci] || data == NULL
          || vs_chunk_open (vt->codec, data, (size_t)len, vt->t->ncols, vt->rows[ci], &c->chunk,
                            err, sizeof err)
                 < 0)
        rc = SQLITE_CORRUPT;
      else
        rc = SQLITE_OK;
    }
  else if (rc == SQLITE_DONE)
    rc = SQLITE_CORRUPT;
  sqlite3_reset (vt->read);
  if (rc != SQLITE_OK)
    {
      vs_chunk_clear (&c->chunk);
      sqlite3_free (c);
      sqlite3_free (vt->base.zErrMsg);
      if (rc == SQLITE_CORRUPT)
        vt->base.zErrMsg = sqlite3_mprintf ("the trace is damaged: %s chunk %lld does not decode",
                                            vt->t->name, (long long)seq);
      else
        vt->base.zErrMsg = sqlite3_mprintf ("%s", sqlite3_errmsg (vt->db));
      return SQLITE_ERROR;
    }
  c->refs = 2; /* the cache's and the cursor's */
  c->bytes = cached_size (c);
  cache_trim (vt, c->bytes + (size_t)__builtin_popcount (cur->need) * c->chunk.nrows * 9);
  vt->cache[ci] = c;
  vt->cache_bytes += c->bytes;
  cur->cur = c;
  return ensure_columns (vt, c, cur->need);
}

/* Positions the cursor on the first row at or after (ci, row) that meets
 * its constraints, loading chunks as needed. */
static int
seek (Vtab *vt, Cursor *cur, int ci, int row)
{
  int k0 = cur->rcol;

  for (; ci < vt->nchunks; ci++, row = 0)
    {
      const VsChunkZone *z = vt->zones + (size_t)ci * vt->t->ncols;
      if (z[k0].min > cur->hi)
        break;
      if (!chunk_may (vt, cur, ci))
        continue;
      if (cur->cur == NULL || cur->ci != ci)
        {
          int rc = load_chunk (vt, cur, ci);
          if (rc != SQLITE_OK)
            return rc;
          cur->ci = ci;
          if (row == 0 && z[k0].min < cur->lo)
            {
              /* The first row with key >= lo, by binary search. */
              const int64_t *key = cur->cur->chunk.values + (size_t)k0 * cur->cur->chunk.nrows;
              int a = 0, b = cur->cur->chunk.nrows;
              while (a < b)
                {
                  int m = a + (b - a) / 2;
                  if (key[m] < cur->lo)
                    a = m + 1;
                  else
                    b = m;
                }
              row = a;
            }
        }
      const VsChunk *ch = &cur->cur->chunk;
      for (; row < ch->nrows; row++)
        {
          if (ch->values[(size_t)k0 * ch->nrows + row] > cur->hi)
            {
              cur->eof = true;
              return SQLITE_OK;
            }
          if (row_meets (cur, ch, row))
            {
              cur->row = row;
              cur->eof = false;
              return SQLITE_OK;
            }
        }
    }
  cur->eof = true;
  return SQLITE_OK;
}

/* seek() in the reverse order: the last row at or before (ci, row) that
 * meets the constraints (row -1: the chunk's last). */
static int
seek_back (Vtab *vt, Cursor *cur, int ci, int row)
{
  int k0 = cur->rcol;

  for (; ci >= 0; ci--, row = -1)
    {
      const VsChunkZone *z = vt->zones + (size_t)ci * vt->t->ncols;
      if (z[k0].max < cur->lo)
        break;
      if (!chunk_may (vt, cur, ci))
        continue;
      if (cur->cur == NULL || cur->ci != ci)
        {
          int rc = load_chunk (vt, cur, ci);
          if (rc != SQLITE_OK)
            return rc;
          cur->ci = ci;
        }
      const VsChunk *ch = &cur->cur->chunk;
      const int64_t *key = ch->values + (size_t)k0 * ch->nrows;
      if (row < 0)
        {
          /* The last row with key <= hi, by binary search. */
          int a = 0, b = ch->nrows;
          while (a < b)
            {
              int m = a + (b - a) / 2;
              if (key[m] <= cur->hi)
                a = m + 1;
              else
                b = m;
            }
          row = a - 1;
        }
      for (; row >= 0; row--)
        {
          if (key[row] < cur->lo)
            {
              cur->eof = true;
              return SQLITE_OK;
            }
          if (row_meets (cur, ch, row))
            {
              cur->row = row;
              cur->eof = false;
              return SQLITE_OK;
            }
        }
    }
  cur->eof = true;
  return SQLITE_OK;
}

/* The integer a constraint's value gives, when it is one. */
static bool
value_int (sqlite3_value *v, int64_t *out)
{
  if (sqlite3_value_type (v) == SQLITE_INTEGER)
    {
      *out = sqlite3_value_int64 (v);
      return true;
    }
  return false;
}

static int
cursor_filter (sqlite3_vtab_cursor *base, int idxNum, const char *idxStr, int argc,
               sqlite3_value **argv)
{
  Cursor *cur = (Cursor *)base;
  Vtab *vt = (Vtab *)base->pVtab;
  int k0 = vt->t->key[0];
  const char *p = idxStr ? idxStr : "";

  cur->ncons = 0;
  cur->desc = (idxNum & 1) != 0;
  cur->need = (uint32_t)strtoul (p, (char **)&p, 10);
  if (*p == ';')
    p++;
  if (vt->t->id_col >= 0)
    cur->need |= 1u << vt->t->id_col;
  cur->has_live = false;
  cur->empty = false;
  cur->lo = INT64_MIN;
  cur->hi = INT64_MAX;
  for (int i = 0; i < argc && *p; i++)
    {
      Cons *c = &cur->cons[cur->ncons++];
      char *end;

      assert (cur->ncons <= MAX_CONSTRAINTS);
      c->col = (int)strtol (p, &end, 10);
      c->op = (int)strtol (end + 1, &end, 10);
      p = end + 1;
      if (c->col < vt->t->ncols)
        cur->need |= 1u << c->col;
      else
        cur->need |= (1u << BLOCK_ALLOC_SEQ) | (1u << BLOCK_FREE_SEQ);
      c->valid = value_int (argv[i], &c->v);
      if (c->op == OP_ISNULL || c->op == OP_NOTNULL)
        c->valid = true;
      if (c->op == OP_LIVE)
        {
          int type = sqlite3_value_numeric_type (argv[i]);
          if (type == SQLITE_INTEGER)
            cur->live = sqlite3_value_int64 (argv[i]);
          else if (type == SQLITE_FLOAT)
            {
              double d = floor (sqlite3_value_double (argv[i]));
              cur->live = d <= -9.2e18 ? INT64_MIN : d >= 9.2e18 ? INT64_MAX : (int64_t)d;
            }
          else
            cur->empty = true; /* NULL or text: `=` holds for no row */
          cur->has_live = true;
          continue;
        }
    }
  /* The column to seek on: the key's first when a condition bounds it,
   * else another column in order that one bounds (block.alloc_seq). */
  cur->rcol = -1;
  for (int i = 0; i < cur->ncons; i++)
    if (cur->cons[i].valid && cur->cons[i].op != OP_LIVE && cur->cons[i].col == k0)
      cur->rcol = k0;
  for (int i = 0; i < cur->ncons && cur->rcol < 0; i++)
    if (cur->cons[i].valid && cur->cons[i].op != OP_LIVE && (vt->sorted & (1u << cur->cons[i].col)))
      cur->rcol = cur->cons[i].col;
  if (cur->rcol < 0)
    cur->rcol = k0;
  cur->need |= 1u << cur->rcol;
  for (int i = 0; i < cur->ncons; i++)
    {
      Cons *c = &cur->cons[i];
      if (!c->valid || c->op == OP_LIVE || c->col != cur->rcol)
        continue;
      switch (c->op)
        {
        case OP_EQ:
          cur->lo = c->v > cur->lo ? c->v : cur->lo;
          cur->hi = c->v < cur->hi ? c->v : cur->hi;
          break;
        case OP_GE:
          cur->lo = c->v > cur->lo ? c->v : cur->lo;
          break;
        case OP_GT:
          if (c->v == INT64_MAX)
            cur->empty = true;
          else if (c->v + 1 > cur->lo)
            cur->lo = c->v + 1;
          break;
        case OP_LE:
          cur->hi = c->v < cur->hi ? c->v : cur->hi;
          break;
        case OP_LT:
          if (c->v == INT64_MIN)
            cur->empty = true;
          else if (c->v - 1 < cur->hi)
            cur->hi = c->v - 1;
          break;
        case OP_ISNULL:
          cur->empty = true;
          break;
        default:
          break;
        }
    }
  if (cur->lo > cur->hi)
    cur->empty = true;

  cached_unref (cur->cur);
  cur->cur = NULL;
  cur->eof = true;
  if (cur->empty)
    return SQLITE_OK;

  if (cur->desc)
    {
      /* The last chunk whose first key is at most hi. */
      int a = 0, b = vt->nchunks;
      while (a < b)
        {
          int m = a + (b - a) / 2;
          if (vt->zones[(size_t)m * vt->t->ncols + cur->rcol].min <= cur->hi)
            a = m + 1;
          else
            b = m;
        }
      return seek_back (vt, cur, a - 1, -1);
    }

  /* The first chunk whose last key reaches lo, by binary search. */
  int a = 0, b = vt->nchunks;
  while (a < b)
    {
      int m = a + (b - a) / 2;
      if (vt->zones[(size_t)m * vt->t->ncols + cur->rcol].max < cur->lo)
        a = m + 1;
      else
        b = m;
    }
  return seek (vt, cur, a, 0);
}

static int
cursor_next (sqlite3_vtab_cursor *base)
{
  Cursor *cur = (Cursor *)base;

  if (cur->desc)
    return seek_back ((Vtab *)base->pVtab, cur, cur->ci, cur->row - 1);
  return seek ((Vtab *)base->pVtab, cur, cur->ci, cur->row + 1);
}

static int
cursor_eof (sqlite3_vtab_cursor *base)
{
  return ((Cursor *)base)->eof;
}

static int
cursor_column (sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col)
{
  Cursor *cur = (Cursor *)base;
  const VsChunk *ch = &cur->cur->chunk;

  if (col >= ch->ncols)
    {
      if (cur->has_live)
        sqlite3_result_int64 (ctx, cur->live);
      return SQLITE_OK;
    }
  if (!(ch->decoded & (1u << col)))
    {
      /* A column SQLite did not announce: decoded now. */
      Vtab *vt = (Vtab *)base->pVtab;
      int rc = ensure_columns (vt, cur->cur, cur->need | (1u << col));
      if (rc != SQLITE_OK)
        {
          sqlite3_result_error (ctx, vt->base.zErrMsg ? vt->base.zErrMsg : "damaged chunk", -1);
          return rc;
        }
    }
  size_t at = (size_t)col * ch->nrows + cur->row;
  if (!ch->nulls[at])
    sqlite3_result_int64 (ctx, ch->values[at]);
  return SQLITE_OK;
}

static int
cursor_rowid (sqlite3_vtab_cursor *base, sqlite3_int64 *rowid)
{
  Cursor *cur = (Cursor *)base;
  Vtab *vt = (Vtab *)base->pVtab;
  const VsChunk *ch = &cur->cur->chunk;

  if (vt->t->id_col >= 0)
    *rowid = ch->values[(size_t)vt->t->id_col * ch->nrows + cur->row];
  else
    *rowid = vt->first_row[cur->ci] + cur->row;
  return SQLITE_OK;
}

static sqlite3_module chunk_module = {
  .iVersion = 0,
  .xCreate = vtab_connect,
  .xConnect = vtab_connect,
  .xBestIndex = vtab_best_index,
  .xDisconnect = vtab_disconnect,
  .xDestroy = vtab_disconnect,
  .xOpen = cursor_open,
  .xClose = cursor_close,
  .xFilter = cursor_filter,
  .xNext = cursor_next,
  .xEof = cursor_eof,
  .xColumn = cursor_column,
  .xRowid = cursor_rowid,
};

int
vs_chunk_register (sqlite3 *db)
{
  return sqlite3_create_module (db, "vs_chunk", &chunk_module, NULL);
}

int
vs_chunk_attach (sqlite3 *db, char **errmsg)
{
  sqlite3_stmt *s;
  int64_t version = 0;
  int rc;

  if (errmsg)
    *errmsg = NULL;
  rc = sqlite3_prepare_v2 (db, "PRAGMA main.user_version", -1, &s, NULL);
  if (rc != SQLITE_OK)
    return rc;
  if (sqlite3_step (s) == SQLITE_ROW)
    version = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  if (version != VS_TRACE_SCHEMA_COMPACTED)
    return SQLITE_OK;

  rc = vs_chunk_register (db);
  for (size_t i = 0; i < vs_chunk_n_tables && rc == SQLITE_OK; i++)
    {
      char *sql = sqlite3_mprintf ("CREATE VIRTUAL TABLE IF NOT EXISTS temp.\"%w\" USING"
                                   " vs_chunk(%s)",
                                   vs_chunk_tables[i].name, vs_chunk_tables[i].name);
      rc = sql ? sqlite3_exec (db, sql, NULL, NULL, errmsg) : SQLITE_NOMEM;
      sqlite3_free (sql);
    }
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (db, kernel_view_sql, NULL, NULL, errmsg);
  return rc;
}
