/* SPDX-License-Identifier: MIT */
/* test-framework-pool-release.c — a framework pool that gives segments
 * back mid-run (CuPy's free_all_blocks) is followed down by every reader:
 * the pool's row and the device's `all` in the timeline's buckets at
 * every zoom (the viewer's charts, `report timeline`), the state at an
 * instant and at a step (the viewer's instant, `ranges`), the extremes
 * of an interval, summary's peaks and final figures, fragmentation after
 * the release and the blocks live at the peak (`report peak`).  On the
 * fixture of vs-test-pool-fixtures.c, seen from the device level (device
 * 0) and with the allocator level (device 1); every figure is the
 * fixture's own sum of its segments and blocks, worked out below.
 */
#include <glib.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-test-pool-fixtures.h"

#define MiB (G_GINT64_CONSTANT (1) << 20)

/* A step function: value v[i] from time t[i] on (0 before t[0]). */
typedef struct
{
  guint n;
  gint64 t[10], v[10];
} Steps;

/* The pool's segments: A taken at 100, B at 200, C at 400, B and C given
 * back at 500 and 510, D taken at 600. */
static const Steps pool_reserved
    = { 6, { 100, 200, 400, 500, 510, 600 }, { 64, 192, 448, 320, 64, 96 } };
/* all: the pool and the program's own 8 MiB from 300 to 700. */
static const Steps all_reserved
    = { 8, { 100, 200, 300, 400, 500, 510, 600, 700 }, { 64, 192, 200, 456, 328, 72, 104, 96 } };
/* Seen from below, all's allocated memory is the program's own. */
static const Steps all_allocated_below = { 2, { 300, 700 }, { 8, 0 } };
/* With the allocator level: blocks of 16 MiB from 150 and 100 MiB from
 * 420 to 480. */
static const Steps all_allocated_level
    = { 5, { 150, 300, 420, 480, 700 }, { 16, 24, 124, 24, 16 } };
static const Steps pool_allocated_level = { 3, { 150, 420, 480 }, { 16, 116, 16 } };

static char *dir;
static VsTrace *trace;

/* The value of s at time t (changes at t included), in bytes. */
static gint64
value_at (const Steps *s, gint64 t)
{
  gint64 v = 0;

  for (guint i = 0; i < s->n && s->t[i] <= t; i++)
    v = s->v[i];
  return v * MiB;
}

/* min, max and last of s over [a, b): the value entering it and every
 * change inside. */
static void
range_of (const Steps *s, gint64 a, gint64 b, gint64 *min, gint64 *max, gint64 *last)
{
  *min = *max = value_at (s, a - 1);
  for (guint i = 0; i < s->n; i++)
    if (s->t[i] >= a && s->t[i] < b)
      {
        *min = MIN (*min, s->v[i] * MiB);
        *max = MAX (*max, s->v[i] * MiB);
      }
  *last = value_at (s, b - 1);
}

static gint64
device_id (guint idx)
{
  return ((const VsDeviceInfo *)g_ptr_array_index (vs_trace_get_devices (trace), idx))->id;
}

static gint64
pool_of (gint64 device)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device && g_strcmp0 (a->name, "cupy") == 0)
        return a->id;
    }
  g_assert_not_reached ();
  return 0;
}

/* The buckets of (device, allocator) over [0, 800) at several zooms
 * against the step functions (allocated NULL: unknown in every bucket). */
static void
check_buckets (gint64 device, gint64 allocator, const Steps *reserved, const Steps *allocated)
{
  static const guint zooms[] = { 1, 3, 7, 16, 80, 800 };

  for (guint z = 0; z < G_N_ELEMENTS (zooms); z++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) buckets
          = vs_timeline_query (trace, device, allocator, 0, 800, zooms[z], &error);

      g_assert_no_error (error);
      g_assert_cmpuint (buckets->len, ==, zooms[z]);
      for (guint i = 0; i < buckets->len; i++)
        {
          const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);
          gint64 min, max, last;

          if (!b->known)
            {
              /* Nothing yet: only before the first change. */
              g_assert_cmpint (b->to_ns, <=, 100);
              continue;
            }
          range_of (reserved, b->from_ns, b->to_ns, &min, &max, &last);
          g_assert_cmpint (b->min_reserved, ==, min);
          g_assert_cmpint (b->max_reserved, ==, max);
          g_assert_cmpint (b->last_reserved, ==, last);
          if (allocated == NULL)
            {
              g_assert_cmpint (b->max_allocated, ==, VS_UNKNOWN);
              continue;
            }
          range_of (allocated, b->from_ns, b->to_ns, &min, &max, &last);
          g_assert_cmpint (b->min_allocated, ==, min);
          g_assert_cmpint (b->max_allocated, ==, max);
          g_assert_cmpint (b->last_allocated, ==, last);
        }
    }
}

/* The state at instants before, during and after the release, by time
 * and by its step; and the extremes of intervals across it. */
static void
check_points (gint64 device, gint64 allocator, const Steps *reserved, const Steps *allocated)
{
  static const gint64 times[] = { 150, 250, 450, 505, 520, 650, 750 };
  static const gint64 spans[][2] = { { 450, 650 }, { 505, 520 }, { 0, 800 }, { 515, 590 } };

  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    {
      g_autoptr (GError) error = NULL;
      VsSeriesPoint at, again;

      g_assert_true (vs_series_at_time (trace, device, allocator, times[i], &at, &error));
      g_assert_no_error (error);
      g_assert_cmpint (at.reserved_bytes, ==, value_at (reserved, times[i]));
      g_assert_cmpint (at.allocated_bytes, ==,
                       allocated != NULL ? value_at (allocated, times[i]) : VS_UNKNOWN);
      /* The same state at its step. */
      g_assert_cmpint (at.seq, >, 0);
      g_assert_true (vs_series_at_seq (trace, device, allocator, at.seq, &again, &error));
      g_assert_no_error (error);
      g_assert_cmpint (again.reserved_bytes, ==, at.reserved_bytes);
      g_assert_cmpint (again.allocated_bytes, ==, at.allocated_bytes);
    }
  for (guint i = 0; i < G_N_ELEMENTS (spans); i++)
    {
      g_autoptr (GError) error = NULL;
      VsTimelineBucket ext;
      gint64 min, max, last;

      g_assert_true (
          vs_series_extremes (trace, device, allocator, spans[i][0], spans[i][1], &ext, &error));
      g_assert_no_error (error);
      range_of (reserved, spans[i][0], spans[i][1] + 1, &min, &max, &last);
      g_assert_cmpint (ext.min_reserved, ==, min);
      g_assert_cmpint (ext.max_reserved, ==, max);
      g_assert_cmpint (ext.last_reserved, ==, last);
      if (allocated != NULL)
        {
          range_of (allocated, spans[i][0], spans[i][1] + 1, &min, &max, &last);
          g_assert_cmpint (ext.max_allocated, ==, max);
          g_assert_cmpint (ext.last_allocated, ==, last);
        }
    }
}

/* summary, fragmentation after the release and the blocks at the peak. */
static void
check_figures (gint64 device, gint64 pool, gboolean level)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) live = NULL;
  const Steps *allocated = level ? &all_allocated_level : &all_allocated_below;
  VsSummary all, p;
  VsSeriesPoint after;
  VsFragmentation f;
  gint64 sum = 0;

  g_assert_true (vs_summary_get (trace, device, 0, &all, &error));
  g_assert_true (vs_summary_get (trace, device, pool, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpint (p.peak_reserved_bytes, ==, 448 * MiB);
  g_assert_cmpint (p.peak_reserved_time_ns, ==, 400);
  g_assert_cmpint (p.final_reserved_bytes, ==, 96 * MiB);
  g_assert_cmpint (all.peak_reserved_bytes, ==, 456 * MiB);
  g_assert_cmpint (all.peak_reserved_time_ns, ==, 400);
  g_assert_cmpint (all.final_reserved_bytes, ==, 96 * MiB);
  g_assert_cmpint (all.peak_device_bytes, ==, 456 * MiB);
  g_assert_cmpint (all.peak_allocated_bytes, ==, level ? 124 * MiB : 8 * MiB);
  g_assert_cmpint (all.peak_allocated_time_ns, ==, level ? 420 : 300);
  g_assert_cmpint (all.final_allocated_bytes, ==, value_at (allocated, 800));
  g_assert_cmpint (p.peak_allocated_bytes, ==, level ? 116 * MiB : VS_UNKNOWN);
  g_assert_cmpint (p.final_allocated_bytes, ==, level ? 16 * MiB : VS_UNKNOWN);

  /* After the release (520): the pool's one segment left, and all's. */
  g_assert_true (vs_series_at_time (trace, device, 0, 520, &after, &error));
  g_assert_true (vs_fragmentation_at (trace, device, pool, after.seq, &f, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f.reserved_bytes, ==, 64 * MiB);
  g_assert_cmpint (f.allocated_bytes, ==, level ? 16 * MiB : VS_UNKNOWN);
  g_assert_true (vs_fragmentation_at (trace, device, 0, after.seq, &f, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f.reserved_bytes, ==, 72 * MiB);
  g_assert_cmpint (f.allocated_bytes, ==, value_at (allocated, 520));
  g_assert_cmpint (f.free_bytes, ==, f.reserved_bytes - f.allocated_bytes);

  /* `report peak`: the blocks live at all's peak are its allocated
   * memory, the pool's segments none of them. */
  live = vs_live_blocks (trace, device, 0, all.peak_allocated_seq, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < live->len; i++)
    sum += g_array_index (live, VsBlock, i).bytes;
  g_assert_cmpint (sum, ==, all.peak_allocated_bytes);
}

static void
test_below (void)
{
  gint64 device = device_id (0), pool = pool_of (device);

  g_assert_cmpint (pool, <, 0); /* a synthetic id: the pool seen from below */
  check_buckets (device, pool, &pool_reserved, NULL);
  check_buckets (device, 0, &all_reserved, &all_allocated_below);
  check_points (device, pool, &pool_reserved, NULL);
  check_points (device, 0, &all_reserved, &all_allocated_below);
  check_figures (device, pool, FALSE);
}

static void
test_level (void)
{
  gint64 device = device_id (1), pool = pool_of (device);

  g_assert_cmpint (pool, >, 0); /* the trace's own allocator */
  check_buckets (device, pool, &pool_reserved, &pool_allocated_level);
  check_buckets (device, 0, &all_reserved, &all_allocated_level);
  check_points (device, pool, &pool_reserved, &pool_allocated_level);
  check_points (device, 0, &all_reserved, &all_allocated_level);
  check_figures (device, pool, TRUE);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  char err[512] = "";
  int rc;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("vs-pool-release-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "pool-release.db", NULL);
  if (!vs_fixture_pool_release (path, err, sizeof err))
    g_error ("fixture: %s", err);
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  g_test_add_func ("/pool-release/from-below", test_below);
  g_test_add_func ("/pool-release/allocator-level", test_level);
  rc = g_test_run ();
  vs_trace_free (trace);
  g_unlink (path);
  g_rmdir (dir);
  g_free (dir);
  return rc;
}
