/* SPDX-License-Identifier: MIT */
/* vs-trace-window.c — the flight recorder: a trace bounded to a window.
 *
 * Input: a finalized trace of a whole run (or, after a recording whose
 * window was applied while the program ran, vs-trace-window-live.c, what
 * that kept: the detail that may still be needed, and the aggregates of
 * the rest in pieces).  Output: the trace holding full detail only where
 * it is needed, and aggregates for the rest:
 *
 *   - detail intervals per device (table detail_interval): the last
 *     window_ns of the run; a neighbourhood of window_ns / 8 on each side
 *     of every peak instant the summary names (reserved, allocated and
 *     device memory, of `all` and of each allocator); the same around the
 *     first and last VS_WINDOW_FAILURES_KEPT failed requests of the device.
 *     Each is widened to the grid (a sixteenth of the window, from the
 *     run's start: vs-trace-window-private.h), then overlapping ones are
 *     joined.
 *   - the whole run in slices (window_slice; at most VS_WINDOW_MAX_SLICES
 *     before the window, cut again where a detail interval begins or ends;
 *     groups of the program's iterations when the caller knows them,
 *     vs_trace_window_iterations(), and nothing was aggregated while the
 *     program ran, else fixed time): peak, lowest and final reserved and
 *     allocated (and peak device memory on `all`), allocations and frees
 *     (count and bytes), failures; per allocation site the bytes and blocks
 *     still live that the slice added (window_site); the whole run's counts
 *     (window_count).  They are the pieces of vs-trace-window-pieces.c,
 *     read from the series and blocks where every block is still there,
 *     so they are exact.
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
#include "vs-trace-window-private.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "vs-timings.h"
#include "vs-trace-finalize.h"
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
set_meta (sqlite3 *db, const char *key, int64_t value)
{
  return vs_win_put (db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", key, value);
}

static int
span_cmp (const void *pa, const void *pb)
{
  const Span *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

/* The run's grid and bounds, as the intervals are widened to it. */
typedef struct
{
  int64_t start, end, g;
} Grid;

/* Adds the neighbourhood of t (half-width h), widened to the grid. */
static void
add_around (Span *v, size_t *n, const Grid *gr, int64_t t, int64_t h, unsigned why)
{
  int64_t a = vs_win_floor (gr->start, gr->g, t - h), b = vs_win_ceil (gr->start, gr->g, t + h);
  v[*n].start = a < gr->start ? gr->start : a;
  v[*n].end = b > gr->end ? gr->end : b;
  v[*n].why = why;
  (*n)++;
}

/* Edges where slices are cut again (the detail intervals' ends). */
typedef struct
{
  int64_t *v;
  size_t n, cap;
} Edges;

static int
edges_add (Edges *e, int64_t t)
{
  if (e->n == e->cap)
    {
      size_t cap = e->cap ? 2 * e->cap : 64;
      int64_t *nv = realloc (e->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      e->v = nv;
      e->cap = cap;
    }
  e->v[e->n++] = t;
  return 0;
}

/* The detail intervals of one device, written to detail_interval, their
 * ends added to cuts. */
static int
write_intervals (sqlite3 *db, int64_t dev, const Grid *gr, int64_t wstart, int64_t h, Edges *cuts,
                 char *err, size_t errlen)
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
  v[n].start = vs_win_floor (gr->start, gr->g, wstart);
  v[n].end = gr->end;
  v[n].why = WHY_WINDOW;
  n++;
  sqlite3_stmt *s;
  int rc = 0;
  if (sqlite3_prepare_v2 (db, peaks_sql, -1, &s, NULL) != SQLITE_OK)
    {
      free (v);
      return vs_win_fail (err, errlen, db, "cannot read the peaks");
    }
  sqlite3_bind_int64 (s, 1, dev);
  while (sqlite3_step (s) == SQLITE_ROW)
    for (int k = 0; k < 3 && n + 1 < MAX_SPANS; k++)
      if (sqlite3_column_type (s, k) != SQLITE_NULL)
        add_around (v, &n, gr, sqlite3_column_int64 (s, k), h, WHY_PEAK);
  sqlite3_finalize (s);
  for (int q = 0; q < 2; q++)
    {
      if (sqlite3_prepare_v2 (db, fail_sql[q], -1, &s, NULL) != SQLITE_OK)
        {
          free (v);
          return vs_win_fail (err, errlen, db, "cannot read the failures");
        }
      sqlite3_bind_int64 (s, 1, dev);
      sqlite3_bind_int (s, 2, VS_WINDOW_FAILURES_KEPT);
      while (sqlite3_step (s) == SQLITE_ROW && n + 1 < MAX_SPANS)
        add_around (v, &n, gr, sqlite3_column_int64 (s, 0), h, WHY_FAILURE);
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
      return vs_win_fail (err, errlen, db, "cannot write the detail intervals");
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
        rc = vs_win_fail (err, errlen, db, "cannot write the detail intervals");
      sqlite3_reset (s);
      if (rc == 0 && (edges_add (cuts, v[k].start) < 0 || edges_add (cuts, v[k].end) < 0))
        {
          snprintf (err, errlen, "out of memory");
          rc = -1;
        }
    }
  sqlite3_finalize (s);
  free (v);
  return rc;
}

/* What is dropped: blocks whose life meets no span of their device (in
 * the table named by %s), but never half of a segment and the
 * device-level allocation it owns, nor a segment of an expandable segment
 * (its map and unmap events are shared by the pieces), nor an event a kept
 * block still uses. */
static const char *drop_fmt
    = "CREATE TEMP TABLE drop_block AS SELECT b.id, b.level, b.alloc_event_id, b.free_event_id,"
      " b.owner_id FROM block b WHERE b.device_id IS NOT NULL AND b.free_ts IS NOT NULL"
      " AND b.alloc_event_id IS NOT NULL"
      " AND NOT EXISTS (SELECT 1 FROM %s i WHERE i.device_id = b.device_id"
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

/* Rows of a table whose time meets no span of their device. */
static const char *outside_fmt = "DELETE FROM %s WHERE NOT EXISTS (SELECT 1 FROM %s i"
                                 " WHERE i.device_id = %s.device_id AND %s.%s"
                                 " BETWEEN i.start_ns AND i.end_ns)%s";

/* Ranges that meet no span and that nothing kept names (an event, a
 * failure, a kept range as its parent): repeated until none goes, a level
 * of nesting at a time. */
static const char *drop_ranges_fmt
    = "DELETE FROM nvtx_range WHERE end_ns IS NOT NULL"
      " AND NOT EXISTS (SELECT 1 FROM %s i"
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
  if (vs_win_exec (db, sql, err, errlen) < 0)
    return -1;
  *n += sqlite3_changes (db);
  return 0;
}

int
vs_win_drop_outside (sqlite3 *db, const char *keep, VsWinDropped *d, VsTimings *timings, char *err,
                     size_t errlen)
{
  char sql[4096];
  snprintf (sql, sizeof sql, drop_fmt, keep);
  if (vs_win_exec (db, sql, err, errlen) < 0
      || vs_win_exec (db, drop_requests_sql, err, errlen) < 0)
    return -1;
  vs_timings_phase (timings, "window: dropping blocks");
  d->blocks += count_of (db, "SELECT count(*) FROM temp.drop_block");
  static const struct
  {
    const char *table, *col, *extra;
    int what; /* 0 kernels, 1 copies, 2 failures */
  } outside[] = { { "kernel_exec", "start_ns", "", 0 },
                  { "memcpy", "start_ns", "", 1 },
                  { "memset", "start_ns", "", 1 },
                  { "failed_alloc", "ts", " AND device_id IS NOT NULL", 2 } };
  for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++)
    {
      int64_t *n = outside[k].what == 0   ? &d->kernels
                   : outside[k].what == 1 ? &d->copies
                                          : &d->failures;
      snprintf (sql, sizeof sql, outside_fmt, outside[k].table, keep, outside[k].table,
                outside[k].table, outside[k].col, outside[k].extra);
      if (exec_count (db, sql, n, err, errlen) < 0)
        return -1;
    }
  snprintf (sql, sizeof sql, drop_ranges_fmt, keep);
  for (int round = 0; round < 64; round++)
    {
      int64_t before = d->ranges;
      if (exec_count (db, sql, &d->ranges, err, errlen) < 0)
        return -1;
      if (d->ranges == before)
        break;
    }
  return vs_win_exec (db, "DROP TABLE temp.drop_block; DROP TABLE temp.drop_event;", err, errlen);
}

static int
int64_cmp (const void *pa, const void *pb)
{
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : a > b;
}

/* The slice edges: groups of g iterations (starts, absolute, sorted; g
 * the least that leaves at most VS_WINDOW_MAX_SLICES before the window),
 * or without iterations the grid's step doubled until the run before the
 * window has at most VS_WINDOW_MAX_SLICES slices; then cut again at cuts
 * (inside the run).  Fills c (c->edge malloc'd) and the stats' slice
 * fields; -1 when out of memory. */
static int
make_slicing (VsWinSlicing *c, int64_t origin, int64_t window_ns, int64_t wstart,
              const int64_t *starts, size_t nstarts, const Edges *cuts, VsTraceWindowStats *st)
{
  size_t cap = 0;
  if (starts != NULL && nstarts >= 2)
    {
      size_t before = 0;
      while (before < nstarts && starts[before] < wstart)
        before++;
      size_t g = before / VS_WINDOW_MAX_SLICES + 1;
      cap = nstarts / g + 2 + cuts->n;
      c->edge = malloc (cap * sizeof *c->edge);
      if (c->edge == NULL)
        return -1;
      c->edge[c->n++] = c->start;
      for (size_t k = 0; k < nstarts; k += g)
        if (starts[k] > c->edge[c->n - 1] && starts[k] <= c->end && c->n < cap)
          c->edge[c->n++] = starts[k];
      st->slice_iterations = (int64_t)g;
    }
  else
    {
      int64_t slice = vs_win_grid (window_ns);
      while ((wstart - origin) / slice > VS_WINDOW_MAX_SLICES)
        slice *= 2;
      st->slice_ns = slice;
      cap = (size_t)((c->end - origin) / slice) + 2 + cuts->n;
      c->edge = malloc (cap * sizeof *c->edge);
      if (c->edge == NULL)
        return -1;
      c->edge[c->n++] = c->start;
      for (int64_t t = origin; t <= c->end; t += slice)
        if (t > c->start)
          c->edge[c->n++] = t;
    }
  for (size_t k = 0; k < cuts->n; k++)
    if (cuts->v[k] > c->start && cuts->v[k] < c->end)
      c->edge[c->n++] = cuts->v[k];
  qsort (c->edge, c->n, sizeof *c->edge, int64_cmp);
  size_t m = 0;
  for (size_t k = 0; k < c->n; k++)
    if (m == 0 || c->edge[k] != c->edge[m - 1])
      c->edge[m++] = c->edge[k];
  c->n = m;
  return 0;
}

/* The pieces of the run from `from` on, cut at c's edges. */
static int
pieces_from (sqlite3 *db, const VsWinSlicing *c, int64_t from, char *err, size_t errlen)
{
  VsWinSlicing p = { .start = from, .end = c->end };
  p.edge = malloc ((c->n + 1) * sizeof *p.edge);
  if (p.edge == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  p.edge[p.n++] = from;
  for (size_t k = 0; k < c->n; k++)
    if (c->edge[k] > from)
      p.edge[p.n++] = c->edge[k];
  int rc = vs_win_pieces_add (db, &p, err, errlen);
  free (p.edge);
  return rc;
}

static const char *drop_live_sql = "DROP TABLE IF EXISTS " VS_WIN_PIECE ";"
                                   "DROP TABLE IF EXISTS " VS_WIN_SITE ";"
                                   "DROP TABLE IF EXISTS " VS_WIN_STATE ";";

int
vs_trace_window (sqlite3 *db, int64_t window_ns, VsTraceWindowStats *stats, char *err,
                 size_t errlen)
{
  return vs_trace_window_iterations (db, window_ns, NULL, 0, stats, NULL, err, errlen);
}

int
vs_trace_window_iterations (sqlite3 *db, int64_t window_ns, const int64_t *starts, size_t nstarts,
                            VsTraceWindowStats *stats, VsTimings *timings, char *err, size_t errlen)
{
  VsWinSlicing c = { 0 };
  Edges cuts = { 0 };
  VsTraceWindowStats st = { .window_ns = window_ns };
  if (stats)
    *stats = st;
  if (db == NULL || window_ns <= 0)
    {
      snprintf (err, errlen, "the window must be longer than 0");
      return -1;
    }
  int64_t start = vs_win_meta_int (db, "start_ns", 0), end = vs_win_meta_int (db, "end_ns", start);
  bool live = vs_win_has_live (db);
  /* The grid's origin: the run's start, or the start the window applied
   * while the program ran saw (a process that began before it and wrote
   * nothing until later would move the start back). */
  int64_t origin = start;
  int64_t from = start;
  VsWinDropped dropped = { 0 };
  if (live)
    {
      /* What was done while the program ran: its pieces cover the run up
       * to `from`, on a grid from the start it saw. */
      origin = vs_win_state (db, "origin", start);
      int64_t grid = vs_win_state (db, "grid", 0);
      if (origin < start)
        {
          snprintf (err, errlen,
                    "the aggregates kept while the program ran begin at %lld ns, before the "
                    "run's start at %lld ns",
                    (long long)origin, (long long)start);
          return -1;
        }
      if (grid != vs_win_grid (window_ns))
        {
          snprintf (err, errlen,
                    "the aggregates kept while the program ran are in slices of %lld ns, this "
                    "window's are %lld ns: apply the window the recording used",
                    (long long)grid, (long long)vs_win_grid (window_ns));
          return -1;
        }
      from = vs_win_state (db, "from", start);
      dropped = (VsWinDropped){ vs_win_state (db, "blocks", 0), vs_win_state (db, "kernels", 0),
                                vs_win_state (db, "copies", 0), vs_win_state (db, "failures", 0),
                                vs_win_state (db, "ranges", 0) };
      /* The slices follow time: the pieces were cut on the grid. */
      starts = NULL;
      nstarts = 0;
    }
  int64_t wstart = end - window_ns;
  st.detail_from = start;
  if (vs_win_exec (db, "BEGIN IMMEDIATE", err, errlen) < 0)
    return -1;
  if (vs_win_exec (db,
                   "DELETE FROM detail_interval; DELETE FROM window_slice; DELETE FROM window_site;"
                   " DELETE FROM window_count;",
                   err, errlen)
          < 0
      || set_meta (db, "window_ns", window_ns) < 0)
    goto sqlfail;
  if (wstart <= start)
    {
      if (dropped.blocks + dropped.kernels + dropped.copies + dropped.failures + dropped.ranges > 0)
        {
          snprintf (err, errlen, "the run is shorter than the window, yet detail was dropped");
          goto out;
        }
      /* The run is shorter than the window: nothing goes. */
      if (set_meta (db, "window_detail_from_ns", start) < 0
          || vs_win_exec (db, drop_live_sql, err, errlen) < 0)
        goto sqlfail;
      st.blocks_kept = count_of (db, "SELECT count(*) FROM block");
      if (vs_win_exec (db, "COMMIT", err, errlen) < 0)
        goto out;
      if (stats)
        *stats = st;
      return 0;
    }

  c.start = start;
  c.end = end;
  Grid gr = { origin, end, vs_win_grid (window_ns) };
  int64_t h = window_ns / 8;
  /* a window inside the run, on a grid of at least a millisecond */
  assert (start < wstart && wstart < end && origin >= start);
  assert (gr.g >= 1000000);

  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, "SELECT DISTINCT device_id FROM summary ORDER BY 1", -1, &s, NULL)
      != SQLITE_OK)
    goto sqlfail;
  int rc = 0;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    rc = write_intervals (db, sqlite3_column_int64 (s, 0), &gr, wstart, h, &cuts, err, errlen);
  sqlite3_finalize (s);
  if (rc < 0)
    goto out;
  if (make_slicing (&c, origin, window_ns, wstart, starts, nstarts, &cuts, &st) < 0)
    {
      snprintf (err, errlen, "out of memory");
      goto out;
    }
  if (vs_win_pieces_create (db, err, errlen) < 0 || pieces_from (db, &c, from, err, errlen) < 0
      || vs_win_pieces_join (db, &c, err, errlen) < 0)
    goto out;
  vs_timings_phase (timings, "window: intervals and slices");
  st.blocks_kept = count_of (db, "SELECT count(*) FROM block");
  VsWinDropped now = { 0 };
  if (vs_win_drop_outside (db, "detail_interval", &now, timings, err, errlen) < 0)
    goto out;
  st.blocks_kept -= now.blocks;
  assert (now.blocks >= 0 && st.blocks_kept >= 0);
  st.blocks_dropped = dropped.blocks + now.blocks;
  st.kernels_dropped = dropped.kernels + now.kernels;
  st.copies_dropped = dropped.copies + now.copies;
  st.failures_dropped = dropped.failures + now.failures;
  st.ranges_dropped = dropped.ranges + now.ranges;
  st.detail_from = vs_win_floor (origin, gr.g, wstart);
  /* the detail begins on the grid, at most one slice before the window */
  assert (st.detail_from >= origin && st.detail_from > wstart - gr.g);
  if (vs_win_exec (db, drop_live_sql, err, errlen) < 0
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
  free (cuts.v);
  cuts.v = NULL;
  if (vs_win_exec (db, "COMMIT", err, errlen) < 0)
    goto out;
  vs_timings_phase (timings, "window: dropping the rest");
  /* The raw events left are finalized on their own, the series drawn from
   * the slices outside the detail (vs-trace-detail.c). */
  if (vs_trace_finalize (db, NULL, NULL, err, errlen) != 0)
    return -1;
  if (vs_win_exec (db, "VACUUM", err, errlen) < 0)
    return -1;
  vs_timings_phase (timings, "window: vacuum");
  if (stats)
    *stats = st;
  return 0;

sqlfail:
  vs_win_fail (err, errlen, db, "cannot window the trace");
out:
  free (c.edge);
  free (cuts.v);
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}
