/* SPDX-License-Identifier: MIT */
/* test-compare.c — whether two runs are comparable, and their alignment
 * by iteration (vs-compare.h), on committed traces whose facts are known
 * from their device rows, meta and `vramscope report growth`:
 * - another GPU (H200 against H100 80GB HBM3) is named with both names
 *   and sizes; a different number of GPUs is said;
 * - expandable segments on in one run only is an allocator settings
 *   difference, and the command lines a program difference;
 * - a trace compared with itself differs in nothing;
 * - the iteration offset is B's first iteration start minus A's, and
 *   there is none where a run has no iterations.
 */
#include <string.h>

#include "vs-analyzer.h"

static VsTrace *
open_data (const char *name)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", name, NULL);
  g_autoptr (GError) error = NULL;
  VsTrace *t = vs_trace_open (path, &error);

  g_assert_no_error (error);
  return t;
}

/* The differences of the committed traces a and b, opened for it. */
static GPtrArray *
differences_of (const char *a, const char *b)
{
  g_autoptr (VsTrace) ta = open_data (a);
  g_autoptr (VsTrace) tb = open_data (b);

  return vs_compare_differences (ta, tb);
}

/* The differences of kind, joined by newlines. */
static char *
texts (GPtrArray *d, VsCompareDifferenceKind kind)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < d->len; i++)
    {
      const VsCompareDifference *x = g_ptr_array_index (d, i);
      if (x->kind == kind)
        g_string_append_printf (s, "%s\n", x->text);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
test_gpus (void)
{
  /* An H200 run against an H100 run, and against a run on two GPUs. */
  g_autoptr (GPtrArray) d = differences_of ("torch-eval-leak.db", "diagnose/torch-frag-mixed.db");
  g_autoptr (GPtrArray) two = differences_of ("torch-eval-leak.db", "torch-ddp.db");
  g_autofree char *gpu = texts (d, VS_COMPARE_DIFFERS_GPU);
  g_autofree char *count = texts (two, VS_COMPARE_DIFFERS_GPU);

  g_assert_cmpstr (
      gpu, ==, "GPU 0: NVIDIA H200 (139.80 GiB) in A, NVIDIA H100 80GB HBM3 (79.18 GiB) in B\n");
  g_assert_cmpstr (count, ==, "A used 1 GPU, B 2\n");
}

static void
test_settings_and_program (void)
{
  g_autoptr (GPtrArray) d
      = differences_of ("diagnose/torch-frag-mixed.db", "diagnose/torch-frag-mixed-expandable.db");
  g_autoptr (GPtrArray) self
      = differences_of ("diagnose/torch-frag-mixed.db", "diagnose/torch-frag-mixed.db");
  g_autofree char *settings = texts (d, VS_COMPARE_DIFFERS_SETTINGS);
  g_autofree char *program = texts (d, VS_COMPARE_DIFFERS_PROGRAM);
  g_autofree char *gpu = texts (d, VS_COMPARE_DIFFERS_GPU);

  g_assert_cmpstr (gpu, ==, "");
  g_assert_cmpstr (settings, ==, "GPU 0: expandable segments off in A, on in B\n");
  g_assert_cmpstr (program, ==,
                   "A ran “python3 samples/torch-frag-mixed.py --truth frag-mixed.json”, "
                   "B ran “python3 samples/torch-frag-mixed.py --truth "
                   "frag-mixed-expandable.json”\n");
  g_assert_cmpuint (self->len, ==, 0);
  /* As `vramscope diff` prints them, wrapped at 60 columns. */
  {
    g_autoptr (GString) out = g_string_new (NULL);

    vs_compare_write_differences (self, 60, out);
    g_assert_cmpstr (out->str, ==, "");
    vs_compare_write_differences (d, 60, out);
    g_assert_cmpstr (out->str, ==,
                     "\nThe runs are not alike:\n"
                     "- The allocator settings differ: GPU 0: expandable segments\n"
                     "  off in A, on in B\n"
                     "- The programs differ: A ran “python3\n"
                     "  samples/torch-frag-mixed.py --truth frag-mixed.json”, B\n"
                     "  ran “python3 samples/torch-frag-mixed.py --truth\n"
                     "  frag-mixed-expandable.json”\n");
  }
}

static void
test_iteration_offset (void)
{
  g_autoptr (VsTrace) fp32 = open_data ("diagnose/torch-amp-fp32.db");
  g_autoptr (VsTrace) bf16 = open_data ("diagnose/torch-amp-bf16.db");
  g_autoptr (VsTrace) none = open_data ("sample-oom.db");
  g_autoptr (GError) error = NULL;
  gint64 offset = 0;

  /* `vramscope report growth`: iteration 0 starts at 343895601 ns in
   * fp32, at 361198438 ns in bf16. */
  g_assert_true (vs_compare_iteration_offset (fp32, bf16, 0, &offset, &error));
  g_assert_no_error (error);
  g_assert_cmpint (offset, ==, G_GINT64_CONSTANT (361198438) - G_GINT64_CONSTANT (343895601));
  g_assert_true (vs_compare_iteration_offset (bf16, fp32, 0, &offset, &error));
  g_assert_cmpint (offset, ==, G_GINT64_CONSTANT (343895601) - G_GINT64_CONSTANT (361198438));
  g_assert_false (vs_compare_iteration_offset (fp32, none, 0, &offset, &error));
  g_assert_no_error (error);
  g_assert_false (vs_compare_iteration_offset (fp32, bf16, 7, &offset, &error));
  g_assert_no_error (error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/compare/gpus", test_gpus);
  g_test_add_func ("/compare/settings-and-program", test_settings_and_program);
  g_test_add_func ("/compare/iteration-offset", test_iteration_offset);
  return g_test_run ();
}
