/* SPDX-License-Identifier: MIT */
/* test-timeline.c — timelines and interval extremes against a brute-force
 * replay of the raw series, on a trace big enough to have summary levels.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"

typedef struct
{
  gint64 t; /* ns since start */
  gint64 allocated, reserved;
} Row;

static char *dir, *path;
static VsTrace *trace;
static gint64 dev;
static GArray *rows; /* Row, the whole series of (dev, all) */

/* Value of the step function just before time t (the last row < t). */
static const Row *
row_before (gint64 t)
{
  guint lo = 0, hi = rows->len;

  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;

      if (g_array_index (rows, Row, mid).t < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo == 0 ? NULL : &g_array_index (rows, Row, lo - 1);
}

/* Exact max (want_max) or min of allocated over [a, b). */
static gint64
ref_extreme (gint64 a, gint64 b, gboolean want_max)
{
  const Row *r = row_before (a);
  gint64 m = r ? r->allocated : 0;

  for (guint i = 0; i < rows->len; i++)
    {
      const Row *x = &g_array_index (rows, Row, i);

      if (x->t >= a && x->t < b)
        m = want_max ? MAX (m, x->allocated) : MIN (m, x->allocated);
    }
  return m;
}

/* Exact max of allocated over [a, b). */
static gint64
ref_max (gint64 a, gint64 b)
{
  return ref_extreme (a, b, TRUE);
}

/* Exact min of allocated over [a, b). */
static gint64
ref_min (gint64 a, gint64 b)
{
  return ref_extreme (a, b, FALSE);
}

static gint64
ref_last (gint64 b)
{
  const Row *r = row_before (b);

  return r ? r->allocated : 0;
}

static void
test_levels_exist (void)
{
  g_autoptr (GError) error = NULL;
  sqlite3 *db;
  sqlite3_stmt *stmt;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (
      sqlite3_prepare_v2 (db, "SELECT count(DISTINCT shift) FROM series_level", -1, &stmt, NULL),
      ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), >=, 3);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

/* Zoomed in (a few events per bucket): raw rows, exact. */
static void
test_raw_exact (void)
{
  g_autoptr (GError) error = NULL;
  gint64 mid = g_array_index (rows, Row, rows->len / 2).t;
  gint64 from = mid - 20000, to = mid + 20000;
  g_autoptr (GArray) buckets = vs_timeline_query (trace, dev, 0, from, to, 1000, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (buckets->len, ==, 1000);
  for (guint i = 0; i < buckets->len; i++)
    {
      const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);

      g_assert_cmpint (b->from_ns, ==, from + 40 * (gint64)i);
      g_assert_cmpint (b->to_ns, ==, b->from_ns + 40);
      g_assert_true (b->known);
      g_assert_cmpint (b->max_allocated, ==, ref_max (b->from_ns, b->to_ns));
      g_assert_cmpint (b->min_allocated, ==, ref_min (b->from_ns, b->to_ns));
      g_assert_cmpint (b->last_allocated, ==, ref_last (b->to_ns));
      /* Plain allocations only: reserved is allocated. */
      g_assert_cmpint (b->max_reserved, ==, b->max_allocated);
    }
}

/* Zoomed out: summary levels; a change may move to a neighbouring bucket
 * by at most 1/8 of a bucket, and the overall extremes are exact. */
static void
test_levels_bounded (void)
{
  g_autoptr (GError) error = NULL;
  gint64 end = vs_trace_get_duration_ns (trace) + 1;
  g_autoptr (GArray) buckets = vs_timeline_query (trace, dev, 0, 0, end, 1000, &error);
  gint64 peak = 0;
  VsSummary s;

  g_assert_no_error (error);
  g_assert_true (vs_summary_get (trace, dev, 0, &s, &error));
  for (guint i = 0; i < buckets->len; i++)
    {
      const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);
      gint64 slack = (b->to_ns - b->from_ns) / 8;

      g_assert_cmpint (b->max_allocated, <=, ref_max (b->from_ns - slack, b->to_ns + slack));
      g_assert_cmpint (b->max_allocated, >=, ref_max (b->from_ns + slack, b->to_ns - slack));
      g_assert_cmpint (b->min_allocated, >=, ref_min (b->from_ns - slack, b->to_ns + slack));
      g_assert_cmpint (b->min_allocated, <=, ref_min (b->from_ns + slack, b->to_ns - slack));
      peak = MAX (peak, b->max_allocated);
    }
  g_assert_cmpint (peak, ==, s.peak_allocated_bytes);
  g_assert_cmpint (g_array_index (buckets, VsTimelineBucket, 999).last_allocated, ==,
                   s.final_allocated_bytes);
}

/* Interval extremes are exact at any length, mixing levels and raw rows. */
static void
test_extremes_exact (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  gint64 end = vs_trace_get_duration_ns (trace);

  for (int i = 0; i < 200; i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 a = g_rand_int_range (rand, 0, (gint32)MIN (end, G_MAXINT32));
      gint64 len = (gint64)1 << g_rand_int_range (rand, 0, 31);
      gint64 b = MIN (a + len, end);
      VsTimelineBucket x;

      g_assert_true (vs_series_extremes (trace, dev, 0, a, b, &x, &error));
      g_assert_no_error (error);
      g_assert_cmpint (x.max_allocated, ==, ref_max (a, b + 1));
      g_assert_cmpint (x.min_allocated, ==, ref_min (a, b + 1));
      g_assert_cmpint (x.last_allocated, ==, ref_last (b + 1));
    }
}

/* Opens a vs_fixture_allocator_random trace; *alloc gets its allocator. */
static VsTrace *
open_allocator_fixture (const char *name, gboolean with_pinned, gint64 *alloc)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *file = g_build_filename (dir, name, NULL);
  char err[256];
  VsTrace *t;
  const GPtrArray *allocators;

  if (!vs_fixture_allocator_random (file, 20000, 9, with_pinned, err, sizeof err))
    g_error ("fixture: %s", err);
  t = vs_trace_open (file, &error);
  g_assert_no_error (error);
  allocators = vs_trace_get_allocators (t);
  g_assert_cmpuint (allocators->len, ==, 1);
  *alloc = ((const VsAllocatorInfo *)g_ptr_array_index (allocators, 0))->id;
  return t;
}

/* Rows stored for (device, allocator) in series and series_level, and the
 * summary's series_allocator_id. */
static void
stored_series (VsTrace *t, gint64 alloc, gint64 *rows_out, gint64 *series_id)
{
  sqlite3 *db;
  sqlite3_stmt *stmt;

  g_assert_cmpint (sqlite3_open_v2 (vs_trace_get_path (t), &db, SQLITE_OPEN_READONLY, NULL), ==,
                   SQLITE_OK);
  g_assert_cmpint (
      sqlite3_prepare_v2 (db,
                          "SELECT (SELECT count(*) FROM series WHERE allocator_id = ?1)"
                          " + (SELECT count(*) FROM series_level WHERE allocator_id = ?1),"
                          " (SELECT series_allocator_id FROM summary WHERE allocator_id = ?1)",
                          -1, &stmt, NULL),
      ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, alloc);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  *rows_out = sqlite3_column_int64 (stmt, 0);
  *series_id = sqlite3_column_int64 (stmt, 1);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

static void
assert_buckets_equal (GArray *x, GArray *y, gboolean device_too)
{
  g_assert_cmpuint (x->len, ==, y->len);
  for (guint i = 0; i < x->len; i++)
    {
      const VsTimelineBucket *a = &g_array_index (x, VsTimelineBucket, i);
      const VsTimelineBucket *b = &g_array_index (y, VsTimelineBucket, i);

      g_assert_cmpint (a->known, ==, b->known);
      g_assert_cmpint (a->min_reserved, ==, b->min_reserved);
      g_assert_cmpint (a->max_reserved, ==, b->max_reserved);
      g_assert_cmpint (a->last_reserved, ==, b->last_reserved);
      g_assert_cmpint (a->min_allocated, ==, b->min_allocated);
      g_assert_cmpint (a->max_allocated, ==, b->max_allocated);
      g_assert_cmpint (a->last_allocated, ==, b->last_allocated);
      g_assert_cmpint (a->n_changes, ==, b->n_changes);
      if (device_too)
        g_assert_cmpint (a->max_device, ==, b->max_device);
    }
}

/* A device that saw one allocator's events only stores that allocator's
 * series once, as `all`'s; reading the allocator gives exactly what the
 * same events give when its series is stored on its own (a pinned buffer
 * on the device forces that), without `all`'s device bytes. */
static void
test_shared_allocator_series (void)
{
  gint64 shared_alloc, own_alloc, n, id;
  VsTrace *shared = open_allocator_fixture ("shared.db", FALSE, &shared_alloc);
  VsTrace *own = open_allocator_fixture ("own.db", TRUE, &own_alloc);
  gint64 sdev = vs_trace_find_device_by_idx (shared, 0)->id;
  gint64 odev = vs_trace_find_device_by_idx (own, 0)->id;
  gint64 end = vs_trace_get_duration_ns (shared);
  gint64 windows[][2] = {
    { 0, end }, { end / 3, end / 3 + end / 50 }, { end / 2, end / 2 + 30000 }, { 0, end / 7 }
  };
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);

  stored_series (shared, shared_alloc, &n, &id);
  g_assert_cmpint (n, ==, 0);
  g_assert_cmpint (id, ==, 0);
  stored_series (own, own_alloc, &n, &id);
  g_assert_cmpint (n, >, 20000 / 2);
  g_assert_cmpint (id, ==, own_alloc);

  for (guint w = 0; w < G_N_ELEMENTS (windows); w++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) a = vs_timeline_query (shared, sdev, shared_alloc, windows[w][0],
                                                windows[w][1], 500, &error);
      g_autoptr (GArray) b
          = vs_timeline_query (own, odev, own_alloc, windows[w][0], windows[w][1], 500, &error);
      g_autoptr (GArray) all
          = vs_timeline_query (shared, sdev, 0, windows[w][0], windows[w][1], 500, &error);

      g_assert_no_error (error);
      assert_buckets_equal (a, b, TRUE);
      assert_buckets_equal (a, all, FALSE);
      for (guint i = 0; i < a->len; i++)
        {
          g_assert_cmpint (g_array_index (a, VsTimelineBucket, i).max_device, ==, VS_UNKNOWN);
          if (g_array_index (all, VsTimelineBucket, i).known)
            g_assert_cmpint (g_array_index (all, VsTimelineBucket, i).max_device, !=, VS_UNKNOWN);
        }
    }
  for (int i = 0; i < 300; i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 t = g_rand_int_range (rand, 0, (gint32)MIN (end, G_MAXINT32));
      gint64 len = (gint64)1 << g_rand_int_range (rand, 0, 26);
      VsSeriesPoint p, q;
      VsTimelineBucket x, y;

      g_assert_true (vs_series_at_time (shared, sdev, shared_alloc, t, &p, &error));
      g_assert_true (vs_series_at_time (own, odev, own_alloc, t, &q, &error));
      g_assert_no_error (error);
      g_assert_cmpint (p.time_ns, ==, q.time_ns);
      g_assert_cmpint (p.reserved_bytes, ==, q.reserved_bytes);
      g_assert_cmpint (p.allocated_bytes, ==, q.allocated_bytes);
      g_assert_cmpint (p.device_bytes, ==, VS_UNKNOWN);
      g_assert_cmpint (q.device_bytes, ==, VS_UNKNOWN);
      g_assert_true (vs_series_extremes (shared, sdev, shared_alloc, t, t + len, &x, &error));
      g_assert_true (vs_series_extremes (own, odev, own_alloc, t, t + len, &y, &error));
      g_assert_no_error (error);
      g_assert_cmpint (x.max_allocated, ==, y.max_allocated);
      g_assert_cmpint (x.min_reserved, ==, y.min_reserved);
      g_assert_cmpint (x.last_allocated, ==, y.last_allocated);
      if (i % 10 == 0)
        {
          g_assert_true (
              vs_series_peak_between (shared, sdev, shared_alloc, t, t + len, &p, &error));
          g_assert_true (vs_series_peak_between (own, odev, own_alloc, t, t + len, &q, &error));
          g_assert_no_error (error);
          g_assert_cmpint (p.time_ns, ==, q.time_ns);
          g_assert_cmpint (p.allocated_bytes, ==, q.allocated_bytes);
        }
    }
  g_unlink (vs_trace_get_path (shared));
  g_unlink (vs_trace_get_path (own));
  vs_trace_free (shared);
  vs_trace_free (own);
}

static void
test_bad_arguments (void)
{
  g_autoptr (GError) error = NULL;

  g_assert_null (vs_timeline_query (trace, dev, 0, 10, 10, 5, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (vs_timeline_query (trace, dev, 0, 0, 10, 0, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (vs_timeline_query (trace, 9999, 0, 0, 10, 5, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  sqlite3 *db;
  sqlite3_stmt *stmt;
  char err[256];
  int rc;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("vs-timeline-XXXXXX", NULL);
  path = g_build_filename (dir, "random.db", NULL);
  if (!vs_fixture_random (path, 100000, 5, err, sizeof err))
    g_error ("fixture: %s", err);
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  dev = vs_trace_find_device_by_idx (trace, 0)->id;

  rows = g_array_new (FALSE, FALSE, sizeof (Row));
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT ts - ?1, allocated_bytes, reserved_bytes FROM series"
                                       " WHERE device_id = ?2 AND allocator_id = 0 ORDER BY seq",
                                       -1, &stmt, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, VS_FIXTURE_T0);
  sqlite3_bind_int64 (stmt, 2, dev);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Row r = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                sqlite3_column_int64 (stmt, 2) };

      g_array_append_val (rows, r);
    }
  g_assert_cmpint (rc, ==, SQLITE_DONE);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  g_assert_cmpuint (rows->len, ==, 100000);

  g_test_add_func ("/timeline/levels-exist", test_levels_exist);
  g_test_add_func ("/timeline/raw-exact", test_raw_exact);
  g_test_add_func ("/timeline/levels-bounded", test_levels_bounded);
  g_test_add_func ("/timeline/extremes-exact", test_extremes_exact);
  g_test_add_func ("/timeline/bad-arguments", test_bad_arguments);
  g_test_add_func ("/timeline/shared-allocator-series", test_shared_allocator_series);
  rc = g_test_run ();

  vs_trace_free (trace);
  g_array_unref (rows);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  return rc;
}
