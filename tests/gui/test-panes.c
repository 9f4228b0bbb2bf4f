/* SPDX-License-Identifier: MIT */
/* test-panes.c — the panes show exactly what the analyzer computed.
 *
 * Needs a display (meson runs it under xvfb-run).  Loads a trace through
 * VsDocument as the window does, asks for the state at the peak and checks
 * each pane against the analyzer's own numbers: the allocations listed sum
 * to the summary's peak allocated bytes, the attribution tree's top level
 * is the analyzer tree's, the chart's buckets reach the peak, the failed
 * allocations pane has one row per failure, and a selected range keeps
 * only the blocks allocated inside it.
 *
 * The traces are made here as users make them: `vramscope import` of the
 * committed PyTorch snapshots and the hand-built two-device fixture, plus
 * the traces committed under tests/data/ (environment as for
 * test-window.c: VS_CLI, VS_MAKE_FIXTURE, VS_SNAPSHOTS, VS_DATA).
 */
#include <adwaita.h>

#include "vs-allocations-pane.h"
#include "vs-attribution-pane.h"
#include "vs-document.h"
#include "vs-oom-pane.h"
#include "vs-test-wait.h"
#include "vs-test-window.h"

#include <glib/gstdio.h>

/* How long a query may take. */
#define WAIT_US (60 * G_USEC_PER_SEC)

static VsInstant *
peak_instant (VsDocument *doc, gint64 device_id)
{
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;
  VsInstant *in;

  vs_document_query_instant_async (doc, device_id, -1, -1, -1, NULL, vs_test_keep_result, &result);
  in = vs_document_query_instant_finish (doc, vs_test_wait_result (&result, WAIT_US), &error);
  g_assert_no_error (error);
  return in;
}

static void
test_panes_at_peak (gconstpointer path)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (path);
  GPtrArray *devices = vs_document_get_devices (doc);

  g_assert_cmpuint (devices->len, >, 0);
  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *dev = g_ptr_array_index (devices, i);
      g_autoptr (VsInstant) in = NULL;
      VsAttributionPane *attr = NULL;
      VsAllocationsPane *allocs = NULL;
      gint64 sum = 0;

      /* Nothing allocated outside a framework's pool (CuPy's failed run):
       * no peak to open at. */
      if (dev->summary.peak_allocated_seq == VS_UNKNOWN)
        {
          g_assert_cmpint (dev->summary.peak_allocated_bytes, ==, 0);
          continue;
        }
      in = peak_instant (doc, dev->id);
      attr = g_object_ref_sink (g_object_new (VS_TYPE_ATTRIBUTION_PANE, NULL));
      allocs = g_object_ref_sink (g_object_new (VS_TYPE_ALLOCATIONS_PANE, NULL));
      g_assert_cmpint (in->time_ns, ==, dev->summary.peak_allocated_time_ns);
      g_assert_cmpint (in->point.allocated_bytes, ==, dev->summary.peak_allocated_bytes);
      for (guint b = 0; b < in->blocks->len; b++)
        sum += g_array_index (in->blocks, VsBlock, b).bytes;
      /* The analyzer's contract: live blocks at the peak sum to it. */
      g_assert_cmpint (sum, ==, dev->summary.peak_allocated_bytes);

      vs_allocations_pane_set_instant (allocs, in);
      g_assert_cmpuint (vs_allocations_pane_get_n_shown (allocs), ==, in->blocks->len);
      vs_attribution_pane_set_instant (attr, in);
      g_assert_cmpuint (vs_attribution_pane_get_n_roots (attr), ==,
                        in->bottom_up_user->children ? in->bottom_up_user->children->len : 0);
      g_assert_cmpint (in->bottom_up->total_bytes, ==, sum);
      g_assert_cmpint (in->top_down->total_bytes, ==, sum);
      g_object_unref (attr);
      g_object_unref (allocs);
    }
}

/* A range selected on the timeline is shown at its own peak of allocated
 * memory (the analyzer's exact maximum over the range), listing only the
 * blocks allocated inside the range that are live at that peak. */
static void
test_range (gconstpointer path)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (path);
  g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
  GPtrArray *devices = vs_document_get_devices (doc);
  gint64 duration = vs_document_get_duration (doc);

  g_assert_nonnull (trace);
  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *dev = g_ptr_array_index (devices, i);
      g_autoptr (GAsyncResult) result = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (VsInstant) in = NULL;
      g_autoptr (GArray) live = NULL;
      VsTimelineBucket ext;
      gint64 a = duration / 4, b = 3 * duration / 4;
      guint inside = 0;

      vs_document_query_instant_async (doc, dev->id, b, a, b, NULL, vs_test_keep_result, &result);
      in = vs_document_query_instant_finish (doc, vs_test_wait_result (&result, WAIT_US), &error);
      g_assert_no_error (error);
      g_assert_true (vs_series_extremes (trace, dev->id, 0, a, b, &ext, &error));
      g_assert_no_error (error);

      g_assert_cmpint (in->time_ns, >=, a);
      g_assert_cmpint (in->time_ns, <=, b);
      if (ext.known)
        g_assert_cmpint (in->point.allocated_bytes, ==, ext.max_allocated);
      live = vs_live_blocks (trace, dev->id, 0, in->seq, &error);
      g_assert_no_error (error);
      for (guint k = 0; k < live->len; k++)
        {
          const VsBlock *blk = &g_array_index (live, VsBlock, k);
          if (blk->alloc_time_ns != VS_UNKNOWN && blk->alloc_time_ns >= a && blk->alloc_time_ns < b)
            inside++;
        }
      g_assert_cmpuint (in->blocks->len, ==, inside);
      for (guint k = 0; k < in->blocks->len; k++)
        {
          const VsBlock *blk = &g_array_index (in->blocks, VsBlock, k);
          g_assert_cmpint (blk->alloc_time_ns, >=, a);
          g_assert_cmpint (blk->alloc_time_ns, <, b);
        }
    }
}

static void
test_chart_reaches_peak (gconstpointer path)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (path);
  GPtrArray *devices = vs_document_get_devices (doc);
  gint64 duration = MAX (1, vs_document_get_duration (doc));

  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *dev = g_ptr_array_index (devices, i);
      g_autoptr (GAsyncResult) result = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (VsChartData) d = NULL;
      gint64 max_a = 0, max_r = 0;

      vs_document_query_chart_async (doc, dev->id, 0, duration + 1, 700, NULL, vs_test_keep_result,
                                     &result);
      d = vs_document_query_chart_finish (doc, vs_test_wait_result (&result, WAIT_US), &error);
      g_assert_no_error (error);
      g_assert_cmpuint (d->n_buckets, ==, 700);
      for (guint b = 0; b < d->n_buckets; b++)
        if (d->buckets[b].has_data)
          {
            max_a = MAX (max_a, d->buckets[b].max_allocated);
            max_r = MAX (max_r, d->buckets[b].max_reserved);
          }
      g_assert_cmpint (max_a, ==, dev->summary.peak_allocated_bytes);
      g_assert_cmpint (max_r, ==, dev->summary.peak_reserved_bytes);
    }
}

static void
test_oom_rows (gconstpointer path)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (path);
  VsOomPane *pane = g_object_ref_sink (g_object_new (VS_TYPE_OOM_PANE, NULL));
  GPtrArray *devices = vs_document_get_devices (doc);
  gint64 failed = 0;

  for (guint i = 0; i < devices->len; i++)
    failed += ((VsDocumentDevice *)g_ptr_array_index (devices, i))->summary.failed_alloc_count;
  vs_oom_pane_set_document (pane, doc);
  g_assert_cmpuint (vs_oom_pane_get_n_rows (pane), ==, vs_document_get_ooms (doc)->len);
  /* Every failure counted in the summaries is listed (the list may hold
   * device-level failures the summaries do not count as OOMs) — in a
   * windowed trace, which counts the whole run's but keeps the first and
   * last three of each device (and those in its detail), at least those. */
  {
    g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
    VsWindowedInfo w;
    g_assert_nonnull (trace);
    g_assert_true (vs_windowed_info (trace, &w, NULL));
    if (w.windowed)
      failed = MIN (failed, (gint64)(6 * devices->len));
  }
  g_assert_cmpuint (vs_oom_pane_get_n_rows (pane), >=, (guint)failed);
  g_object_unref (pane);
}

static void
add_tests (const char *name, const char *path)
{
  g_autofree char *a = g_strdup_printf ("/panes/at-peak/%s", name);
  g_autofree char *b = g_strdup_printf ("/panes/chart-reaches-peak/%s", name);
  g_autofree char *c = g_strdup_printf ("/panes/oom-rows/%s", name);
  g_autofree char *d = g_strdup_printf ("/panes/range/%s", name);
  char *p = g_strdup (path); /* lives as long as the process */

  g_test_add_data_func (a, p, test_panes_at_peak);
  g_test_add_data_func (b, p, test_chart_reaches_peak);
  g_test_add_data_func (c, p, test_oom_rows);
  g_test_add_data_func (d, p, test_range);
}

/* Runs argv (stdout discarded); aborts the test program on failure. */
static void
make (const char *const *argv)
{
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                     &status, &error)
      || !g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[0], error ? error->message : err);
}

static void
test_readable_ok (gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (data, &error);

  g_assert_no_error (error);
}

static void
test_readable_failed (gconstpointer data)
{
  g_test_message ("`vramscope report %s peak` failed", (const char *)data);
  g_test_fail ();
}

int
main (int argc, char **argv)
{
  const char *snapshots[] = { "oom", "fragmentation", "train" };
  const char *fixture = g_getenv ("VS_MAKE_FIXTURE");
  g_autoptr (GError) error = NULL;
  g_autofree char *tmpdir = NULL;
  g_autoptr (GDir) dir = NULL;
  const char *entry;
  int status;

  g_test_init (&argc, &argv, NULL);
  adw_init ();
  tmpdir = g_dir_make_tmp ("vs-panes-XXXXXX", &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (snapshots); i++)
    {
      g_autofree char *pickle
          = g_strdup_printf ("%s/%s.pickle", g_getenv ("VS_SNAPSHOTS"), snapshots[i]);
      g_autofree char *db = g_strdup_printf ("%s/%s.db", tmpdir, snapshots[i]);
      const char *cmd[] = { g_getenv ("VS_CLI"), "import", pickle, "-o", db, NULL };
      make (cmd);
      add_tests (snapshots[i], db);
    }
  if (fixture != NULL && *fixture != '\0')
    {
      g_autofree char *db = g_build_filename (tmpdir, "full.db", NULL);
      const char *cmd[] = { fixture, "full", db, NULL };
      make (cmd);
      add_tests ("full", db);
    }
  dir = g_dir_open (g_getenv ("VS_DATA"), 0, NULL);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (entry, ".db"))
      {
        g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), entry, NULL);
        g_autofree char *name = g_strndup (entry, strlen (entry) - 3);
        const char *peak[] = { g_getenv ("VS_CLI"), "report", path, "peak", NULL };
        int st;

        /* Every committed trace must be readable: one the CLI cannot
         * report on is a bug, and fails here. */
        g_autofree char *test = g_strdup_printf ("/panes/committed-readable/%s", name);
        gboolean ok = g_spawn_sync (NULL, (char **)peak, NULL,
                                    G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                                    NULL, NULL, NULL, &st, NULL)
                      && g_spawn_check_wait_status (st, NULL);

        g_test_add_data_func_full (test, g_strdup (path),
                                   ok ? test_readable_ok : test_readable_failed, g_free);
        if (ok)
          add_tests (name, path);
      }
  /* The JAX and CuPy runs (tests/data/frameworks): the charts, the
   * instant and a range's peak count their pools' segments as reserved
   * only, as summary does. */
  {
    static const char *const frameworks[]
        = { "jax-healthy", "jax-healthy-grow", "jax-oom", "cupy-healthy", "cupy-oom" };

    for (guint i = 0; i < G_N_ELEMENTS (frameworks); i++)
      {
        g_autofree char *path
            = g_strdup_printf ("%s/frameworks/%s.db", g_getenv ("VS_DATA"), frameworks[i]);
        g_autofree char *name = g_strdup_printf ("frameworks/%s", frameworks[i]);

        add_tests (name, path);
      }
  }
  status = g_test_run ();

  g_clear_pointer (&dir, g_dir_close);
  dir = g_dir_open (tmpdir, 0, NULL);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmpdir, entry, NULL);
      g_remove (path);
    }
  g_rmdir (tmpdir);
  return status;
}
