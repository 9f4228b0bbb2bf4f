/* SPDX-License-Identifier: MIT */
/* vs-trace-window-live.c — the window applied while the program runs.
 *
 * `record --window` brings what the program has written so far into one
 * trace every few seconds (the spool's live trace) and calls
 * vs_trace_window_trim() on it.  That keeps the aggregates of the run up to
 * a frontier (before which every event is in), in pieces on the grid
 * (vs-trace-window-pieces.c), and drops what can never be detail at the
 * end, whenever the run ends:
 *
 *   - the window: the end is at least now, so its last DURATION begins at
 *     or after the grid point below now − DURATION;
 *   - the peaks: the run's peak is, at every moment, the highest state so
 *     far, first reached at the instant the trace so far names (before the
 *     frontier; its neighbourhood is kept) or at an instant not yet seen
 *     (after the frontier: its neighbourhood begins no sooner than the
 *     grid point below frontier − DURATION/8);
 *   - the failures: the first three so far are the run's; the run's last
 *     three are among the last three so far or not yet seen.
 *
 * So a block is dropped when it ended before both bounds and its life
 * meets none of those neighbourhoods; kernels, copies, failures and ranges
 * likewise (vs_win_drop_outside(), the same SQL as at the end).  Before
 * it goes, every block live in [last frontier, frontier) is in the trace,
 * so the pieces are exact; a block dropped ended before the frontier, so
 * later pieces do not miss it.  Pieces before the bounds that meet no
 * neighbourhood are joined into the slice length the run so far would
 * get (a divisor of the one the whole run gets), so they stay few.
 */
#include "vs-trace-window.h"
#include "vs-trace-window-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The highest state of each series so far and where it was first
 * reached, per allocator id of the series. */
typedef struct
{
  int64_t alloc;
  int64_t max[3], ts[3]; /* reserved, allocated, device */
  bool seen[3];
} Peak;

static int
keep_span (sqlite3_stmt *ins, int64_t dev, int64_t a, int64_t b)
{
  sqlite3_bind_int64 (ins, 1, dev);
  sqlite3_bind_int64 (ins, 2, a);
  sqlite3_bind_int64 (ins, 3, b);
  int rc = sqlite3_step (ins) == SQLITE_DONE ? 0 : -1;
  sqlite3_reset (ins);
  return rc;
}

/* The neighbourhoods of dev's peaks and first and last failures before
 * frontier, into the keep table through ins. */
static int
keep_device (sqlite3 *db, sqlite3_stmt *ins, int64_t dev, int64_t origin, int64_t g, int64_t h,
             int64_t frontier, char *err, size_t errlen)
{
  static const char *series_sql
      = "SELECT allocator_id, reserved_bytes, allocated_bytes, device_bytes, ts FROM series"
        " WHERE device_id = ?1 AND ts < ?2 ORDER BY seq";
  static const char *fail_sql[2]
      = { "SELECT ts FROM failed_alloc WHERE device_id = ?1 AND ts < ?2 ORDER BY ts, id LIMIT ?3",
          "SELECT ts FROM failed_alloc WHERE device_id = ?1 AND ts < ?2"
          " ORDER BY ts DESC, id DESC LIMIT ?3" };
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, series_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot read the series");
  sqlite3_bind_int64 (s, 1, dev);
  sqlite3_bind_int64 (s, 2, frontier);
  Peak *pk = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      int64_t alloc = sqlite3_column_int64 (s, 0);
      size_t k = 0;
      while (k < n && pk[k].alloc != alloc)
        k++;
      if (k == n)
        {
          if (n == cap)
            {
              cap = cap ? 2 * cap : 8;
              Peak *np = realloc (pk, cap * sizeof *np);
              if (np == NULL)
                {
                  snprintf (err, errlen, "out of memory");
                  rc = -1;
                  break;
                }
              pk = np;
            }
          pk[n++] = (Peak){ .alloc = alloc };
        }
      for (int c = 0; c < 3; c++)
        {
          if (sqlite3_column_type (s, 1 + c) == SQLITE_NULL)
            continue;
          int64_t v = sqlite3_column_int64 (s, 1 + c);
          if (!pk[k].seen[c] || v > pk[k].max[c])
            {
              pk[k].seen[c] = true;
              pk[k].max[c] = v;
              pk[k].ts[c] = sqlite3_column_int64 (s, 4);
            }
        }
    }
  sqlite3_finalize (s);
  for (size_t k = 0; k < n && rc == 0; k++)
    for (int c = 0; c < 3 && rc == 0; c++)
      if (pk[k].seen[c])
        rc = keep_span (ins, dev, vs_win_floor (origin, g, pk[k].ts[c] - h),
                        vs_win_ceil (origin, g, pk[k].ts[c] + h));
  free (pk);
  for (int q = 0; q < 2 && rc == 0; q++)
    {
      if (sqlite3_prepare_v2 (db, fail_sql[q], -1, &s, NULL) != SQLITE_OK)
        return vs_win_fail (err, errlen, db, "cannot read the failures");
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int64 (s, 2, frontier);
      sqlite3_bind_int (s, 3, VS_WINDOW_FAILURES_KEPT);
      while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
        {
          int64_t t = sqlite3_column_int64 (s, 0);
          rc = keep_span (ins, dev, vs_win_floor (origin, g, t - h),
                          vs_win_ceil (origin, g, t + h));
        }
      sqlite3_finalize (s);
    }
  if (rc < 0 && err[0] == '\0')
    vs_win_fail (err, errlen, db, "cannot keep the neighbourhoods");
  return rc;
}

/* The spans that may still become detail, per device, in temp.live_keep:
 * [keep_from, ∞) and the neighbourhoods. */
static int
make_keep (sqlite3 *db, int64_t origin, int64_t g, int64_t h, int64_t frontier, int64_t keep_from,
           char *err, size_t errlen)
{
  if (vs_win_exec (db,
                   "CREATE TEMP TABLE live_keep (device_id INTEGER NOT NULL,"
                   " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL)",
                   err, errlen)
      < 0)
    return -1;
  sqlite3_stmt *ins, *s;
  if (sqlite3_prepare_v2 (db, "INSERT INTO temp.live_keep VALUES (?1, ?2, ?3)", -1, &ins, NULL)
      != SQLITE_OK)
    return vs_win_fail (err, errlen, db, "cannot keep the neighbourhoods");
  if (sqlite3_prepare_v2 (db, "SELECT id FROM device ORDER BY id", -1, &s, NULL) != SQLITE_OK)
    {
      sqlite3_finalize (ins);
      return vs_win_fail (err, errlen, db, "cannot read the devices");
    }
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      int64_t dev = sqlite3_column_int64 (s, 0);
      rc = keep_span (ins, dev, keep_from, INT64_MAX);
      if (rc < 0)
        vs_win_fail (err, errlen, db, "cannot keep the neighbourhoods");
      else
        rc = keep_device (db, ins, dev, origin, g, h, frontier, err, errlen);
    }
  sqlite3_finalize (s);
  sqlite3_finalize (ins);
  if (rc == 0)
    rc = vs_win_exec (db, "CREATE INDEX temp.live_keep_at ON live_keep (device_id, start_ns)", err,
                      errlen);
  return rc;
}

static const char *counts[] = { "blocks", "kernels", "copies", "failures", "ranges" };

int
vs_trace_window_trim (sqlite3 *db, int64_t window_ns, int64_t frontier_ns, int64_t now_ns,
                      VsTraceTrimStats *stats, char *err, size_t errlen)
{
  VsTraceTrimStats st = { 0 };
  if (stats)
    *stats = st;
  if (db == NULL || window_ns <= 0)
    {
      snprintf (err, errlen, "the window must be longer than 0");
      return -1;
    }
  err[0] = '\0';
  if (vs_win_exec (db, "BEGIN IMMEDIATE", err, errlen) < 0)
    return -1;
  if (vs_win_pieces_create (db, err, errlen) < 0)
    goto out;
  int64_t g = vs_win_grid (window_ns), h = window_ns / 8;
  int64_t origin = vs_win_state (db, "origin", INT64_MIN);
  if (origin == INT64_MIN)
    {
      /* The run's start, the grid's origin: until a trace of it says when
       * it began, nothing is done. */
      origin = vs_win_meta_int (db, "start_ns", 0);
      if (origin <= 0)
        {
          st.from = st.to = st.keep_from = INT64_MIN;
          if (vs_win_exec (db, "COMMIT", err, errlen) < 0)
            goto out;
          if (stats)
            *stats = st;
          return 0;
        }
      if (vs_win_set_state (db, "origin", origin) < 0 || vs_win_set_state (db, "grid", g) < 0
          || vs_win_set_state (db, "from", origin) < 0)
        goto sqlfail;
    }
  else if (vs_win_state (db, "grid", 0) != g)
    {
      snprintf (err, errlen, "the aggregates kept so far are for another window");
      goto out;
    }
  st.from = st.to = vs_win_state (db, "from", origin);
  int64_t frontier = vs_win_floor (origin, g, frontier_ns);
  if (frontier > st.from && (frontier - st.from) / g > 100000000)
    {
      snprintf (err, errlen, "the frontier %lld lies too far from %lld: the times do not fit",
                (long long)frontier, (long long)st.from);
      goto out;
    }
  if (frontier > st.from)
    {
      size_t n = (size_t)((frontier - st.from) / g);
      VsWinSlicing c = { .start = st.from, .end = frontier - 1 };
      c.edge = malloc (n * sizeof *c.edge);
      if (c.edge == NULL)
        {
          snprintf (err, errlen, "out of memory");
          goto out;
        }
      for (int64_t t = st.from; t < frontier; t += g)
        c.edge[c.n++] = t;
      int rc = vs_win_pieces_add (db, &c, err, errlen);
      free (c.edge);
      if (rc < 0)
        goto out;
      if (vs_win_set_state (db, "from", frontier) < 0)
        goto sqlfail;
      st.to = frontier;
    }
  int64_t keep_from = vs_win_floor (origin, g, st.to - h);
  int64_t wfrom = vs_win_floor (origin, g, now_ns - window_ns);
  if (wfrom < keep_from)
    keep_from = wfrom;
  st.keep_from = keep_from;
  if (keep_from > origin)
    {
      VsWinDropped d = { 0 };
      if (make_keep (db, origin, g, h, st.to, keep_from, err, errlen) < 0
          || vs_win_drop_outside (db, "temp.live_keep", &d, NULL, err, errlen) < 0
          || vs_win_pieces_coarsen (db, origin, g, keep_from, "temp.live_keep", err, errlen) < 0
          || vs_win_exec (db, "DROP TABLE temp.live_keep", err, errlen) < 0)
        goto out;
      int64_t v[] = { d.blocks, d.kernels, d.copies, d.failures, d.ranges };
      for (int k = 0; k < 5; k++)
        if (vs_win_set_state (db, counts[k], vs_win_state (db, counts[k], 0) + v[k]) < 0)
          goto sqlfail;
      st.blocks_dropped = d.blocks;
      st.kernels_dropped = d.kernels;
      st.copies_dropped = d.copies;
      st.failures_dropped = d.failures;
      st.ranges_dropped = d.ranges;
    }
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, "SELECT count(*) FROM " VS_WIN_PIECE, -1, &s, NULL) == SQLITE_OK
      && sqlite3_step (s) == SQLITE_ROW)
    st.pieces = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  if (vs_win_exec (db, "COMMIT", err, errlen) < 0)
    goto out;
  if (stats)
    *stats = st;
  return 0;

sqlfail:
  vs_win_fail (err, errlen, db, "cannot window the trace so far");
out:
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec (db, "DROP TABLE IF EXISTS temp.live_keep", NULL, NULL, NULL);
  return -1;
}

int64_t
vs_trace_window_trimmed_to (sqlite3 *db)
{
  if (db == NULL || vs_win_state (db, "origin", INT64_MIN) == INT64_MIN)
    return INT64_MIN;
  return vs_win_state (db, "from", INT64_MIN);
}
