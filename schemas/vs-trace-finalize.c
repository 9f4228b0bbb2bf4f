/* vs-trace-finalize.c — deriving the memory model from the raw events.
 *
 * Input: the raw event tables (mem_event, alloc_event, pool_event,
 * failed_alloc) in whatever order the collector or importer wrote them; CUPTI
 * delivers per-thread buffers out of order, so a release may be stored
 * before its allocation.  Output: the derived tables documented in
 * schemas/README.md — block (every allocation paired with its release),
 * series (reserved / allocated / device bytes after each event), series_level
 * (min/max summaries for zoomed-out timelines), summary (peaks, finals,
 * counts) — and the readers' indexes.
 *
 * Method, in four passes over an in-memory array of events sorted by
 * (ts, table, id) — one 72-byte record per event, so a 10M-event trace
 * needs about 1 GB while finalizing:
 *   1. pairing: allocations and releases are matched by (process, device,
 *      address) at the device level and by (allocator, address) at the
 *      allocator level; a release with no allocation is memory that was live
 *      before the trace began.
 *   2. ownership: a device-level allocation inside an allocator's segment
 *      belongs to that allocator, so it is not counted twice in `all`.
 *   3. replay: per device, the running totals per allocator and for `all`,
 *      emitting a series row for every change and tracking peaks.
 *   4. summary levels over each series.
 * Hand-written hash and sort code: this file runs inside profiled processes
 * and on GPU servers without GLib, so it uses libc's qsort and a small
 * open-addressing table.
 */
#include "vs-trace-writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* Where an event came from; also the tie-break order at equal timestamps. */
enum { SRC_POOL = 0, SRC_MEM = 1, SRC_ALLOC = 2 };

typedef struct {
  int64_t ts;
  int64_t id;        /* rowid in its source table */
  int64_t address;
  int64_t bytes;     /* counted size; pool_event: pool size or -1 */
  int64_t block_bytes;
  int32_t process_id;
  int32_t device_id; /* 0 = none */
  int32_t allocator_id; /* allocator level: allocator; mem: pool_id; 0 none */
  int32_t block;     /* index into blocks, -1 none */
  int64_t stack_id;
  int32_t range_id;
  uint8_t src;
  uint8_t op;
  uint8_t kind;
  uint8_t pad;
} Event;

typedef struct {
  int32_t alloc_ev;  /* -1: live before the trace began */
  int32_t free_ev;   /* -1: live at the end */
  int32_t owner;     /* level 1: index of the owning level-3 block or -1 */
  uint8_t level;
  uint8_t owned_by_pool;
  int64_t address, bytes, block_bytes;
} Block;

typedef struct {
  char *msg;
  size_t len;
} Err;

static int
fail (Err *e, const char *fmt, ...)
{
  if (e->len)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (e->msg, e->len, fmt, ap);
      va_end (ap);
    }
  return -1;
}

static int
exec_sql (sqlite3 *db, Err *e, const char *sql)
{
  char *m = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &m) != SQLITE_OK)
    {
      fail (e, "cannot finalize trace: %s", m ? m : sqlite3_errmsg (db));
      sqlite3_free (m);
      return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ hash table */

/* Maps a 3-part key to an open block index.  Keys are never removed while
 * probing could cross them: a slot is emptied by storing value -1 with the
 * key kept (a tombstone), and lookups skip tombstones. */
typedef struct {
  int64_t k1, k2, k3;
  int32_t value; /* -1 tombstone, -2 empty */
} Slot;

typedef struct {
  Slot *slots;
  size_t mask, used;
} Map;

static uint64_t
mix (int64_t a, int64_t b, int64_t c)
{
  uint64_t h = (uint64_t) a * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t) b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= (uint64_t) c * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  h ^= h >> 31;
  return h * 0x94D049BB133111EBull;
}

static int
map_init (Map *m, size_t expected)
{
  size_t cap = 1024;
  while (cap < expected * 2)
    cap <<= 1;
  m->slots = malloc (cap * sizeof *m->slots);
  if (m->slots == NULL)
    return -1;
  for (size_t i = 0; i < cap; i++)
    m->slots[i].value = -2;
  m->mask = cap - 1;
  m->used = 0;
  return 0;
}

/* Returns the slot holding the key, or the empty slot where it would go. */
static Slot *
map_find (Map *m, int64_t k1, int64_t k2, int64_t k3)
{
  size_t i = mix (k1, k2, k3) & m->mask;
  Slot *tomb = NULL;
  for (;;)
    {
      Slot *s = &m->slots[i];
      if (s->value == -2)
        return tomb ? tomb : s;
      if (s->k1 == k1 && s->k2 == k2 && s->k3 == k3 && s->value != -1)
        return s;
      if (s->value == -1 && tomb == NULL)
        tomb = s;
      i = (i + 1) & m->mask;
    }
}

static int
map_grow (Map *m)
{
  Map bigger;
  if (map_init (&bigger, (m->mask + 1)) < 0)
    return -1;
  for (size_t i = 0; i <= m->mask; i++)
    if (m->slots[i].value >= 0)
      {
        Slot *s = map_find (&bigger, m->slots[i].k1, m->slots[i].k2,
                            m->slots[i].k3);
        *s = m->slots[i];
        bigger.used++;
      }
  free (m->slots);
  *m = bigger;
  return 0;
}

/* Sets key → value (value >= 0) or removes the key (value -1). */
static int
map_set (Map *m, int64_t k1, int64_t k2, int64_t k3, int32_t value)
{
  Slot *s = map_find (m, k1, k2, k3);
  if (value < 0)
    {
      if (s->value >= 0)
        s->value = -1;
      return 0;
    }
  if (s->value == -2)
    m->used++;
  s->k1 = k1;
  s->k2 = k2;
  s->k3 = k3;
  s->value = value;
  if (m->used * 2 > m->mask)
    return map_grow (m);
  return 0;
}

static int32_t
map_get (Map *m, int64_t k1, int64_t k2, int64_t k3)
{
  Slot *s = map_find (m, k1, k2, k3);
  return s->value >= 0 ? s->value : -1;
}

/* ---------------------------------------------------------------- loading */

typedef struct {
  Event *ev;
  size_t n, cap;
  Block *bl;
  size_t nb, capb;
} Trace;

static Event *
push_event (Trace *t)
{
  if (t->n == t->cap)
    {
      size_t cap = t->cap ? t->cap * 2 : 4096;
      Event *ev = realloc (t->ev, cap * sizeof *ev);
      if (ev == NULL)
        return NULL;
      t->ev = ev;
      t->cap = cap;
    }
  Event *e = &t->ev[t->n++];
  memset (e, 0, sizeof *e);
  e->block = -1;
  return e;
}

static int32_t
push_block (Trace *t, uint8_t level, int64_t address, int64_t bytes,
            int64_t block_bytes)
{
  if (t->nb == t->capb)
    {
      size_t cap = t->capb ? t->capb * 2 : 4096;
      Block *bl = realloc (t->bl, cap * sizeof *bl);
      if (bl == NULL)
        return -1;
      t->bl = bl;
      t->capb = cap;
    }
  Block *b = &t->bl[t->nb];
  b->alloc_ev = -1;
  b->free_ev = -1;
  b->owner = -1;
  b->level = level;
  b->owned_by_pool = 0;
  b->address = address;
  b->bytes = bytes;
  b->block_bytes = block_bytes;
  return (int32_t) t->nb++;
}

static const char *load_mem_sql =
  "SELECT id, ts, process_id, ifnull(device_id, 0), kind, op, address, bytes,"
  " ifnull(pool_id, 0), pool_size, ifnull(stack_id, 0), ifnull(range_id, 0)"
  " FROM mem_event";
static const char *load_alloc_sql =
  "SELECT id, ts, process_id, device_id, allocator_id, op, address,"
  " requested_bytes, block_bytes, ifnull(stack_id, 0), ifnull(range_id, 0)"
  " FROM alloc_event";
static const char *load_pool_sql =
  "SELECT id, ts, process_id, ifnull(device_id, 0), pool_id, op, size"
  " FROM pool_event";

static int
load_events (sqlite3 *db, Trace *t, Err *e)
{
  const char *sqls[3] = { load_mem_sql, load_alloc_sql, load_pool_sql };
  const uint8_t srcs[3] = { SRC_MEM, SRC_ALLOC, SRC_POOL };
  for (int q = 0; q < 3; q++)
    {
      sqlite3_stmt *s;
      if (sqlite3_prepare_v2 (db, sqls[q], -1, &s, NULL) != SQLITE_OK)
        return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
      int rc;
      while ((rc = sqlite3_step (s)) == SQLITE_ROW)
        {
          Event *ev = push_event (t);
          if (ev == NULL)
            {
              sqlite3_finalize (s);
              return fail (e, "cannot finalize trace: out of memory");
            }
          ev->src = srcs[q];
          ev->id = sqlite3_column_int64 (s, 0);
          ev->ts = sqlite3_column_int64 (s, 1);
          ev->process_id = (int32_t) sqlite3_column_int64 (s, 2);
          ev->device_id = (int32_t) sqlite3_column_int64 (s, 3);
          if (srcs[q] == SRC_MEM)
            {
              ev->kind = (uint8_t) sqlite3_column_int (s, 4);
              ev->op = (uint8_t) sqlite3_column_int (s, 5);
              ev->address = sqlite3_column_int64 (s, 6);
              ev->bytes = sqlite3_column_int64 (s, 7);
              ev->allocator_id = (int32_t) sqlite3_column_int64 (s, 8);
              ev->block_bytes = sqlite3_column_type (s, 9) == SQLITE_NULL
                                  ? -1 : sqlite3_column_int64 (s, 9);
              ev->stack_id = sqlite3_column_int64 (s, 10);
              ev->range_id = (int32_t) sqlite3_column_int64 (s, 11);
            }
          else if (srcs[q] == SRC_ALLOC)
            {
              ev->allocator_id = (int32_t) sqlite3_column_int64 (s, 4);
              ev->op = (uint8_t) sqlite3_column_int (s, 5);
              ev->address = sqlite3_column_int64 (s, 6);
              int64_t req = sqlite3_column_type (s, 7) == SQLITE_NULL
                              ? -1 : sqlite3_column_int64 (s, 7);
              int64_t blk = sqlite3_column_type (s, 8) == SQLITE_NULL
                              ? -1 : sqlite3_column_int64 (s, 8);
              ev->bytes = req >= 0 ? req : (blk >= 0 ? blk : 0);
              ev->block_bytes = blk;
              ev->stack_id = sqlite3_column_int64 (s, 9);
              ev->range_id = (int32_t) sqlite3_column_int64 (s, 10);
            }
          else
            {
              ev->allocator_id = (int32_t) sqlite3_column_int64 (s, 4);
              ev->op = (uint8_t) sqlite3_column_int (s, 5);
              ev->bytes = sqlite3_column_type (s, 6) == SQLITE_NULL
                            ? -1 : sqlite3_column_int64 (s, 6);
            }
        }
      sqlite3_finalize (s);
      if (rc != SQLITE_DONE)
        return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
    }
  return 0;
}

static int
event_cmp (const void *pa, const void *pb)
{
  const Event *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->src != b->src)
    return a->src < b->src ? -1 : 1;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  return 0;
}

/* ---------------------------------------------------------------- pairing */

static int
is_alloc (const Event *ev)
{
  if (ev->src == SRC_MEM)
    return ev->op == VS_MEM_OP_ALLOC;
  return ev->op == VS_ALLOC_OP_ALLOC || ev->op == VS_ALLOC_OP_SEGMENT_ALLOC
         || ev->op == VS_ALLOC_OP_SEGMENT_MAP;
}

static int
is_release (const Event *ev)
{
  if (ev->src == SRC_MEM)
    return ev->op == VS_MEM_OP_FREE;
  return ev->op == VS_ALLOC_OP_FREE_COMPLETED
         || ev->op == VS_ALLOC_OP_SEGMENT_FREE
         || ev->op == VS_ALLOC_OP_SEGMENT_UNMAP;
}

static int
event_level (const Event *ev)
{
  if (ev->src == SRC_MEM)
    return 1;
  return ev->op >= VS_ALLOC_OP_SEGMENT_ALLOC ? 3 : 2;
}

/* Pairs every allocation with its release.  Each event gets .block; a
 * release with no open allocation opens a block live since before the
 * trace (alloc_ev -1).  An unmap that covers part of a mapping closes the
 * mapping and opens what remains mapped as new blocks at the same event. */
static int
pair_events (Trace *t, Err *e)
{
  Map open;
  if (map_init (&open, 1024) < 0)
    return fail (e, "cannot finalize trace: out of memory");

  for (size_t i = 0; i < t->n; i++)
    {
      Event *ev = &t->ev[i];
      if (ev->src == SRC_POOL)
        continue;
      int level = event_level (ev);
      /* Keys: device level by (process, device, address); allocator level
       * by (allocator, level, address). */
      int64_t k1 = level == 1 ? ev->process_id : ev->allocator_id;
      int64_t k2 = level == 1 ? ev->device_id : level;
      int64_t k3 = ev->address;

      if (is_alloc (ev))
        {
          int32_t b = push_block (t, (uint8_t) level, ev->address, ev->bytes,
                                  ev->block_bytes);
          if (b < 0)
            goto oom;
          ev = &t->ev[i];
          t->bl[b].alloc_ev = (int32_t) i;
          ev->block = b;
          if (map_set (&open, k1, k2, k3, b) < 0)
            goto oom;
        }
      else if (is_release (ev))
        {
          int32_t b = map_get (&open, k1, k2, k3);
          if (b >= 0 && level == 3 && ev->op == VS_ALLOC_OP_SEGMENT_UNMAP
              && t->bl[b].bytes != ev->bytes)
            b = -1; /* partial unmap: handled below */
          if (b < 0 && level == 3 && ev->op == VS_ALLOC_OP_SEGMENT_UNMAP)
            {
              /* Unmap of a range that is not exactly one mapping: shrink
               * every live mapping of this allocator it overlaps. */
              int64_t lo = ev->address, hi = ev->address + ev->bytes;
              int matched = 0;
              size_t nb = t->nb;
              for (size_t j = 0; j < nb; j++)
                {
                  Block *m = &t->bl[j];
                  if (m->level != 3 || m->free_ev >= 0 || m->alloc_ev < 0)
                    continue;
                  if (t->ev[m->alloc_ev].allocator_id != ev->allocator_id
                      || t->ev[m->alloc_ev].op != VS_ALLOC_OP_SEGMENT_MAP)
                    continue;
                  int64_t mlo = m->address, mhi = m->address + m->bytes;
                  if (mhi <= lo || mlo >= hi)
                    continue;
                  matched = 1;
                  m->free_ev = (int32_t) i;
                  map_set (&open, k1, k2, mlo, -1);
                  /* Pieces left mapped become blocks allocated here. */
                  int64_t pieces[2][2] = { { mlo, lo }, { hi, mhi } };
                  for (int p = 0; p < 2; p++)
                    if (pieces[p][1] > pieces[p][0])
                      {
                        int32_t nbk = push_block (t, 3, pieces[p][0],
                                                  pieces[p][1] - pieces[p][0], -1);
                        if (nbk < 0)
                          goto oom;
                        t->bl[nbk].alloc_ev = (int32_t) i;
                        if (map_set (&open, k1, k2, pieces[p][0], nbk) < 0)
                          goto oom;
                      }
                }
              if (matched)
                {
                  t->ev[i].block = -1; /* accounted through the blocks */
                  continue;
                }
            }
          if (b < 0)
            {
              b = push_block (t, (uint8_t) level, ev->address, ev->bytes,
                              ev->block_bytes);
              if (b < 0)
                goto oom;
            }
          else
            map_set (&open, k1, k2, k3, -1);
          t->bl[b].free_ev = (int32_t) i;
          t->ev[i].block = b;
        }
    }
  free (open.slots);
  return 0;

oom:
  free (open.slots);
  return fail (e, "cannot finalize trace: out of memory");
}

/* Marks device-level device/VMM blocks that lie inside an allocator's
 * segment (PyTorch's cudaMalloc of a segment, the VMM chunks of an
 * expandable segment): they are that allocator's reserved memory and must
 * not be counted again in `all`.  Async blocks belong to their pool. */
typedef struct {
  int64_t lo, hi;
  int32_t device, block;
} Span;

static int
span_cmp (const void *pa, const void *pb)
{
  const Span *a = pa, *b = pb;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  return 0;
}

static int
block_device (const Trace *t, const Block *b)
{
  int32_t ei = b->alloc_ev >= 0 ? b->alloc_ev : b->free_ev;
  return t->ev[ei].device_id;
}

static int
assign_owners (Trace *t, Err *e)
{
  size_t nseg = 0;
  for (size_t j = 0; j < t->nb; j++)
    if (t->bl[j].level == 3)
      nseg++;
  Span *segs = malloc ((nseg ? nseg : 1) * sizeof *segs);
  if (segs == NULL)
    return fail (e, "cannot finalize trace: out of memory");
  size_t k = 0;
  for (size_t j = 0; j < t->nb; j++)
    if (t->bl[j].level == 3)
      {
        segs[k].lo = t->bl[j].address;
        segs[k].hi = t->bl[j].address + t->bl[j].bytes;
        segs[k].device = block_device (t, &t->bl[j]);
        segs[k].block = (int32_t) j;
        k++;
      }
  qsort (segs, nseg, sizeof *segs, span_cmp);

  for (size_t j = 0; j < t->nb; j++)
    {
      Block *b = &t->bl[j];
      if (b->level != 1)
        continue;
      const Event *ev = &t->ev[b->alloc_ev >= 0 ? b->alloc_ev : b->free_ev];
      if (ev->kind == VS_MEM_KIND_ASYNC && ev->allocator_id != 0)
        {
          b->owned_by_pool = 1;
          continue;
        }
      if (ev->kind != VS_MEM_KIND_DEVICE && ev->kind != VS_MEM_KIND_VMM)
        continue;
      /* Last segment starting at or below the address on this device. */
      size_t lo = 0, hi = nseg;
      while (lo < hi)
        {
          size_t mid = (lo + hi) / 2;
          if (segs[mid].device < ev->device_id
              || (segs[mid].device == ev->device_id
                  && segs[mid].lo <= b->address))
            lo = mid + 1;
          else
            hi = mid;
        }
      /* Walk back over nearby segments: several may start at or below the
       * address (reuse of an address over time, a long segment further
       * back). */
      for (size_t s = lo; s-- > 0;)
        {
          if (segs[s].device != ev->device_id)
            break;
          if (segs[s].lo <= b->address && b->address + b->bytes <= segs[s].hi)
            {
              b->owner = segs[s].block;
              break;
            }
          if (lo - s > 64)
            break;
        }
    }
  free (segs);
  return 0;
}

/* ----------------------------------------------------------------- replay */

typedef struct {
  int64_t reserved, allocated;
  int64_t pool_size; /* pools: last known size, -1 unknown */
  int64_t peak_reserved, peak_reserved_ts, peak_reserved_seq;
  int64_t peak_allocated, peak_allocated_ts, peak_allocated_seq;
  int64_t alloc_count, free_count;
  int32_t device_id, allocator_id;
  int is_pool;
  int touched;
} Acc;

typedef struct {
  int64_t device, static_bytes, pinned, managed;
  int64_t peak_device, peak_device_ts, peak_pinned, peak_managed;
  int64_t plain; /* unowned device-level device/VMM bytes */
  int64_t plain_allocs, plain_frees;
} DevState;

/* A growable array of accumulators indexed by allocator id (0 = all) per
 * device.  Allocator ids are small dense integers. */
typedef struct {
  Acc *acc;       /* [ndev+1][nalloc+1] */
  DevState *dev;  /* [ndev+1] */
  int32_t ndev, nalloc;
} State;

static Acc *
acc_at (State *st, int32_t dev, int32_t alloc)
{
  return &st->acc[(size_t) dev * (size_t) (st->nalloc + 1) + (size_t) alloc];
}

static const char *series_sql =
  "INSERT INTO series (seq, device_id, allocator_id, ts, reserved_bytes,"
  " allocated_bytes, device_bytes, static_bytes, pinned_bytes, managed_bytes)"
  " VALUES (?,?,?,?,?,?,?,?,?,?)";

/* Per-series summary-level builder: one accumulator per shift. */
#define N_SHIFTS 24
#define FIRST_SHIFT 10

typedef struct {
  int64_t bucket;
  int64_t min_r, max_r, last_r, min_a, max_a, last_a, max_d;
  int has;
} LevelAcc;

typedef struct {
  LevelAcc lv[N_SHIFTS];
  int64_t rows;
} Levels;

/* Where level rows go and which shifts are worth storing: only levels with
 * at most a quarter as many buckets as there are events (finer zooms read
 * the series itself, which is then short), up to one bucket for all. */
typedef struct {
  sqlite3_stmt *stmt;
  int first_shift, n_shifts;
} LevelCtx;

static LevelCtx level_ctx;

static const char *level_sql =
  "INSERT INTO series_level (shift, device_id, allocator_id, bucket,"
  " min_reserved, max_reserved, last_reserved, min_allocated, max_allocated,"
  " last_allocated, max_device) VALUES (?,?,?,?,?,?,?,?,?,?,?)";

static int
level_flush (sqlite3 *db, int shift_i, int32_t dev, int32_t alloc,
             LevelAcc *l, int with_device)
{
  if (!l->has)
    return 0;
  sqlite3_stmt *s = level_ctx.stmt;
  sqlite3_bind_int (s, 1, level_ctx.first_shift + 2 * shift_i);
  sqlite3_bind_int (s, 2, dev);
  sqlite3_bind_int (s, 3, alloc);
  sqlite3_bind_int64 (s, 4, l->bucket);
  sqlite3_bind_int64 (s, 5, l->min_r);
  sqlite3_bind_int64 (s, 6, l->max_r);
  sqlite3_bind_int64 (s, 7, l->last_r);
  sqlite3_bind_int64 (s, 8, l->min_a);
  sqlite3_bind_int64 (s, 9, l->max_a);
  sqlite3_bind_int64 (s, 10, l->last_a);
  if (with_device)
    sqlite3_bind_int64 (s, 11, l->max_d);
  else
    sqlite3_bind_null (s, 11);
  int rc = sqlite3_step (s);
  sqlite3_reset (s);
  l->has = 0;
  return rc == SQLITE_DONE ? 0 : -1;
}

static int
level_add (sqlite3 *db, Levels *lv, int32_t dev, int32_t alloc, int64_t rel,
           int64_t r, int64_t a, int64_t d, int with_device)
{
  lv->rows++;
  for (int i = 0; i < level_ctx.n_shifts; i++)
    {
      LevelAcc *l = &lv->lv[i];
      int64_t bucket = rel >> (level_ctx.first_shift + 2 * i);
      if (l->has && l->bucket != bucket)
        if (level_flush (db, i, dev, alloc, l, with_device) < 0)
          return -1;
      if (!l->has)
        {
          l->has = 1;
          l->bucket = bucket;
          l->min_r = l->max_r = r;
          l->min_a = l->max_a = a;
          l->max_d = d;
        }
      if (r < l->min_r) l->min_r = r;
      if (r > l->max_r) l->max_r = r;
      if (a < l->min_a) l->min_a = a;
      if (a > l->max_a) l->max_a = a;
      if (d > l->max_d) l->max_d = d;
      l->last_r = r;
      l->last_a = a;
    }
  return 0;
}

/* Block row writer. */
static const char *block_sql =
  "INSERT INTO block (id, level, device_id, allocator_id, process_id, kind,"
  " address, bytes, block_bytes, alloc_seq, free_seq, alloc_ts, free_ts,"
  " alloc_event_id, free_event_id, stack_id, free_stack_id, range_id,"
  " owner_id, span_bin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

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

typedef struct {
  sqlite3 *db;
  VsProgressFunc progress;
  void *progress_data;
  uint64_t done, total;
} Progress;

static int
tick (Progress *p, uint64_t n)
{
  p->done += n;
  if (p->progress && !p->progress (p->done, p->total, p->progress_data))
    return -1;
  return 0;
}

/* Replays events in order; writes series and series_level; fills accs. */
static int
replay (Trace *t, State *st, int64_t origin, Progress *pr, Err *e)
{
  sqlite3 *db = pr->db;
  sqlite3_stmt *ins;
  if (sqlite3_prepare_v2 (db, series_sql, -1, &ins, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, level_sql, -1, &level_ctx.stmt, NULL) != SQLITE_OK)
    return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
  {
    int64_t span = t->n ? t->ev[t->n - 1].ts - origin : 0;
    int64_t budget = (int64_t) t->n / 4 + 1;
    int sh = FIRST_SHIFT;
    while (sh < 62 && (span >> sh) > budget)
      sh += 2;
    level_ctx.first_shift = sh;
    level_ctx.n_shifts = 1;
    while (level_ctx.n_shifts < N_SHIFTS && sh + 2 * level_ctx.n_shifts < 63
           && (span >> (sh + 2 * (level_ctx.n_shifts - 1))) > 0)
      level_ctx.n_shifts++;
  }

  size_t nacc = (size_t) (st->ndev + 1) * (size_t) (st->nalloc + 1);
  Levels *levels = calloc (nacc, sizeof *levels);
  if (levels == NULL)
    {
      sqlite3_finalize (ins);
      return fail (e, "cannot finalize trace: out of memory");
    }

  /* Memory live before the trace began counts from the start. */
  for (size_t j = 0; j < t->nb; j++)
    {
      Block *b = &t->bl[j];
      if (b->alloc_ev >= 0)
        continue;
      const Event *ev = &t->ev[b->free_ev];
      int32_t dev = ev->device_id;
      if (dev <= 0 || dev > st->ndev)
        continue;
      DevState *ds = &st->dev[dev];
      if (b->level == 1)
        {
          switch (ev->kind)
            {
            case VS_MEM_KIND_DEVICE: case VS_MEM_KIND_VMM:
              ds->device += b->bytes;
              if (b->owner < 0)
                ds->plain += b->bytes;
              break;
            case VS_MEM_KIND_STATIC: ds->static_bytes += b->bytes; break;
            case VS_MEM_KIND_PINNED: ds->pinned += b->bytes; break;
            case VS_MEM_KIND_MANAGED: ds->managed += b->bytes; break;
            case VS_MEM_KIND_ASYNC:
              if (ev->allocator_id > 0 && ev->allocator_id <= st->nalloc)
                acc_at (st, dev, ev->allocator_id)->allocated += b->bytes;
              else
                ds->plain += b->bytes, ds->device += b->bytes;
              break;
            default: break;
            }
        }
      else if (ev->allocator_id > 0 && ev->allocator_id <= st->nalloc)
        {
          Acc *a = acc_at (st, dev, ev->allocator_id);
          if (b->level == 2)
            a->allocated += b->bytes;
          else
            a->reserved += b->bytes;
        }
    }

  int64_t seq = 0;
  int rc = 0;
  for (size_t i = 0; i < t->n && rc == 0; i++)
    {
      Event *ev = &t->ev[i];
      seq = (int64_t) i + 1;
      int32_t dev = ev->device_id;
      if (dev <= 0 || dev > st->ndev)
        continue;
      DevState *ds = &st->dev[dev];
      int32_t alloc = 0; /* allocator whose series changes, 0: none */
      int changed_all = 0;

      if (ev->src == SRC_POOL)
        {
          alloc = ev->allocator_id;
          if (alloc <= 0 || alloc > st->nalloc || ev->bytes < 0)
            continue;
          Acc *a = acc_at (st, dev, alloc);
          int64_t old = a->pool_size < 0 ? 0 : a->pool_size;
          a->pool_size = ev->op == VS_POOL_OP_DESTROYED ? 0 : ev->bytes;
          ds->device += a->pool_size - old;
          changed_all = 1;
        }
      else if (ev->block >= 0)
        {
          Block *b = &t->bl[ev->block];
          int64_t sign = is_alloc (ev) ? 1 : -1;
          int64_t bytes = sign * b->bytes;
          if (b->level == 1)
            {
              switch (ev->kind)
                {
                case VS_MEM_KIND_DEVICE: case VS_MEM_KIND_VMM:
                  ds->device += bytes;
                  if (b->owner < 0)
                    {
                      ds->plain += bytes;
                      if (sign > 0) ds->plain_allocs++; else ds->plain_frees++;
                    }
                  changed_all = 1;
                  break;
                case VS_MEM_KIND_STATIC:
                  ds->static_bytes += bytes;
                  changed_all = 1;
                  break;
                case VS_MEM_KIND_PINNED:
                  ds->pinned += bytes;
                  changed_all = 1;
                  break;
                case VS_MEM_KIND_MANAGED:
                  ds->managed += bytes;
                  changed_all = 1;
                  break;
                case VS_MEM_KIND_ASYNC:
                  if (b->owned_by_pool && ev->allocator_id <= st->nalloc)
                    {
                      alloc = ev->allocator_id;
                      Acc *a = acc_at (st, dev, alloc);
                      a->allocated += bytes;
                      if (sign > 0) a->alloc_count++; else a->free_count++;
                      if (ev->block_bytes >= 0)
                        {
                          int64_t old = a->pool_size < 0 ? 0 : a->pool_size;
                          a->pool_size = ev->block_bytes;
                          ds->device += a->pool_size - old;
                        }
                    }
                  else
                    {
                      ds->device += bytes;
                      ds->plain += bytes;
                      if (sign > 0) ds->plain_allocs++; else ds->plain_frees++;
                    }
                  changed_all = 1;
                  break;
                default:
                  break;
                }
            }
          else if (ev->allocator_id > 0 && ev->allocator_id <= st->nalloc)
            {
              alloc = ev->allocator_id;
              Acc *a = acc_at (st, dev, alloc);
              if (b->level == 2)
                {
                  a->allocated += bytes;
                  if (sign > 0) a->alloc_count++; else a->free_count++;
                }
              else
                a->reserved += bytes;
              changed_all = 1;
            }
        }
      else if (ev->src == SRC_ALLOC && ev->op == VS_ALLOC_OP_SEGMENT_UNMAP
               && ev->allocator_id > 0 && ev->allocator_id <= st->nalloc)
        {
          /* A partial unmap: the mapped total drops by its size. */
          alloc = ev->allocator_id;
          acc_at (st, dev, alloc)->reserved -= ev->bytes;
          changed_all = 1;
        }
      if (!changed_all)
        continue;

      /* Totals for `all` on this device. */
      int64_t all_r = ds->plain, all_a = ds->plain;
      for (int32_t k = 1; k <= st->nalloc; k++)
        {
          Acc *a = acc_at (st, dev, k);
          int64_t r = a->is_pool ? (a->pool_size > a->allocated
                                      ? a->pool_size : a->allocated)
                                 : a->reserved;
          all_r += r;
          all_a += a->allocated;
        }
      int32_t which[2] = { 0, alloc };
      for (int w = 0; w < (alloc ? 2 : 1); w++)
        {
          Acc *a = acc_at (st, dev, which[w]);
          int64_t r, al;
          if (which[w] == 0)
            r = all_r, al = all_a;
          else
            {
              al = a->allocated;
              r = a->is_pool ? (a->pool_size > al ? a->pool_size : al)
                             : a->reserved;
            }
          a->touched = 1;
          if (r > a->peak_reserved)
            a->peak_reserved = r, a->peak_reserved_ts = ev->ts,
            a->peak_reserved_seq = seq;
          if (al > a->peak_allocated)
            a->peak_allocated = al, a->peak_allocated_ts = ev->ts,
            a->peak_allocated_seq = seq;
          a->reserved = which[w] == 0 ? r : a->reserved;
          if (which[w] == 0)
            a->allocated = al;
          sqlite3_bind_int64 (ins, 1, seq);
          sqlite3_bind_int (ins, 2, dev);
          sqlite3_bind_int (ins, 3, which[w]);
          sqlite3_bind_int64 (ins, 4, ev->ts);
          sqlite3_bind_int64 (ins, 5, r);
          sqlite3_bind_int64 (ins, 6, al);
          if (which[w] == 0)
            {
              sqlite3_bind_int64 (ins, 7, ds->device);
              sqlite3_bind_int64 (ins, 8, ds->static_bytes);
              sqlite3_bind_int64 (ins, 9, ds->pinned);
              sqlite3_bind_int64 (ins, 10, ds->managed);
              if (ds->device > ds->peak_device)
                ds->peak_device = ds->device, ds->peak_device_ts = ev->ts;
              if (ds->pinned > ds->peak_pinned)
                ds->peak_pinned = ds->pinned;
              if (ds->managed > ds->peak_managed)
                ds->peak_managed = ds->managed;
            }
          else
            for (int c = 7; c <= 10; c++)
              sqlite3_bind_null (ins, c);
          if (sqlite3_step (ins) != SQLITE_DONE)
            rc = -1;
          sqlite3_reset (ins);
          size_t li = (size_t) dev * (size_t) (st->nalloc + 1) + (size_t) which[w];
          if (rc == 0
              && level_add (db, &levels[li], dev, which[w], ev->ts - origin,
                            r, al, which[w] == 0 ? ds->device : 0,
                            which[w] == 0) < 0)
            rc = -1;
        }
      if ((i & 0xFFFF) == 0 && tick (pr, 0x10000) < 0)
        {
          sqlite3_finalize (ins);
          free (levels);
          return fail (e, "cancelled");
        }
    }
  if (rc < 0)
    {
      fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
      goto out;
    }

  /* Flush the open buckets. */
  for (int32_t d = 1; d <= st->ndev && rc == 0; d++)
    for (int32_t k = 0; k <= st->nalloc && rc == 0; k++)
      {
        size_t li = (size_t) d * (size_t) (st->nalloc + 1) + (size_t) k;
        for (int i = 0; i < level_ctx.n_shifts && rc == 0; i++)
          rc = level_flush (db, i, d, k, &levels[li].lv[i], k == 0);
      }
  if (rc < 0)
    fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));

out:
  sqlite3_finalize (ins);
  sqlite3_finalize (level_ctx.stmt);
  level_ctx.stmt = NULL;
  free (levels);
  return rc;
}

static int
write_blocks (Trace *t, Progress *pr, Err *e)
{
  sqlite3 *db = pr->db;
  sqlite3_stmt *ins;
  if (sqlite3_prepare_v2 (db, block_sql, -1, &ins, NULL) != SQLITE_OK)
    return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));

  int rc = 0;
  for (size_t j = 0; j < t->nb && rc == 0; j++)
    {
      Block *b = &t->bl[j];
      const Event *a = b->alloc_ev >= 0 ? &t->ev[b->alloc_ev] : NULL;
      const Event *f = b->free_ev >= 0 ? &t->ev[b->free_ev] : NULL;
      const Event *any = a ? a : f;
      /* A piece left by a partial unmap has no stack of its own. */
      int piece = a && b->level == 3 && a->op == VS_ALLOC_OP_SEGMENT_UNMAP;
      int64_t stack[2] = { a && !piece ? a->stack_id : 0, f ? f->stack_id : 0 };
      int64_t range = a ? a->range_id : f->range_id;
      /* Kinds are device-level; allocator blocks and segments have none. */
      int64_t kind = b->level == 1 ? any->kind : 0;
      sqlite3_bind_int64 (ins, 1, (int64_t) j + 1);
      sqlite3_bind_int (ins, 2, b->level);
      if (any->device_id)
        sqlite3_bind_int (ins, 3, any->device_id);
      else
        sqlite3_bind_null (ins, 3);
      if (b->level == 1)
        {
          if (b->owned_by_pool)
            sqlite3_bind_int (ins, 4, any->allocator_id);
          else if (b->owner >= 0)
            sqlite3_bind_int (ins, 4,
                              t->ev[t->bl[b->owner].alloc_ev >= 0
                                      ? t->bl[b->owner].alloc_ev
                                      : t->bl[b->owner].free_ev].allocator_id);
          else
            sqlite3_bind_null (ins, 4);
        }
      else
        sqlite3_bind_int (ins, 4, any->allocator_id);
      sqlite3_bind_int (ins, 5, any->process_id);
      sqlite3_bind_int64 (ins, 6, kind);
      sqlite3_bind_int64 (ins, 7, b->address);
      sqlite3_bind_int64 (ins, 8, b->bytes);
      if (b->block_bytes >= 0 && b->level == 2)
        sqlite3_bind_int64 (ins, 9, b->block_bytes);
      else
        sqlite3_bind_null (ins, 9);
      if (a) sqlite3_bind_int64 (ins, 10, (int64_t) b->alloc_ev + 1);
      else sqlite3_bind_int64 (ins, 10, 0);
      if (f) sqlite3_bind_int64 (ins, 11, (int64_t) b->free_ev + 1);
      else sqlite3_bind_null (ins, 11);
      if (a) sqlite3_bind_int64 (ins, 12, a->ts);
      else sqlite3_bind_null (ins, 12);
      if (f) sqlite3_bind_int64 (ins, 13, f->ts);
      else sqlite3_bind_null (ins, 13);
      if (a) sqlite3_bind_int64 (ins, 14, a->id);
      else sqlite3_bind_null (ins, 14);
      if (f) sqlite3_bind_int64 (ins, 15, f->id);
      else sqlite3_bind_null (ins, 15);
      if (stack[0]) sqlite3_bind_int64 (ins, 16, stack[0]);
      else sqlite3_bind_null (ins, 16);
      if (stack[1]) sqlite3_bind_int64 (ins, 17, stack[1]);
      else sqlite3_bind_null (ins, 17);
      if (range) sqlite3_bind_int64 (ins, 18, range);
      else sqlite3_bind_null (ins, 18);
      if (b->owner >= 0) sqlite3_bind_int64 (ins, 19, (int64_t) b->owner + 1);
      else sqlite3_bind_null (ins, 19);
      /* Live at the end: the interval closes after the last position. */
      sqlite3_bind_int64 (ins, 20, span_bin (a ? (int64_t) b->alloc_ev + 1 : 0,
                                             f ? (int64_t) b->free_ev + 1
                                               : (int64_t) t->n + 1));
      if (sqlite3_step (ins) != SQLITE_DONE)
        rc = -1;
      sqlite3_reset (ins);
      if ((j & 0xFFFF) == 0 && tick (pr, 0x10000) < 0)
        {
          rc = -2;
          break;
        }
    }
  sqlite3_finalize (ins);
  if (rc == -2)
    return fail (e, "cancelled");
  if (rc < 0)
    return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
  return 0;
}

static const char *summary_sql =
  "INSERT INTO summary (device_id, allocator_id, peak_reserved_bytes,"
  " peak_reserved_ts, peak_reserved_seq, peak_allocated_bytes,"
  " peak_allocated_ts, peak_allocated_seq, final_reserved_bytes,"
  " final_allocated_bytes, alloc_count, free_count, failed_alloc_count,"
  " peak_device_bytes, peak_device_ts, static_bytes, peak_pinned_bytes,"
  " peak_managed_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

/* Failed requests that count: those an allocator reported, and device-level
 * failures in processes without a PyTorch allocator (PyTorch retries its
 * cudaMalloc failures after emptying its cache and reports its own OOMs). */
static const char *failed_count_sql =
  "SELECT count(*) FROM failed_alloc f WHERE f.device_id = ?1 AND"
  " (CASE WHEN ?2 = 0 THEN (f.allocator_id IS NOT NULL OR NOT EXISTS"
  "   (SELECT 1 FROM allocator a WHERE a.kind = 'pytorch'"
  "    AND a.process_id = f.process_id))"
  "  ELSE f.allocator_id = ?2 END)";

static int
write_summary (sqlite3 *db, State *st, Err *e)
{
  sqlite3_stmt *ins, *fc;
  if (sqlite3_prepare_v2 (db, summary_sql, -1, &ins, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, failed_count_sql, -1, &fc, NULL) != SQLITE_OK)
    return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
  int rc = 0;
  for (int32_t d = 1; d <= st->ndev && rc == 0; d++)
    for (int32_t k = 0; k <= st->nalloc && rc == 0; k++)
      {
        Acc *a = acc_at (st, d, k);
        DevState *ds = &st->dev[d];
        if (k != 0 && a->device_id != d)
          continue; /* allocator of another device */
        if (k == 0)
          {
            /* Counts on `all`: every allocator's plus plain allocations. */
            a->alloc_count = ds->plain_allocs;
            a->free_count = ds->plain_frees;
            for (int32_t j = 1; j <= st->nalloc; j++)
              {
                a->alloc_count += acc_at (st, d, j)->alloc_count;
                a->free_count += acc_at (st, d, j)->free_count;
              }
          }
        sqlite3_bind_int (fc, 1, d);
        sqlite3_bind_int (fc, 2, k);
        int64_t failed = sqlite3_step (fc) == SQLITE_ROW
                           ? sqlite3_column_int64 (fc, 0) : 0;
        sqlite3_reset (fc);
        int64_t fin_r = a->reserved, fin_a = a->allocated;
        if (k != 0 && a->is_pool)
          fin_r = a->pool_size > fin_a ? a->pool_size : fin_a;
        sqlite3_bind_int (ins, 1, d);
        sqlite3_bind_int (ins, 2, k);
        sqlite3_bind_int64 (ins, 3, a->peak_reserved);
        int64_t v[] = { a->peak_reserved_ts, a->peak_reserved_seq };
        for (int c = 0; c < 2; c++)
          if (a->touched && a->peak_reserved > 0)
            sqlite3_bind_int64 (ins, 4 + c, v[c]);
          else
            sqlite3_bind_null (ins, 4 + c);
        sqlite3_bind_int64 (ins, 6, a->peak_allocated);
        int64_t w[] = { a->peak_allocated_ts, a->peak_allocated_seq };
        for (int c = 0; c < 2; c++)
          if (a->touched && a->peak_allocated > 0)
            sqlite3_bind_int64 (ins, 7 + c, w[c]);
          else
            sqlite3_bind_null (ins, 7 + c);
        sqlite3_bind_int64 (ins, 9, fin_r);
        sqlite3_bind_int64 (ins, 10, fin_a);
        sqlite3_bind_int64 (ins, 11, a->alloc_count);
        sqlite3_bind_int64 (ins, 12, a->free_count);
        sqlite3_bind_int64 (ins, 13, failed);
        if (k == 0)
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
        if (sqlite3_step (ins) != SQLITE_DONE)
          rc = -1;
        sqlite3_reset (ins);
      }
  sqlite3_finalize (ins);
  sqlite3_finalize (fc);
  if (rc < 0)
    return fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
  return 0;
}

static const char *reset_sql =
  "DELETE FROM block; DELETE FROM series; DELETE FROM series_level;"
  " DELETE FROM summary;";

/* Indexes for readers' time-range and instant queries.  The raw memory
 * event tables get none: readers go through block and series. */
static const char *index_sql =
  "CREATE INDEX IF NOT EXISTS pool_event_ts ON pool_event (ts);"
  "CREATE INDEX IF NOT EXISTS failed_alloc_ts ON failed_alloc (ts);"
  "CREATE INDEX IF NOT EXISTS kernel_start ON kernel (start_ns);"
  "CREATE INDEX IF NOT EXISTS memcpy_start ON memcpy (start_ns);"
  "CREATE INDEX IF NOT EXISTS memset_start ON memset (start_ns);"
  "CREATE INDEX IF NOT EXISTS nvtx_range_start ON nvtx_range (start_ns);"
  "CREATE INDEX IF NOT EXISTS block_alloc ON block (device_id, level, alloc_seq);"
  "CREATE INDEX IF NOT EXISTS block_free ON block (device_id, level, free_seq);"
  "CREATE INDEX IF NOT EXISTS block_bin ON block (device_id, span_bin);";

/* Origin of the trace: meta start_ns, or the first event when unset. */
static const char *origin_sql =
  "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'),"
  " (SELECT min(ts) FROM (SELECT min(ts) AS ts FROM mem_event UNION ALL"
  "  SELECT min(ts) FROM alloc_event UNION ALL SELECT min(ts) FROM pool_event)), 0)";

int
vs_trace_finalize (sqlite3 *db, VsProgressFunc progress, void *progress_data,
                   char *err, size_t errlen)
{
  Err e = { err, errlen };
  Trace t = { 0 };
  State st = { 0 };
  Progress pr = { db, progress, progress_data, 0, 0 };
  int rc = -1;

  /* A large page cache: finalize rewrites every derived table at once. */
  sqlite3_exec (db, "PRAGMA cache_size=-65536", NULL, NULL, NULL);
  if (exec_sql (db, &e, "BEGIN IMMEDIATE") < 0)
    return -1;
  if (exec_sql (db, &e, reset_sql) < 0 || load_events (db, &t, &e) < 0)
    goto out;

  pr.total = (uint64_t) t.n * 3 + 1;
  qsort (t.ev, t.n, sizeof *t.ev, event_cmp);
  if (tick (&pr, 0) < 0)
    {
      fail (&e, "cancelled");
      goto out;
    }
  if (pair_events (&t, &e) < 0 || assign_owners (&t, &e) < 0)
    goto out;

  /* Dimensions: devices and allocators are small dense id ranges. */
  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2 (db, "SELECT ifnull(max(id), 0) FROM device", -1, &s, NULL) != SQLITE_OK)
      goto sqlfail;
    sqlite3_step (s);
    st.ndev = sqlite3_column_int (s, 0);
    sqlite3_finalize (s);
    if (sqlite3_prepare_v2 (db, "SELECT ifnull(max(id), 0) FROM allocator", -1, &s, NULL) != SQLITE_OK)
      goto sqlfail;
    sqlite3_step (s);
    st.nalloc = sqlite3_column_int (s, 0);
    sqlite3_finalize (s);
    st.acc = calloc ((size_t) (st.ndev + 1) * (size_t) (st.nalloc + 1), sizeof *st.acc);
    st.dev = calloc ((size_t) st.ndev + 1, sizeof *st.dev);
    if (st.acc == NULL || st.dev == NULL)
      {
        fail (&e, "cannot finalize trace: out of memory");
        goto out;
      }
    for (int32_t d = 0; d <= st.ndev; d++)
      for (int32_t k = 0; k <= st.nalloc; k++)
        acc_at (&st, d, k)->pool_size = -1;
    if (sqlite3_prepare_v2 (db, "SELECT id, device_id, kind = 'pool' FROM allocator",
                            -1, &s, NULL) != SQLITE_OK)
      goto sqlfail;
    while (sqlite3_step (s) == SQLITE_ROW)
      {
        int32_t id = sqlite3_column_int (s, 0), d = sqlite3_column_int (s, 1);
        int pool = sqlite3_column_int (s, 2);
        for (int32_t dd = 0; dd <= st.ndev; dd++)
          {
            Acc *a = acc_at (&st, dd, id);
            a->device_id = d;
            a->allocator_id = id;
            a->is_pool = pool;
          }
      }
    sqlite3_finalize (s);
  }

  int64_t origin = 0;
  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2 (db, origin_sql, -1, &s, NULL) != SQLITE_OK)
      goto sqlfail;
    if (sqlite3_step (s) == SQLITE_ROW)
      origin = sqlite3_column_int64 (s, 0);
    sqlite3_finalize (s);
  }

  if (replay (&t, &st, origin, &pr, &e) < 0
      || write_blocks (&t, &pr, &e) < 0
      || write_summary (db, &st, &e) < 0)
    goto out;
  if (exec_sql (db, &e, index_sql) < 0)
    goto out;
  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2 (db,
          "INSERT OR REPLACE INTO meta (key, value) VALUES ('finalized', '1'),"
          " ('start_ns', ?1), ('end_ns', max(?1,"
          " ifnull((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns'), ?1),"
          " ifnull((SELECT max(ts) FROM series), ?1),"
          " ifnull((SELECT max(end_ns) FROM kernel), ?1),"
          " ifnull((SELECT max(end_ns) FROM nvtx_range), ?1),"
          " ifnull((SELECT max(ts) FROM failed_alloc), ?1)))",
          -1, &s, NULL) != SQLITE_OK)
      goto sqlfail;
    sqlite3_bind_int64 (s, 1, origin);
    int src = sqlite3_step (s);
    sqlite3_finalize (s);
    if (src != SQLITE_DONE)
      goto sqlfail;
  }
  if (exec_sql (db, &e, "COMMIT") < 0)
    goto out;
  /* A finished trace is one self-contained file.  While a recording is
   * still writing this fails harmlessly and the trace stays in WAL mode. */
  sqlite3_exec (db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
  rc = 0;
  tick (&pr, pr.total - pr.done);
  goto done;

sqlfail:
  fail (&e, "cannot finalize trace: %s", sqlite3_errmsg (db));
out:
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
done:
  free (t.ev);
  free (t.bl);
  free (st.acc);
  free (st.dev);
  return rc;
}
