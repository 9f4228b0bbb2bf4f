/* SPDX-License-Identifier: MIT */
/* vs-trace-replay.c — replaying paired events into the derived tables.
 *
 * One pass over the sorted events keeps, per device, the running totals of
 * every allocator and of `all`, writes a series row after each change,
 * feeds the summary levels and tracks peaks; then the block and summary
 * tables are written from the pairing and the totals.
 */
#include "vs-trace-finalize-private.h"
#include "vs-row-sink.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vs-sql-batch.h"

VsFinAcc *
vs_fin_acc_at (VsFinState *st, int32_t dev, int32_t alloc)
{
  return &st->acc[(size_t)dev * (size_t)(st->nalloc + 1) + (size_t)alloc];
}

static const char *series_sql
    = "series (seq, device_id, allocator_id, ts, reserved_bytes,"
      " allocated_bytes, device_bytes, static_bytes, pinned_bytes, managed_bytes)";

/* Per-series summary-level builder: one accumulator per shift. */
#define N_SHIFTS 24
#define FIRST_SHIFT 10

typedef struct
{
  int64_t bucket;
  int64_t min_r, max_r, last_r, min_a, max_a, last_a, max_d;
  int has;
} LevelAcc;

typedef struct
{
  LevelAcc lv[N_SHIFTS];
  int64_t rows;
} Levels;

/* Where level rows go and which shifts are worth storing: only levels with
 * at most a quarter as many buckets as there are events (finer zooms read
 * the series itself, which is then short), up to one bucket for all. */
typedef struct
{
  VsSqlBatchSet rows; /* one batch per allocator id and shift */
  int first_shift, n_shifts;
  /* With a row sink: the rows held here instead (LEVEL_WIDTH values each:
   * the columns, then the NULL mask), handed over sorted after the
   * series pass. */
  bool hold;
  int64_t *held;
  size_t nheld, cap;
} LevelCtx;

#define LEVEL_COLS 11
#define LEVEL_WIDTH (LEVEL_COLS + 1)

static const char *level_sql
    = "series_level (shift, device_id, allocator_id, bucket,"
      " min_reserved, max_reserved, last_reserved, min_allocated, max_allocated,"
      " last_allocated, max_device)";

static int
level_flush (LevelCtx *ctx, int shift_i, int32_t dev, int32_t alloc, LevelAcc *l, int with_device)
{
  if (!l->has)
    return 0;
  int64_t v[LEVEL_WIDTH] = { ctx->first_shift + 2 * shift_i,
                             dev,
                             alloc,
                             l->bucket,
                             l->min_r,
                             l->max_r,
                             l->last_r,
                             l->min_a,
                             l->max_a,
                             l->last_a,
                             with_device ? l->max_d : 0,
                             with_device ? 0 : 1 << 10 };
  l->has = 0;
  if (ctx->hold)
    {
      if (ctx->nheld == ctx->cap)
        {
          size_t cap = ctx->cap ? 2 * ctx->cap : 4096;
          int64_t *held = realloc (ctx->held, cap * LEVEL_WIDTH * sizeof *held);
          if (held == NULL)
            return -1;
          ctx->held = held;
          ctx->cap = cap;
        }
      memcpy (ctx->held + ctx->nheld++ * LEVEL_WIDTH, v, sizeof v);
      return 0;
    }
  VsSqlBatch *b = vs_sql_batch_set_get (&ctx->rows, (size_t)alloc * N_SHIFTS + (size_t)shift_i);
  if (b == NULL)
    return -1;
  for (int c = 0; c < (with_device ? LEVEL_COLS : LEVEL_COLS - 1); c++)
    vs_sql_batch_int (b, c, v[c]);
  return vs_sql_batch_row (b);
}

/* Orders held level rows as the table's key: device, allocator, shift,
 * bucket. */
static int
level_cmp (const void *pa, const void *pb)
{
  const int64_t *a = pa, *b = pb;
  static const int key[] = { 1, 2, 0, 3 };

  for (int k = 0; k < 4; k++)
    if (a[key[k]] != b[key[k]])
      return a[key[k]] < b[key[k]] ? -1 : 1;
  return 0;
}

/* Hands the held level rows to sink, in key order.  Returns 0, or -1
 * with sink->err. */
static int
level_sink (LevelCtx *ctx, VsRowSink *sink, sqlite3 *db)
{
  int rc;

  qsort (ctx->held, ctx->nheld, LEVEL_WIDTH * sizeof *ctx->held, level_cmp);
  if (sink->begin (sink, VS_ROW_SINK_SERIES_LEVEL, db, 0, 0) < 0)
    return -1;
  rc = 0;
  for (size_t i = 0; i < ctx->nheld && rc == 0; i++)
    {
      const int64_t *v = ctx->held + i * LEVEL_WIDTH;
      rc = sink->row (sink, v, (uint32_t)v[LEVEL_COLS]);
    }
  if (sink->end (sink, rc == 0) < 0)
    rc = -1;
  return rc;
}

static int
level_add (LevelCtx *ctx, Levels *lv, int32_t dev, int32_t alloc, int64_t rel, int64_t r, int64_t a,
           int64_t d, int with_device)
{
  lv->rows++;
  for (int i = 0; i < ctx->n_shifts; i++)
    {
      LevelAcc *l = &lv->lv[i];
      int64_t bucket = rel >> (ctx->first_shift + 2 * i);
      if (l->has && l->bucket != bucket)
        if (level_flush (ctx, i, dev, alloc, l, with_device) < 0)
          return -1;
      if (!l->has)
        {
          l->has = 1;
          l->bucket = bucket;
          l->min_r = l->max_r = r;
          l->min_a = l->max_a = a;
          l->max_d = d;
        }
      if (r < l->min_r)
        l->min_r = r;
      if (r > l->max_r)
        l->max_r = r;
      if (a < l->min_a)
        l->min_a = a;
      if (a > l->max_a)
        l->max_a = a;
      if (d > l->max_d)
        l->max_d = d;
      l->last_r = r;
      l->last_a = a;
    }
  return 0;
}

/* VsFinBlock row writer. */
static const char *block_sql
    = "block (id, level, device_id, allocator_id, process_id, kind,"
      " address, bytes, block_bytes, alloc_seq, free_seq, alloc_ts, free_ts,"
      " alloc_event_id, free_event_id, stack_id, free_stack_id, range_id,"
      " owner_id, span_bin)";

/* The bin of a live interval [lo, hi) of replay positions: the smallest
 * aligned power-of-two range holding it, as level << 48 | (lo >> level).
 * A block contains position P iff its bin is one of the 48 bins
 * level << 48 | (P >> level) and lo <= P < hi — so a point query reads only
 * candidate bins through an index instead of every earlier block. */
static int64_t
span_bin (int64_t lo, int64_t hi)
{
  int64_t level = 0;
  while ((lo >> level) != ((hi - 1) >> level))
    level++;
  return (level << 48) | (lo >> level);
}

void
vs_fin_find_shared_series (const VsFinTrace *t, VsFinState *st)
{
  /* -1: the device saw more than one allocator's events, or others. */
  for (size_t i = 0; i < t->n; i++)
    {
      const VsFinEvent *ev = &t->ev[i];
      int32_t dev = ev->device_id;
      if (dev <= 0 || dev > st->ndev || st->shared[dev] < 0 || ev->src == SRC_MARK)
        continue;
      int32_t k = ev->allocator_id;
      if (ev->src != SRC_ALLOC || k <= 0 || k > st->nalloc || vs_fin_acc_at (st, dev, k)->is_pool
          || (st->shared[dev] != 0 && st->shared[dev] != k))
        st->shared[dev] = -1;
      else
        st->shared[dev] = k;
    }
  for (int32_t d = 0; d <= st->ndev; d++)
    if (st->shared[d] < 0)
      st->shared[d] = 0;
}

/* The one replay step of a block: its bytes enter (sign +1) or leave
 * (sign −1) the state of device ds — the device's own counters for
 * device-level memory by kind, or the accumulator of its allocator for a
 * pool's allocations and allocator-level blocks and segments.  counted is
 * false for blocks live before the trace began: they are state, not events
 * of the trace, so no allocation or free is counted and a pool's size is
 * left to its own events.  Sets *alloc to the allocator whose series
 * changes (0: none); returns whether the device's `all` series changes. */
static bool
replay_block (VsFinState *st, VsFinDevState *ds, int32_t dev, const VsFinEvent *ev,
              const VsFinBlock *b, int sign, bool counted, int32_t *alloc)
{
  assert (sign == 1 || sign == -1);
  assert (dev > 0 && dev <= st->ndev && ds == &st->dev[dev]);
  assert (b->bytes >= 0);
  int64_t bytes = sign * b->bytes;
  bool has_allocator = ev->allocator_id > 0 && ev->allocator_id <= st->nalloc;
  *alloc = 0;
  if (b->level != 1)
    {
      if (!has_allocator)
        return false;
      *alloc = ev->allocator_id;
      VsFinAcc *a = vs_fin_acc_at (st, dev, *alloc);
      if (b->level == 2)
        {
          a->allocated += bytes;
          if (sign > 0 && (!counted || (ev->flags & FIN_BEFORE_TRACE)))
            {
              /* Live when the trace began (recreated by an import, or
               * freed but never allocated in it): counted apart. */
              a->before_bytes += bytes;
              a->before_count++;
            }
          else if (counted && sign > 0)
            a->alloc_count++;
          else if (counted)
            a->free_count++;
        }
      else
        a->reserved += bytes;
      return true;
    }
  switch (ev->kind)
    {
    case VS_MEM_KIND_ASYNC:
      if (b->owned_by_pool && has_allocator)
        {
          *alloc = ev->allocator_id;
          VsFinAcc *a = vs_fin_acc_at (st, dev, *alloc);
          a->allocated += bytes;
          if (counted)
            {
              if (sign > 0)
                a->alloc_count++;
              else
                a->free_count++;
              if (ev->block_bytes >= 0)
                {
                  int64_t old = a->pool_size < 0 ? 0 : a->pool_size;
                  a->pool_size = ev->block_bytes;
                  ds->device += a->pool_size - old;
                }
            }
          return true;
        }
      /* An async allocation outside any known pool is plain device memory. */
      /* fall through */
    case VS_MEM_KIND_DEVICE:
    case VS_MEM_KIND_VMM:
      ds->device += bytes;
      if (b->owner < 0 || ev->kind == VS_MEM_KIND_ASYNC)
        {
          ds->plain += bytes;
          if (counted && sign > 0)
            ds->plain_allocs++;
          else if (counted)
            ds->plain_frees++;
        }
      return true;
    case VS_MEM_KIND_STATIC:
      ds->static_bytes += bytes;
      return true;
    case VS_MEM_KIND_PINNED:
      ds->pinned += bytes;
      return true;
    case VS_MEM_KIND_MANAGED:
      ds->managed += bytes;
      return true;
    default:
      return false;
    }
}

static const char *
sink_error (const VsRowSink *sink)
{
  return sink != NULL ? sink->err : "cannot write the series";
}

/* Replays events in order; writes series and series_level (to the
 * tables, or st->sink); fills accs. */
int
vs_fin_replay (VsFinTrace *t, VsFinState *st, int64_t origin, VsFinProgress *pr, VsFinErr *e)
{
  LevelCtx level_ctx = { 0 };
  LevelCtx *ctx = &level_ctx;
  assert (t != NULL && st != NULL && pr != NULL && pr->db != NULL);
  sqlite3 *db = pr->db;
  VsRowSink *sink = st->sink;
  ctx->hold = sink != NULL;
  st->series_rows = 0;
  /* One batch per allocator id (and shift): see VsSqlBatchSet. */
  VsSqlBatchSet series;
  if (vs_sql_batch_set_init (&series, db, series_sql, 10, (size_t)st->nalloc + 1) < 0
      || vs_sql_batch_set_init (&ctx->rows, db, level_sql, 11, ((size_t)st->nalloc + 1) * N_SHIFTS)
             < 0)
    {
      vs_sql_batch_set_clear (&series);
      return vs_fin_fail (e, "out of memory");
    }
  if (sink != NULL && sink->begin (sink, VS_ROW_SINK_SERIES, db, st->ndev, st->nalloc) < 0)
    {
      vs_sql_batch_set_clear (&series);
      vs_sql_batch_set_clear (&ctx->rows);
      return vs_fin_fail (e, "%s", sink->err);
    }
  {
    int64_t span = t->n ? t->ev[t->n - 1].ts - origin : 0;
    int64_t budget = (int64_t)t->n / 4 + 1;
    int sh = FIRST_SHIFT;
    while (sh < 62 && (span >> sh) > budget)
      sh += 2;
    ctx->first_shift = sh;
    ctx->n_shifts = 1;
    while (ctx->n_shifts < N_SHIFTS && sh + 2 * ctx->n_shifts < 63
           && (span >> (sh + 2 * (ctx->n_shifts - 1))) > 0)
      ctx->n_shifts++;
  }

  size_t nacc = (size_t)(st->ndev + 1) * (size_t)(st->nalloc + 1);
  Levels *levels = calloc (nacc, sizeof *levels);
  if (levels == NULL)
    {
      if (sink != NULL)
        sink->end (sink, 0);
      vs_sql_batch_set_clear (&series);
      vs_sql_batch_set_clear (&ctx->rows);
      return vs_fin_fail (e, "out of memory");
    }

  /* Memory live before the trace began counts from the start. */
  for (size_t j = 0; j < t->nb; j++)
    {
      VsFinBlock *b = &t->bl[j];
      if (b->alloc_ev >= 0)
        continue;
      const VsFinEvent *ev = &t->ev[b->free_ev];
      int32_t dev = ev->device_id;
      if (dev <= 0 || dev > st->ndev)
        continue;
      int32_t unused;
      replay_block (st, &st->dev[dev], dev, ev, b, +1, false, &unused);
    }

  int64_t seq = 0;
  int rc = 0;
  VsFinWindow *win = st->window;
  for (size_t i = 0; i < t->n && rc == 0; i++)
    {
      VsFinEvent *ev = &t->ev[i];
      seq = (int64_t)i + 1;
      int32_t dev = ev->device_id;
      if (dev <= 0 || dev > st->ndev)
        continue;
      VsFinDevState *ds = &st->dev[dev];
      int32_t alloc = 0; /* allocator whose series changes, 0: none */
      int changed_all = 0;
      const VsFinPoint *point = NULL; /* a coarse slice's point */
      bool all_allocators = false;    /* a detail interval's first row */

      if (ev->src == SRC_MARK)
        {
          if (ev->op == MARK_SLICE)
            {
              assert (ev->id >= 0 && (size_t)ev->id < win->npt);
              point = &win->pt[ev->id];
              alloc = point->allocator_id;
              if (alloc != 0 && (alloc == st->shared[dev] || alloc > st->nalloc))
                continue;
            }
          else
            all_allocators = true;
        }
      else if (ev->src == SRC_POOL)
        {
          alloc = ev->allocator_id;
          if (alloc <= 0 || alloc > st->nalloc || ev->bytes < 0)
            continue;
          VsFinAcc *a = vs_fin_acc_at (st, dev, alloc);
          int64_t old = a->pool_size < 0 ? 0 : a->pool_size;
          a->pool_size = ev->op == VS_POOL_OP_DESTROYED ? 0 : ev->bytes;
          ds->device += a->pool_size - old;
          changed_all = 1;
        }
      else if (ev->block >= 0)
        {
          const VsFinBlock *b = &t->bl[ev->block];
          changed_all
              = replay_block (st, ds, dev, ev, b, vs_fin_is_alloc (ev) ? 1 : -1, true, &alloc);
        }
      else if (ev->src == SRC_ALLOC && ev->op == VS_ALLOC_OP_SEGMENT_UNMAP && ev->allocator_id > 0
               && ev->allocator_id <= st->nalloc)
        {
          /* A partial unmap: the mapped total drops by what it unmapped
           * (set by pairing: the part of its range that was mapped). */
          alloc = ev->allocator_id;
          vs_fin_acc_at (st, dev, alloc)->reserved -= ev->bytes;
          changed_all = 1;
        }
      if (ev->src != SRC_MARK)
        {
          if (!changed_all)
            continue;
          if (alloc > 0)
            vs_fin_acc_at (st, dev, alloc)->seen = 1;
          /* Outside the detail of a windowed trace the sums count too
           * little: the slices' points stand there instead. */
          if (!vs_fin_window_detail (win, dev, ev->ts))
            continue;
        }

      /* Totals for `all` on this device. */
      int64_t all_r = ds->plain, all_a = ds->plain;
      for (int32_t k = 1; k <= st->nalloc; k++)
        {
          VsFinAcc *a = vs_fin_acc_at (st, dev, k);
          int64_t r = a->is_pool ? (a->pool_size > a->allocated ? a->pool_size : a->allocated)
                                 : a->reserved;
          all_r += r;
          all_a += a->allocated;
        }
      /* The series this row goes to: `all` and the allocator concerned;
       * at a detail interval's start, every allocator of the device seen
       * so far; at a slice's point, its own. */
      int32_t which[2] = { point ? alloc : 0, alloc };
      int nwhich = point || alloc == 0 ? 1 : 2;
      int32_t extra = all_allocators ? st->nalloc : 0;
      for (int32_t j = 0; j < nwhich + extra && rc == 0; j++)
        {
          int32_t k = j < nwhich ? which[j] : j - nwhich + 1;
          if (j >= nwhich
              && !(vs_fin_acc_at (st, dev, k)->seen
                   && vs_fin_acc_at (st, dev, k)->device_id == dev))
            continue;
          VsFinAcc *a = vs_fin_acc_at (st, dev, k);
          int64_t r, al, device = ds->device;
          if (point)
            {
              r = point->reserved;
              al = point->allocated;
              if (point->device >= 0)
                device = point->device;
            }
          else if (k == 0)
            r = all_r, al = all_a;
          else
            {
              al = a->allocated;
              r = a->is_pool ? (a->pool_size > al ? a->pool_size : al) : a->reserved;
            }
          if (ev->src != SRC_MARK)
            {
              /* Peaks: from the events only (a mark repeats a state). */
              a->touched = 1;
              if (r > a->peak_reserved)
                a->peak_reserved = r, a->peak_reserved_ts = ev->ts, a->peak_reserved_seq = seq;
              if (al > a->peak_allocated)
                a->peak_allocated = al, a->peak_allocated_ts = ev->ts, a->peak_allocated_seq = seq;
            }
          if (!point)
            {
              a->reserved = k == 0 ? r : a->reserved;
              if (k == 0)
                a->allocated = al;
            }
          if (k != 0 && k == st->shared[dev])
            continue; /* the same row as `all`'s, stored once */
          int64_t v[]
              = { seq, dev, k, ev->ts, r, al, device, ds->static_bytes, ds->pinned, ds->managed };
          bool device_columns = k == 0 && st->device_level;
          if (st->series_rows++ == 0 || ev->ts > st->series_max_ts)
            st->series_max_ts = ev->ts;
          VsSqlBatch *row = NULL;
          if (sink != NULL)
            {
              if (sink->row (sink, v, device_columns ? 0 : 0x3c0u) < 0)
                {
                  rc = -1;
                  break;
                }
            }
          else if ((row = vs_sql_batch_set_get (&series, (size_t)k)) == NULL)
            {
              rc = -1;
              break;
            }
          else
            {
              for (int c = 0; c < (device_columns ? 10 : 6); c++)
                vs_sql_batch_int (row, c, v[c]);
            }
          if (k == 0 && ev->src != SRC_MARK)
            {
              if (ds->device > ds->peak_device)
                ds->peak_device = ds->device, ds->peak_device_ts = ev->ts;
              if (ds->pinned > ds->peak_pinned)
                ds->peak_pinned = ds->pinned;
              if (ds->managed > ds->peak_managed)
                ds->peak_managed = ds->managed;
            }
          if (row != NULL && vs_sql_batch_row (row) < 0)
            rc = -1;
          size_t li = (size_t)dev * (size_t)(st->nalloc + 1) + (size_t)k;
          if (rc == 0
              && level_add (ctx, &levels[li], dev, k, ev->ts - origin, r, al, k == 0 ? device : 0,
                            k == 0 && st->device_level)
                     < 0)
            rc = -1;
        }
      if ((i & 0xFFFF) == 0 && vs_fin_tick (pr, 0x10000) < 0)
        {
          rc = vs_fin_fail (e, "cancelled");
          goto out;
        }
    }
  if (rc < 0)
    {
      vs_fin_fail (e, "%s", sink != NULL && sink->err[0] ? sink->err : sqlite3_errmsg (db));
      goto out;
    }

  /* Flush the open buckets. */
  for (int32_t d = 1; d <= st->ndev && rc == 0; d++)
    for (int32_t k = 0; k <= st->nalloc && rc == 0; k++)
      {
        size_t li = (size_t)d * (size_t)(st->nalloc + 1) + (size_t)k;
        for (int i = 0; i < ctx->n_shifts && rc == 0; i++)
          rc = level_flush (ctx, i, d, k, &levels[li].lv[i], k == 0 && st->device_level);
      }
  if (rc == 0)
    rc = vs_sql_batch_set_flush (&series) < 0 || vs_sql_batch_set_flush (&ctx->rows) < 0 ? -1 : 0;
  if (rc < 0)
    vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  else if (sink != NULL)
    {
      int end = sink->end (sink, 1);
      sink = NULL;
      if (end < 0 || level_sink (ctx, st->sink, db) < 0)
        rc = vs_fin_fail (e, "%s", sink_error (st->sink));
    }

out:
  if (sink != NULL)
    sink->end (sink, 0);
  vs_sql_batch_set_clear (&series);
  vs_sql_batch_set_clear (&ctx->rows);
  free (ctx->held);
  free (levels);
  return rc;
}

int
vs_fin_write_blocks (VsFinTrace *t, VsRowSink *sink, VsFinProgress *pr, VsFinErr *e)
{
  assert (t != NULL && pr != NULL && pr->db != NULL);
  sqlite3 *db = pr->db;
  VsSqlBatch rows;
  if (vs_sql_batch_init (&rows, db, block_sql, 20) < 0)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  if (sink != NULL && sink->begin (sink, VS_ROW_SINK_BLOCK, db, 0, 0) < 0)
    {
      vs_sql_batch_clear (&rows);
      return vs_fin_fail (e, "%s", sink->err);
    }

  int rc = 0;
  for (size_t j = 0; j < t->nb && rc == 0; j++)
    {
      VsFinBlock *b = &t->bl[j];
      const VsFinEvent *a = b->alloc_ev >= 0 ? &t->ev[b->alloc_ev] : NULL;
      const VsFinEvent *f = b->free_ev >= 0 ? &t->ev[b->free_ev] : NULL;
      const VsFinEvent *any = a ? a : f;
      /* A piece left by a partial unmap has no stack of its own. */
      int piece = a && b->level == 3 && a->op == VS_ALLOC_OP_SEGMENT_UNMAP;
      int64_t stack[2] = { a && !piece ? a->stack_id : 0, f ? f->stack_id : 0 };
      int64_t range = a ? a->range_id : f->range_id;
      /* Kinds are device-level; allocator blocks and segments have none. */
      int64_t kind = b->level == 1 ? any->kind : 0;
      /* The row; columns left unset are NULL. */
      int64_t v[20] = { 0 };
      uint32_t nulls = (1u << 20) - 1;
#define SET(c, x) (v[c] = (x), nulls &= ~(1u << (c)))
      SET (0, (int64_t)j + 1);
      SET (1, b->level);
      if (any->device_id)
        SET (2, any->device_id);
      if (b->level != 1)
        SET (3, any->allocator_id);
      else if (b->owned_by_pool)
        SET (3, any->allocator_id);
      else if (b->owner >= 0)
        {
          const VsFinBlock *o = &t->bl[b->owner];
          SET (3, t->ev[o->alloc_ev >= 0 ? o->alloc_ev : o->free_ev].allocator_id);
        }
      SET (4, any->process_id);
      SET (5, kind);
      SET (6, b->address);
      SET (7, b->bytes);
      if (b->block_bytes >= 0 && b->level == 2)
        SET (8, b->block_bytes);
      SET (9, a ? (int64_t)b->alloc_ev + 1 : 0);
      if (f)
        {
          SET (10, (int64_t)b->free_ev + 1);
          SET (12, f->ts);
          SET (14, f->id);
        }
      if (a)
        {
          SET (11, a->ts);
          SET (13, a->id);
        }
      if (stack[0])
        SET (15, stack[0]);
      if (stack[1])
        SET (16, stack[1]);
      if (range)
        SET (17, range);
      if (b->owner >= 0)
        SET (18, (int64_t)b->owner + 1);
      /* Live at the end: the interval closes after the last position. */
      SET (19, span_bin (a ? (int64_t)b->alloc_ev + 1 : 0,
                         f ? (int64_t)b->free_ev + 1 : (int64_t)t->n + 1));
#undef SET
      if (sink != NULL)
        {
          if (sink->row (sink, v, nulls) < 0)
            rc = -3;
        }
      else
        {
          for (int c = 0; c < 20; c++)
            if (!(nulls & (1u << c)))
              vs_sql_batch_int (&rows, c, v[c]);
          if (vs_sql_batch_row (&rows) < 0)
            rc = -1;
        }
      if ((j & 0xFFFF) == 0 && vs_fin_tick (pr, 0x10000) < 0)
        {
          rc = -2;
          break;
        }
    }
  if (rc == 0 && vs_sql_batch_flush (&rows) < 0)
    rc = -1;
  vs_sql_batch_clear (&rows);
  if (sink != NULL && sink->end (sink, rc == 0) < 0 && rc == 0)
    rc = -3;
  if (rc == -2)
    return vs_fin_fail (e, "cancelled");
  if (rc == -3)
    return vs_fin_fail (e, "%s", sink->err);
  if (rc < 0)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  return 0;
}

static const char *summary_sql
    = "INSERT INTO summary (device_id, allocator_id, peak_reserved_bytes,"
      " peak_reserved_ts, peak_reserved_seq, peak_allocated_bytes,"
      " peak_allocated_ts, peak_allocated_seq, final_reserved_bytes,"
      " final_allocated_bytes, alloc_count, free_count, failed_alloc_count,"
      " peak_device_bytes, peak_device_ts, static_bytes, peak_pinned_bytes,"
      " peak_managed_bytes, series_allocator_id, before_trace_bytes, before_trace_count)"
      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

/* Binds a summary row's peak at columns col (its bytes), col + 1 and
 * col + 2 (its time and step): those NULL when the series never reached a
 * peak above 0 (touched false: it saw no event). */
static void
bind_peak (sqlite3_stmt *ins, int col, bool touched, int64_t bytes, int64_t ts, int64_t seq)
{
  int64_t v[] = { ts, seq };
  sqlite3_bind_int64 (ins, col, bytes);
  for (int c = 0; c < 2; c++)
    if (touched && bytes > 0)
      sqlite3_bind_int64 (ins, col + 1 + c, v[c]);
    else
      sqlite3_bind_null (ins, col + 1 + c);
}

/* Failed requests that count: those an allocator reported, and device-level
 * failures in processes without a PyTorch allocator (PyTorch retries its
 * cudaMalloc failures after emptying its cache and reports its own OOMs). */
static const char *failed_count_sql
    = "SELECT count(*) FROM failed_alloc f WHERE f.device_id = ?1 AND"
      " (CASE WHEN ?2 = 0 THEN (f.allocator_id IS NOT NULL OR NOT EXISTS"
      "   (SELECT 1 FROM allocator a WHERE a.kind = 'pytorch'"
      "    AND a.process_id = f.process_id))"
      "  ELSE f.allocator_id = ?2 END)";

int
vs_fin_write_summary (sqlite3 *db, VsFinState *st, VsFinErr *e)
{
  sqlite3_stmt *ins, *fc;
  if (sqlite3_prepare_v2 (db, summary_sql, -1, &ins, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, failed_count_sql, -1, &fc, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  int rc = 0;
  for (int32_t d = 1; d <= st->ndev && rc == 0; d++)
    for (int32_t k = 0; k <= st->nalloc && rc == 0; k++)
      {
        VsFinAcc *a = vs_fin_acc_at (st, d, k);
        VsFinDevState *ds = &st->dev[d];
        if (k != 0 && a->device_id != d)
          continue; /* allocator of another device */
        if (k == 0)
          {
            /* Counts on `all`: every allocator's plus plain allocations. */
            a->alloc_count = ds->plain_allocs;
            a->free_count = ds->plain_frees;
            a->before_bytes = a->before_count = 0;
            for (int32_t j = 1; j <= st->nalloc; j++)
              {
                a->alloc_count += vs_fin_acc_at (st, d, j)->alloc_count;
                a->free_count += vs_fin_acc_at (st, d, j)->free_count;
                a->before_bytes += vs_fin_acc_at (st, d, j)->before_bytes;
                a->before_count += vs_fin_acc_at (st, d, j)->before_count;
              }
          }
        sqlite3_bind_int (fc, 1, d);
        sqlite3_bind_int (fc, 2, k);
        int64_t failed = sqlite3_step (fc) == SQLITE_ROW ? sqlite3_column_int64 (fc, 0) : 0;
        sqlite3_reset (fc);
        int64_t fin_r = a->reserved, fin_a = a->allocated;
        if (k != 0 && a->is_pool)
          fin_r = a->pool_size > fin_a ? a->pool_size : fin_a;
        sqlite3_bind_int (ins, 1, d);
        sqlite3_bind_int (ins, 2, k);
        bind_peak (ins, 3, a->touched, a->peak_reserved, a->peak_reserved_ts, a->peak_reserved_seq);
        bind_peak (ins, 6, a->touched, a->peak_allocated, a->peak_allocated_ts,
                   a->peak_allocated_seq);
        sqlite3_bind_int64 (ins, 9, fin_r);
        sqlite3_bind_int64 (ins, 10, fin_a);
        sqlite3_bind_int64 (ins, 11, a->alloc_count);
        sqlite3_bind_int64 (ins, 12, a->free_count);
        sqlite3_bind_int64 (ins, 13, failed);
        if (k == 0 && st->device_level)
          {
            sqlite3_bind_int64 (ins, 14, ds->peak_device);
            if (ds->peak_device > 0)
              sqlite3_bind_int64 (ins, 15, ds->peak_device_ts);
            else
              sqlite3_bind_null (ins, 15);
            sqlite3_bind_int64 (ins, 16, ds->static_bytes);
            sqlite3_bind_int64 (ins, 17, ds->peak_pinned);
            sqlite3_bind_int64 (ins, 18, ds->peak_managed);
          }
        else
          for (int c = 14; c <= 18; c++)
            sqlite3_bind_null (ins, c);
        sqlite3_bind_int (ins, 19, k != 0 && k == st->shared[d] ? 0 : k);
        sqlite3_bind_int64 (ins, 20, a->before_bytes);
        sqlite3_bind_int64 (ins, 21, a->before_count);
        if (sqlite3_step (ins) != SQLITE_DONE)
          rc = -1;
        sqlite3_reset (ins);
      }
  sqlite3_finalize (ins);
  sqlite3_finalize (fc);
  if (rc < 0)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  return 0;
}
