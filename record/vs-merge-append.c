/* SPDX-License-Identifier: MIT */
/* vs-merge-append.c — appending the rows process traces gain to one merged
 * trace, round after round (see vs-merge-append.h).
 *
 * Each input's new rows are copied as vs_merge_traces() copies whole
 * inputs (vs-merge.c): the small tables row by row through the writer
 * (devices deduplicated by uuid, frames, stack nodes and kernel
 * configurations by content), the event tables by INSERT … SELECT with the
 * input attached, rows bounded by id: above the largest id taken from the
 * input before (its watermark), at most the largest id the input held when
 * the round read its small tables, in one read transaction: an event row
 * committed later may name a stack not read yet, so it waits for the next
 * round.
 *
 * Ids in the merged trace never go back: the event tables' ids are given
 * here (vs_event_id()), kernel ids by the writer from the largest ever
 * given, and a range is added above a placeholder row at the largest range
 * id ever given, deleted before commit: another connection deletes event
 * and range rows between rounds, and SQLite would give a deleted top id
 * again.  The inputs' ids do not go back either: release never deletes a
 * table's largest row.
 *
 * An import (meta source 'import', record's torch-PID.db) adds no process
 * of its own where its collector trace came first, as in vs_merge_traces();
 * where the import comes first (its collector trace not written yet), the
 * process and GPU rows it adds are claimed, and the collector's rows of the
 * same take them over when they come (vs-merge-adopt.c's claims).
 *
 * The state lives in the merged trace (vs-merge-append-state.c), written in
 * the transaction of each input's rows, dropped at the last round.
 */
#include "vs-merge-append.h"
#include "vs-merge-append-private.h"
#include "vs-merge-meta.h"
#include "vs-merge-private.h"
#include "vs-timings.h"
#include "vs-trace-finalize.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

/* Fills err (errlen > 0) from fmt; returns -1. */
static int
fail (char *err, size_t errlen, const char *fmt, ...)
{
  if (errlen)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (err, errlen, fmt, ap);
      va_end (ap);
    }
  return -1;
}

/* The map of table t (a small table) in m. */
static VsIdMap *
merge_map (VsMerge *m, int t)
{
  switch (t)
    {
    case VS_MERGE_PROCESS:
      return &m->process;
    case VS_MERGE_DEVICE:
      return &m->device;
    case VS_MERGE_ALLOCATOR:
      return &m->allocator;
    case VS_MERGE_MODULE:
      return &m->module;
    case VS_MERGE_FRAME:
      return &m->frame;
    case VS_MERGE_STACK:
      return &m->stack;
    case VS_MERGE_RANGE:
      return &m->range;
    default:
      assert (t == VS_MERGE_KERNEL_CONFIG);
      return &m->kernel_config;
    }
}

/* The name an input is known by: its file name (the spool may move). */
static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* Whether db has table name. */
static bool
has_table (sqlite3 *db, const char *name)
{
  static const char *sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1";
  sqlite3_stmt *s = NULL;
  bool yes = false;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (s, 1, name, -1, SQLITE_STATIC);
      yes = sqlite3_step (s) == SQLITE_ROW;
    }
  sqlite3_finalize (s);
  return yes;
}

/* Opens the merged trace with a connection of its own, for the state and
 * the journal mode.  NULL with err filled. */
static sqlite3 *
open_live (const char *path, char *err, size_t errlen)
{
  sqlite3 *db = vs_merge_open_input (path, err, errlen);
  if (db != NULL)
    sqlite3_busy_timeout (db, VS_WRITER_BUSY_MS);
  return db;
}

/* Loads the state from the file (a's state empty).  0 or -1. */
static int
reload (VsMergeAppend *a, char *err, size_t errlen)
{
  sqlite3 *db = open_live (a->path, err, errlen);
  if (db == NULL)
    return -1;
  int rc = 0;
  if (!has_table (db, "merge_append_input")
      && vs_merge_count_is_positive (db, "SELECT count(*) FROM meta WHERE key = 'processes'"))
    rc = fail (err, errlen, "%s is a finished trace, not one being appended to", a->path);
  else if ((rc = vs_merge_append_load_state (a, db)) == -2)
    rc = fail (err, errlen,
               "%s: what the rounds took no longer matches its seal (changed outside "
               "vramscope): continuing it would duplicate or lose events",
               a->path);
  else if (rc != 0)
    rc = fail (err, errlen, "cannot read the merged trace %s: %s", a->path, sqlite3_errmsg (db));
  sqlite3_close (db);
  return rc;
}

VsMergeAppend *
vs_merge_append_open (const char *path, char *err, size_t errlen)
{
  assert (path != NULL);
  if (access (path, F_OK) != 0)
    {
      VsWriter *w = vs_writer_create (path, err, errlen);
      if (w == NULL || vs_writer_close (w, false, NULL, NULL, err, errlen) != 0)
        return NULL;
    }
  VsMergeAppend *a = calloc (1, sizeof *a);
  if (a == NULL || (a->path = strdup (path)) == NULL)
    {
      free (a);
      fail (err, errlen, "out of memory");
      return NULL;
    }
  if (reload (a, err, errlen) != 0)
    {
      vs_merge_append_free (a);
      return NULL;
    }
  return a;
}

int
vs_merge_append_begin (VsMergeAppend *a, VsProgressFunc progress, void *progress_data, char *err,
                       size_t errlen)
{
  assert (a != NULL && a->m.w == NULL);
  /* The trace an earlier round finalized takes rows again; its derived
   * tables stay until the next finalize replaces them.  WAL: the merged
   * trace is read and written by two connections between rounds. */
  static const char *reopen_sql = "PRAGMA journal_mode=WAL;"
                                  " UPDATE meta SET value = '0' WHERE key = 'finalized'";
  sqlite3 *db = open_live (a->path, err, errlen);
  if (db == NULL)
    return -1;
  int rc = sqlite3_exec (db, reopen_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    fail (err, errlen, "cannot write the merged trace %s: %s", a->path, sqlite3_errmsg (db));
  sqlite3_close (db);
  if (rc != SQLITE_OK)
    return -1;
  VsWriter *w = vs_writer_open (a->path, err, errlen);
  if (w == NULL)
    return -1;
  a->m = (VsMerge){ .w = w, .progress = progress, .progress_data = progress_data };
  vs_writer_kernel_ids_after (w, a->live_hi[VS_MERGE_KERNEL_EXEC]);
  a->m.err = err;
  a->m.errlen = errlen;
  if (vs_merge_sql_functions (&a->m) != 0)
    {
      vs_writer_close (w, false, NULL, NULL, NULL, 0);
      a->m.w = NULL;
      return -1;
    }
  return 0;
}

/* The integer sql gives on db with v bound (0 when NULL); -1 on error. */
static int64_t
query_int (sqlite3 *db, const char *sql, const int64_t *v, int n)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  for (int i = 0; i < n; i++)
    sqlite3_bind_int64 (s, i + 1, v[i]);
  int64_t r = sqlite3_step (s) == SQLITE_ROW ? sqlite3_column_int64 (s, 0) : -1;
  sqlite3_finalize (s);
  return r;
}

/* The largest id of table t on db (schema main or src), 0 when empty. */
static int64_t
max_id (sqlite3 *db, const char *schema, int t)
{
  char sql[128];
  snprintf (sql, sizeof sql, "SELECT ifnull(max(id), 0) FROM %s.%s", schema,
            vs_merge_table_names[t]);
  return query_int (db, sql, NULL, 0);
}

/* Reads the input's largest ids into hi (inside the input's read
 * transaction).  0 or -1. */
static int
read_bounds (sqlite3 *db, int64_t *hi)
{
  for (int t = 0; t < VS_MERGE_N_TABLES; t++)
    if ((hi[t] = max_id (db, "main", t)) < 0)
      return -1;
  return 0;
}

/* Ranges taken while open that the input has ended since: their end into
 * the merged trace (the input's maps are in a->m).  New open ranges
 * (lo, hi] join the list.  0 or -1. */
static int
update_ranges (VsMergeAppend *a, VsAppendInput *in, sqlite3 *db, int64_t lo, int64_t hi)
{
  static const char *end_sql = "SELECT end_ns FROM nvtx_range WHERE id = ?1";
  static const char *set_sql = "UPDATE nvtx_range SET end_ns = ?1 WHERE id = ?2";
  static const char *open_sql
      = "SELECT id FROM nvtx_range WHERE id > ?1 AND id <= ?2 AND end_ns IS NULL ORDER BY id";
  size_t kept = 0;
  for (size_t k = 0; k < in->open.n; k++)
    {
      int64_t old = in->open.ids[k];
      sqlite3_stmt *s = NULL;
      if (sqlite3_prepare_v2 (db, end_sql, -1, &s, NULL) != SQLITE_OK)
        return -1;
      sqlite3_bind_int64 (s, 1, old);
      int step = sqlite3_step (s);
      bool ended = step == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL;
      int64_t v[2]
          = { ended ? sqlite3_column_int64 (s, 0) : 0, vs_merge_idmap_get (&a->m.range, old) };
      sqlite3_finalize (s);
      if (step != SQLITE_ROW && step != SQLITE_DONE)
        return -1;
      if (!ended)
        in->open.ids[kept++] = old;
      else if (v[1] != VS_UNKNOWN && vs_merge_exec_ints (vs_writer_db (a->m.w), set_sql, v, 2) != 0)
        return -1;
    }
  in->open.n = kept;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, open_sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (s, 1, lo);
  sqlite3_bind_int64 (s, 2, hi);
  int rc = 0, step;
  while (rc == 0 && (step = sqlite3_step (s)) == SQLITE_ROW)
    rc = vs_merge_claims_add (&in->open, sqlite3_column_int64 (s, 0));
  sqlite3_finalize (s);
  return rc == 0 && step == SQLITE_DONE ? 0 : -1;
}

/* Event rows (lo, hi] of the input's event tables with a ts before
 * before_ns. */
static int64_t
count_late (sqlite3 *db, const int64_t *lo, const int64_t *hi, int64_t before_ns)
{
  static const int tables[]
      = { VS_MERGE_MEM_EVENT, VS_MERGE_POOL_EVENT, VS_MERGE_ALLOC_EVENT, VS_MERGE_FAILED_ALLOC };
  int64_t n = 0;
  for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
    {
      char sql[128];
      snprintf (sql, sizeof sql, "SELECT count(*) FROM %s WHERE id > ?1 AND id <= ?2 AND ts < ?3",
                vs_merge_table_names[tables[k]]);
      int64_t v[3] = { lo[tables[k]], hi[tables[k]], before_ns };
      int64_t c = query_int (db, sql, v, 3);
      n += c > 0 ? c : 0;
    }
  return n;
}

/* The round's writer and state thrown away after a failed input: the
 * writer's caches no longer match the file, so both are read again. */
static int
restart (VsMergeAppend *a)
{
  VsProgressFunc progress = a->m.progress;
  void *progress_data = a->m.progress_data;
  char *err = a->m.err;
  size_t errlen = a->m.errlen;
  vs_merge_free_maps (&a->m);
  vs_writer_close (a->m.w, false, NULL, NULL, NULL, 0);
  a->m.w = NULL;
  vs_merge_append_free_state (a);
  char rerr[512];
  if (reload (a, rerr, sizeof rerr) != 0
      || vs_merge_append_begin (a, progress, progress_data, rerr, sizeof rerr) != 0)
    return -1;
  a->m.err = err;
  a->m.errlen = errlen;
  return 0;
}

/* Swaps the maps and claims of the input's state and of m: into m before
 * a copy, back after it. */
static void
swap_maps (VsMergeAppend *a, VsAppendInput *in)
{
  for (int t = 0; t < N_MAPS; t++)
    {
      VsIdMap tmp = *merge_map (&a->m, t);
      *merge_map (&a->m, t) = in->maps[t];
      in->maps[t] = tmp;
    }
  VsClaims c = a->m.claim_process;
  a->m.claim_process = a->claim_process;
  a->claim_process = c;
  c = a->m.claim_device;
  a->m.claim_device = a->claim_device;
  a->claim_device = c;
}

/* Copies the rows (lo, hi] of the input open as db (attached as src to the
 * writer), inside the writer's held transaction.  0 or -1 with m's error
 * set. */
static int
copy_input (VsMergeAppend *a, VsAppendInput *in, const int64_t *lo, const int64_t *hi)
{
  static const char *placeholder_sql
      = "INSERT INTO nvtx_range (id, name, start_ns, depth) VALUES (?1, '', 0, 0)";
  static const char *unplace_sql = "DELETE FROM nvtx_range WHERE id = ?1";
  VsMerge *m = &a->m;
  sqlite3 *db = vs_writer_db (m->w);
  /* Ranges get ids above any given before, deleted or not. */
  int64_t top = a->live_hi[VS_MERGE_RANGE];
  bool placed = top > 0 && max_id (db, "main", VS_MERGE_RANGE) < top;
  if (placed && vs_merge_exec_ints (db, placeholder_sql, &top, 1) != 0)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  swap_maps (a, in);
  int rc = vs_merge_copy_small (m, lo, hi);
  if (rc == 0 && update_ranges (a, in, m->db, lo[VS_MERGE_RANGE], hi[VS_MERGE_RANGE]) != 0)
    rc = vs_merge_fail (m, "cannot append the ranges", sqlite3_errmsg (db));
  /* vs_event_id() counts on from the largest ids given. */
  m->event_ids = a->live_hi;
  if (rc == 0 && vs_writer_commit (m->w) != 0)
    rc = vs_merge_fail (m, "cannot write the merged trace", vs_writer_errmsg (m->w));
  if (rc == 0)
    rc = vs_merge_copy_event_rows (m, lo, hi);
  m->event_ids = NULL;
  swap_maps (a, in);
  if (rc != 0)
    return -1;
  if (placed && vs_merge_exec_ints (db, unplace_sql, &top, 1) != 0)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  int64_t range_top = max_id (db, "main", VS_MERGE_RANGE);
  if (range_top > a->live_hi[VS_MERGE_RANGE])
    a->live_hi[VS_MERGE_RANGE] = range_top;
  a->live_hi[VS_MERGE_KERNEL_EXEC] = vs_writer_last_kernel_id (m->w);
  return 0;
}

int
vs_merge_append_input (VsMergeAppend *a, const char *input, int64_t before_ns, int64_t until_ns,
                       int64_t *late, char *err, size_t errlen)
{
  assert (a != NULL && input != NULL);
  if (a->m.w == NULL)
    return fail (err, errlen, "%s: %s", input, "no round begun");
  if (access (input, F_OK) != 0 && errno == ENOENT)
    return 0;
  if (errlen)
    err[0] = '\0';
  sqlite3 *db = vs_merge_open_input (input, err, errlen);
  if (db == NULL)
    return -1;
  VsMerge *m = &a->m;
  m->err = err;
  m->errlen = errlen;
  m->db = db;
  m->imported = vs_merge_input_meta_is (db, "source", "import");
  m->kernels_v3 = vs_merge_count_is_positive (db, vs_merge_kernels_v3_sql);
  m->kernels_aside = false;
  m->claim_new = true;
  const char *name = base_name (input);
  VsAppendInput *in = vs_merge_append_find_input (a, name);
  bool added = in == NULL;
  int64_t next_no = a->n > 0 ? a->in[a->n - 1].no + 1 : 1;
  if (in == NULL && (in = vs_merge_append_add_input (a, name, next_no)) == NULL)
    {
      sqlite3_close (db);
      return fail (err, errlen, "%s: %s", input, "out of memory");
    }
  int64_t lo[VS_MERGE_N_TABLES], hi[VS_MERGE_N_TABLES];
  memcpy (lo, in->mark, sizeof lo);
  sqlite3 *wdb = vs_writer_db (m->w);
  sqlite3_stmt *s = NULL;
  int rc = 0;
  /* One read transaction on the input: the bounds and the small tables of
   * one moment. */
  if (!m->kernels_v3)
    rc = fail (err, errlen, "%s: %s", input, "a trace of schema 1 or 2 cannot be appended");
  else if (sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK || read_bounds (db, hi) != 0)
    rc = fail (err, errlen, "cannot read %s: %s", input, sqlite3_errmsg (db));
  /* Release keeps each table's largest row: an input whose ids went below
   * the ones taken lost rows already appended (an import cut back to a
   * snapshot marker or a checkpoint), which a merged trace cannot undo. */
  for (int t = 0; t < VS_MERGE_N_TABLES && rc == 0; t++)
    if (hi[t] < lo[t])
      rc = fail (err, errlen, "%s: rows already merged are gone from its %s", input,
                 vs_merge_table_names[t]);
  /* Of an import, only the allocator events and failures before until_ns:
   * up to the first row at or after it (its rows come in time order, and
   * those after its process's final snapshot are cut when it closes). */
  static const int timed[] = { VS_MERGE_ALLOC_EVENT, VS_MERGE_FAILED_ALLOC };
  for (size_t k = 0;
       k < sizeof timed / sizeof timed[0] && rc == 0 && m->imported && until_ns != INT64_MAX; k++)
    {
      int t = timed[k];
      char sql[160];
      snprintf (sql, sizeof sql,
                "SELECT ifnull(min(id) - 1, ?2) FROM %s WHERE id > ?1 AND id <= ?2 AND ts >= ?3",
                vs_merge_table_names[t]);
      int64_t v[3] = { lo[t], hi[t], until_ns };
      int64_t cap = query_int (db, sql, v, 3);
      if (cap < 0)
        rc = fail (err, errlen, "cannot read %s: %s", input, sqlite3_errmsg (db));
      else if (cap < hi[t])
        hi[t] = cap;
    }
  bool attached = false;
  if (rc == 0
      && (vs_writer_commit (m->w) != 0
          || sqlite3_prepare_v2 (wdb, "ATTACH ?1 AS src", -1, &s, NULL) != SQLITE_OK))
    rc = fail (err, errlen, "cannot write the merged trace: %s", sqlite3_errmsg (wdb));
  if (rc == 0)
    {
      sqlite3_bind_text (s, 1, input, -1, SQLITE_STATIC);
      attached = sqlite3_step (s) == SQLITE_DONE;
      if (!attached)
        rc = fail (err, errlen, "cannot read %s: %s", input, sqlite3_errmsg (wdb));
    }
  sqlite3_finalize (s);
  int64_t n_late = 0;
  if (rc == 0)
    n_late = count_late (db, lo, hi, before_ns);
  bool held = rc == 0 && vs_writer_hold (m->w, true, false) == 0;
  if (rc == 0 && !held)
    rc = fail (err, errlen, "cannot write the merged trace: %s", vs_writer_errmsg (m->w));
  if (rc == 0)
    rc = copy_input (a, in, lo, hi);
  if (rc == 0)
    {
      for (int t = 0; t < VS_MERGE_N_TABLES; t++)
        in->mark[t] = hi[t];
      if (m->imported && vs_merge_input_meta_is (db, "history_overflow", "1"))
        vs_writer_set_meta_int (m->w, "history_overflow", 1);
      if (vs_merge_append_save_state (a, in, lo, hi) != 0)
        rc = fail (err, errlen, "cannot write the merged trace: %s", sqlite3_errmsg (wdb));
    }
  if (rc == 0 && vs_writer_hold (m->w, false, true) != 0)
    rc = fail (err, errlen, "cannot write the merged trace: %s", vs_writer_errmsg (m->w));
  else if (rc != 0 && held)
    vs_writer_hold (m->w, false, false);
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  if (attached)
    sqlite3_exec (wdb, "DETACH src", NULL, NULL, NULL);
  sqlite3_close (db);
  m->db = NULL;
  if (rc != 0)
    {
      /* Nothing of this input was committed: the state is read again from
       * the file, with the writer. */
      if (held || added)
        restart (a);
      return -1;
    }
  if (late != NULL)
    *late += n_late;
  return 0;
}

/* Inputs in name order (the final merge's). */
static int
by_name (const void *x, const void *y)
{
  const VsAppendInput *const *a = x, *const *b = y;
  return strcmp ((*a)->name, (*b)->name);
}

/* The meta gathered from every input's, in name order, into the writer's
 * meta; with run, also every process's end and the run's meta.  0 or -1. */
static int
gather_meta (VsMergeAppend *a, const VsMergeRun *run)
{
  static const char *meta_sql = "SELECT key, value FROM merge_append_meta WHERE input = ?1";
  VsAppendInput **order = malloc ((a->n + 1) * sizeof *order);
  if (order == NULL)
    return -1;
  for (size_t i = 0; i < a->n; i++)
    order[i] = &a->in[i];
  qsort (order, a->n, sizeof *order, by_name);
  VsMergeMeta rm = { .start_ns = VS_UNKNOWN, .end_ns = VS_UNKNOWN };
  int rc = vs_merge_meta_forget_carried (a->m.w);
  for (size_t i = 0; i < a->n && rc == 0; i++)
    {
      sqlite3_stmt *s = NULL;
      if (sqlite3_prepare_v2 (vs_writer_db (a->m.w), meta_sql, -1, &s, NULL) != SQLITE_OK)
        {
          rc = -1;
          break;
        }
      sqlite3_bind_int64 (s, 1, order[i]->no);
      int64_t pend = vs_merge_meta_rows (a->m.w, s, &rm);
      sqlite3_finalize (s);
      if (run != NULL)
        {
          /* The input's processes, through its map. */
          VsMerge pm = { .w = a->m.w, .process = order[i]->maps[VS_MERGE_PROCESS] };
          vs_merge_end_processes (&pm, pend, run);
        }
    }
  free (order);
  if (rc == 0 && run != NULL)
    vs_merge_run_meta (a->m.w, &rm, a->n, run);
  /* While the program runs: the run's start so far (the window's rounds
   * cut the run on a grid from it). */
  else if (rc == 0 && rm.start_ns != VS_UNKNOWN)
    rc = vs_writer_set_meta_int (a->m.w, "start_ns", rm.start_ns) == 0 ? 0 : -1;
  return rc;
}

int
vs_merge_append_end (VsMergeAppend *a, const VsMergeRun *run, VsProgressFunc progress,
                     void *progress_data, char *err, size_t errlen)
{
  assert (a != NULL);
  if (a->m.w == NULL)
    return fail (err, errlen, "%s: %s", a->path, "no round begun");
  VsWriter *w = a->m.w;
  sqlite3 *db = vs_writer_db (w);
  int rc = vs_writer_hold (w, true, false);
  if (rc == 0)
    rc = gather_meta (a, run);
  if (rc == 0 && run != NULL)
    rc = vs_merge_append_drop_state (db);
  if (rc != 0)
    fail (err, errlen, "cannot write the merged trace: %s", sqlite3_errmsg (db));
  if (vs_writer_hold (w, false, rc == 0) != 0 && rc == 0)
    rc = fail (err, errlen, "cannot write the merged trace: %s", vs_writer_errmsg (w));
  vs_merge_free_maps (&a->m);
  a->m.w = NULL;
  char cerr[512] = "";
  /* The end of the run: the trace is compacted next, its derived rows
   * coded as they come when run names a sink. */
  VsFinalizeOptions fo = { .progress = progress,
                           .progress_data = progress_data,
                           .sink = run != NULL ? run->sink : NULL,
                           .timings = run != NULL ? run->timings : NULL };
  int crc = rc == 0 ? vs_trace_close_finalized (w, &fo, cerr, sizeof cerr)
                    : vs_writer_close (w, false, NULL, NULL, cerr, sizeof cerr);
  if (rc == 0 && crc != 0)
    rc = fail (err, errlen, "%s", cerr);
  if (rc == 0 && run == NULL)
    {
      /* The finalizer left WAL mode; the next round and the readers
       * between rounds share the file again. */
      sqlite3 *live = open_live (a->path, err, errlen);
      if (live == NULL
          || sqlite3_exec (live, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK)
        rc = -1;
      sqlite3_close (live);
    }
  if (run != NULL && rc == 0)
    vs_merge_append_free_state (a);
  return rc;
}

/* vs_range_open(id): whether the range id of the input being released
 * was taken while open and its end not taken yet. */
static void
sql_range_open (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  const VsAppendInput *in = sqlite3_user_data (ctx);
  int64_t id = sqlite3_value_int64 (argv[0]);
  bool open = false;
  for (size_t k = 0; k < in->open.n && !open; k++)
    open = in->open.ids[k] == id;
  sqlite3_result_int (ctx, open);
}

/* Rows deleted per transaction: short, so that the input's writer waits
 * little. */
#define RELEASE_ROWS 65536

int
vs_merge_append_release (VsMergeAppend *a, const char *input, char *err, size_t errlen)
{
  static const char *ranges_sql
      = "DELETE FROM nvtx_range WHERE id <= ?1 AND id < ?2 AND end_ns IS NOT NULL"
        " AND NOT vs_range_open(id)";
  static const char *kernels_sql = "DELETE FROM kernel_exec WHERE id <= ?1 AND id < ?2";
  assert (a != NULL && input != NULL);
  VsAppendInput *in = vs_merge_append_find_input (a, base_name (input));
  if (in == NULL || access (input, F_OK) != 0)
    return 0;
  sqlite3 *db = vs_merge_open_input (input, err, errlen);
  if (db == NULL)
    return -1;
  /* A running collector's commit makes these wait, and theirs these. */
  sqlite3_busy_timeout (db, VS_WRITER_BUSY_MS);
  int rc = sqlite3_create_function (db, "vs_range_open", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, in,
                                    sql_range_open, NULL, NULL)
                   == SQLITE_OK
               ? 0
               : -1;
  for (int t = VS_MERGE_RANGE; t < VS_MERGE_N_TABLES && rc == 0; t++)
    {
      if (t == VS_MERGE_KERNEL_CONFIG)
        continue;
      /* The table's largest row stays: the ids given next come above it. */
      int64_t top = max_id (db, "main", t);
      if (top < 0)
        {
          rc = -1;
          break;
        }
      int64_t upto = in->mark[t] < top - 1 ? in->mark[t] : top - 1;
      if (t == VS_MERGE_RANGE || t == VS_MERGE_KERNEL_EXEC)
        {
          int64_t v[2] = { upto, top };
          rc = vs_merge_exec_ints (db, t == VS_MERGE_RANGE ? ranges_sql : kernels_sql, v, 2);
          continue;
        }
      char min_sql[96], del_sql[128];
      snprintf (min_sql, sizeof min_sql, "SELECT ifnull(min(id), 0) FROM %s WHERE id >= ?1",
                vs_merge_table_names[t]);
      snprintf (del_sql, sizeof del_sql, "DELETE FROM %s WHERE id >= ?1 AND id < ?2 AND id <= ?3",
                vs_merge_table_names[t]);
      int64_t from = 1;
      from = query_int (db, min_sql, &from, 1);
      rc = from < 0 ? -1 : 0;
      while (rc == 0 && from > 0 && from <= upto)
        {
          int64_t to = from > INT64_MAX - RELEASE_ROWS ? INT64_MAX : from + RELEASE_ROWS;
          int64_t v[3] = { from, to, upto };
          rc = vs_merge_exec_ints (db, del_sql, v, 3);
          if (rc != 0 || to > upto)
            break;
          /* the next batch starts at the next row left: ids may be sparse
           * (2^62 after 1), and stepping through them would not end */
          from = query_int (db, min_sql, &to, 1);
          rc = from < 0 ? -1 : 0;
        }
    }
  if (rc != 0)
    fail (err, errlen, "cannot release rows of %s: %s", input, sqlite3_errmsg (db));
  sqlite3_close (db);
  return rc;
}

void
vs_merge_append_free (VsMergeAppend *a)
{
  if (a == NULL)
    return;
  if (a->m.w != NULL)
    {
      /* Without end: what the inputs' commits left stays. */
      vs_merge_free_maps (&a->m);
      vs_writer_close (a->m.w, false, NULL, NULL, NULL, 0);
    }
  vs_merge_append_free_state (a);
  free (a->path);
  free (a);
}
