/* SPDX-License-Identifier: MIT */
/* vs-trace-pair.c — loading raw events and pairing allocations with releases.
 *
 * Allocations and releases are matched by (process, device, address) at the
 * device level and by (allocator, level, address) at the allocator level
 * (keys that never meet: the level is stored negated),
 * walking events in replay order; a release with no allocation is memory
 * that was live before the trace began.  Then device-level allocations lying
 * inside an allocator's segment are marked as that allocator's, so `all`
 * counts them once.  Hand-written hash table: this code runs inside
 * profiled processes and on GPU servers without GLib.
 */
#include "vs-trace-finalize-private.h"
#include "vs-row-sink.h"

#include <assert.h>
#include <stdbool.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ open blocks */

/* The open (allocated, not yet released) blocks by a 3-part key: device,
 * level or pool, address. */
typedef struct
{
  int64_t k1, k2, k3;
} VsPairKey;

typedef struct
{
  VsPairKey key;
  int32_t block; /* index into t->bl */
  uint8_t used;
} VsPairEntry;

static uint64_t
mix (int64_t a, int64_t b, int64_t c)
{
  uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= (uint64_t)c * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  h ^= h >> 31;
  return h * 0x94D049BB133111EBull;
}

#define VS_HT_TYPE Map
#define VS_HT_FN(n) open_map_##n
#define VS_HT_ENTRY VsPairEntry
#define VS_HT_KEY_TYPE VsPairKey
#define VS_HT_KEY(e) ((e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = (k), (e)->used = 1)
#define VS_HT_HASH(k) mix ((k).k1, (k).k2, (k).k3)
#define VS_HT_EQUAL(a, b) ((a).k1 == (b).k1 && (a).k2 == (b).k2 && (a).k3 == (b).k3)
#define VS_HT_IS_EMPTY(e) (!(e)->used)
#include "vs-hash-table.h"

static int
map_init (Map *m, size_t expected)
{
  memset (m, 0, sizeof *m);
  return open_map_reserve (m, expected) ? 0 : -1;
}

/* Sets key → block index (value >= 0) or removes the key (value -1). */
static int
map_set (Map *m, int64_t k1, int64_t k2, int64_t k3, int32_t value)
{
  VsPairKey k = { k1, k2, k3 };
  if (value < 0)
    {
      VsPairEntry *e = open_map_find (m, k);
      if (e != NULL)
        open_map_remove (m, e);
      return 0;
    }
  VsPairEntry *e = open_map_insert (m, k, NULL);
  if (e == NULL)
    return -1;
  e->block = value;
  return 0;
}

static int32_t
map_get (Map *m, int64_t k1, int64_t k2, int64_t k3)
{
  const VsPairEntry *e = open_map_find (m, (VsPairKey){ k1, k2, k3 });
  return e != NULL ? e->block : -1;
}

VsFinEvent *
vs_fin_push_event (VsFinTrace *t)
{
  if (t->n == t->cap)
    {
      size_t cap = t->cap ? t->cap * 2 : 4096;
      VsFinEvent *ev = realloc (t->ev, cap * sizeof *ev);
      if (ev == NULL)
        return NULL;
      t->ev = ev;
      t->cap = cap;
    }
  VsFinEvent *e = &t->ev[t->n++];
  memset (e, 0, sizeof *e);
  e->block = -1;
  return e;
}

static int32_t
push_block (VsFinTrace *t, uint8_t level, int64_t address, int64_t bytes, int64_t block_bytes)
{
  if (t->nb == t->capb)
    {
      size_t cap = t->capb ? t->capb * 2 : 4096;
      VsFinBlock *bl = realloc (t->bl, cap * sizeof *bl);
      if (bl == NULL)
        return -1;
      t->bl = bl;
      t->capb = cap;
    }
  VsFinBlock *b = &t->bl[t->nb];
  b->alloc_ev = -1;
  b->free_ev = -1;
  b->owner = -1;
  b->level = level;
  b->owned_by_pool = 0;
  b->address = address;
  b->bytes = bytes;
  b->block_bytes = block_bytes;
  return (int32_t)t->nb++;
}

/* The writer's NULL: ids of 0 or unknown are "none" (0 here), other
 * unknown values -1. */
static int64_t
id_or_0 (int64_t v)
{
  return v == VS_UNKNOWN ? 0 : v;
}

static int64_t
value_or_neg (int64_t v)
{
  return v == VS_UNKNOWN ? -1 : v;
}

int
vs_fin_add_mem_event (VsFinTrace *t, int64_t id, const VsMemEvent *m)
{
  VsFinEvent *ev = vs_fin_push_event (t);
  if (ev == NULL)
    return -1;
  ev->src = SRC_MEM;
  ev->id = id;
  ev->ts = m->ts;
  ev->process_id = (int32_t)m->process_id;
  ev->device_id = (int32_t)id_or_0 (m->device_id);
  ev->kind = (uint8_t)m->kind;
  ev->op = (uint8_t)m->op;
  ev->address = m->address;
  ev->bytes = m->bytes;
  ev->allocator_id = (int32_t)id_or_0 (m->pool_id);
  ev->block_bytes = value_or_neg (m->pool_size);
  ev->stack_id = id_or_0 (m->stack_id);
  ev->range_id = (int32_t)id_or_0 (m->range_id);
  return 0;
}

int
vs_fin_add_alloc_event (VsFinTrace *t, int64_t id, const VsAllocEvent *a)
{
  VsFinEvent *ev = vs_fin_push_event (t);
  if (ev == NULL)
    return -1;
  int64_t req = value_or_neg (a->requested_bytes);
  int64_t blk = value_or_neg (a->block_bytes);
  ev->src = SRC_ALLOC;
  ev->id = id;
  ev->ts = a->ts;
  ev->process_id = (int32_t)a->process_id;
  ev->device_id = (int32_t)a->device_id;
  ev->allocator_id = (int32_t)a->allocator_id;
  ev->op = (uint8_t)a->op;
  ev->address = a->address;
  ev->bytes = req >= 0 ? req : (blk >= 0 ? blk : 0);
  ev->block_bytes = blk;
  ev->stack_id = id_or_0 (a->stack_id);
  ev->range_id = (int32_t)id_or_0 (a->range_id);
  ev->flags = a->before_trace == 1 ? FIN_BEFORE_TRACE : 0;
  return 0;
}

int
vs_fin_add_pool_event (VsFinTrace *t, int64_t id, const VsPoolEvent *p)
{
  VsFinEvent *ev = vs_fin_push_event (t);
  if (ev == NULL)
    return -1;
  ev->src = SRC_POOL;
  ev->id = id;
  ev->ts = p->ts;
  ev->process_id = (int32_t)p->process_id;
  ev->device_id = (int32_t)id_or_0 (p->device_id);
  ev->allocator_id = (int32_t)p->pool_id;
  ev->op = (uint8_t)p->op;
  ev->bytes = value_or_neg (p->size);
  return 0;
}

/* Column i, VS_UNKNOWN when NULL, as the writer's structs have it. */
static int64_t
col (sqlite3_stmt *s, int i)
{
  return sqlite3_column_type (s, i) == SQLITE_NULL ? VS_UNKNOWN : sqlite3_column_int64 (s, i);
}

static const char *load_mem_sql
    = "SELECT id, ts, process_id, device_id, kind, op, address, bytes, pool_id,"
      " pool_size, stack_id, range_id FROM mem_event";
static const char *load_alloc_sql
    = "SELECT id, ts, process_id, device_id, allocator_id, op, address,"
      " requested_bytes, block_bytes, stack_id, range_id, before_trace FROM alloc_event"
      " WHERE id > ?1";
static const char *load_pool_sql
    = "SELECT id, ts, process_id, device_id, pool_id, op, size FROM pool_event";

/* Whether column i holds NULL or an id in 1..max. */
static int
id_ok (sqlite3_stmt *s, int i, int64_t max)
{
  int64_t v = sqlite3_column_int64 (s, i);
  return sqlite3_column_type (s, i) == SQLITE_NULL
         || (sqlite3_column_type (s, i) == SQLITE_INTEGER && v >= 1 && v <= max);
}

/* Whether column i holds an integer in 0..max. */
static int
small_ok (sqlite3_stmt *s, int i, int64_t max)
{
  int64_t v = sqlite3_column_int64 (s, i);
  return sqlite3_column_type (s, i) == SQLITE_INTEGER && v >= 0 && v <= max;
}

/* Column k of the load query in add_row's s. */
#define K(k) (map != NULL ? map[k] : (k))

/* Adds the row s points at, of source table src, to t, column k of the
 * load query being column map[k] of s (map NULL: k); -2 when the row
 * names a device, allocator, process, range, kind or operation out of
 * range (e is then filled), -1 when out of memory. */
static int
add_row (VsFinTrace *t, uint8_t src, sqlite3_stmt *s, const int *map, VsFinErr *e)
{
  static const char *const tables[] = { "pool_event", "mem_event", "alloc_event" };
  int64_t id = sqlite3_column_int64 (s, K (0));
  /* Columns per source: device, allocator, kind (-1 none), op. */
  static const int cols[3][4] = { { 3, 4, -1, 5 }, { 3, 8, 4, 5 }, { 3, 4, -1, 5 } };
  const int *c = cols[src];
  const char *bad = NULL;

  if (!id_ok (s, K (c[0]), t->max_device))
    bad = "device";
  else if (!id_ok (s, K (c[1]), t->max_allocator)
           || (src != SRC_MEM && sqlite3_column_type (s, K (c[1])) == SQLITE_NULL))
    bad = "allocator";
  else if (!small_ok (s, 2, INT32_MAX))
    bad = "process";
  else if ((c[2] >= 0 && !small_ok (s, K (c[2]), 255)) || !small_ok (s, K (c[3]), 255))
    bad = "kind or operation";
  else if (src != SRC_POOL && !id_ok (s, K (src == SRC_MEM ? 11 : 10), INT32_MAX))
    bad = "range";
  if (bad != NULL)
    {
      vs_fin_fail (e, "%s row %lld names a %s that the trace does not define", tables[src],
                   (long long)id, bad);
      return -2;
    }
  if (src == SRC_MEM)
    {
      VsMemEvent m = { .ts = col (s, K (1)),
                       .process_id = col (s, K (2)),
                       .device_id = col (s, K (3)),
                       .kind = (VsMemKind)sqlite3_column_int (s, K (4)),
                       .op = (VsMemOp)sqlite3_column_int (s, K (5)),
                       .address = col (s, K (6)),
                       .bytes = col (s, K (7)),
                       .pool_id = col (s, K (8)),
                       .pool_size = col (s, K (9)),
                       .stack_id = col (s, K (10)),
                       .range_id = col (s, K (11)) };
      return vs_fin_add_mem_event (t, id, &m);
    }
  if (src == SRC_ALLOC)
    {
      VsAllocEvent a = { .ts = col (s, K (1)),
                         .process_id = col (s, K (2)),
                         .device_id = col (s, K (3)),
                         .allocator_id = col (s, K (4)),
                         .op = (VsAllocOp)sqlite3_column_int (s, K (5)),
                         .address = col (s, K (6)),
                         .requested_bytes = col (s, K (7)),
                         .block_bytes = col (s, K (8)),
                         .stack_id = col (s, K (9)),
                         .range_id = col (s, K (10)),
                         .before_trace = sqlite3_column_int64 (s, K (11)) };
      return vs_fin_add_alloc_event (t, id, &a);
    }
  VsPoolEvent p = { .ts = col (s, K (1)),
                    .process_id = col (s, K (2)),
                    .device_id = col (s, K (3)),
                    .pool_id = col (s, K (4)),
                    .op = (VsPoolOp)sqlite3_column_int (s, K (5)),
                    .size = col (s, K (6)) };
  return vs_fin_add_pool_event (t, id, &p);
#undef K
}

/* With a row sink active (vs-row-sink.h), the rows of mem_event and
 * alloc_event are read whole, in id order, and handed to it as they are
 * loaded, so that compacting the trace next need not read them again:
 * the load query's columns, then the table's in the order of trace.sql. */
static const char *load_mem_whole_sql
    = "SELECT id, ts, process_id, tid, device_id, context, stream, kind, op, address, bytes,"
      " pool_id, pool_size, pool_utilized, correlation, stack_id, range_id"
      " FROM mem_event ORDER BY id";
static const char *load_alloc_whole_sql
    = "SELECT id, ts, process_id, tid, device_id, allocator_id, op, address, requested_bytes,"
      " block_bytes, segment_address, stream, stack_id, range_id, before_trace"
      " FROM alloc_event WHERE id > ?1 ORDER BY id";
/* Where the columns of load_mem_sql and load_alloc_sql are in those. */
static const int load_mem_whole_map[] = { 0, 1, 2, 4, 7, 8, 9, 10, 11, 12, 15, 16 };
static const int load_alloc_whole_map[] = { 0, 1, 2, 4, 5, 6, 7, 8, 9, 12, 13, 14 };

/* The widths of the whole rows. */
#define MEM_EVENT_COLS 17
#define ALLOC_EVENT_COLS 15

/* Hands the whole row s points at (its ncols columns) to sink.
 * Returns 0; 1 when a value is neither an integer nor NULL (the table
 * then cannot be chunked: compaction leaves the trace plain); -1 with
 * sink->err on failure. */
static int
sink_row (VsRowSink *sink, sqlite3_stmt *s, int ncols)
{
  int64_t v[MEM_EVENT_COLS];
  uint32_t nulls = 0;

  assert (ncols <= MEM_EVENT_COLS);
  for (int c = 0; c < ncols; c++)
    {
      int type = sqlite3_column_type (s, c);
      if (type == SQLITE_NULL)
        {
          v[c] = 0;
          nulls |= 1u << c;
        }
      else if (type == SQLITE_INTEGER)
        v[c] = sqlite3_column_int64 (s, c);
      else
        return 1;
    }
  return sink->row (sink, v, nulls) < 0 ? -1 : 0;
}

/* Lets go of the chunks a sink wrote of table (when it gave up on it). */
static void
drop_chunks (sqlite3 *db, VsRowSinkTable table)
{
  sqlite3_exec (db,
                table == VS_ROW_SINK_MEM_EVENT ? "DROP TABLE IF EXISTS main.mem_event_chunk"
                                               : "DROP TABLE IF EXISTS main.alloc_event_chunk",
                NULL, NULL, NULL);
}

int
vs_fin_check_given (const VsFinTrace *t, size_t n, VsFinErr *e)
{
  for (size_t i = 0; i < n && i < t->n; i++)
    {
      const VsFinEvent *ev = &t->ev[i];
      if (ev->device_id < 1 || ev->device_id > t->max_device || ev->allocator_id < 1
          || ev->allocator_id > t->max_allocator || ev->process_id < 0 || ev->range_id < 0)
        return vs_fin_fail (e,
                            "alloc_event row %lld names a device, allocator, process or range"
                            " that the trace does not define",
                            (long long)ev->id);
    }
  return 0;
}

int
vs_fin_load_events_after (sqlite3 *db, VsFinTrace *t, int64_t given, int64_t coded, VsRowSink *sink,
                          VsFinErr *e)
{
  assert (db != NULL && t != NULL && given >= 0 && coded >= 0);
  const char *sqls[3] = { sink ? load_mem_whole_sql : load_mem_sql,
                          sink ? load_alloc_whole_sql : load_alloc_sql, load_pool_sql };
  const uint8_t srcs[3] = { SRC_MEM, SRC_ALLOC, SRC_POOL };
  const VsRowSinkTable tables[2] = { VS_ROW_SINK_MEM_EVENT, VS_ROW_SINK_ALLOC_EVENT };
  const int widths[2] = { MEM_EVENT_COLS, ALLOC_EVENT_COLS };
  const int *const maps[2] = { load_mem_whole_map, load_alloc_whole_map };
  for (int q = 0; q < 3; q++)
    {
      sqlite3_stmt *s;
      /* The pass of the sink on this table, while it takes rows. */
      VsRowSink *pass = sink != NULL && q < 2 ? sink : NULL;
      bool gave_up = false;
      if (sqlite3_prepare_v2 (db, sqls[q], -1, &s, NULL) != SQLITE_OK)
        return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
      /* alloc_event: the rows after those given (with a sink: after
       * those it has). */
      if (srcs[q] == SRC_ALLOC)
        sqlite3_bind_int64 (s, 1, sink != NULL ? coded : given);
      if (pass != NULL && pass->begin (pass, tables[q], db, 0, 0) < 0)
        {
          sqlite3_finalize (s);
          return vs_fin_fail (e, "%s", pass->err);
        }
      int rc;
      while ((rc = sqlite3_step (s)) == SQLITE_ROW)
        {
          /* A row given already is only the sink's. */
          bool had = srcs[q] == SRC_ALLOC && sqlite3_column_int64 (s, 0) <= given;
          int added = had ? 0 : add_row (t, srcs[q], s, sink != NULL && q < 2 ? maps[q] : NULL, e);
          int sunk = added == 0 && pass != NULL ? sink_row (pass, s, widths[q]) : 0;
          if (sunk == 1)
            {
              /* Not chunked: compaction finds it so and leaves the trace
               * as it is. */
              pass->end (pass, 0);
              pass = NULL;
              gave_up = true;
            }
          if (added < 0 || sunk < 0)
            {
              if (pass != NULL)
                pass->end (pass, 0);
              sqlite3_finalize (s);
              if (sunk < 0)
                return vs_fin_fail (e, "%s", sink->err);
              return added == -2 ? -1 : vs_fin_fail (e, "out of memory");
            }
          if (t->n > VS_FIN_MAX_EVENTS)
            {
              if (pass != NULL)
                pass->end (pass, 0);
              sqlite3_finalize (s);
              return vs_fin_fail (e, "more than %d events", VS_FIN_MAX_EVENTS);
            }
        }
      sqlite3_finalize (s);
      /* Once the table is no longer being read. */
      if (gave_up)
        drop_chunks (db, tables[q]);
      if (rc != SQLITE_DONE)
        {
          if (pass != NULL)
            pass->end (pass, 0);
          return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
        }
      if (pass != NULL && pass->end (pass, 1) < 0)
        return vs_fin_fail (e, "%s", sink->err);
    }
  return 0;
}

int
vs_fin_check_events (const VsFinTrace *t, VsFinErr *e)
{
  /* Every running total the replay keeps is a sum of some of these sizes
   * with either sign, so a total within INT64_MAX keeps them all in range. */
  int64_t total = 0;
  if (t->n > VS_FIN_MAX_EVENTS)
    return vs_fin_fail (e, "more than %d events", VS_FIN_MAX_EVENTS);
  for (size_t i = 0; i < t->n; i++)
    {
      const VsFinEvent *ev = &t->ev[i];
      if (ev->ts < 0)
        return vs_fin_fail (e, "an event has a negative time (%lld)", (long long)ev->ts);
      if (ev->bytes < -1 || ev->block_bytes < -1)
        return vs_fin_fail (e, "an event has a negative size (%lld)",
                            (long long)(ev->bytes < -1 ? ev->bytes : ev->block_bytes));
      int64_t end;
      if (ev->address != VS_UNKNOWN && ev->bytes > 0
          && (__builtin_add_overflow (ev->address, ev->bytes, &end)
              || (ev->block_bytes > 0
                  && __builtin_add_overflow (ev->address, ev->block_bytes, &end))))
        return vs_fin_fail (e, "an event's address range ends past 2^63");
      if (__builtin_add_overflow (total, ev->bytes > 0 ? ev->bytes : 0, &total)
          || __builtin_add_overflow (total, ev->block_bytes > 0 ? ev->block_bytes : 0, &total))
        return vs_fin_fail (e, "its sizes add up to more than 2^63 bytes");
    }
  return 0;
}

int
vs_fin_event_cmp (const void *pa, const void *pb)
{
  const VsFinEvent *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->src != b->src)
    return a->src < b->src ? -1 : 1;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  return 0;
}

/* ---------------------------------------------------------------- pairing */

int
vs_fin_is_alloc (const VsFinEvent *ev)
{
  if (ev->src == SRC_MEM)
    return ev->op == VS_MEM_OP_ALLOC;
  return ev->op == VS_ALLOC_OP_ALLOC || ev->op == VS_ALLOC_OP_SEGMENT_ALLOC
         || ev->op == VS_ALLOC_OP_SEGMENT_MAP;
}

static int
is_release (const VsFinEvent *ev)
{
  if (ev->src == SRC_MEM)
    return ev->op == VS_MEM_OP_FREE;
  return ev->op == VS_ALLOC_OP_FREE_COMPLETED || ev->op == VS_ALLOC_OP_SEGMENT_FREE
         || ev->op == VS_ALLOC_OP_SEGMENT_UNMAP;
}

static int
event_level (const VsFinEvent *ev)
{
  if (ev->src == SRC_MEM)
    return 1;
  return ev->op >= VS_ALLOC_OP_SEGMENT_ALLOC ? 3 : 2;
}

/* The live mapped pieces of expandable segments (level-3 blocks made by a
 * segment_map or left by a partial unmap): few at a time, so a partial
 * unmap looks through them rather than through every block. */
typedef struct
{
  int32_t *b;
  size_t n, cap;
} Mapped;

static int
mapped_add (Mapped *m, int32_t b)
{
  if (m->n == m->cap)
    {
      size_t cap = m->cap ? m->cap * 2 : 64;
      int32_t *nb = realloc (m->b, cap * sizeof *nb);
      if (nb == NULL)
        return -1;
      m->b = nb;
      m->cap = cap;
    }
  m->b[m->n++] = b;
  return 0;
}

static void
mapped_remove_at (Mapped *m, size_t k)
{
  m->b[k] = m->b[--m->n];
}

static void
mapped_remove (Mapped *m, int32_t b)
{
  for (size_t k = 0; k < m->n; k++)
    if (m->b[k] == b)
      {
        mapped_remove_at (m, k);
        return;
      }
}

/* Pairs every allocation with its release.  Each event gets .block; a
 * release with no open allocation opens a block live since before the
 * trace (alloc_ev -1).  An unmap that covers part of one or more mappings
 * closes them and opens what remains mapped as new blocks at the same
 * event. */
int
vs_fin_pair_events (VsFinTrace *t, VsFinErr *e)
{
  Map open;
  Mapped mapped = { 0 };
  if (map_init (&open, 1024) < 0)
    return vs_fin_fail (e, "out of memory");

  for (size_t i = 0; i < t->n; i++)
    {
      VsFinEvent *ev = &t->ev[i];
      if (ev->src == SRC_POOL || ev->src == SRC_MARK)
        continue;
      int level = event_level (ev);
      /* Keys: device level by (process, device, address); allocator level
       * by (allocator, -level, address).  Device ids are positive, so the
       * two never meet (with the level itself, process 1's allocation on
       * device 2 and allocator 1's block at the same address shared a
       * key). */
      int64_t k1 = level == 1 ? ev->process_id : ev->allocator_id;
      int64_t k2 = level == 1 ? ev->device_id : -(int64_t)level;
      int64_t k3 = ev->address;

      if (vs_fin_is_alloc (ev))
        {
          int32_t b = push_block (t, (uint8_t)level, ev->address, ev->bytes, ev->block_bytes);
          if (b < 0)
            goto oom;
          ev = &t->ev[i];
          t->bl[b].alloc_ev = (int32_t)i;
          ev->block = b;
          if (map_set (&open, k1, k2, k3, b) < 0)
            goto oom;
          if (ev->src == SRC_ALLOC && ev->op == VS_ALLOC_OP_SEGMENT_MAP
              && mapped_add (&mapped, b) < 0)
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
              int64_t removed = 0; /* bytes that were mapped in [lo, hi) */
              int matched = 0;
              for (size_t k = 0; k < mapped.n;)
                {
                  VsFinBlock *m = &t->bl[mapped.b[k]];
                  int64_t mlo = m->address, mhi = m->address + m->bytes;
                  if (t->ev[m->alloc_ev].allocator_id != ev->allocator_id || mhi <= lo || mlo >= hi)
                    {
                      k++;
                      continue;
                    }
                  matched = 1;
                  m->free_ev = (int32_t)i;
                  removed += (mhi < hi ? mhi : hi) - (mlo > lo ? mlo : lo);
                  mapped_remove_at (&mapped, k);
                  map_set (&open, k1, k2, mlo, -1);
                  /* Pieces left mapped become blocks allocated here. */
                  int64_t pieces[2][2] = { { mlo, lo }, { hi, mhi } };
                  for (int p = 0; p < 2; p++)
                    if (pieces[p][1] > pieces[p][0])
                      {
                        int32_t nbk
                            = push_block (t, 3, pieces[p][0], pieces[p][1] - pieces[p][0], -1);
                        if (nbk < 0)
                          goto oom;
                        t->bl[nbk].alloc_ev = (int32_t)i;
                        if (map_set (&open, k1, k2, pieces[p][0], nbk) < 0
                            || mapped_add (&mapped, nbk) < 0)
                          goto oom;
                      }
                }
              if (matched)
                {
                  /* Accounted through the blocks; the replay subtracts
                   * what was really mapped, not the range's size. */
                  t->ev[i].block = -1;
                  t->ev[i].bytes = removed;
                  continue;
                }
            }
          if (b < 0)
            {
              b = push_block (t, (uint8_t)level, ev->address, ev->bytes, ev->block_bytes);
              if (b < 0)
                goto oom;
            }
          else
            {
              map_set (&open, k1, k2, k3, -1);
              if (level == 3 && ev->op == VS_ALLOC_OP_SEGMENT_UNMAP)
                mapped_remove (&mapped, b);
            }
          t->bl[b].free_ev = (int32_t)i;
          t->ev[i].block = b;
        }
    }
  open_map_clear (&open);
  free (mapped.b);
  return 0;

oom:
  open_map_clear (&open);
  free (mapped.b);
  return vs_fin_fail (e, "out of memory");
}

/* Marks device-level device/VMM blocks that lie inside an allocator's
 * segment (PyTorch's cudaMalloc of a segment, the VMM chunks of an
 * expandable segment): they are that allocator's reserved memory and must
 * not be counted again in `all`.  Async blocks belong to their pool. */
typedef struct
{
  int64_t lo, hi, ts; /* its addresses [lo, hi), when it was allocated */
  int32_t device, block;
} Span;

/* By device, start address, then time: an address a program's allocator
 * takes again and again (a segment freed and allocated anew) holds its
 * segments in time order. */
static int
span_cmp (const void *pa, const void *pb)
{
  const Span *a = pa, *b = pb;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->block < b->block ? -1 : a->block > b->block;
}

/* Whether segment s holds the block and is closer in time than *best:
 * then it becomes b's owner. */
static void
consider (const Span *s, VsFinBlock *b, int64_t t_blk, uint64_t *best)
{
  if (s->lo > b->address || b->address + b->bytes > s->hi)
    return;
  uint64_t d = s->ts > t_blk ? (uint64_t)(s->ts - t_blk) : (uint64_t)(t_blk - s->ts);
  if (d < *best)
    {
      *best = d;
      b->owner = s->block;
    }
}

static int
block_device (const VsFinTrace *t, const VsFinBlock *b)
{
  int32_t ei = b->alloc_ev >= 0 ? b->alloc_ev : b->free_ev;
  return t->ev[ei].device_id;
}

int
vs_fin_assign_owners (VsFinTrace *t, VsFinErr *e)
{
  size_t nseg = 0;
  for (size_t j = 0; j < t->nb; j++)
    if (t->bl[j].level == 3)
      nseg++;
  Span *segs = malloc ((nseg ? nseg : 1) * sizeof *segs);
  if (segs == NULL)
    return vs_fin_fail (e, "out of memory");
  size_t k = 0;
  for (size_t j = 0; j < t->nb; j++)
    if (t->bl[j].level == 3)
      {
        segs[k].lo = t->bl[j].address;
        segs[k].hi = t->bl[j].address + t->bl[j].bytes;
        segs[k].device = block_device (t, &t->bl[j]);
        segs[k].block = (int32_t)j;
        const VsFinBlock *sb = &t->bl[j];
        segs[k].ts = t->ev[sb->alloc_ev >= 0 ? sb->alloc_ev : sb->free_ev].ts;
        k++;
      }
  qsort (segs, nseg, sizeof *segs, span_cmp);

  for (size_t j = 0; j < t->nb; j++)
    {
      VsFinBlock *b = &t->bl[j];
      if (b->level != 1)
        continue;
      const VsFinEvent *ev = &t->ev[b->alloc_ev >= 0 ? b->alloc_ev : b->free_ev];
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
              || (segs[mid].device == ev->device_id && segs[mid].lo <= b->address))
            lo = mid + 1;
          else
            hi = mid;
        }
      /* Segments starting at the block's own address, in time order
       * ([same, lo)): the one allocated closest in time, found by its
       * time, whatever their number (the allocator logs its segment within
       * microseconds of CUDA's allocation, on its own clock).  Then those
       * starting below it, nearest first (a long segment further back):
       * of those containing the block, again the closest in time. */
      int64_t t_blk = t->ev[b->alloc_ev >= 0 ? b->alloc_ev : b->free_ev].ts;
      uint64_t best = UINT64_MAX;
      size_t same = lo;
      {
        size_t a = 0, z = lo;
        while (a < z)
          {
            size_t mid = (a + z) / 2;
            if (segs[mid].device < ev->device_id
                || (segs[mid].device == ev->device_id && segs[mid].lo < b->address))
              a = mid + 1;
            else
              z = mid;
          }
        same = a;
      }
      if (same < lo)
        {
          size_t a = same, z = lo;
          while (a < z)
            {
              size_t mid = (a + z) / 2;
              if (segs[mid].ts < t_blk)
                a = mid + 1;
              else
                z = mid;
            }
          /* Outward from the nearest in time, until a containing one is
           * found on each side (sizes may differ). */
          for (size_t s = a; s < lo && s < a + 64; s++)
            if (b->address + b->bytes <= segs[s].hi)
              {
                consider (&segs[s], b, t_blk, &best);
                break;
              }
          for (size_t s = a; s-- > same && a - s <= 64;)
            if (b->address + b->bytes <= segs[s].hi)
              {
                consider (&segs[s], b, t_blk, &best);
                break;
              }
        }
      for (size_t s = same; s-- > 0;)
        {
          if (segs[s].device != ev->device_id || same - s > 64)
            break;
          consider (&segs[s], b, t_blk, &best);
        }
    }
  free (segs);
  return 0;
}
