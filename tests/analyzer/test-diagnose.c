/* SPDX-License-Identifier: MIT */
/* test-diagnose.c — the diagnosis as the viewer consumes it: structured
 * findings that link to an instant (seq, time), a device, an allocator and
 * a site with its stack, on the bundled trace recorded on an H200
 * (tests/data/torch-eval-leak.db) and on a hand-built one.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"
#include "../vs-test-trace-file.h"

static char *
data_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "..", "data", name, NULL);
}

/* Every finding names its instant, device and allocator; the growth and
 * failure findings name a site whose stack renders to that site. */
static void
test_findings_link (void)
{
  g_autofree char *path = data_path ("torch-eval-leak.db");
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (path, &error);
  g_autoptr (VsDiagnosis) dx = NULL;
  const VsDeviceDiagnosis *dd;
  gint64 sum = 0;

  g_assert_no_error (error);
  dx = vs_diagnose (trace, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (dx->devices->len, ==, 1);
  g_assert_cmpuint (dx->findings->len, ==, 2);
  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dx->findings, i);
      const VsStackInfo *s;

      g_assert_nonnull (vs_trace_lookup_device (trace, f->device_id));
      g_assert_nonnull (vs_trace_lookup_allocator (trace, f->allocator_id));
      g_assert_cmpint (f->seq, >, 0);
      g_assert_cmpint (f->seq, <=, vs_trace_get_last_seq (trace));
      g_assert_cmpint (f->time_ns, >=, 0);
      g_assert_cmpint (f->stack_id, >, 0);
      s = vs_stack_get (trace, f->stack_id, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (s->site, ==, f->site);
      g_assert_nonnull (f->evidence);
      g_assert_nonnull (f->remedy);
    }
  /* The growth, root cause of the failure, comes first; the failure
   * finding describes the request that ended the run (the 29th). */
  g_assert_cmpint (((VsFinding *)g_ptr_array_index (dx->findings, 0))->kind, ==,
                   VS_FINDING_GROWTH_PER_ITERATION);
  g_assert_cmpint (((VsFinding *)g_ptr_array_index (dx->findings, 1))->kind, ==,
                   VS_FINDING_OOM_ALLOCATOR_LIMIT);
  g_assert_cmpint (((VsFinding *)g_ptr_array_index (dx->findings, 1))->bytes, ==, 25690112);
  g_assert_cmpint (((VsFinding *)g_ptr_array_index (dx->findings, 1))->count, ==, 29);

  dd = g_ptr_array_index (dx->devices, 0);
  for (VsRole r = 0; r < VS_N_ROLES; r++)
    sum += dd->roles.bytes[r];
  g_assert_cmpint (sum, ==, dd->all.peak_allocated_bytes);
  g_assert_cmpint (vs_roles_dominant (&dd->roles), ==, VS_ROLE_ACTIVATIONS);
  g_assert_cmpint (dd->iterations->source, ==, VS_ITERATIONS_RANGES);
  g_assert_cmpuint (dd->iterations->iterations->len, ==, 9);
  g_assert_cmpint (dd->settings.expandable_segments, ==, 0);
  g_assert_true (dd->settings.pytorch);
}

/* The growth of a loop of `steps` steps (vs_fixture_steps). */
static VsGrowth
steps_growth (int steps, int every, gint64 kept, gint64 jump, VsDiagnosis **dx_out)
{
  g_autofree char *path = NULL;
  char err[512];
  int fd = g_file_open_tmp ("test-diagnose-XXXXXX.db", &path, NULL);
  g_autoptr (GError) error = NULL;
  VsGrowth g;

  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (vs_fixture_steps (path, steps, every, kept, jump, err, sizeof err));
  {
    g_autoptr (VsTrace) trace = vs_trace_open (path, &error);
    const VsDeviceDiagnosis *dd;

    g_assert_no_error (error);
    *dx_out = vs_diagnose (trace, 0, &error);
    g_assert_no_error (error);
    dd = g_ptr_array_index ((*dx_out)->devices, 0);
    g_assert_cmpint (dd->iterations->source, ==, VS_ITERATIONS_RANGES);
    g_assert_cmpuint (dd->iterations->iterations->len, ==, steps);
    g_assert_true (vs_growth_judge (trace, dd->iterations, &g, &error));
    g_assert_no_error (error);
  }
  g_unlink (path);
  return g;
}

static gboolean
has_growth_finding (const VsDiagnosis *dx)
{
  for (guint i = 0; i < dx->findings->len; i++)
    if (((VsFinding *)g_ptr_array_index (dx->findings, i))->kind == VS_FINDING_GROWTH_PER_ITERATION)
      return TRUE;
  return FALSE;
}

/* Memory that grows in steps (a tensor kept every ten iterations) is
 * growth, its mean per iteration; a loop that keeps nothing, or keeps
 * one buffer once, does not grow. */
static void
test_stepped_growth (void)
{
  VsDiagnosis *dx = NULL;
  /* 60 steps, 2 MiB kept at the end of steps 9, 19, … 59: the iterations
   * judged are steps 2..59, compared from step 1's start; the lowest
   * allocated memory from step 10 on is 2 MiB higher each ten steps, and
   * step 59's own is kept after its start (not counted). */
  VsGrowth g = steps_growth (60, 10, 2 * 1048576, 0, &dx);

  g_assert_true (g.stepped);
  g_assert_cmpint (g.iterations, ==, 58);
  g_assert_cmpint (g.growing, ==, 5);
  g_assert_cmpint (g.bytes_per_iteration, ==, 5 * 2 * 1048576 / 58);
  g_assert_true (has_growth_finding (dx));
  vs_diagnosis_free (dx);

  g = steps_growth (60, 0, 0, 0, &dx);
  g_assert_false (g.stepped);
  g_assert_cmpint (g.bytes_per_iteration, ==, 0);
  g_assert_false (has_growth_finding (dx));
  vs_diagnosis_free (dx);

  /* One buffer of 64 MiB kept halfway: one rise, not growth. */
  g = steps_growth (60, 0, 0, 64 * 1048576, &dx);
  g_assert_cmpint (g.bytes_per_iteration, ==, 0);
  g_assert_false (has_growth_finding (dx));
  vs_diagnosis_free (dx);

  /* 1 MiB kept every third step (steps 2, 5, … 59): a third of the
   * iterations grow, under the 80 % of growth at every iteration; 17
   * rises seen from step 3 to 51.  The last eight steps (52..59) count
   * as one, by their lowest (step 52's start): what steps 53, 56 and 59
   * keep is not seen to last. */
  g = steps_growth (60, 3, 1048576, 0, &dx);
  g_assert_true (g.stepped);
  g_assert_cmpint (g.growing, ==, 17);
  g_assert_cmpint (g.bytes_per_iteration, ==, 17 * 1048576 / 58);
  vs_diagnosis_free (dx);
}

/* Memory that wavers is not growth: 3000 iterations at 192 MiB, or 64 MiB
 * more (a batch queued ahead), two 256 B blocks kept for good at 1200
 * and 1210, and the last few iterations all queued ahead.  The lowest
 * allocated memory from each iteration on then rises near the end only
 * because ever fewer iterations are left: by 1.25 MiB, the last rise
 * over half of the run after the first.  The last tenth judged as one by
 * its lowest, nothing grew. */
static void
test_wavering_is_not_growth (void)
{
  g_autoptr (VsIterations) it = g_new0 (VsIterations, 1);
  VsGrowth g;
  const gint64 base = 192 * (gint64)1048576;

  it->iterations = g_array_new (FALSE, TRUE, sizeof (VsIteration));
  for (gint64 i = 0; i < 3000; i++)
    {
      VsIteration v = { .index = i, .seq = i * 100, .time_ns = i * 1000 };

      v.allocated_bytes = base + (i % 3 == 0 ? 0 : 64 * (gint64)1048576);
      v.allocated_bytes += (i >= 1200 ? 256 : 0) + (i >= 1210 ? 256 : 0);
      if (i >= 2996) /* the lowest of the last four: one more 320 KiB each */
        v.allocated_bytes = base + 512 + (i - 2995) * 320 * 1024;
      v.growth_bytes = i == 0 ? VS_UNKNOWN : 0;
      g_array_append_val (it->iterations, v);
    }
  g_assert_false (vs_growth_judge_values (it, &g));
  g_assert_cmpint (g.bytes_per_iteration, ==, 0);

  /* The same with a 1 MiB block kept for good every 500 iterations from
   * 500 on: five rises over most of the run, growth. */
  for (guint i = 0; i < it->iterations->len; i++)
    g_array_index (it->iterations, VsIteration, i).allocated_bytes += (i / 500) * (gint64)1048576;
  g_assert_true (vs_growth_judge_values (it, &g));
  g_assert_true (g.stepped);
  g_assert_cmpint (g.growing, >=, 5);
}

/* The names are the fixed ones of the CLI contract. */
static void
test_names (void)
{
  static const char *const names[] = {
    "oom-device-full",      "oom-allocator-limit", "oom-fragmentation", "fragmentation",
    "growth-per-iteration", "leak-at-exit",        "outside-allocator", "other-process",
  };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_assert_cmpstr (vs_finding_name ((VsFindingKind)i), ==, names[i]);
  g_assert_cmpstr (vs_role_name (VS_ROLE_OPTIMIZER_STATE), ==, "optimizer-state");
  g_assert_cmpstr (vs_oom_cause_name (VS_OOM_CAUSE_ALLOCATOR_LIMIT), ==, "oom-allocator-limit");
}

/* A hand-built trace: the failures of the fixture are classified with
 * sizes that are never negative, and the text fits one screen. */
static void
test_fixture_text (void)
{
  char *dir, *path;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsDiagnosis) dx = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  g_auto (GStrv) lines = NULL;
  char err[256] = "";

  vs_test_trace_file ("vs-diagnose-XXXXXX", "full.db", &dir, &path);
  g_assert_true (vs_fixture_full (path, err, sizeof err));
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  dx = vs_diagnose (trace, 0, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dx->findings, i);

      g_assert_cmpint (f->bytes, >=, 0);
      g_assert_null (strstr (f->evidence, " -"));
    }
  vs_diagnosis_write_text (trace, dx, 60, out);
  lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), <=, 41);
  for (guint i = 0; lines[i] != NULL; i++)
    g_assert_cmpint (g_utf8_strlen (lines[i], -1), <=, 60);
  vs_test_trace_file_remove (dir, path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/diagnose/findings-link", test_findings_link);
  g_test_add_func ("/diagnose/names", test_names);
  g_test_add_func ("/diagnose/fixture-text", test_fixture_text);
  g_test_add_func ("/diagnose/stepped-growth", test_stepped_growth);
  g_test_add_func ("/diagnose/wavering-is-not-growth", test_wavering_is_not_growth);
  return g_test_run ();
}
