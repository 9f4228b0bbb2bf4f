/* SPDX-License-Identifier: MIT */
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
 *      emitting a series row for every change and tracking peaks.  When a
 *      device saw one allocator's events and nothing else (an imported
 *      snapshot), that allocator's series is `all`'s and is stored once.
 *   4. summary levels over each series.
 * The passes live in vs-trace-pair.c (1, 2) and vs-trace-replay.c (3, 4);
 * this file runs them in one transaction and builds the indexes.  Each
 * phase is marked into the caller's VsTimings, if any
 * (VsFinalizeOptions.timings).
 */
#include "vs-fin-given.h"
#include "vs-trace-finalize.h"
#include "vs-trace-finalize-private.h"
#include "vs-row-sink.h"
#include "vs-timings.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* A trace of schema version 1 (no alloc_event.before_trace, no
 * summary.before_trace_*) gets the columns of version 2, NULL in its rows
 * (nothing it holds was recreated from before the trace). */
static const char *has_v2_sql
    = "SELECT count(*) FROM pragma_table_info('alloc_event') WHERE name = 'before_trace'";
static const char *upgrade_v1_sql = "ALTER TABLE alloc_event ADD COLUMN before_trace INTEGER;"
                                    "ALTER TABLE summary ADD COLUMN before_trace_bytes INTEGER;"
                                    "ALTER TABLE summary ADD COLUMN before_trace_count INTEGER;";

/* A trace of schema version 1 or 2 stores its kernels whole in a table
 * `kernel`; version 3 stores each name and configuration once
 * (kernel_config) and the executions apart (kernel_exec), with the view
 * `kernel` of the old shape.  The rows keep their ids.  Version 3 also
 * has no index on block (device_id, level, free_seq): no reader query
 * needs it. */
static const char *has_v3_sql
    = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kernel_exec'";
static const char *upgrade_v2_sql
    = "CREATE TABLE kernel_config (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
      "  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
      "  block_x INTEGER, block_y INTEGER, block_z INTEGER,"
      "  static_shared INTEGER, dynamic_shared INTEGER, registers INTEGER);"
      "CREATE TABLE kernel_exec (start_ns INTEGER NOT NULL, id INTEGER NOT NULL,"
      "  duration_ns INTEGER NOT NULL, process_id INTEGER NOT NULL REFERENCES process(id),"
      "  device_id INTEGER REFERENCES device(id), context INTEGER, stream INTEGER,"
      "  correlation INTEGER, config_id INTEGER NOT NULL REFERENCES kernel_config(id),"
      "  PRIMARY KEY (start_ns, id)) WITHOUT ROWID;"
      "INSERT INTO kernel_config (name, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
      "  static_shared, dynamic_shared, registers)"
      " SELECT name, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
      "  static_shared, dynamic_shared, registers FROM kernel"
      " GROUP BY name, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
      "  static_shared, dynamic_shared, registers ORDER BY min(id);"
      "CREATE TEMP TABLE kernel_config_key AS SELECT name, grid_x, grid_y, grid_z, block_x,"
      "  block_y, block_z, static_shared, dynamic_shared, registers, id FROM kernel_config;"
      "CREATE INDEX temp.kernel_config_key_name ON kernel_config_key (name);"
      "INSERT INTO kernel_exec (id, start_ns, duration_ns, process_id, device_id, context,"
      "  stream, correlation, config_id)"
      " SELECT k.id, k.start_ns, k.end_ns - k.start_ns, k.process_id, k.device_id, k.context,"
      "  k.stream, k.correlation, (SELECT c.id FROM kernel_config_key c WHERE c.name = k.name"
      "   AND c.grid_x IS k.grid_x AND c.grid_y IS k.grid_y AND c.grid_z IS k.grid_z"
      "   AND c.block_x IS k.block_x AND c.block_y IS k.block_y AND c.block_z IS k.block_z"
      "   AND c.static_shared IS k.static_shared AND c.dynamic_shared IS k.dynamic_shared"
      "   AND c.registers IS k.registers)"
      " FROM kernel k ORDER BY k.start_ns, k.id;"
      "DROP TABLE temp.kernel_config_key;"
      "DROP TABLE kernel;"
      "DROP INDEX IF EXISTS block_free;"
      "CREATE VIEW kernel AS"
      "  SELECT e.id, e.start_ns, e.start_ns + e.duration_ns AS end_ns, e.process_id,"
      "         e.device_id, e.context, e.stream, e.correlation, c.name,"
      "         c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,"
      "         c.static_shared, c.dynamic_shared, c.registers"
      "  FROM kernel_exec e LEFT JOIN kernel_config c ON c.id = e.config_id;";

/* Version 4 adds the tables of a windowed recording (empty in a complete
 * trace). */
static const char *has_v4_sql
    = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'detail_interval'";
static const char *upgrade_v3_sql
    = "CREATE TABLE detail_interval (device_id INTEGER NOT NULL REFERENCES device(id),"
      "  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, why TEXT NOT NULL,"
      "  PRIMARY KEY (device_id, start_ns)) WITHOUT ROWID;"
      "CREATE TABLE window_slice (device_id INTEGER NOT NULL, allocator_id INTEGER NOT NULL,"
      "  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
      "  peak_reserved_bytes INTEGER NOT NULL, peak_allocated_bytes INTEGER NOT NULL,"
      "  peak_device_bytes INTEGER, min_reserved_bytes INTEGER NOT NULL,"
      "  min_allocated_bytes INTEGER NOT NULL, final_reserved_bytes INTEGER NOT NULL,"
      "  final_allocated_bytes INTEGER NOT NULL, alloc_count INTEGER NOT NULL,"
      "  alloc_bytes INTEGER NOT NULL, free_count INTEGER NOT NULL, free_bytes INTEGER NOT NULL,"
      "  failed_alloc_count INTEGER NOT NULL,"
      "  PRIMARY KEY (device_id, allocator_id, start_ns)) WITHOUT ROWID;"
      "CREATE TABLE window_site (device_id INTEGER NOT NULL, allocator_id INTEGER NOT NULL,"
      "  start_ns INTEGER NOT NULL, stack_id INTEGER NOT NULL, net_bytes INTEGER NOT NULL,"
      "  net_count INTEGER NOT NULL,"
      "  PRIMARY KEY (device_id, allocator_id, start_ns, stack_id)) WITHOUT ROWID;"
      "CREATE TABLE window_count (device_id INTEGER NOT NULL, allocator_id INTEGER NOT NULL,"
      "  alloc_count INTEGER NOT NULL, free_count INTEGER NOT NULL,"
      "  failed_alloc_count INTEGER NOT NULL, PRIMARY KEY (device_id, allocator_id)) WITHOUT "
      "ROWID;";

#define VERSION_TEXT_(v) #v
#define VERSION_TEXT(v) VERSION_TEXT_ (v)
static const char *set_version_sql
    = "PRAGMA user_version = " VERSION_TEXT (VS_TRACE_SCHEMA_VERSION) ";";

/* Whether the probe (a count) finds what a schema version has. */
static int
schema_has (sqlite3 *db, const char *probe, VsFinErr *e)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, probe, -1, &s, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "cannot finalize trace: %s", sqlite3_errmsg (db));
  int has = sqlite3_step (s) == SQLITE_ROW && sqlite3_column_int (s, 0) > 0;
  sqlite3_finalize (s);
  return has;
}

/* Brings db's schema to the current version (inside the transaction). */
static int
upgrade_schema (sqlite3 *db, VsFinErr *e)
{
  int v2 = schema_has (db, has_v2_sql, e);
  int v3 = v2 < 0 ? -1 : schema_has (db, has_v3_sql, e);
  int v4 = v3 < 0 ? -1 : schema_has (db, has_v4_sql, e);
  if (v2 < 0 || v3 < 0 || v4 < 0)
    return -1;
  if (v2 && v3 && v4)
    return 0;
  if ((!v2 && vs_fin_exec (db, e, upgrade_v1_sql) < 0)
      || (!v3 && vs_fin_exec (db, e, upgrade_v2_sql) < 0)
      || (!v4 && vs_fin_exec (db, e, upgrade_v3_sql) < 0))
    return -1;
  return vs_fin_exec (db, e, set_version_sql);
}

static const char *reset_sql = "DELETE FROM block; DELETE FROM series; DELETE FROM series_level;"
                               " DELETE FROM summary;";

/* Indexes for readers' time-range and instant queries.  The raw memory
 * event tables get none: readers go through block and series. */
static const char *index_sql
    = "CREATE INDEX IF NOT EXISTS pool_event_ts ON pool_event (ts);"
      "CREATE INDEX IF NOT EXISTS failed_alloc_ts ON failed_alloc (ts);"
      "CREATE INDEX IF NOT EXISTS memcpy_start ON memcpy (start_ns);"
      "CREATE INDEX IF NOT EXISTS memset_start ON memset (start_ns);"
      "CREATE INDEX IF NOT EXISTS nvtx_range_start ON nvtx_range (start_ns);"
      "CREATE INDEX IF NOT EXISTS block_alloc ON block (device_id, level, alloc_seq);"
      "CREATE INDEX IF NOT EXISTS block_bin ON block (device_id, span_bin);";

/* Origin of the trace: meta start_ns, or the first event when unset. */
static const char *origin_sql
    = "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'),"
      " (SELECT min(ts) FROM (SELECT min(ts) AS ts FROM mem_event UNION ALL"
      "  SELECT min(ts) FROM alloc_event UNION ALL SELECT min(ts) FROM pool_event)), 0)";

static int
in_wal_mode (sqlite3 *db)
{
  sqlite3_stmt *s;
  int wal = 0;
  if (sqlite3_prepare_v2 (db, "PRAGMA journal_mode", -1, &s, NULL) != SQLITE_OK)
    return 0;
  if (sqlite3_step (s) == SQLITE_ROW)
    {
      const unsigned char *mode = sqlite3_column_text (s, 0);
      wal = mode != NULL && strcmp ((const char *)mode, "wal") == 0;
    }
  sqlite3_finalize (s);
  return wal;
}

/* Refused: an id that is not an integer in 1..?1, an allocator on a
 * device the trace does not define. */
static const char *bad_device_sql
    = "SELECT count(*) FROM device WHERE typeof(id) != 'integer' OR id < 1 OR id > ?1";
static const char *bad_allocator_sql
    = "SELECT count(*) FROM allocator WHERE typeof(id) != 'integer' OR id < 1 OR id > ?1"
      " OR device_id NOT IN (SELECT id FROM device)";
static const char *max_id_sql[2]
    = { "SELECT ifnull(max(id), 0) FROM device", "SELECT ifnull(max(id), 0) FROM allocator" };

/* One integer from sql with ?1 bound to arg; -1 with e filled on failure. */
static int
query_int (sqlite3 *db, const char *sql, int64_t arg, int64_t *out, VsFinErr *e)
{
  sqlite3_stmt *s;
  int rc;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  if (sqlite3_bind_parameter_count (s) > 0)
    sqlite3_bind_int64 (s, 1, arg);
  rc = sqlite3_step (s);
  *out = rc == SQLITE_ROW ? sqlite3_column_int64 (s, 0) : 0;
  sqlite3_finalize (s);
  if (rc != SQLITE_ROW)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  return 0;
}

/* A trace has no triggers; one that carries some would run them while
 * finalizing writes its tables (and could rewrite anything), so such a
 * file is refused rather than finalized. */
static int
refuse_triggers (sqlite3 *db, VsFinErr *e)
{
  int64_t n;
  if (query_int (db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'", 0, &n, e) < 0)
    return -1;
  if (n > 0)
    return vs_fin_fail (e, "it carries %lld triggers, which a vramscope trace never has",
                        (long long)n);
  return 0;
}

/* Reads the device and allocator id ranges into st and allocates its
 * per-(device, allocator) state, refusing ids that are not 1..N within the
 * limits (VS_FIN_MAX_*): the state is indexed by id. */
static int
load_dimensions (sqlite3 *db, VsFinState *st, VsFinErr *e)
{
  const int64_t limit[2] = { VS_FIN_MAX_DEVICE_ID, VS_FIN_MAX_ALLOCATOR_ID };
  const char *const bad_sql[2] = { bad_device_sql, bad_allocator_sql };
  const char *const what[2] = { "device", "allocator" };
  const char *const also[2] = { "", " or whose device_id names no device" };
  int64_t max[2], bad;
  sqlite3_stmt *s;

  for (int i = 0; i < 2; i++)
    {
      if (query_int (db, bad_sql[i], limit[i], &bad, e) < 0
          || query_int (db, max_id_sql[i], 0, &max[i], e) < 0)
        return -1;
      if (bad > 0)
        return vs_fin_fail (e, "its %s table has %lld rows whose id is not 1..%lld%s", what[i],
                            (long long)bad, (long long)limit[i], also[i]);
    }
  if ((max[0] + 1) * (max[1] + 1) > VS_FIN_MAX_CELLS)
    return vs_fin_fail (e, "its device and allocator ids (up to %lld and %lld) are too sparse",
                        (long long)max[0], (long long)max[1]);
  st->ndev = (int32_t)max[0];
  st->nalloc = (int32_t)max[1];
  assert (st->ndev >= 0 && st->ndev <= VS_FIN_MAX_DEVICE_ID);
  assert (st->nalloc >= 0 && st->nalloc <= VS_FIN_MAX_ALLOCATOR_ID);
  st->acc = calloc ((size_t)(st->ndev + 1) * (size_t)(st->nalloc + 1), sizeof *st->acc);
  st->dev = calloc ((size_t)st->ndev + 1, sizeof *st->dev);
  st->shared = calloc ((size_t)st->ndev + 1, sizeof *st->shared);
  if (st->acc == NULL || st->dev == NULL || st->shared == NULL)
    return vs_fin_fail (e, "out of memory");
  for (int32_t d = 0; d <= st->ndev; d++)
    for (int32_t k = 0; k <= st->nalloc; k++)
      vs_fin_acc_at (st, d, k)->pool_size = -1;
  if (sqlite3_prepare_v2 (db, "SELECT id, device_id, kind = 'pool' FROM allocator", -1, &s, NULL)
      != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      /* Both checked above: id in 1..nalloc, device_id a defined device. */
      int32_t id = (int32_t)sqlite3_column_int64 (s, 0);
      int32_t d = (int32_t)sqlite3_column_int64 (s, 1);
      int pool = sqlite3_column_int (s, 2);
      assert (id >= 1 && id <= st->nalloc && d >= 1 && d <= st->ndev);
      for (int32_t dd = 0; dd <= st->ndev; dd++)
        {
          VsFinAcc *a = vs_fin_acc_at (st, dd, id);
          a->device_id = d;
          a->allocator_id = id;
          a->is_pool = pool;
        }
    }
  if (sqlite3_finalize (s) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  return 0;
}

/* Whether the alloc_event rows handed over (t's events, before any is
 * loaded) are db's: the table holds row n (the last handed over), at the
 * time of its event.  -1 with e filled otherwise. */
static int
check_given_rows (sqlite3 *db, const VsFinTrace *t, int64_t n, VsFinErr *e)
{
  int64_t ts = -1;
  /* Handed over in row order, ids 1..n without gaps (vs-fin-given.h). */
  const VsFinEvent *last = n >= 1 && (size_t)n <= t->n ? &t->ev[n - 1] : NULL;
  if (last != NULL && (last->src != SRC_ALLOC || last->id != n))
    last = NULL;
  if (query_int (db, "SELECT ifnull((SELECT ts FROM alloc_event WHERE id = ?1), -1)", n, &ts, e)
      < 0)
    return -1;
  if (last == NULL || ts != last->ts)
    return vs_fin_fail (e, "the allocator events handed over are not those of its alloc_event");
  return 0;
}

/* Sorts t's events into replay order (vs_fin_event_cmp).  The first
 * sorted ones, handed over in row order (vs-fin-given.h), are usually in
 * that order already (a stream's times only grow): then only the rest is
 * sorted and merged with them, from the back, through a copy of the
 * rest.  0, or -1 when out of memory. */
static int
sort_events (VsFinTrace *t, size_t sorted)
{
  size_t a = sorted < t->n ? sorted : t->n, b = t->n - a;
  assert (a + b == t->n && t->n <= t->cap);
  bool in_order = a > 0;
  for (size_t i = 1; in_order && i < a; i++)
    in_order = vs_fin_event_cmp (&t->ev[i - 1], &t->ev[i]) < 0;
  if (!in_order || b == 0)
    {
      if (!in_order && t->n > 0)
        qsort (t->ev, t->n, sizeof *t->ev, vs_fin_event_cmp);
      return 0;
    }
  qsort (t->ev + a, b, sizeof *t->ev, vs_fin_event_cmp);
  VsFinEvent *rest = malloc (b * sizeof *rest);
  if (rest == NULL)
    return -1;
  memcpy (rest, t->ev + a, b * sizeof *rest);
  /* Largest first, into the end: t->ev[0..i) still to merge with
   * rest[0..j). */
  size_t i = a, j = b, k = t->n;
  while (j > 0)
    {
      if (i > 0 && vs_fin_event_cmp (&t->ev[i - 1], &rest[j - 1]) > 0)
        t->ev[--k] = t->ev[--i];
      else
        t->ev[--k] = rest[--j];
    }
  /* rest all placed, what is left of the sorted ones already in place */
  assert (j == 0 && k == i);
  free (rest);
  return 0;
}

/* Marks phase name into o's recorder, if it has one. */
static void
phase (const VsFinalizeOptions *o, const char *name)
{
  if (o->timings != NULL)
    vs_timings_mark (o->timings, name);
}

/* Finalizes db from the events in *given, or from its tables when given
 * is NULL, with the inputs in *o. */
static int
finalize (sqlite3 *db, VsFinTrace *given, const VsFinalizeOptions *o, char *err, size_t errlen)
{
  assert (db != NULL && o != NULL);
  VsFinErr e = { err, errlen };
  VsFinTrace t = { 0 };
  VsFinState st = { 0 };
  VsFinWindow win = { 0 };
  VsFinProgress pr = { db, o->progress, o->progress_data, 0, 0 };
  int rc = -1;

  /* A large page cache: finalize rewrites every derived table at once. */
  sqlite3_exec (db, "PRAGMA cache_size=-65536", NULL, NULL, NULL);
  /* Out of WAL mode first: the derived tables are new pages, which a
   * rollback journal does not copy, while WAL mode writes each twice (to
   * the log, then back at the checkpoint).  This fails harmlessly while
   * another connection reads the trace; it then stays in WAL mode. */
  if (in_wal_mode (db))
    sqlite3_exec (db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
  if (given != NULL)
    {
      t = *given;
      memset (given, 0, sizeof *given);
    }
  if (vs_fin_exec (db, &e, "BEGIN IMMEDIATE") < 0 || refuse_triggers (db, &e) < 0)
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      free (t.ev);
      free (t.bl);
      return -1;
    }
  if (upgrade_schema (db, &e) < 0 || vs_fin_exec (db, &e, reset_sql) < 0
      || load_dimensions (db, &st, &e) < 0)
    goto out;
  t.max_device = st.ndev;
  t.max_allocator = st.nalloc;
  assert (t.n <= t.cap && t.nb == 0);
  /* The alloc_event rows an import handed over as it wrote them
   * (vs-fin-given.h): only the others are loaded. */
  int64_t given_rows = 0, coded_rows = 0;
  if (given == NULL && vs_fin_given_take (o->given, &t, &given_rows, &coded_rows) == 0
      && given_rows > 0
      && (vs_fin_check_given (&t, (size_t)given_rows, &e) < 0
          || check_given_rows (db, &t, given_rows, &e) < 0))
    {
      /* Not this trace's rows after all: every row is read back, and the
       * row sink codes every one (vs_fin_given_taken is false now). */
      vs_fin_given_drop (o->given);
      free (t.ev);
      t.ev = NULL;
      t.n = t.cap = 0;
      given_rows = coded_rows = 0;
    }
  /* Rows handed over are the first ones; coded rows a prefix of them. */
  assert (given_rows >= 0 && coded_rows >= 0 && coded_rows <= given_rows);
  assert ((size_t)given_rows <= t.n);
  /* The sink keeps the coded chunks of the rows taken, if any. */
  if (o->sink != NULL)
    o->sink->given = vs_fin_given_taken (o->given) ? o->given : NULL;
  st.sink = o->sink;
  if (given == NULL && vs_fin_load_events_after (db, &t, given_rows, coded_rows, o->sink, &e) < 0)
    goto out;
  if (vs_fin_check_events (&t, &e) < 0 || vs_fin_window_load (db, &t, &win, st.ndev, &e) < 0)
    goto out;
  st.window = &win;
  assert (t.n <= VS_FIN_MAX_EVENTS && (size_t)given_rows <= t.n);
  phase (o, "finalize: loading events");

  pr.total = (uint64_t)t.n * 3 + 1;
  if (sort_events (&t, (size_t)given_rows) < 0)
    {
      vs_fin_fail (&e, "out of memory");
      goto out;
    }
  /* Replay order: by time, source and id (vs_fin_event_cmp). */
  assert (t.n == 0 || vs_fin_event_cmp (&t.ev[0], &t.ev[t.n - 1]) <= 0);
  if (vs_fin_tick (&pr, 0) < 0)
    {
      vs_fin_fail (&e, "cancelled");
      goto out;
    }
  if (vs_fin_pair_events (&t, &e) < 0 || vs_fin_assign_owners (&t, &e) < 0)
    goto out;
  assert (t.nb <= t.capb && (t.nb == 0 || t.bl != NULL));
  phase (o, "finalize: sorting and pairing");

  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2 (db,
                            "SELECT 1 FROM meta WHERE key = 'source'"
                            " AND value = 'import'",
                            -1, &s, NULL)
        != SQLITE_OK)
      goto sqlfail;
    st.device_level = sqlite3_step (s) != SQLITE_ROW;
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
  if (origin < 0)
    {
      vs_fin_fail (&e, "its start time is negative");
      goto out;
    }

  vs_fin_find_shared_series (&t, &st);
  if (vs_fin_replay (&t, &st, origin, &pr, &e) < 0)
    goto out;
  phase (o, "finalize: series and levels");
  if (vs_fin_write_blocks (&t, o->sink, &pr, &e) < 0)
    goto out;
  phase (o, "finalize: blocks");
  if (vs_fin_write_summary (db, &st, &e) < 0 || vs_fin_window_counts (db, &win, &e) < 0)
    goto out;
  phase (o, "finalize: summary");
  if (vs_fin_exec (db, &e, index_sql) < 0)
    goto out;
  phase (o, "finalize: indexes");
  {
    /* The chunks a row sink coded beside the rest (vs-row-sink.h). */
    VsRowSink *sink = o->sink;
    if (sink != NULL && sink->finish != NULL)
      {
        if (sink->finish (sink, db) < 0)
          {
            vs_fin_fail (&e, "%s", sink->err);
            goto out;
          }
        phase (o, "finalize: event chunks");
      }
    /* What was done beside (VsFinalizeOptions.beside). */
    if (o->beside != NULL)
      {
        if (o->beside (db, o->beside_data, e.msg, e.len) < 0)
          goto out;
        phase (o, "finalize: waiting for the kernels");
      }
  }
  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2 (
            db,
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('finalized', '1'),"
            " ('start_ns', ?1), ('end_ns', max(?1,"
            " ifnull((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns'), ?1),"
            " ifnull(?2, ?1),"
            " ifnull((SELECT max(end_ns) FROM kernel), ?1),"
            " ifnull((SELECT max(end_ns) FROM nvtx_range), ?1),"
            " ifnull((SELECT max(ts) FROM failed_alloc), ?1)))",
            -1, &s, NULL)
        != SQLITE_OK)
      goto sqlfail;
    sqlite3_bind_int64 (s, 1, origin);
    /* The latest series row, as the replay wrote them (to the table or
     * to a sink, vs-row-sink.h). */
    if (st.series_rows > 0)
      sqlite3_bind_int64 (s, 2, st.series_max_ts);
    int src = sqlite3_step (s);
    sqlite3_finalize (s);
    if (src != SQLITE_DONE)
      goto sqlfail;
  }
  if (vs_fin_exec (db, &e, "COMMIT") < 0)
    goto out;
  /* A finished trace is one self-contained file.  While a recording is
   * still writing this fails harmlessly and the trace stays in WAL mode. */
  sqlite3_exec (db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
  phase (o, "finalize: commit");
  rc = 0;
  vs_fin_tick (&pr, pr.total - pr.done);
  goto done;

sqlfail:
  vs_fin_fail (&e, "%s", sqlite3_errmsg (db));
out:
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
done:
  free (t.ev);
  free (t.bl);
  free (st.acc);
  free (st.dev);
  free (st.shared);
  vs_fin_window_clear (&win);
  return rc;
}

int
vs_trace_finalize_with (sqlite3 *db, const VsFinalizeOptions *o, char *err, size_t errlen)
{
  static const VsFinalizeOptions none = { 0 };
  return finalize (db, NULL, o != NULL ? o : &none, err, errlen);
}

int
vs_trace_finalize (sqlite3 *db, VsProgressFunc progress, void *progress_data, char *err,
                   size_t errlen)
{
  VsFinalizeOptions o = { .progress = progress, .progress_data = progress_data };
  return finalize (db, NULL, &o, err, errlen);
}

int
vs_fin_finalize_gathered (sqlite3 *db, VsFinTrace *t, const VsFinalizeOptions *o, char *err,
                          size_t errlen)
{
  static const VsFinalizeOptions none = { 0 };
  assert (t != NULL);
  return finalize (db, t, o != NULL ? o : &none, err, errlen);
}
