/* SPDX-License-Identifier: MIT */
/* vs-chunk-vtab.c — the virtual-table module "vs_chunk" (vs-chunk-vtab.h).
 *
 * A table is opened by reading every chunk's row count and zone map into
 * memory (a few bytes per column and chunk) and checking them: row counts
 * in range, the chunks forming at most VS_CHUNK_MAX_RUNS runs, each in key
 * order (block is chunked by device and lifetime class, one run per pair;
 * the other tables are one run).  A scan walks each run's chunks in order,
 * skips those whose zones exclude a condition, decodes the others on
 * demand, and merges the runs' rows into key order through a binary heap
 * of the runs not at their end; the first key column's bounds are
 * found by binary search over chunks and rows, so a lookup by id costs one
 * chunk per run.  Chunks come decoded from the connection's cache
 * (vs-chunk-store.c): the viewer asks the same ranges again and again,
 * reports scan block at several steps.  A damaged chunk fails the query
 * with one message.
 */
#ifdef VS_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include "vs-chunk-vtab-private.h"
#include "vs-sqlite-alloc.h"
#include "vs-chunk-vtab.h"
#include "vs-trace-writer.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int col, op;
  int64_t v;
  bool valid; /* false: not usable for pruning (SQLite checks it) */
} Cons;

/* Where a scan stands in one run of chunks. */
typedef struct
{
  int ci;             /* current chunk */
  VsChunkCached *cur; /* its decoded rows, when loaded */
  int row;
  bool eof;
} RunPos;

typedef struct
{
  sqlite3_vtab_cursor base;
  Cons cons[MAX_CONSTRAINTS];
  int ncons;
  int rcol;       /* the column in order the scan seeks on (rows come in its order) */
  int mcol;       /* the column the runs' rows are merged on (then the key) */
  int64_t lo, hi; /* bounds on rcol */
  bool empty;     /* a condition no row meets */
  bool has_live;
  int64_t live;
  bool desc;     /* rows in the reverse of the natural order */
  uint32_t need; /* the columns the statement reads or constrains */
  RunPos runs[VS_CHUNK_MAX_RUNS];
  /* The runs not at their end, as a binary heap on their current rows in
   * the scan's order: heap[0] is the run whose row is the current one. */
  int heap[VS_CHUNK_MAX_RUNS];
  int nheap;
  int at; /* heap[0], or -1 */
  bool eof;
} Cursor;

static const char *kernel_view_sql
    = "CREATE TEMP VIEW IF NOT EXISTS kernel AS"
      "  SELECT e.id, e.start_ns, e.start_ns + e.duration_ns AS end_ns, e.process_id,"
      "         e.device_id, e.context, e.stream, e.correlation, c.name,"
      "         c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,"
      "         c.static_shared, c.dynamic_shared, c.registers"
      "  FROM kernel_exec e LEFT JOIN main.kernel_config c ON c.id = e.config_id";

/* xCreate and xConnect: argv[3] names the table. */
static int
vtab_connect (sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
              char **pzErr)
{
  const VsChunkTable *t = argc > 3 ? vs_chunk_table_find (argv[3]) : NULL;
  VsChunkVtab *vt;
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

  vt = vs_sqlite_zalloc (sizeof *vt);
  if (vt == NULL)
    return SQLITE_NOMEM;
  vt->db = db;
  vt->t = t;
  assert (aux != NULL);
  vs_chunk_vtab_join (vt, aux);
  vt->codec = vs_chunk_codec_new ();
  rc = vt->codec ? vs_chunk_vtab_load_zones (vt, pzErr) : SQLITE_NOMEM;
  if (rc == SQLITE_OK)
    {
      vt->cache = sqlite3_malloc64 ((sqlite3_uint64)(vt->nchunks + 1) * sizeof *vt->cache);
      vt->cached = sqlite3_malloc64 ((sqlite3_uint64)(vt->nchunks + 1) * sizeof *vt->cached);
      if (vt->cache != NULL)
        memset (vt->cache, 0, (size_t)(vt->nchunks + 1) * sizeof *vt->cache);
      char *sql = sqlite3_mprintf ("SELECT row_count, data FROM main.\"%w_chunk\" WHERE seq = ?",
                                   t->name);
      rc = sql && vt->cache && vt->cached ? sqlite3_prepare_v2 (db, sql, -1, &vt->read, NULL)
                                          : SQLITE_NOMEM;
      sqlite3_free (sql);
    }
  if (rc != SQLITE_OK)
    {
      vs_chunk_vtab_free (vt);
      return rc;
    }
  *out = &vt->base;
  return SQLITE_OK;
}

static int
vtab_disconnect (sqlite3_vtab *base)
{
  vs_chunk_vtab_free ((VsChunkVtab *)base);
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
  VsChunkVtab *vt = (VsChunkVtab *)base;
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
  int mcol = -1;
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
          mcol = c0;
        }
    }
  info->orderByConsumed = ordered || reversed;
  /* bit 0: descending; the rest: the merge column + 1 (0: the key). */
  info->idxNum = (reversed ? 1 : 0) | ((mcol + 1) << 1);

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
  Cursor *cur = vs_sqlite_zalloc (sizeof *cur);

  if (cur == NULL)
    return SQLITE_NOMEM;
  cur->eof = true;
  *out = &cur->base;
  return SQLITE_OK;
}

static int
cursor_close (sqlite3_vtab_cursor *base)
{
  Cursor *cur = (Cursor *)base;

  for (int r = 0; r < VS_CHUNK_MAX_RUNS; r++)
    vs_chunk_cached_unref (cur->runs[r].cur);
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
chunk_may (const VsChunkVtab *vt, const Cursor *cur, int ci)
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

/* Positions the run at p on row of its current chunk, or at its end for
 * row -1.  SQLITE_OK. */
static int
run_at (RunPos *p, int row)
{
  if (row < 0)
    p->eof = true;
  else
    {
      p->row = row;
      p->eof = false;
    }
  return SQLITE_OK;
}

/* Makes chunk ci (with the columns the cursor needs) the current chunk of
 * the run at p, the chunk before it let go.  SQLITE_OK or an error code. */
static int
run_load (VsChunkVtab *vt, Cursor *cur, RunPos *p, int ci)
{
  vs_chunk_cached_unref (p->cur);
  p->cur = NULL;
  int rc = vs_chunk_vtab_get (vt, ci, cur->need, &p->cur);
  if (rc == SQLITE_OK)
    p->ci = ci;
  return rc;
}

/* The first of the n keys (in ascending order) at or above v (above v,
 * when above is set); n when there is none. */
static int
key_bound (const int64_t *key, int n, int64_t v, bool above)
{
  int a = 0, b = n;

  while (a < b)
    {
      int m = a + (b - a) / 2;
      if (key[m] < v || (above && key[m] == v))
        a = m + 1;
      else
        b = m;
    }
  return a;
}

/* Positions run r of the cursor on its first row at or after (ci, row)
 * that meets the constraints, loading chunks as needed; with back, on its
 * last row at or before (ci, row) (row -1: the chunk's last). */
static int
seek (VsChunkVtab *vt, Cursor *cur, int r, int ci, int row, bool back)
{
  RunPos *p = &cur->runs[r];
  int k0 = cur->rcol, step = back ? -1 : 1;
  int start = vt->run_start[r], end = vt->run_start[r + 1];

  for (; back ? ci >= start : ci < end; ci += step, row = back ? -1 : 0)
    {
      const VsChunkZone *z = vt->zones + (size_t)ci * vt->t->ncols;
      if (back ? z[k0].max < cur->lo : z[k0].min > cur->hi)
        break;
      if (!chunk_may (vt, cur, ci))
        continue;
      bool fresh = p->cur == NULL || p->ci != ci;
      if (fresh)
        {
          int rc = run_load (vt, cur, p, ci);
          if (rc != SQLITE_OK)
            return rc;
        }
      const VsChunk *ch = &p->cur->chunk;
      const int64_t *key = ch->values + (size_t)k0 * ch->nrows;
      if (back && row < 0)
        row = key_bound (key, ch->nrows, cur->hi, true) - 1; /* the last key <= hi */
      else if (!back && fresh && row == 0 && z[k0].min < cur->lo)
        row = key_bound (key, ch->nrows, cur->lo, false); /* the first key >= lo */
      for (; row >= 0 && row < ch->nrows; row += step)
        {
          if (back ? key[row] < cur->lo : key[row] > cur->hi)
            return run_at (p, -1);
          if (row_meets (cur, ch, row))
            return run_at (p, row);
        }
    }
  return run_at (p, -1);
}

/* Compares the current rows of runs a and b: by the merge column, then
 * the key (NULL first). */
static int
run_cmp (const VsChunkVtab *vt, const Cursor *cur, int a, int b)
{
  const RunPos *pa = &cur->runs[a], *pb = &cur->runs[b];
  const VsChunk *ca = &pa->cur->chunk, *cb = &pb->cur->chunk;

  for (int k = -1; k < vt->t->nkey; k++)
    {
      int col = k < 0 ? cur->mcol : vt->t->key[k];
      if (col < 0)
        continue;
      size_t ia = (size_t)col * ca->nrows + pa->row, ib = (size_t)col * cb->nrows + pb->row;
      bool na = ca->nulls[ia], nb = cb->nulls[ib];
      if (na != nb)
        return na ? -1 : 1;
      if (!na && ca->values[ia] != cb->values[ib])
        return ca->values[ia] < cb->values[ib] ? -1 : 1;
    }
  return a < b ? -1 : 1;
}

/* Whether run a's current row comes before run b's in the scan's order. */
static bool
run_before (const VsChunkVtab *vt, const Cursor *cur, int a, int b)
{
  return (run_cmp (vt, cur, a, b) < 0) != cur->desc;
}

/* Restores the heap's order below position i (its run has moved on). */
static void
sift_down (const VsChunkVtab *vt, Cursor *cur, int i)
{
  for (;;)
    {
      int l = 2 * i + 1, r = l + 1, m = i;
      if (l < cur->nheap && run_before (vt, cur, cur->heap[l], cur->heap[m]))
        m = l;
      if (r < cur->nheap && run_before (vt, cur, cur->heap[r], cur->heap[m]))
        m = r;
      if (m == i)
        return;
      int t = cur->heap[i];
      cur->heap[i] = cur->heap[m];
      cur->heap[m] = t;
      i = m;
    }
}

/* The current run is the heap's first again. */
static void
set_current (Cursor *cur)
{
  cur->at = cur->nheap > 0 ? cur->heap[0] : -1;
  cur->eof = cur->nheap == 0;
}

/* Makes the run holding the next row in the scan's order the current
 * one — the least (descending: the greatest) of the runs' rows — once
 * every run has been positioned. */
static void
pick_first (VsChunkVtab *vt, Cursor *cur)
{
  cur->nheap = 0;
  for (int r = 0; r < vt->nruns; r++)
    if (!cur->runs[r].eof)
      cur->heap[cur->nheap++] = r;
  for (int i = cur->nheap / 2; i-- > 0;)
    sift_down (vt, cur, i);
  set_current (cur);
}

/* The same after the current run moved on (or reached its end). */
static void
pick_next (VsChunkVtab *vt, Cursor *cur)
{
  if (cur->runs[cur->heap[0]].eof)
    cur->heap[0] = cur->heap[--cur->nheap];
  sift_down (vt, cur, 0);
  set_current (cur);
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
  VsChunkVtab *vt = (VsChunkVtab *)base->pVtab;
  int k0 = vt->t->key[0];
  const char *p = idxStr ? idxStr : "";

  cur->ncons = 0;
  cur->desc = (idxNum & 1) != 0;
  cur->mcol = (idxNum >> 1) - 1;
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
  if (cur->mcol >= 0)
    cur->need |= 1u << cur->mcol;
  for (int k = 0; k < vt->t->nkey && vt->nruns > 1; k++)
    cur->need |= 1u << vt->t->key[k];
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

  for (int r = 0; r < VS_CHUNK_MAX_RUNS; r++)
    {
      vs_chunk_cached_unref (cur->runs[r].cur);
      cur->runs[r].cur = NULL;
      cur->runs[r].eof = true;
    }
  cur->nheap = 0;
  cur->at = -1;
  cur->eof = true;
  if (cur->empty)
    return SQLITE_OK;

  for (int r = 0; r < vt->nruns; r++)
    {
      int a = vt->run_start[r], b = vt->run_start[r + 1], rc;
      if (cur->desc)
        {
          /* The run's last chunk whose first key is at most hi. */
          while (a < b)
            {
              int m = a + (b - a) / 2;
              if (vt->zones[(size_t)m * vt->t->ncols + cur->rcol].min <= cur->hi)
                a = m + 1;
              else
                b = m;
            }
          rc = seek (vt, cur, r, a - 1, -1, true);
        }
      else
        {
          /* The run's first chunk whose last key reaches lo. */
          while (a < b)
            {
              int m = a + (b - a) / 2;
              if (vt->zones[(size_t)m * vt->t->ncols + cur->rcol].max < cur->lo)
                a = m + 1;
              else
                b = m;
            }
          rc = seek (vt, cur, r, a, 0, false);
        }
      if (rc != SQLITE_OK)
        return rc;
    }
  pick_first (vt, cur);
  return SQLITE_OK;
}

static int
cursor_next (sqlite3_vtab_cursor *base)
{
  Cursor *cur = (Cursor *)base;
  VsChunkVtab *vt = (VsChunkVtab *)base->pVtab;
  RunPos *p = &cur->runs[cur->at];
  int rc;

  if (cur->desc && p->row == 0)
    rc = seek (vt, cur, cur->at, p->ci - 1, -1, true); /* row -1 means the chunk's last */
  else if (cur->desc)
    rc = seek (vt, cur, cur->at, p->ci, p->row - 1, true);
  else
    rc = seek (vt, cur, cur->at, p->ci, p->row + 1, false);
  if (rc == SQLITE_OK)
    pick_next (vt, cur);
  return rc;
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
  RunPos *p = &cur->runs[cur->at];
  const VsChunk *ch = &p->cur->chunk;

  if (col >= ch->ncols)
    {
      if (cur->has_live)
        sqlite3_result_int64 (ctx, cur->live);
      return SQLITE_OK;
    }
  if (!(ch->decoded & (1u << col)))
    {
      /* A column SQLite did not announce: decoded now. */
      VsChunkVtab *vt = (VsChunkVtab *)base->pVtab;
      int rc = vs_chunk_vtab_ensure (vt, p->cur, cur->need | (1u << col));
      if (rc != SQLITE_OK)
        {
          sqlite3_result_error (ctx, vt->base.zErrMsg ? vt->base.zErrMsg : "damaged chunk", -1);
          return rc;
        }
    }
  size_t at = (size_t)col * ch->nrows + p->row;
  if (!ch->nulls[at])
    sqlite3_result_int64 (ctx, ch->values[at]);
  return SQLITE_OK;
}

static int
cursor_rowid (sqlite3_vtab_cursor *base, sqlite3_int64 *rowid)
{
  Cursor *cur = (Cursor *)base;
  VsChunkVtab *vt = (VsChunkVtab *)base->pVtab;
  const RunPos *p = &cur->runs[cur->at];
  const VsChunk *ch = &p->cur->chunk;

  if (vt->t->id_col >= 0)
    *rowid = ch->values[(size_t)vt->t->id_col * ch->nrows + p->row];
  else
    *rowid = vt->first_row[p->ci] + p->row;
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
  return vs_chunk_register_with_budget (db, CACHE_BYTES);
}

int
vs_chunk_register_with_budget (sqlite3 *db, size_t cache_bytes)
{
  VsChunkBudget *budget = vs_chunk_budget_new (cache_bytes);

  if (budget == NULL)
    return SQLITE_NOMEM;
  /* The module holds one reference, each table another: a module
   * registered again leaves the tables open on the old one theirs. */
  return sqlite3_create_module_v2 (db, "vs_chunk", &chunk_module, budget, vs_chunk_budget_unref);
}

bool
vs_chunk_kept_plain (sqlite3 *db, const char *name)
{
  static const char *sql
      = "SELECT (SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?1)"
        " AND NOT (SELECT count(*) FROM main.sqlite_master WHERE type = 'table'"
        "  AND name = ?1 || '_chunk')";
  sqlite3_stmt *s;
  bool plain = false;

  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text (s, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (s) == SQLITE_ROW)
    plain = sqlite3_column_int (s, 0) != 0;
  sqlite3_finalize (s);
  return plain;
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
      /* A table compacted traces kept plain before it was chunked
       * (series_level) is read as it is. */
      if (vs_chunk_kept_plain (db, vs_chunk_tables[i].name))
        continue;
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
