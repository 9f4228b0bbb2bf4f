/* SPDX-License-Identifier: MIT */
/* vs-trace-detail.c — the finalizer's side of a windowed trace.
 *
 * A trace written by `record --window` (vs-trace-window.c) keeps every
 * event only inside its detail intervals (table detail_interval); outside
 * them, allocations freed before the window were dropped, so the replay's
 * running sums there count too little.  The replay then draws the series
 * from the whole run's slice aggregates (table window_slice) instead: this
 * file loads both, adds to the replay one mark per coarse slice (its point)
 * and one at each detail interval's start (where the running sums are
 * exact again: every block live inside an interval was kept), and answers
 * whether an instant lies in detail.  A complete trace has neither table's
 * rows (or, before version 4, neither table) and replays as before.
 */
#include "vs-trace-finalize-private.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *has_tables_sql
    = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'detail_interval'";
static const char *span_sql = "SELECT device_id, start_ns, end_ns FROM detail_interval"
                              " WHERE device_id BETWEEN 1 AND ?1 ORDER BY device_id, start_ns";
/* The slices outside every detail interval of their device. */
static const char *point_sql
    = "SELECT s.device_id, s.allocator_id, s.start_ns, s.peak_reserved_bytes,"
      " s.peak_allocated_bytes, ifnull(s.peak_device_bytes, -1) FROM window_slice s"
      " WHERE s.device_id BETWEEN 1 AND ?1 AND s.allocator_id BETWEEN 0 AND ?2"
      " AND NOT EXISTS (SELECT 1 FROM detail_interval i WHERE i.device_id = s.device_id"
      "  AND i.start_ns < s.end_ns AND i.end_ns > s.start_ns)"
      " ORDER BY s.device_id, s.allocator_id, s.start_ns";

void
vs_fin_window_clear (VsFinWindow *w)
{
  free (w->span);
  free (w->first);
  free (w->cur);
  free (w->pt);
  memset (w, 0, sizeof *w);
}

static VsFinEvent *
add_mark (VsFinTrace *t, int64_t ts, int32_t dev, int32_t alloc, uint8_t op, int64_t id)
{
  VsFinEvent *ev = vs_fin_push_event (t);
  if (ev == NULL)
    return NULL;
  ev->ts = ts;
  ev->id = id;
  ev->src = SRC_MARK;
  ev->op = op;
  ev->device_id = dev;
  ev->allocator_id = alloc;
  ev->address = VS_UNKNOWN;
  ev->bytes = 0;
  ev->block_bytes = -1;
  return ev;
}

int
vs_fin_window_load (sqlite3 *db, VsFinTrace *t, VsFinWindow *w, int32_t ndev, VsFinErr *e)
{
  memset (w, 0, sizeof *w);
  w->ndev = ndev;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, has_tables_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  int has = sqlite3_step (s) == SQLITE_ROW && sqlite3_column_int (s, 0) > 0;
  sqlite3_finalize (s);
  if (!has)
    return 0;

  size_t cap = 0;
  if (sqlite3_prepare_v2 (db, span_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  sqlite3_bind_int (s, 1, ndev);
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      if (w->nspan == cap)
        {
          cap = cap ? cap * 2 : 16;
          VsFinSpan *n = realloc (w->span, cap * sizeof *n);
          if (n == NULL)
            {
              sqlite3_finalize (s);
              return vs_fin_fail (e, "out of memory");
            }
          w->span = n;
        }
      VsFinSpan *sp = &w->span[w->nspan++];
      sp->device_id = (int32_t)sqlite3_column_int64 (s, 0);
      sp->start = sqlite3_column_int64 (s, 1);
      sp->end = sqlite3_column_int64 (s, 2);
    }
  if (sqlite3_finalize (s) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  if (w->nspan == 0)
    return 0; /* a complete trace */
  w->windowed = true;
  w->first = calloc ((size_t)ndev + 2, sizeof *w->first);
  w->cur = calloc ((size_t)ndev + 1, sizeof *w->cur);
  if (w->first == NULL || w->cur == NULL)
    return vs_fin_fail (e, "out of memory");
  /* first[d]: index of device d's first span (spans sorted by device). */
  for (int32_t d = 0, k = 0; d <= ndev + 1; d++)
    {
      while ((size_t)k < w->nspan && w->span[k].device_id < d)
        k++;
      w->first[d] = (size_t)k;
    }
  for (int32_t d = 0; d <= ndev; d++)
    w->cur[d] = w->first[d];
  for (size_t k = 0; k < w->nspan; k++)
    if (add_mark (t, w->span[k].start, w->span[k].device_id, 0, MARK_DETAIL_START, (int64_t)k)
        == NULL)
      return vs_fin_fail (e, "out of memory");

  cap = 0;
  if (sqlite3_prepare_v2 (db, point_sql, -1, &s, NULL) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  sqlite3_bind_int (s, 1, ndev);
  sqlite3_bind_int (s, 2, t->max_allocator);
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      if (w->npt == cap)
        {
          cap = cap ? cap * 2 : 64;
          VsFinPoint *n = realloc (w->pt, cap * sizeof *n);
          if (n == NULL)
            {
              sqlite3_finalize (s);
              return vs_fin_fail (e, "out of memory");
            }
          w->pt = n;
        }
      VsFinPoint *p = &w->pt[w->npt];
      p->device_id = (int32_t)sqlite3_column_int64 (s, 0);
      p->allocator_id = (int32_t)sqlite3_column_int64 (s, 1);
      p->reserved = sqlite3_column_int64 (s, 3);
      p->allocated = sqlite3_column_int64 (s, 4);
      p->device = sqlite3_column_int64 (s, 5);
      if (add_mark (t, sqlite3_column_int64 (s, 2), p->device_id, p->allocator_id, MARK_SLICE,
                    (int64_t)w->npt)
          == NULL)
        {
          sqlite3_finalize (s);
          return vs_fin_fail (e, "out of memory");
        }
      w->npt++;
    }
  if (sqlite3_finalize (s) != SQLITE_OK)
    return vs_fin_fail (e, "%s", sqlite3_errmsg (db));
  return 0;
}

bool
vs_fin_window_detail (VsFinWindow *w, int32_t dev, int64_t ts)
{
  if (!w->windowed)
    return true;
  if (dev <= 0 || dev > w->ndev)
    return false;
  size_t k = w->cur[dev], end = w->first[dev + 1];
  while (k < end && w->span[k].end < ts)
    k++;
  w->cur[dev] = k;
  return k < end && w->span[k].start <= ts;
}

static const char *counts_sql
    = "UPDATE summary SET"
      " alloc_count = (SELECT c.alloc_count FROM window_count c"
      "  WHERE c.device_id = summary.device_id AND c.allocator_id = summary.allocator_id),"
      " free_count = (SELECT c.free_count FROM window_count c"
      "  WHERE c.device_id = summary.device_id AND c.allocator_id = summary.allocator_id),"
      " failed_alloc_count = (SELECT c.failed_alloc_count FROM window_count c"
      "  WHERE c.device_id = summary.device_id AND c.allocator_id = summary.allocator_id)"
      " WHERE EXISTS (SELECT 1 FROM window_count c"
      "  WHERE c.device_id = summary.device_id AND c.allocator_id = summary.allocator_id)";

int
vs_fin_window_counts (sqlite3 *db, const VsFinWindow *w, VsFinErr *e)
{
  if (!w->windowed)
    return 0;
  return vs_fin_exec (db, e, counts_sql);
}
