/* SPDX-License-Identifier: MIT */
/* test-whatif-plan.c — replays from one learning pass, run at once
 * (vs_whatif_plan_run), give what separate vs_whatif_run calls give: every
 * field and every segment change, on every GPU run of tests/data/whatif,
 * under the trace's own limit, a cap and no cap; a setting PyTorch refuses
 * is an error with nothing set. */
#include <glib/gstdio.h>

#include "vs-analyzer.h"

static const VsWhatifSetting settings[] = {
  { NULL, VS_UNKNOWN },
  { "expandable_segments:True", VS_UNKNOWN },
  { "garbage_collection_threshold:0.8", VS_UNKNOWN },
  { NULL, 1LL << 30 },
  { "", 6LL << 30 },
  { "max_split_size_mb:64", VS_UNKNOWN },
  { "expandable_segments:True", 85017493504LL },
};

static void
assert_same (const VsWhatifResult *got, const VsWhatifResult *want)
{
  g_assert_cmpstr (got->alloc_conf, ==, want->alloc_conf);
  g_assert_cmpint (got->device_id, ==, want->device_id);
  g_assert_cmpint (got->allocator_id, ==, want->allocator_id);
  g_assert_cmpint (got->limit_bytes, ==, want->limit_bytes);
  g_assert_cmpint (got->limit_derived, ==, want->limit_derived);
  g_assert_cmpint (got->peak_reserved_bytes, ==, want->peak_reserved_bytes);
  g_assert_cmpint (got->peak_allocated_bytes, ==, want->peak_allocated_bytes);
  g_assert_cmpint (got->final_reserved_bytes, ==, want->final_reserved_bytes);
  g_assert_cmpint (got->failed_alloc_count, ==, want->failed_alloc_count);
  g_assert_cmpint (got->first_failure_time_ns, ==, want->first_failure_time_ns);
  g_assert_cmpint (got->segment_alloc_count, ==, want->segment_alloc_count);
  g_assert_cmpint (got->segment_free_count, ==, want->segment_free_count);
  g_assert_cmpint (got->request_count, ==, want->request_count);
  g_assert_nonnull (got->segment_events);
  g_assert_cmpuint (got->segment_events->len, ==, want->segment_events->len);
  for (guint i = 0; i < got->segment_events->len; i++)
    {
      const VsWhatifSegmentEvent *a = &g_array_index (got->segment_events, VsWhatifSegmentEvent, i);
      const VsWhatifSegmentEvent *b
          = &g_array_index (want->segment_events, VsWhatifSegmentEvent, i);
      g_assert_cmpint (a->op, ==, b->op);
      g_assert_cmpint (a->address, ==, b->address);
      g_assert_cmpint (a->bytes, ==, b->bytes);
      g_assert_cmpint (a->time_ns, ==, b->time_ns);
    }
}

/* Checks every allocator of the run at path; returns the replays compared. */
static guint
check_run (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (path, &error);
  guint n = G_N_ELEMENTS (settings);
  guint compared = 0;

  g_assert_no_error (error);
  g_autoptr (GArray) ids = vs_whatif_allocators (trace);
  for (guint i = 0; i < ids->len; i++)
    {
      gint64 id = g_array_index (ids, gint64, i);
      g_autoptr (VsWhatifPlan) plan
          = vs_whatif_plan_new (trace, id, VS_WHATIF_SEGMENT_EVENTS, &error);
      VsWhatifResult all[G_N_ELEMENTS (settings)];

      g_assert_no_error (error);
      g_assert_true (vs_whatif_plan_run (plan, settings, n, all, &error));
      g_assert_no_error (error);
      for (guint k = 0; k < n; k++)
        {
          g_auto (VsWhatifResult) one = { 0 };
          g_assert_true (vs_whatif_run (trace, id, settings[k].alloc_conf, settings[k].limit_bytes,
                                        VS_WHATIF_SEGMENT_EVENTS, &one, &error));
          g_assert_no_error (error);
          assert_same (&all[k], &one);
          if (k == 0)
            g_assert_cmpint (vs_whatif_plan_limit (plan), ==, one.limit_bytes);
          vs_whatif_result_clear (&all[k]);
          compared++;
        }
      /* a setting PyTorch would refuse, among good ones: an error, nothing set */
      const VsWhatifSetting bad[] = { settings[1], { "max_split_size_mb:1", VS_UNKNOWN } };
      VsWhatifResult two[2];
      g_assert_false (vs_whatif_plan_run (plan, bad, 2, two, &error));
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_clear_error (&error);
      g_assert_null (two[0].alloc_conf);
      g_assert_null (two[0].segment_events);
    }
  return compared;
}

static void
test_plan_runs (void)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "data", "whatif", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint runs = 0, compared = 0;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_suffix (name, ".db"))
        continue;
      /* a copy: opening may finalize, and fixtures stay untouched */
      g_autofree char *src = g_build_filename (dir, name, NULL);
      g_autofree char *tmpdir = g_dir_make_tmp ("whatif-plan-XXXXXX", NULL);
      g_autofree char *copy = g_build_filename (tmpdir, name, NULL);
      g_autofree char *contents = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (src, &contents, &len, NULL));
      g_assert_true (g_file_set_contents (copy, contents, len, NULL));
      compared += check_run (copy);
      runs++;
      g_unlink (copy);
      g_rmdir (tmpdir);
    }
  g_assert_cmpuint (runs, >=, 10);
  g_assert_cmpuint (compared, >=, 10 * G_N_ELEMENTS (settings));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/whatif/plan/runs", test_plan_runs);
  return g_test_run ();
}
