/* SPDX-License-Identifier: MIT */
/* vs-trace-window-pieces.c — the window's aggregates, in pieces.
 *
 * A piece is what window_slice says of a slice (highest, lowest and last
 * state, the state entering it included; allocations, frees, failures) and
 * what window_site says of it (per allocation site the net bytes and
 * blocks), for a stretch of the run on the grid (vs-trace-window-private.h).
 * Pieces join exactly: the highest of two adjacent pieces is the higher of
 * theirs, the lowest the lower, the last the second's, counts and sites
 * add.  So the aggregates of a stretch can be computed while the program
 * runs, before its events are dropped, and joined at the end into the
 * slices the whole run gets.
 */
#include "vs-trace-window-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
vs_win_slice_of (const VsWinSlicing *c, int64_t t)
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

int64_t
vs_win_grid (int64_t window_ns)
{
  int64_t g = window_ns / 16;
  return g < 1000000 ? 1000000 : g;
}

int64_t
vs_win_floor (int64_t origin, int64_t g, int64_t t)
{
  if (t <= origin)
    return origin;
  return origin + (t - origin) / g * g;
}

int64_t
vs_win_ceil (int64_t origin, int64_t g, int64_t t)
{
  int64_t f = vs_win_floor (origin, g, t);
  return f >= t ? f : f + g;
}

int
vs_win_fail (char *err, size_t errlen, sqlite3 *db, const char *what)
{
  snprintf (err, errlen, "%s: %s", what, sqlite3_errmsg (db));
  return -1;
}

int
vs_win_exec (sqlite3 *db, const char *sql, char *err, size_t errlen)
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
one_int (sqlite3 *db, const char *sql, const char *key, int64_t fallback)
{
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

int64_t
vs_win_meta_int (sqlite3 *db, const char *key, int64_t fallback)
{
  return one_int (db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1", key, fallback);
}

int64_t
vs_win_state (sqlite3 *db, const char *key, int64_t fallback)
{
  return one_int (db, "SELECT value FROM " VS_WIN_STATE " WHERE key = ?1", key, fallback);
}

int
vs_win_set_state (sqlite3 *db, const char *key, int64_t value)
{
  return vs_win_put (db, "INSERT OR REPLACE INTO " VS_WIN_STATE " (key, value) VALUES (?1, ?2)",
                     key, value);
}

int
vs_win_put (sqlite3 *db, const char *sql, const char *key, int64_t value)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (s, 2, value);
  int rc = sqlite3_step (s) == SQLITE_DONE ? 0 : -1;
  sqlite3_finalize (s);
  return rc;
}

static const char *create_sql
    = "CREATE TABLE IF NOT EXISTS " VS_WIN_STATE " (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
      "CREATE TABLE IF NOT EXISTS " VS_WIN_PIECE " (device_id INTEGER NOT NULL,"
      " allocator_id INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
      " peak_reserved_bytes INTEGER NOT NULL, peak_allocated_bytes INTEGER NOT NULL,"
      " peak_device_bytes INTEGER, min_reserved_bytes INTEGER NOT NULL,"
      " min_allocated_bytes INTEGER NOT NULL, final_reserved_bytes INTEGER NOT NULL,"
      " final_allocated_bytes INTEGER NOT NULL, final_device_bytes INTEGER,"
      " alloc_count INTEGER NOT NULL, alloc_bytes INTEGER NOT NULL, free_count INTEGER NOT NULL,"
      " free_bytes INTEGER NOT NULL, failed_alloc_count INTEGER NOT NULL,"
      " PRIMARY KEY (device_id, allocator_id, start_ns)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS " VS_WIN_SITE " (device_id INTEGER NOT NULL,"
      " allocator_id INTEGER NOT NULL, start_ns INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
      " net_bytes INTEGER NOT NULL, net_count INTEGER NOT NULL,"
      " PRIMARY KEY (device_id, allocator_id, start_ns, stack_id)) WITHOUT ROWID;";

int
vs_win_pieces_create (sqlite3 *db, char *err, size_t errlen)
{
  return vs_win_exec (db, create_sql, err, errlen);
}

bool
vs_win_has_live (sqlite3 *db)
{
  return one_int (db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                  VS_WIN_STATE, 0)
             > 0
         && vs_win_state (db, "from", 0) > vs_win_state (db, "origin", 0);
}

/* One piece, or slice, as it is built or joined. */
typedef struct
{
  int64_t peak_r, peak_a, peak_d, min_r, min_a, last_r, last_a, last_d;
  bool has_d;
  int64_t alloc_count, alloc_bytes, free_count, free_bytes, failed;
} Agg;

/* The state entering a piece: the last one's end, nothing counted yet. */
static void
agg_enter (Agg *acc)
{
  acc->peak_r = acc->min_r = acc->last_r;
  acc->peak_a = acc->min_a = acc->last_a;
  acc->peak_d = acc->last_d;
  acc->alloc_count = acc->alloc_bytes = acc->free_count = acc->free_bytes = acc->failed = 0;
}

/* Adds the state (r, a, d) reached inside the piece. */
static void
agg_state (Agg *acc, int64_t r, int64_t a, bool has_d, int64_t d)
{
  acc->last_r = r;
  acc->last_a = a;
  if (has_d)
    {
      acc->last_d = d;
      acc->has_d = true;
    }
  if (acc->last_r > acc->peak_r)
    acc->peak_r = acc->last_r;
  if (acc->last_a > acc->peak_a)
    acc->peak_a = acc->last_a;
  if (acc->last_d > acc->peak_d)
    acc->peak_d = acc->last_d;
  if (acc->last_r < acc->min_r)
    acc->min_r = acc->last_r;
  if (acc->last_a < acc->min_a)
    acc->min_a = acc->last_a;
}

/* Joins piece p (which follows what acc holds) into acc. */
static void
agg_join (Agg *acc, const Agg *p)
{
  if (p->peak_r > acc->peak_r)
    acc->peak_r = p->peak_r;
  if (p->peak_a > acc->peak_a)
    acc->peak_a = p->peak_a;
  if (p->has_d && p->peak_d > acc->peak_d)
    acc->peak_d = p->peak_d;
  if (p->min_r < acc->min_r)
    acc->min_r = p->min_r;
  if (p->min_a < acc->min_a)
    acc->min_a = p->min_a;
  acc->last_r = p->last_r;
  acc->last_a = p->last_a;
  if (p->has_d)
    {
      acc->last_d = p->last_d;
      acc->has_d = true;
    }
  acc->alloc_count += p->alloc_count;
  acc->alloc_bytes += p->alloc_bytes;
  acc->free_count += p->free_count;
  acc->free_bytes += p->free_bytes;
  acc->failed += p->failed;
}

/* Per-site net change, per (allocator position, slice, stack), in the
 * shared open-addressing table (common/vs-hash-table.h). */
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

/* Writes the site table's rows with a net change to table (VS_WIN_SITE or
 * window_site), a slice's start from c. */
static int
write_sites (sqlite3 *db, const char *table, int64_t dev, const int64_t *alloc,
             const VsWinSlicing *c, const SiteTable *sites, char *err, size_t errlen)
{
  char sql[256];
  snprintf (sql, sizeof sql,
            "INSERT INTO %s (device_id, allocator_id, start_ns, stack_id, net_bytes,"
            " net_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            table);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot write the sites");
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
        rc = vs_win_fail (err, errlen, db, "cannot write the sites");
      sqlite3_reset (s);
    }
  sqlite3_finalize (s);
  return rc;
}

/* A device's allocators: `all` (0) first, then those the summary names
 * (with the allocator their series is stored under), then those only the
 * pieces name (series -1: none left). */
typedef struct
{
  int64_t *alloc, *series;
  size_t n, cap;
} Allocs;

static int
allocs_add (Allocs *v, int64_t alloc, int64_t series)
{
  for (size_t k = 0; k < v->n; k++)
    if (v->alloc[k] == alloc)
      return 0;
  if (v->n == v->cap)
    {
      size_t cap = v->cap ? 2 * v->cap : 8;
      int64_t *na = realloc (v->alloc, cap * sizeof *na);
      if (na == NULL)
        return -1;
      v->alloc = na;
      int64_t *ns = realloc (v->series, cap * sizeof *ns);
      if (ns == NULL)
        return -1;
      v->series = ns;
      v->cap = cap;
    }
  v->alloc[v->n] = alloc;
  v->series[v->n] = series;
  v->n++;
  return 0;
}

static void
allocs_clear (Allocs *v)
{
  free (v->alloc);
  free (v->series);
  *v = (Allocs){ 0 };
}

static int
device_allocs (sqlite3 *db, int64_t dev, bool with_pieces, Allocs *v)
{
  static const char *sql[2]
      = { "SELECT allocator_id, series_allocator_id FROM summary WHERE device_id = ?1"
          " ORDER BY allocator_id",
          "SELECT DISTINCT allocator_id, -1 FROM " VS_WIN_PIECE " WHERE device_id = ?1"
          " ORDER BY allocator_id" };
  int rc = allocs_add (v, 0, 0);
  for (int q = 0; q < (with_pieces ? 2 : 1) && rc == 0; q++)
    {
      sqlite3_stmt *s;
      if (sqlite3_prepare_v2 (db, sql[q], -1, &s, NULL) != SQLITE_OK)
        return -1;
      sqlite3_bind_int64 (s, 1, dev);
      while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
        rc = allocs_add (v, sqlite3_column_int64 (s, 0), sqlite3_column_int64 (s, 1));
      sqlite3_finalize (s);
    }
  return rc;
}

/* The blocks a piece's counts and sites count: for an allocator, its
 * blocks (level 2) and a pool's allocations; for `all`, allocator blocks
 * and device-level allocations that belong to no allocator (device, async
 * and VMM kinds) — what the summary's counts count.  Blocks live before the
 * trace began are not allocations of the run. */
static const char *counted_sql
    = "SELECT level, kind, allocator_id, alloc_ts, free_ts, bytes, ifnull(stack_id, 0)"
      " FROM block WHERE device_id = ?1 AND alloc_event_id IS NOT NULL"
      " AND (alloc_ts >= ?2 OR free_ts >= ?2)";
static const char *failed_sql
    = "SELECT allocator_id, ts FROM failed_alloc WHERE device_id = ?1 AND ts >= ?2 AND ts <= ?3";

static bool
counted (int level, int kind, bool owned, int64_t owner, size_t a, int64_t alloc)
{
  if (a == 0)
    return level == 2
           || (level == 1 && (kind == 1 || kind == 5 || kind == 6) && (!owned || kind == 5));
  return owned && owner == alloc && (level == 2 || (level == 1 && kind == 5));
}

/* Counts and sites of the device's allocators over c, events in
 * [c->edge[0], c->end] only: counts[a * c->n + slice]. */
static int
gather_counts (sqlite3 *db, int64_t dev, const Allocs *al, const VsWinSlicing *c, Agg *counts,
               SiteTable *sites, char *err, size_t errlen)
{
  sqlite3_stmt *s;
  int64_t from = c->edge[0];
  if (sqlite3_prepare_v2 (db, counted_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot count the slices");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, from);
  int rc = 0, step;
  while (rc == 0 && (step = sqlite3_step (s)) == SQLITE_ROW)
    {
      int level = sqlite3_column_int (s, 0), kind = sqlite3_column_int (s, 1);
      bool owned = sqlite3_column_type (s, 2) != SQLITE_NULL;
      int64_t owner = sqlite3_column_int64 (s, 2);
      int64_t bytes = sqlite3_column_int64 (s, 5), stack = sqlite3_column_int64 (s, 6);
      int64_t at = sqlite3_column_int64 (s, 3);
      bool freed = sqlite3_column_type (s, 4) != SQLITE_NULL;
      int64_t ft = sqlite3_column_int64 (s, 4);
      bool in_a = at >= from && at <= c->end, in_f = freed && ft >= from && ft <= c->end;
      size_t sa = in_a ? vs_win_slice_of (c, at) : 0, sf = in_f ? vs_win_slice_of (c, ft) : 0;
      for (size_t a = 0; a < al->n && rc == 0; a++)
        {
          if (!counted (level, kind, owned, owner, a, al->alloc[a]))
            continue;
          if (in_a)
            {
              Agg *ca = &counts[a * c->n + sa];
              ca->alloc_count++;
              ca->alloc_bytes += bytes;
              rc = site_add (sites, (int32_t)a, (int64_t)sa, stack, bytes, 1);
            }
          if (in_f && rc == 0)
            {
              Agg *cf = &counts[a * c->n + sf];
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
    return vs_win_fail (err, errlen, db, "cannot count the slices");
  if (sqlite3_prepare_v2 (db, failed_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot count the failures");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, from);
  sqlite3_bind_int64 (s, 3, c->end);
  while ((step = sqlite3_step (s)) == SQLITE_ROW)
    {
      size_t sl = vs_win_slice_of (c, sqlite3_column_int64 (s, 1));
      bool owned = sqlite3_column_type (s, 0) != SQLITE_NULL;
      for (size_t a = 0; a < al->n; a++)
        if (a == 0 || (owned && sqlite3_column_int64 (s, 0) == al->alloc[a]))
          counts[a * c->n + sl].failed++;
    }
  sqlite3_finalize (s);
  if (step != SQLITE_DONE)
    return vs_win_fail (err, errlen, db, "cannot count the failures");
  return 0;
}

/* Binds a piece's or slice's columns 5.. of the insert below. */
static void
bind_agg (sqlite3_stmt *ins, const Agg *g, bool with_d)
{
  int64_t v[] = { g->peak_r, g->peak_a };
  for (int i = 0; i < 2; i++)
    sqlite3_bind_int64 (ins, 5 + i, v[i]);
  if (with_d && g->has_d)
    sqlite3_bind_int64 (ins, 7, g->peak_d);
  else
    sqlite3_bind_null (ins, 7);
  int64_t w[] = { g->min_r, g->min_a, g->last_r, g->last_a };
  for (int i = 0; i < 4; i++)
    sqlite3_bind_int64 (ins, 8 + i, w[i]);
  int64_t n[] = { g->alloc_count, g->alloc_bytes, g->free_count, g->free_bytes, g->failed };
  for (int i = 0; i < 5; i++)
    sqlite3_bind_int64 (ins, 12 + i, n[i]);
}

static const char *piece_cols
    = " (device_id, allocator_id, start_ns, end_ns, peak_reserved_bytes, peak_allocated_bytes,"
      " peak_device_bytes, min_reserved_bytes, min_allocated_bytes, final_reserved_bytes,"
      " final_allocated_bytes, alloc_count, alloc_bytes, free_count, free_bytes,"
      " failed_alloc_count%s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
      " ?14, ?15, ?16%s)";

/* A prepared insert of pieces (with their last device memory) or of
 * window_slice rows. */
static int
prepare_insert (sqlite3 *db, bool pieces, sqlite3_stmt **ins)
{
  char cols[1024], sql[1100];
  snprintf (cols, sizeof cols, piece_cols, pieces ? ", final_device_bytes" : "",
            pieces ? ", ?17" : "");
  snprintf (sql, sizeof sql, "INSERT INTO %s%s", pieces ? VS_WIN_PIECE : "window_slice", cols);
  return sqlite3_prepare_v2 (db, sql, -1, ins, NULL) == SQLITE_OK ? 0 : -1;
}

/* The state of series (dev, sa) entering t: the last row before it. */
static void
state_before (sqlite3 *db, int64_t dev, int64_t sa, int64_t t, Agg *acc)
{
  static const char *sql[2]
      = { "SELECT reserved_bytes, allocated_bytes FROM series WHERE device_id = ?1"
          " AND allocator_id = ?2 AND ts < ?3 ORDER BY ts DESC, seq DESC LIMIT 1",
          "SELECT device_bytes FROM series WHERE device_id = ?1 AND allocator_id = ?2"
          " AND ts < ?3 AND device_bytes IS NOT NULL ORDER BY ts DESC, seq DESC LIMIT 1" };
  for (int q = 0; q < 2; q++)
    {
      sqlite3_stmt *s;
      if (sqlite3_prepare_v2 (db, sql[q], -1, &s, NULL) != SQLITE_OK)
        continue;
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int64 (s, 2, sa);
      sqlite3_bind_int64 (s, 3, t);
      if (sqlite3_step (s) == SQLITE_ROW)
        {
          if (q == 0)
            {
              acc->last_r = sqlite3_column_int64 (s, 0);
              acc->last_a = sqlite3_column_int64 (s, 1);
            }
          else
            {
              acc->last_d = sqlite3_column_int64 (s, 0);
              acc->has_d = true;
            }
        }
      sqlite3_finalize (s);
    }
}

/* The pieces of one (device, allocator) from its series: counts hold its
 * counts per slice. */
static int
add_series_pieces (sqlite3 *db, sqlite3_stmt *ins, int64_t dev, int64_t alloc, int64_t sa,
                   const VsWinSlicing *c, const Agg *counts, char *err, size_t errlen)
{
  static const char *series_sql
      = "SELECT ts, reserved_bytes, allocated_bytes, device_bytes FROM series"
        " WHERE device_id = ?1 AND allocator_id = ?2 AND ts >= ?3 AND ts <= ?4 ORDER BY ts, seq";
  Agg acc = { 0 };
  sqlite3_stmt *s = NULL;
  if (sa >= 0)
    {
      state_before (db, dev, sa, c->edge[0], &acc);
      if (sqlite3_prepare_v2 (db, series_sql, -1, &s, NULL) != SQLITE_OK)
        return vs_win_fail (err, errlen, db, "cannot read the series");
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int64 (s, 2, sa);
      sqlite3_bind_int64 (s, 3, c->edge[0]);
      sqlite3_bind_int64 (s, 4, c->end);
    }
  bool more = s != NULL && sqlite3_step (s) == SQLITE_ROW;
  int rc = 0;
  for (size_t k = 0; k < c->n && rc == 0; k++)
    {
      int64_t a = c->edge[k], b = k + 1 < c->n ? c->edge[k + 1] : c->end + 1;
      agg_enter (&acc);
      while (more && sqlite3_column_int64 (s, 0) < b)
        {
          bool has_d = sqlite3_column_type (s, 3) != SQLITE_NULL;
          agg_state (&acc, sqlite3_column_int64 (s, 1), sqlite3_column_int64 (s, 2), has_d,
                     sqlite3_column_int64 (s, 3));
          more = sqlite3_step (s) == SQLITE_ROW;
        }
      Agg p = acc;
      const Agg *n = &counts[k];
      p.alloc_count = n->alloc_count;
      p.alloc_bytes = n->alloc_bytes;
      p.free_count = n->free_count;
      p.free_bytes = n->free_bytes;
      p.failed = n->failed;
      int64_t v[] = { dev, alloc, a, b };
      for (int i = 0; i < 4; i++)
        sqlite3_bind_int64 (ins, i + 1, v[i]);
      bind_agg (ins, &p, alloc == 0);
      if (p.has_d)
        sqlite3_bind_int64 (ins, 17, p.last_d);
      else
        sqlite3_bind_null (ins, 17);
      if (sqlite3_step (ins) != SQLITE_DONE)
        rc = vs_win_fail (err, errlen, db, "cannot keep the aggregates");
      sqlite3_reset (ins);
    }
  sqlite3_finalize (s);
  return rc;
}

static int
add_device_pieces (sqlite3 *db, sqlite3_stmt *ins, int64_t dev, const VsWinSlicing *c, char *err,
                   size_t errlen)
{
  Allocs al = { 0 };
  if (device_allocs (db, dev, false, &al) < 0)
    {
      allocs_clear (&al);
      return vs_win_fail (err, errlen, db, "cannot read the allocators");
    }
  Agg *counts = calloc (al.n * c->n, sizeof *counts);
  SiteTable sites = { 0 };
  int rc = counts != NULL ? 0 : -1;
  if (rc < 0)
    snprintf (err, errlen, "out of memory");
  if (rc == 0)
    rc = gather_counts (db, dev, &al, c, counts, &sites, err, errlen);
  for (size_t a = 0; a < al.n && rc == 0; a++)
    rc = add_series_pieces (db, ins, dev, al.alloc[a], al.series[a], c, &counts[a * c->n], err,
                            errlen);
  if (rc == 0)
    rc = write_sites (db, VS_WIN_SITE, dev, al.alloc, c, &sites, err, errlen);
  site_table_clear (&sites);
  free (counts);
  allocs_clear (&al);
  return rc;
}

int
vs_win_pieces_add (sqlite3 *db, const VsWinSlicing *c, char *err, size_t errlen)
{
  sqlite3_stmt *ins, *s;
  if (prepare_insert (db, true, &ins) < 0)
    return vs_win_fail (err, errlen, db, "cannot keep the aggregates");
  if (sqlite3_prepare_v2 (db, "SELECT DISTINCT device_id FROM summary ORDER BY 1", -1, &s, NULL)
      != SQLITE_OK)
    {
      sqlite3_finalize (ins);
      return vs_win_fail (err, errlen, db, "cannot read the devices");
    }
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    rc = add_device_pieces (db, ins, sqlite3_column_int64 (s, 0), c, err, errlen);
  sqlite3_finalize (s);
  sqlite3_finalize (ins);
  return rc;
}

/* Reads a piece row (columns as the piece table's, from start_ns on). */
static void
read_piece (sqlite3_stmt *s, int col, Agg *p)
{
  p->peak_r = sqlite3_column_int64 (s, col + 2);
  p->peak_a = sqlite3_column_int64 (s, col + 3);
  p->has_d = sqlite3_column_type (s, col + 4) != SQLITE_NULL;
  p->peak_d = sqlite3_column_int64 (s, col + 4);
  p->min_r = sqlite3_column_int64 (s, col + 5);
  p->min_a = sqlite3_column_int64 (s, col + 6);
  p->last_r = sqlite3_column_int64 (s, col + 7);
  p->last_a = sqlite3_column_int64 (s, col + 8);
  p->last_d = sqlite3_column_int64 (s, col + 9);
  p->has_d = p->has_d || sqlite3_column_type (s, col + 9) != SQLITE_NULL;
  p->alloc_count = sqlite3_column_int64 (s, col + 10);
  p->alloc_bytes = sqlite3_column_int64 (s, col + 11);
  p->free_count = sqlite3_column_int64 (s, col + 12);
  p->free_bytes = sqlite3_column_int64 (s, col + 13);
  p->failed = sqlite3_column_int64 (s, col + 14);
}

static const char *pieces_sql
    = "SELECT start_ns, end_ns, peak_reserved_bytes, peak_allocated_bytes, peak_device_bytes,"
      " min_reserved_bytes, min_allocated_bytes, final_reserved_bytes, final_allocated_bytes,"
      " final_device_bytes, alloc_count, alloc_bytes, free_count, free_bytes, failed_alloc_count"
      " FROM " VS_WIN_PIECE " WHERE device_id = ?1 AND allocator_id = ?2 AND start_ns >= ?3"
      " AND start_ns < ?4 ORDER BY start_ns";

/* Joins the pieces of (dev, alloc) in [from, to) slice by slice over c's
 * edges and writes them with ins (a window_slice or piece insert: then
 * with the last device memory).  A slice without a piece holds the state
 * the last one left.  -1 with err when a piece crosses an edge. */
static int
join_pieces (sqlite3 *db, sqlite3_stmt *ins, bool pieces, int64_t dev, int64_t alloc,
             const VsWinSlicing *c, int64_t from, int64_t to, char *err, size_t errlen)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, pieces_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot read the aggregates");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, alloc);
  sqlite3_bind_int64 (s, 3, from);
  sqlite3_bind_int64 (s, 4, to);
  bool more = sqlite3_step (s) == SQLITE_ROW;
  /* A slice is its first piece (whose state entering it is the slice's)
   * joined with the rest; without one, the state the last slice left. */
  Agg acc = { 0 };
  int rc = 0;
  for (size_t k = vs_win_slice_of (c, from); k < c->n && c->edge[k] < to && rc == 0; k++)
    {
      int64_t a = c->edge[k], b = k + 1 < c->n ? c->edge[k + 1] : c->end + 1;
      bool any = false;
      while (more && sqlite3_column_int64 (s, 0) < b)
        {
          Agg p;
          read_piece (s, 0, &p);
          if (sqlite3_column_int64 (s, 0) < a || sqlite3_column_int64 (s, 1) > b)
            {
              snprintf (err, errlen,
                        "the aggregates kept while the program ran do not fit the slices "
                        "(a piece [%lld, %lld) across [%lld, %lld))",
                        (long long)sqlite3_column_int64 (s, 0),
                        (long long)sqlite3_column_int64 (s, 1), (long long)a, (long long)b);
              rc = -1;
              break;
            }
          if (any)
            agg_join (&acc, &p);
          else
            acc = p;
          any = true;
          more = sqlite3_step (s) == SQLITE_ROW;
        }
      if (rc < 0)
        break;
      if (!any)
        agg_enter (&acc);
      int64_t v[] = { dev, alloc, a, b };
      for (int i = 0; i < 4; i++)
        sqlite3_bind_int64 (ins, i + 1, v[i]);
      bind_agg (ins, &acc, alloc == 0);
      if (pieces && acc.has_d)
        sqlite3_bind_int64 (ins, 17, acc.last_d);
      else if (pieces)
        sqlite3_bind_null (ins, 17);
      if (sqlite3_step (ins) != SQLITE_DONE)
        rc = vs_win_fail (err, errlen, db, "cannot write the slices");
      sqlite3_reset (ins);
    }
  sqlite3_finalize (s);
  return rc;
}

/* The sites of dev's pieces in [from, to), summed per slice of c, into
 * table. */
static int
join_sites (sqlite3 *db, const char *table, int64_t dev, const Allocs *al, const VsWinSlicing *c,
            int64_t from, int64_t to, char *err, size_t errlen)
{
  static const char *sql
      = "SELECT allocator_id, start_ns, stack_id, net_bytes, net_count FROM " VS_WIN_SITE
        " WHERE device_id = ?1 AND start_ns >= ?2 AND start_ns < ?3";
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot read the sites");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, from);
  sqlite3_bind_int64 (s, 3, to);
  SiteTable sites = { 0 };
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      int64_t alloc = sqlite3_column_int64 (s, 0);
      size_t a = 0;
      while (a < al->n && al->alloc[a] != alloc)
        a++;
      if (a == al->n)
        continue;
      rc = site_add (&sites, (int32_t)a, (int64_t)vs_win_slice_of (c, sqlite3_column_int64 (s, 1)),
                     sqlite3_column_int64 (s, 2), sqlite3_column_int64 (s, 3),
                     sqlite3_column_int64 (s, 4));
    }
  sqlite3_finalize (s);
  if (rc < 0)
    snprintf (err, errlen, "out of memory");
  else
    rc = write_sites (db, table, dev, al->alloc, c, &sites, err, errlen);
  site_table_clear (&sites);
  return rc;
}

static const char *devices_sql
    = "SELECT device_id FROM summary UNION SELECT device_id FROM " VS_WIN_PIECE " ORDER BY 1";

int
vs_win_pieces_join (sqlite3 *db, const VsWinSlicing *c, char *err, size_t errlen)
{
  sqlite3_stmt *ins, *s;
  if (prepare_insert (db, false, &ins) < 0)
    return vs_win_fail (err, errlen, db, "cannot write the slices");
  if (sqlite3_prepare_v2 (db, devices_sql, -1, &s, NULL) != SQLITE_OK)
    {
      sqlite3_finalize (ins);
      return vs_win_fail (err, errlen, db, "cannot read the devices");
    }
  int rc = 0;
  int64_t to = c->end + 1;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      int64_t dev = sqlite3_column_int64 (s, 0);
      Allocs al = { 0 };
      if (device_allocs (db, dev, true, &al) < 0)
        rc = vs_win_fail (err, errlen, db, "cannot read the allocators");
      for (size_t a = 0; a < al.n && rc == 0; a++)
        rc = join_pieces (db, ins, false, dev, al.alloc[a], c, c->edge[0], to, err, errlen);
      if (rc == 0)
        rc = join_sites (db, "window_site", dev, &al, c, c->edge[0], to, err, errlen);
      allocs_clear (&al);
    }
  sqlite3_finalize (s);
  sqlite3_finalize (ins);
  if (rc == 0
      && vs_win_exec (db,
                      "INSERT INTO window_count SELECT device_id, allocator_id, sum(alloc_count),"
                      " sum(free_count), sum(failed_alloc_count) FROM window_slice"
                      " GROUP BY device_id, allocator_id",
                      err, errlen)
             < 0)
    rc = -1;
  return rc;
}

/* The slice length the run's first `length` ns would get (as
 * vs-trace-window.c's time slices): the grid's step doubled until at most
 * VS_WINDOW_MAX_SLICES. */
static int64_t
slice_length (int64_t g, int64_t length)
{
  int64_t s = g;
  while (length / s > 1024)
    s *= 2;
  return s;
}

int
vs_win_pieces_coarsen (sqlite3 *db, int64_t origin, int64_t g, int64_t before, const char *keep,
                       char *err, size_t errlen)
{
  int64_t s = slice_length (g, before - origin);
  if (s <= g)
    return 0;
  /* The coarse slices before `before` that meet no span of their device's
   * and hold more than one piece. */
  char sql[1024];
  snprintf (sql, sizeof sql,
            "SELECT device_id, (start_ns - ?1) / ?2 AS k FROM " VS_WIN_PIECE " p"
            " WHERE start_ns < ?3 GROUP BY device_id, k HAVING count(DISTINCT start_ns) > 1"
            " AND ?1 + (k + 1) * ?2 <= ?3 AND NOT EXISTS (SELECT 1 FROM %s i"
            " WHERE i.device_id = p.device_id AND i.start_ns < ?1 + (k + 1) * ?2"
            " AND i.end_ns >= ?1 + k * ?2)",
            keep);
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2 (db, sql, -1, &q, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot join the aggregates");
  sqlite3_bind_int64 (q, 1, origin);
  sqlite3_bind_int64 (q, 2, s);
  sqlite3_bind_int64 (q, 3, before);
  /* Each group into one piece: joined into temp tables, then put back. */
  int rc = vs_win_exec (db,
                        "CREATE TEMP TABLE join_piece AS SELECT * FROM " VS_WIN_PIECE " WHERE 0;"
                        "CREATE TEMP TABLE join_site AS SELECT * FROM " VS_WIN_SITE " WHERE 0;",
                        err, errlen);
  sqlite3_stmt *ins = NULL;
  if (rc == 0)
    {
      char isql[1100], cols[1024];
      snprintf (cols, sizeof cols, piece_cols, ", final_device_bytes", ", ?17");
      snprintf (isql, sizeof isql, "INSERT INTO temp.join_piece%s", cols);
      if (sqlite3_prepare_v2 (db, isql, -1, &ins, NULL) != SQLITE_OK)
        rc = vs_win_fail (err, errlen, db, "cannot join the aggregates");
    }
  /* The groups first: the loop below rewrites the table q reads. */
  int64_t *groups = NULL;
  size_t ngroups = 0, cap = 0;
  while (rc == 0 && sqlite3_step (q) == SQLITE_ROW)
    {
      if (ngroups == cap)
        {
          cap = cap ? 2 * cap : 64;
          int64_t *ng = realloc (groups, 2 * cap * sizeof *ng);
          if (ng == NULL)
            {
              snprintf (err, errlen, "out of memory");
              rc = -1;
              break;
            }
          groups = ng;
        }
      groups[2 * ngroups] = sqlite3_column_int64 (q, 0);
      groups[2 * ngroups + 1] = sqlite3_column_int64 (q, 1);
      ngroups++;
    }
  sqlite3_finalize (q);
  int64_t edges[2];
  VsWinSlicing one = { .edge = edges, .n = 1 };
  for (size_t gi = 0; gi < ngroups && rc == 0; gi++)
    {
      int64_t dev = groups[2 * gi], k = groups[2 * gi + 1];
      edges[0] = one.start = origin + k * s;
      one.end = origin + (k + 1) * s - 1;
      Allocs al = { 0 };
      if (device_allocs (db, dev, true, &al) < 0)
        rc = vs_win_fail (err, errlen, db, "cannot read the allocators");
      for (size_t a = 0; a < al.n && rc == 0; a++)
        rc = join_pieces (db, ins, true, dev, al.alloc[a], &one, one.start, one.end + 1, err,
                          errlen);
      if (rc == 0)
        rc = join_sites (db, "temp.join_site", dev, &al, &one, one.start, one.end + 1, err, errlen);
      allocs_clear (&al);
      if (rc == 0)
        {
          sqlite3_stmt *d;
          static const char *del[2]
              = { "DELETE FROM " VS_WIN_PIECE
                  " WHERE device_id = ?1 AND start_ns >= ?2 AND start_ns < ?3",
                  "DELETE FROM " VS_WIN_SITE
                  " WHERE device_id = ?1 AND start_ns >= ?2 AND start_ns < ?3" };
          for (int i = 0; i < 2 && rc == 0; i++)
            {
              if (sqlite3_prepare_v2 (db, del[i], -1, &d, NULL) != SQLITE_OK)
                {
                  rc = vs_win_fail (err, errlen, db, "cannot join the aggregates");
                  break;
                }
              sqlite3_bind_int64 (d, 1, dev);
              sqlite3_bind_int64 (d, 2, one.start);
              sqlite3_bind_int64 (d, 3, one.end + 1);
              if (sqlite3_step (d) != SQLITE_DONE)
                rc = vs_win_fail (err, errlen, db, "cannot join the aggregates");
              sqlite3_finalize (d);
            }
        }
    }
  free (groups);
  sqlite3_finalize (ins);
  if (rc == 0)
    rc = vs_win_exec (db,
                      "INSERT INTO " VS_WIN_PIECE " SELECT * FROM temp.join_piece;"
                      "INSERT INTO " VS_WIN_SITE " SELECT * FROM temp.join_site;",
                      err, errlen);
  sqlite3_exec (db, "DROP TABLE IF EXISTS temp.join_piece; DROP TABLE IF EXISTS temp.join_site;",
                NULL, NULL, NULL);
  return rc;
}
