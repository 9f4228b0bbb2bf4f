/* vs-trace-window.c — the flight recorder: a trace bounded to a window.
 *
 * Input: a finalized trace of a whole run.  Output: the same trace holding
 * full detail only where it is needed, and aggregates for the rest:
 *
 *   - detail intervals per device (table detail_interval): the last
 *     window_ns of the run; a neighbourhood of window_ns / 8 on each side
 *     of every peak instant the summary names (reserved, allocated and
 *     device memory, of `all` and of each allocator); the same around the
 *     first and last VS_WINDOW_FAILURES_KEPT failed requests of the device.
 *     Each is widened to whole slices, then overlapping ones are joined.
 *   - the whole run in slices (window_slice; at most VS_WINDOW_MAX_SLICES
 *     before the window; groups of the program's iterations when the
 *     caller knows them, vs_trace_window_iterations(), else fixed time):
 *     peak, lowest and final reserved and allocated (and peak device
 *     memory on `all`), allocations and frees (count and bytes), failures;
 *     per allocation site the bytes and blocks still live that the slice
 *     added (window_site); the whole run's counts (window_count).  All are
 *     read from the complete trace's series and blocks, so they are exact.
 *   - dropped: every allocation paired with its release whose life
 *     [alloc, free] meets no detail interval of its device, with its raw
 *     events (a segment and the device-level allocation it owns go
 *     together; segments of expandable segments, whose pieces share their
 *     events, are kept); kernels, copies and memsets starting outside the
 *     detail; failures outside it; NVTX ranges that meet no detail
 *     interval and that nothing kept names.
 *
 * Why the detail stays exact: a block live at any instant of a detail
 * interval meets it and is kept, so the running sums the finalizer
 * computes are exact inside every interval — at the peaks, the failures
 * and the window, and every block live at a peak is kept with its stack.
 * Outside the intervals the sums count too little; the finalizer draws the
 * slices' points there instead (vs-trace-detail.c).  Blocks still live at
 * the end are always kept.
 *
 * Workload: one ordered read of each series, one pass over each device's
 * blocks, a few statements that delete what goes, then one finalize of
 * what is left and a VACUUM.
 */
#include "vs-trace-window.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "vs-timings.h"
#include "vs-trace-writer.h"

typedef struct
{
  int64_t start, end;
  unsigned why; /* WHY_* bits */
} Span;

enum
{
  WHY_WINDOW = 1,
  WHY_PEAK = 2,
  WHY_FAILURE = 4
};

static int
fail (char *err, size_t errlen, sqlite3 *db, const char *what)
{
  snprintf (err, errlen, "%s: %s", what, sqlite3_errmsg (db));
  return -1;
}

static int
exec (sqlite3 *db, const char *sql, char *err, size_t errlen)
{
  char *m = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &m) != SQLITE_OK)
    {
      snprintf (err, errlen, "%s", m ? m : sqlite3_errmsg (db));
      sqlite3_free (m);
      return -1;
    }
  return 0;
}

static int64_t
meta_int (sqlite3 *db, const char *key, int64_t fallback)
{
  static const char *sql = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1";
  sqlite3_stmt *s;
  int64_t v = fallback;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return fallback;
  sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

static int
set_meta (sqlite3 *db, const char *key, int64_t value)
{
  static const char *sql = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)";
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (s, 2, value);
  int rc = sqlite3_step (s) == SQLITE_DONE ? 0 : -1;
  sqlite3_finalize (s);
  return rc;
}

static int
span_cmp (const void *pa, const void *pb)
{
  const Span *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

/* The run cut into slices: slice k is [edge[k], edge[k + 1]), the last
 * one [edge[n - 1], end]; edge[0] is the run's start. */
typedef struct
{
  int64_t start, end;
  int64_t *edge;
  size_t n;
} Slicing;

/* The index of the slice holding time t. */
static size_t
slice_of (const Slicing *c, int64_t t)
{
  size_t lo = 0, hi = c->n;
  while (lo + 1 < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (c->edge[mid] <= t)
        lo = mid;
      else
        hi = mid;
    }
  return lo;
}

/* The slice edge at or below t (the start for t before it). */
static int64_t
floor_edge (const Slicing *c, int64_t t)
{
  return c->edge[slice_of (c, t)];
}

/* The slice edge at or above t (the end for t past the last edge). */
static int64_t
ceil_edge (const Slicing *c, int64_t t)
{
  int64_t f = floor_edge (c, t);
  if (f >= t)
    return f < c->end ? f : c->end;
  size_t lo = 0, hi = c->n;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (c->edge[mid] <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < c->n && c->edge[lo] < c->end ? c->edge[lo] : c->end;
}

/* Adds the neighbourhood of t (half-width h) to spans. */
static void
add_around (Span *v, size_t *n, const Slicing *c, int64_t t, int64_t h, unsigned why)
{
  v[*n].start = floor_edge (c, t - h);
  v[*n].end = ceil_edge (c, t + h);
  v[*n].why = why;
  (*n)++;
}

/* The detail intervals of one device, written to detail_interval. */
static int
write_intervals (sqlite3 *db, int64_t dev, const Slicing *c, int64_t wstart, int64_t h, char *err,
                 size_t errlen)
{
  static const char *peaks_sql
      = "SELECT peak_reserved_ts, peak_allocated_ts, peak_device_ts FROM summary"
        " WHERE device_id = ?1";
  static const char *fail_sql[2]
      = { "SELECT ts FROM failed_alloc WHERE device_id = ?1 ORDER BY ts, id LIMIT ?2",
          "SELECT ts FROM failed_alloc WHERE device_id = ?1 ORDER BY ts DESC, id DESC LIMIT ?2" };
  static const char *ins_sql
      = "INSERT INTO detail_interval (device_id, start_ns, end_ns, why) VALUES (?1, ?2, ?3, ?4)";
  /* The window, 3 peak instants per summary row, 2 × K failures. */
  enum
  {
    MAX_SPANS = 4096
  };
  Span *v = malloc (MAX_SPANS * sizeof *v);
  size_t n = 0;
  if (v == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  v[n].start = floor_edge (c, wstart);
  v[n].end = c->end;
  v[n].why = WHY_WINDOW;
  n++;
  sqlite3_stmt *s;
  int rc = 0;
  if (sqlite3_prepare_v2 (db, peaks_sql, -1, &s, NULL) != SQLITE_OK)
    {
      free (v);
      return fail (err, errlen, db, "cannot read the peaks");
    }
  sqlite3_bind_int64 (s, 1, dev);
  while (sqlite3_step (s) == SQLITE_ROW)
    for (int k = 0; k < 3 && n + 1 < MAX_SPANS; k++)
      if (sqlite3_column_type (s, k) != SQLITE_NULL)
        add_around (v, &n, c, sqlite3_column_int64 (s, k), h, WHY_PEAK);
  sqlite3_finalize (s);
  for (int q = 0; q < 2; q++)
    {
      if (sqlite3_prepare_v2 (db, fail_sql[q], -1, &s, NULL) != SQLITE_OK)
        {
          free (v);
          return fail (err, errlen, db, "cannot read the failures");
        }
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int (s, 2, VS_WINDOW_FAILURES_KEPT);
      while (sqlite3_step (s) == SQLITE_ROW && n + 1 < MAX_SPANS)
        add_around (v, &n, c, sqlite3_column_int64 (s, 0), h, WHY_FAILURE);
      sqlite3_finalize (s);
    }
  qsort (v, n, sizeof *v, span_cmp);
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    {
      if (m > 0 && v[k].start <= v[m - 1].end)
        {
          if (v[k].end > v[m - 1].end)
            v[m - 1].end = v[k].end;
          v[m - 1].why |= v[k].why;
        }
      else
        v[m++] = v[k];
    }
  if (sqlite3_prepare_v2 (db, ins_sql, -1, &s, NULL) != SQLITE_OK)
    {
      free (v);
      return fail (err, errlen, db, "cannot write the detail intervals");
    }
  for (size_t k = 0; k < m && rc == 0; k++)
    {
      char why[32] = "";
      static const char *names[] = { "window", "peak", "failure" };
      for (int b = 0; b < 3; b++)
        if (v[k].why & (1u << b))
          {
            if (why[0])
              strcat (why, ",");
            strcat (why, names[b]);
          }
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int64 (s, 2, v[k].start);
      sqlite3_bind_int64 (s, 3, v[k].end);
      sqlite3_bind_text (s, 4, why, -1, SQLITE_TRANSIENT);
      if (sqlite3_step (s) != SQLITE_DONE)
        rc = fail (err, errlen, db, "cannot write the detail intervals");
      sqlite3_reset (s);
    }
  sqlite3_finalize (s);
  free (v);
  return rc;
}

/* Slice counts and per-site growth, gathered in one pass over a device's
 * blocks and failures for all its allocators: per allocator a (0 = all,
 * else the allocator's position + 1 in the device's list) and slice,
 * allocations and frees; per (a, slice, stack) the net bytes and blocks,
 * in the shared open-addressing table (common/vs-hash-table.h). */
typedef struct
{
  int64_t alloc_count, alloc_bytes, free_count, free_bytes, failed;
} SliceCounts;

typedef struct
{
  int64_t slice, stack;
  int32_t a;
} SiteKey;

typedef struct
{
  SiteKey key;
  int64_t bytes, count;
  bool used;
} SiteCell;

static uint64_t
site_hash (SiteKey k)
{
  uint64_t h = (uint64_t)k.a * 0x9E3779B97F4A7C15ull ^ (uint64_t)k.slice * 0xC2B2AE3D27D4EB4Full
               ^ (uint64_t)k.stack * 0x165667B19E3779F9ull;
  return h ^ (h >> 29);
}

#define VS_HT_TYPE SiteTable
#define VS_HT_FN(n) site_table_##n
#define VS_HT_ENTRY SiteCell
#define VS_HT_KEY_TYPE SiteKey
#define VS_HT_KEY(e) ((e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = (k), (e)->used = true)
#define VS_HT_HASH(k) site_hash (k)
#define VS_HT_EQUAL(x, y) ((x).a == (y).a && (x).slice == (y).slice && (x).stack == (y).stack)
#define VS_HT_IS_EMPTY(e) (!(e)->used)
#include "vs-hash-table.h"

static int
site_add (SiteTable *t, int32_t a, int64_t slice, int64_t stack, int64_t bytes, int64_t count)
{
  SiteCell *e = site_table_insert (t, (SiteKey){ slice, stack, a }, NULL);
  if (e == NULL)
    return -1;
  e->bytes += bytes;
  e->count += count;
  return 0;
}

/* The blocks a slice's counts and sites count: for an allocator, its
 * blocks (level 2) and a pool's allocations; for `all`, allocator blocks
 * and device-level allocations that belong to no allocator (device, async
 * and VMM kinds) — what the summary's counts count.  Blocks live before the
 * trace began are not allocations of the run. */
static const char *counted_sql
    = "SELECT level, kind, allocator_id, alloc_ts, free_ts, bytes, ifnull(stack_id, 0)"
      " FROM block WHERE device_id = ?1 AND alloc_event_id IS NOT NULL";
static const char *failed_sql = "SELECT allocator_id, ts FROM failed_alloc WHERE device_id = ?1";

/* Counts of the device's allocators (ids alloc[0..nalloc-1], the first
 * 0 for `all`) over c: counts[a * c->n + slice], sites in *sites. */
static int
gather_counts (sqlite3 *db, int64_t dev, const int64_t *alloc, size_t nalloc, const Slicing *c,
               SliceCounts *counts, SiteTable *sites, char *err, size_t errlen)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, counted_sql, -1, &s, NULL) != SQLITE_OK)
    return fail (err, errlen, db, "cannot count the slices");
  sqlite3_bind_int64 (s, 1, dev);
  int rc = 0, step;
  while (rc == 0 && (step = sqlite3_step (s)) == SQLITE_ROW)
    {
      int level = sqlite3_column_int (s, 0), kind = sqlite3_column_int (s, 1);
      bool owned = sqlite3_column_type (s, 2) != SQLITE_NULL;
      int64_t owner = sqlite3_column_int64 (s, 2);
      int64_t bytes = sqlite3_column_int64 (s, 5), stack = sqlite3_column_int64 (s, 6);
      bool freed = sqlite3_column_type (s, 4) != SQLITE_NULL;
      size_t sa = slice_of (c, sqlite3_column_int64 (s, 3));
      size_t sf = freed ? slice_of (c, sqlite3_column_int64 (s, 4)) : 0;
      for (size_t a = 0; a < nalloc && rc == 0; a++)
        {
          bool counted
              = a == 0 ? level == 2
                             || (level == 1 && (kind == 1 || kind == 5 || kind == 6)
                                 && (!owned || kind == 5))
                       : owned && owner == alloc[a] && (level == 2 || (level == 1 && kind == 5));
          if (!counted)
            continue;
          SliceCounts *ca = &counts[a * c->n + sa];
          ca->alloc_count++;
          ca->alloc_bytes += bytes;
          rc = site_add (sites, (int32_t)a, (int64_t)sa, stack, bytes, 1);
          if (freed && rc == 0)
            {
              SliceCounts *cf = &counts[a * c->n + sf];
              cf->free_count++;
              cf->free_bytes += bytes;
              rc = site_add (sites, (int32_t)a, (int64_t)sf, stack, -bytes, -1);
            }
        }
    }
  sqlite3_finalize (s);
  if (rc < 0)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  if (step != SQLITE_DONE)
    return fail (err, errlen, db, "cannot count the slices");
  if (sqlite3_prepare_v2 (db, failed_sql, -1, &s, NULL) != SQLITE_OK)
    return fail (err, errlen, db, "cannot count the failures");
  sqlite3_bind_int64 (s, 1, dev);
  while ((step = sqlite3_step (s)) == SQLITE_ROW)
    {
      size_t sl = slice_of (c, sqlite3_column_int64 (s, 1));
      bool owned = sqlite3_column_type (s, 0) != SQLITE_NULL;
      for (size_t a = 0; a < nalloc; a++)
        if (a == 0 || (owned && sqlite3_column_int64 (s, 0) == alloc[a]))
          counts[a * c->n + sl].failed++;
    }
  sqlite3_finalize (s);
  if (step != SQLITE_DONE)
    return fail (err, errlen, db, "cannot count the failures");
  return 0;
}

/* Writes the site table's rows with a net change. */
static int
write_sites (sqlite3 *db, int64_t dev, const int64_t *alloc, const Slicing *c,
             const SiteTable *sites, char *err, size_t errlen)
{
  static const char *sql
      = "INSERT INTO window_site (device_id, allocator_id, start_ns, stack_id, net_bytes,"
        " net_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return fail (err, errlen, db, "cannot write the sites");
  int rc = 0;
  for (size_t i = 0; i < sites->cap && rc == 0; i++)
    {
      const SiteCell *e = &sites->entries[i];
      if (!e->used || (e->bytes == 0 && e->count == 0))
        continue;
      int64_t v[]
          = { dev, alloc[e->key.a], c->edge[e->key.slice], e->key.stack, e->bytes, e->count };
      for (int k = 0; k < 6; k++)
        sqlite3_bind_int64 (s, k + 1, v[k]);
      if (sqlite3_step (s) != SQLITE_DONE)
        rc = fail (err, errlen, db, "cannot write the sites");
      sqlite3_reset (s);
    }
  sqlite3_finalize (s);
  return rc;
}

/* One slice's aggregate of a series, as it is built. */
typedef struct
{
  int64_t peak_r, peak_a, peak_d, min_r, min_a, last_r, last_a, last_d;
  bool has_d;
} SliceAcc;

/* window_slice rows of one (device, allocator) from its complete series
 * (stored under series_allocator_id), then the counts from block and
 * failed_alloc. */
static int
write_slices (sqlite3 *db, int64_t dev, int64_t alloc, int64_t series_alloc, const Slicing *c,
              const SliceCounts *counts, char *err, size_t errlen)
{
  static const char *series_sql
      = "SELECT ts, reserved_bytes, allocated_bytes, device_bytes FROM series"
        " WHERE device_id = ?1 AND allocator_id = ?2 ORDER BY ts, seq";
  static const char *ins_sql
      = "INSERT INTO window_slice (device_id, allocator_id, start_ns, end_ns,"
        " peak_reserved_bytes, peak_allocated_bytes, peak_device_bytes, min_reserved_bytes,"
        " min_allocated_bytes, final_reserved_bytes, final_allocated_bytes, alloc_count,"
        " alloc_bytes, free_count, free_bytes, failed_alloc_count)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
  sqlite3_stmt *s, *ins;
  if (sqlite3_prepare_v2 (db, series_sql, -1, &s, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, ins_sql, -1, &ins, NULL) != SQLITE_OK)
    return fail (err, errlen, db, "cannot write the slices");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, series_alloc);
  SliceAcc acc = { 0 };
  size_t k = 0;
  int rc = 0;
  bool more = sqlite3_step (s) == SQLITE_ROW;
  while (k < c->n && rc == 0)
    {
      int64_t a = c->edge[k], b = k + 1 < c->n ? c->edge[k + 1] : c->end + 1;
      /* Entering the slice: the state the last one left. */
      acc.peak_r = acc.last_r;
      acc.peak_a = acc.last_a;
      acc.peak_d = acc.last_d;
      acc.min_r = acc.last_r;
      acc.min_a = acc.last_a;
      while (more && sqlite3_column_int64 (s, 0) < b)
        {
          acc.last_r = sqlite3_column_int64 (s, 1);
          acc.last_a = sqlite3_column_int64 (s, 2);
          if (sqlite3_column_type (s, 3) != SQLITE_NULL)
            {
              acc.last_d = sqlite3_column_int64 (s, 3);
              acc.has_d = true;
            }
          if (acc.last_r > acc.peak_r)
            acc.peak_r = acc.last_r;
          if (acc.last_a > acc.peak_a)
            acc.peak_a = acc.last_a;
          if (acc.last_d > acc.peak_d)
            acc.peak_d = acc.last_d;
          if (acc.last_r < acc.min_r)
            acc.min_r = acc.last_r;
          if (acc.last_a < acc.min_a)
            acc.min_a = acc.last_a;
          more = sqlite3_step (s) == SQLITE_ROW;
        }
      int64_t v[] = { dev, alloc, a, b, acc.peak_r, acc.peak_a };
      for (int i = 0; i < 6; i++)
        sqlite3_bind_int64 (ins, i + 1, v[i]);
      if (alloc == 0 && acc.has_d)
        sqlite3_bind_int64 (ins, 7, acc.peak_d);
      else
        sqlite3_bind_null (ins, 7);
      sqlite3_bind_int64 (ins, 8, acc.min_r);
      sqlite3_bind_int64 (ins, 9, acc.min_a);
      sqlite3_bind_int64 (ins, 10, acc.last_r);
      sqlite3_bind_int64 (ins, 11, acc.last_a);
      const SliceCounts *n = &counts[k];
      int64_t w[] = { n->alloc_count, n->alloc_bytes, n->free_count, n->free_bytes, n->failed };
      for (int i = 0; i < 5; i++)
        sqlite3_bind_int64 (ins, 12 + i, w[i]);
      if (sqlite3_step (ins) != SQLITE_DONE)
        rc = fail (err, errlen, db, "cannot write the slices");
      sqlite3_reset (ins);
      k++;
    }
  sqlite3_finalize (s);
  sqlite3_finalize (ins);
  return rc;
}

/* What is dropped: blocks whose life meets no detail interval of their
 * device, but never half of a segment and the device-level allocation it
 * owns, nor a segment of an expandable segment (its map and unmap events
 * are shared by the pieces), nor an event a kept block still uses. */
static const char *drop_sql
    = "CREATE TEMP TABLE drop_block AS SELECT b.id, b.level, b.alloc_event_id, b.free_event_id,"
      " b.owner_id FROM block b WHERE b.device_id IS NOT NULL AND b.free_ts IS NOT NULL"
      " AND b.alloc_event_id IS NOT NULL"
      " AND NOT EXISTS (SELECT 1 FROM detail_interval i WHERE i.device_id = b.device_id"
      "  AND i.start_ns <= b.free_ts AND i.end_ns >= b.alloc_ts)"
      " AND (b.level != 3 OR ((SELECT op FROM alloc_event WHERE id = b.alloc_event_id) = 4"
      "  AND (SELECT op FROM alloc_event WHERE id = b.free_event_id) = 5));"
      "CREATE INDEX temp.drop_block_id ON drop_block (id);"
      "DELETE FROM drop_block WHERE level = 3 AND id IN (SELECT k.owner_id FROM block k"
      " WHERE k.level = 1 AND k.owner_id IS NOT NULL"
      " AND k.id NOT IN (SELECT id FROM drop_block));"
      "DELETE FROM drop_block WHERE level = 1 AND owner_id IS NOT NULL"
      " AND owner_id NOT IN (SELECT id FROM drop_block);"
      "CREATE TEMP TABLE drop_event AS"
      " SELECT level = 1 AS mem, alloc_event_id AS id FROM drop_block"
      " UNION SELECT level = 1, free_event_id FROM drop_block"
      " EXCEPT SELECT level = 1, alloc_event_id FROM block"
      "  WHERE id NOT IN (SELECT id FROM drop_block) AND alloc_event_id IS NOT NULL"
      " EXCEPT SELECT level = 1, free_event_id FROM block"
      "  WHERE id NOT IN (SELECT id FROM drop_block) AND free_event_id IS NOT NULL;"
      "DELETE FROM mem_event WHERE id IN (SELECT id FROM drop_event WHERE mem);"
      "DELETE FROM alloc_event WHERE id IN (SELECT id FROM drop_event WHERE NOT mem);";

/* The free requests (op 2) of the blocks dropped: those at the block's
 * address between its allocation and its release. */
static const char *drop_requests_sql
    = "CREATE INDEX window_request ON alloc_event (device_id, address, ts) WHERE op = 2;"
      "DELETE FROM alloc_event WHERE id IN (SELECT e.id FROM drop_block d"
      " JOIN block b ON b.id = d.id JOIN alloc_event e ON e.op = 2"
      " AND e.device_id = b.device_id AND e.address = b.address"
      " AND e.ts BETWEEN b.alloc_ts AND b.free_ts WHERE d.level = 2);"
      "DROP INDEX window_request;";

#define OUTSIDE(table, col)                                                                        \
  "DELETE FROM " table " WHERE NOT EXISTS (SELECT 1 FROM detail_interval i"                        \
  " WHERE i.device_id = " table ".device_id AND " table "." col                                    \
  " BETWEEN i.start_ns AND i.end_ns)"

static const char *drop_kernels_sql = OUTSIDE ("kernel_exec", "start_ns");
static const char *drop_copies_sql[2]
    = { OUTSIDE ("memcpy", "start_ns"), OUTSIDE ("memset", "start_ns") };
static const char *drop_failures_sql = OUTSIDE ("failed_alloc", "ts") " AND device_id IS NOT NULL";

/* Ranges that meet no detail interval and that nothing kept names (an
 * event, a failure, a kept range as its parent): repeated until none
 * goes, a level of nesting at a time. */
static const char *drop_ranges_sql
    = "DELETE FROM nvtx_range WHERE end_ns IS NOT NULL"
      " AND NOT EXISTS (SELECT 1 FROM detail_interval i"
      "  WHERE i.start_ns <= nvtx_range.end_ns AND i.end_ns >= nvtx_range.start_ns)"
      " AND id NOT IN (SELECT range_id FROM alloc_event WHERE range_id IS NOT NULL"
      "  UNION SELECT range_id FROM mem_event WHERE range_id IS NOT NULL"
      "  UNION SELECT range_id FROM failed_alloc WHERE range_id IS NOT NULL"
      "  UNION SELECT parent_id FROM nvtx_range WHERE parent_id IS NOT NULL)";

static int64_t
count_of (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s;
  int64_t n = 0;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return 0;
  if (sqlite3_step (s) == SQLITE_ROW)
    n = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return n;
}

/* Runs sql and adds the rows it changed to *n. */
static int
exec_count (sqlite3 *db, const char *sql, int64_t *n, char *err, size_t errlen)
{
  if (exec (db, sql, err, errlen) < 0)
    return -1;
  *n += sqlite3_changes (db);
  return 0;
}

/* window_slice and window_site rows of one device: its allocators (its
 * summary rows, `all` first), their counts gathered in one pass. */
static int
write_device_slices (sqlite3 *db, int64_t dev, const Slicing *c, char *err, size_t errlen)
{
  static const char *sql = "SELECT allocator_id, series_allocator_id FROM summary"
                           " WHERE device_id = ?1 ORDER BY allocator_id";
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return fail (err, errlen, db, "cannot write the slices");
  sqlite3_bind_int64 (s, 1, dev);
  size_t n = 0, cap = 8;
  int64_t *alloc = malloc (cap * sizeof *alloc), *series = malloc (cap * sizeof *series);
  int rc = alloc && series ? 0 : -1;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      if (n == cap)
        {
          cap *= 2;
          int64_t *na = realloc (alloc, cap * sizeof *na);
          if (na != NULL)
            alloc = na;
          int64_t *ns = na ? realloc (series, cap * sizeof *ns) : NULL;
          if (ns != NULL)
            series = ns;
          if (na == NULL || ns == NULL)
            {
              rc = -1;
              break;
            }
        }
      alloc[n] = sqlite3_column_int64 (s, 0);
      series[n] = sqlite3_column_int64 (s, 1);
      n++;
    }
  sqlite3_finalize (s);
  /* The summary lists `all` (0) first for every device it has. */
  SliceCounts *counts
      = rc == 0 && n > 0 && alloc[0] == 0 ? calloc (n * c->n, sizeof *counts) : NULL;
  SiteTable sites = { 0 };
  if (rc < 0 || (n > 0 && counts == NULL))
    {
      snprintf (err, errlen, "out of memory");
      rc = -1;
    }
  if (rc == 0 && n > 0)
    rc = gather_counts (db, dev, alloc, n, c, counts, &sites, err, errlen);
  for (size_t a = 0; a < n && rc == 0; a++)
    rc = write_slices (db, dev, alloc[a], series[a], c, &counts[a * c->n], err, errlen);
  if (rc == 0 && n > 0)
    rc = write_sites (db, dev, alloc, c, &sites, err, errlen);
  site_table_clear (&sites);
  free (counts);
  free (alloc);
  free (series);
  return rc;
}

/* The slice edges: groups of g iterations (starts, absolute, sorted; g
 * the least that leaves at most VS_WINDOW_MAX_SLICES before the window),
 * or without iterations a sixteenth of the window, doubled until the run
 * before the window has at most VS_WINDOW_MAX_SLICES slices.  Fills c
 * (c->edge malloc'd) and the stats' slice fields; -1 when out of memory. */
static int
make_slicing (Slicing *c, int64_t window_ns, int64_t wstart, const int64_t *starts, size_t nstarts,
              VsTraceWindowStats *st)
{
  size_t cap = 0;
  if (starts != NULL && nstarts >= 2)
    {
      size_t before = 0;
      while (before < nstarts && starts[before] < wstart)
        before++;
      size_t g = before / VS_WINDOW_MAX_SLICES + 1;
      cap = nstarts / g + 2;
      c->edge = malloc (cap * sizeof *c->edge);
      if (c->edge == NULL)
        return -1;
      c->edge[c->n++] = c->start;
      for (size_t k = 0; k < nstarts; k += g)
        if (starts[k] > c->edge[c->n - 1] && starts[k] <= c->end && c->n < cap)
          c->edge[c->n++] = starts[k];
      st->slice_iterations = (int64_t)g;
      return 0;
    }
  int64_t slice = window_ns / 16;
  if (slice < 1000000)
    slice = 1000000;
  while ((wstart - c->start) / slice > VS_WINDOW_MAX_SLICES)
    slice *= 2;
  st->slice_ns = slice;
  cap = (size_t)((c->end - c->start) / slice) + 1;
  c->edge = malloc (cap * sizeof *c->edge);
  if (c->edge == NULL)
    return -1;
  for (size_t k = 0; k < cap; k++)
    c->edge[c->n++] = c->start + (int64_t)k * slice;
  return 0;
}

int
vs_trace_window (sqlite3 *db, int64_t window_ns, VsTraceWindowStats *stats, char *err,
                 size_t errlen)
{
  return vs_trace_window_iterations (db, window_ns, NULL, 0, stats, err, errlen);
}

int
vs_trace_window_iterations (sqlite3 *db, int64_t window_ns, const int64_t *starts, size_t nstarts,
                            VsTraceWindowStats *stats, char *err, size_t errlen)
{
  Slicing c = { 0 };
  VsTraceWindowStats st = { .window_ns = window_ns };
  if (stats)
    *stats = st;
  if (db == NULL || window_ns <= 0)
    {
      snprintf (err, errlen, "the window must be longer than 0");
      return -1;
    }
  int64_t start = meta_int (db, "start_ns", 0), end = meta_int (db, "end_ns", start);
  int64_t wstart = end - window_ns;
  st.detail_from = start;
  if (exec (db, "BEGIN IMMEDIATE", err, errlen) < 0)
    return -1;
  if (exec (db,
            "DELETE FROM detail_interval; DELETE FROM window_slice; DELETE FROM window_site;"
            " DELETE FROM window_count;",
            err, errlen)
          < 0
      || set_meta (db, "window_ns", window_ns) < 0)
    goto sqlfail;
  if (wstart <= start)
    {
      /* The run is shorter than the window: nothing goes. */
      if (set_meta (db, "window_detail_from_ns", start) < 0)
        goto sqlfail;
      st.blocks_kept = count_of (db, "SELECT count(*) FROM block");
      if (exec (db, "COMMIT", err, errlen) < 0)
        goto out;
      if (stats)
        *stats = st;
      return 0;
    }

  c.start = start;
  c.end = end;
  if (make_slicing (&c, window_ns, wstart, starts, nstarts, &st) < 0)
    {
      snprintf (err, errlen, "out of memory");
      goto out;
    }
  int64_t h = window_ns / 8;

  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, "SELECT DISTINCT device_id FROM summary ORDER BY 1", -1, &s, NULL)
      != SQLITE_OK)
    goto sqlfail;
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    rc = write_intervals (db, sqlite3_column_int64 (s, 0), &c, wstart, h, err, errlen);
  sqlite3_finalize (s);
  if (rc < 0)
    goto out;
  if (sqlite3_prepare_v2 (db, "SELECT DISTINCT device_id FROM summary ORDER BY 1", -1, &s, NULL)
      != SQLITE_OK)
    goto sqlfail;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    rc = write_device_slices (db, sqlite3_column_int64 (s, 0), &c, err, errlen);
  sqlite3_finalize (s);
  if (rc < 0)
    goto out;
  vs_timings_phase ("window: intervals and slices");
  if (exec (db,
            "INSERT INTO window_count SELECT device_id, allocator_id, alloc_count, free_count,"
            " failed_alloc_count FROM summary",
            err, errlen)
          < 0
      || exec (db, drop_sql, err, errlen) < 0 || exec (db, drop_requests_sql, err, errlen) < 0)
    goto out;
  vs_timings_phase ("window: dropping blocks");
  st.blocks_dropped = count_of (db, "SELECT count(*) FROM temp.drop_block");
  st.blocks_kept = count_of (db, "SELECT count(*) FROM block") - st.blocks_dropped;
  if (exec_count (db, drop_kernels_sql, &st.kernels_dropped, err, errlen) < 0
      || exec_count (db, drop_copies_sql[0], &st.copies_dropped, err, errlen) < 0
      || exec_count (db, drop_copies_sql[1], &st.copies_dropped, err, errlen) < 0
      || exec_count (db, drop_failures_sql, &st.failures_dropped, err, errlen) < 0)
    goto out;
  for (int round = 0; round < 64; round++)
    {
      int64_t before = st.ranges_dropped;
      if (exec_count (db, drop_ranges_sql, &st.ranges_dropped, err, errlen) < 0)
        goto out;
      if (st.ranges_dropped == before)
        break;
    }
  st.detail_from = floor_edge (&c, wstart);
  if (exec (db, "DROP TABLE temp.drop_block; DROP TABLE temp.drop_event;", err, errlen) < 0
      || set_meta (db, "window_detail_from_ns", st.detail_from) < 0
      || (st.slice_ns > 0 && set_meta (db, "window_slice_ns", st.slice_ns) < 0)
      || (st.slice_iterations > 0
          && set_meta (db, "window_slice_iterations", st.slice_iterations) < 0)
      || set_meta (db, "window_dropped_blocks", st.blocks_dropped) < 0
      || set_meta (db, "window_dropped_kernels", st.kernels_dropped) < 0
      || set_meta (db, "window_dropped_failures", st.failures_dropped) < 0
      || set_meta (db, "window_failures_kept", VS_WINDOW_FAILURES_KEPT) < 0
      || set_meta (db, "finalized", 0) < 0)
    goto sqlfail;
  free (c.edge);
  c.edge = NULL;
  if (exec (db, "COMMIT", err, errlen) < 0)
    goto out;
  vs_timings_phase ("window: dropping the rest");
  /* The raw events left are finalized on their own, the series drawn from
   * the slices outside the detail (vs-trace-detail.c). */
  if (vs_trace_finalize (db, NULL, NULL, err, errlen) != 0)
    return -1;
  if (exec (db, "VACUUM", err, errlen) < 0)
    return -1;
  vs_timings_phase ("window: vacuum");
  if (stats)
    *stats = st;
  return 0;

sqlfail:
  fail (err, errlen, db, "cannot window the trace");
out:
  free (c.edge);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}
