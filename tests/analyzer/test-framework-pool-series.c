/* SPDX-License-Identifier: MIT */
/* test-framework-pool-series.c — a device holding a framework pool seen
 * only from the device level (XLA's BFC allocator, CuPy's memory pool:
 * the JAX and CuPy runs recorded on a GPU, tests/data/frameworks) has one
 * allocated figure for `all` in every reader: the timeline's buckets the
 * viewer's charts draw, the extremes and the peak inside an interval the
 * viewer's overview and ranges read, the state at a step (growth,
 * fragmentation, the viewer's instant) all give the allocated memory
 * `summary` gives (the timeline's walk over the pools' bytes, at every
 * step what they held) — the pool's segments reserved, never allocated.  The
 * traces of PyTorch keep what their series rows hold.
 */
#include <glib.h>

#include "vs-analyzer.h"
#include "vs-framework-pools.h"
#include "vs-pool-series.h"

static VsTrace *
open_data (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", name, NULL);
  g_autoptr (GError) error = NULL;
  VsTrace *trace = vs_trace_open (path, &error);

  g_assert_no_error (error);
  g_assert_nonnull (trace);
  return trace;
}

static gint64
first_device (VsTrace *trace)
{
  const VsDeviceInfo *d = g_ptr_array_index (vs_trace_get_devices (trace), 0);

  return d->id;
}

/* The readers of (device, all) against its summary row. */
static void
check_agree (VsTrace *trace)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) buckets = NULL;
  gint64 device = first_device (trace), end = vs_trace_get_duration_ns (trace);
  gint64 top = G_MININT64;
  VsTimelineBucket ext;
  VsSeriesPoint at;
  VsSummary s;

  g_assert_true (vs_summary_get (trace, device, 0, &s, &error));
  g_assert_no_error (error);

  /* The charts: every zoom's buckets top out at summary's peak. */
  for (guint n = 1; n <= 1000; n *= 10)
    {
      buckets = vs_timeline_query (trace, device, 0, 0, end + 1, n, &error);
      g_assert_no_error (error);
      top = G_MININT64;
      for (guint i = 0; i < buckets->len; i++)
        {
          const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);

          if (b->known)
            top = MAX (top, b->max_allocated);
        }
      g_assert_cmpint (top, ==, s.peak_allocated_bytes);
      g_clear_pointer (&buckets, g_array_unref);
    }

  /* The extremes over the whole run and the peak inside it. */
  g_assert_true (vs_series_extremes (trace, device, 0, 0, end, &ext, &error));
  g_assert_no_error (error);
  g_assert_true (ext.known);
  g_assert_cmpint (ext.max_allocated, ==, s.peak_allocated_bytes);
  g_assert_true (vs_series_peak_between (trace, device, 0, 0, end, &at, &error));
  g_assert_no_error (error);
  g_assert_cmpint (at.allocated_bytes, ==, s.peak_allocated_bytes);
  /* Nothing allocated outside the pool (CuPy's failed run): no step is
   * the peak. */
  if (s.peak_allocated_seq != VS_UNKNOWN)
    {
      g_assert_cmpint (at.seq, ==, s.peak_allocated_seq);
      g_assert_cmpint (at.time_ns, ==, s.peak_allocated_time_ns);

      /* The state at the peak's step. */
      g_assert_true (vs_series_at_seq (trace, device, 0, s.peak_allocated_seq, &at, &error));
      g_assert_no_error (error);
      g_assert_cmpint (at.allocated_bytes, ==, s.peak_allocated_bytes);
    }
  else
    g_assert_cmpint (s.peak_allocated_bytes, ==, 0);

  /* And at the end. */
  g_assert_true (vs_series_at_time (trace, device, 0, end, &at, &error));
  g_assert_no_error (error);
  g_assert_cmpint (at.allocated_bytes, ==, s.final_allocated_bytes);
  g_assert_cmpint (ext.last_allocated, ==, s.final_allocated_bytes);
}

/* The pool's own row: reserved from its segments, allocated never its
 * size; the device's reserved still counts the pool. */
static void
check_pool_reserved (VsTrace *trace, const char *pool_name, gint64 pool_bytes)
{
  g_autoptr (GError) error = NULL;
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  gint64 device = first_device (trace), pool = 0;
  VsFragmentation f;
  VsSummary all, p;

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device && g_strcmp0 (a->name, pool_name) == 0)
        pool = a->id;
    }
  g_assert_cmpint (pool, <, 0);
  g_assert_true (vs_summary_get (trace, device, 0, &all, &error));
  g_assert_true (vs_summary_get (trace, device, pool, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpint (p.peak_reserved_bytes, ==, pool_bytes);
  g_assert_cmpint (all.peak_allocated_bytes, <, pool_bytes);
  g_assert_cmpint (all.peak_reserved_bytes, >=, pool_bytes);

  g_assert_true (vs_fragmentation_at (trace, device, pool, p.peak_reserved_seq, &f, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f.reserved_bytes, ==, pool_bytes);
  g_assert_cmpint (f.allocated_bytes, ==, VS_UNKNOWN);
  g_assert_cmpint (f.largest_free_bytes, ==, VS_UNKNOWN);

  /* `all` at the pool's peak: the pool's bytes are reserved and free of
   * anything known, so where they lie is unknown. */
  g_assert_true (vs_fragmentation_at (trace, device, 0, p.peak_reserved_seq, &f, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f.allocated_bytes, <=, all.peak_allocated_bytes);
  g_assert_cmpint (f.free_bytes, ==, f.reserved_bytes - f.allocated_bytes);
  g_assert_cmpint (f.free_bytes, >=, pool_bytes);
  g_assert_cmpint (f.largest_free_bytes, ==, VS_UNKNOWN);
}

/* The timeline's walk over the pools' bytes (vs_pool_held_after(), read
 * once per query) gives at every step what the pools held then, as
 * vs_framework_pools_reserved_at() sums it step by step. */
static void
check_held_walk (VsTrace *trace)
{
  g_auto (VsPoolHeld) held = { 0 };
  gint64 device = first_device (trace), last = vs_trace_get_last_seq (trace), changes = 0;
  gint64 before = 0;

  vs_pool_held_init (&held, trace, device);
  for (gint64 seq = 0; seq <= last; seq++)
    {
      gint64 h = vs_pool_held_after (&held, seq);

      g_assert_cmpint (h, ==, vs_framework_pools_reserved_at (trace, device, seq));
      changes += h != before;
      before = h;
    }
  /* It did walk the pool's segments. */
  g_assert_cmpint (changes, >, 0);
}

static void
test_framework (gconstpointer data)
{
  const char *const *c = data;
  g_autofree char *name = g_strdup_printf ("frameworks/%s.db", c[0]);
  g_autoptr (VsTrace) trace = open_data (name);

  check_agree (trace);
  check_pool_reserved (trace, c[1], g_ascii_strtoll (c[2], NULL, 10));
  check_held_walk (trace);
}

/* Traces without a pool: the readers agree as before. */
static void
test_plain (gconstpointer data)
{
  g_autoptr (VsTrace) trace = open_data (data);

  check_agree (trace);
}

int
main (int argc, char **argv)
{
  /* trace, pool, the pool's size: XLA's pool_bytes and CuPy's
   * total_bytes (each run's .json). */
  static const char *const cases[][3] = {
    { "jax-healthy", "xla", "63763906560" }, { "jax-healthy-grow", "xla", "1075838976" },
    { "jax-oom", "xla", "63763906560" },     { "cupy-healthy", "cupy", "268452352" },
    { "cupy-oom", "cupy", "1073741824" },
  };
  static const char *const plain[] = { "torch-train.db", "torch-allocator.db", "sample-leak.db" };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/framework-pool-series/%s", cases[i][0]);

      g_test_add_data_func (path, cases[i], test_framework);
    }
  for (guint i = 0; i < G_N_ELEMENTS (plain); i++)
    {
      g_autofree char *path = g_strdup_printf ("/framework-pool-series/plain/%s", plain[i]);

      g_test_add_data_func (path, plain[i], test_plain);
    }
  return g_test_run ();
}
