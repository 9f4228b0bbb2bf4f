/* SPDX-License-Identifier: MIT */
/* test-predict.c — the predicted reserved line (vs_predict_line_new) on a
 * real run: ResNet-18 at batch 32 (tests/data/predict, imported here).
 *
 * The line must be a step series in time order inside the trace, its
 * highest step the prediction's reserved peak, equal to what
 * vs_predict_model_replay gives at that batch; at the recorded batch its
 * peak is the recorded one within 0.5 % (the replay makes up segment
 * addresses); at half the batch it is lower, at twice higher.
 */

#include "vs-analyzer.h"
#include "vs-test-import.h"

static char *trace_path;

static gint64
line_max (const VsWhatifLine *line)
{
  gint64 best = 0;
  for (guint i = 0; i < line->steps->len; i++)
    best = MAX (best, g_array_index (line->steps, VsWhatifStep, i).reserved_bytes);
  return best;
}

static void
check_line (VsTrace *trace, gint64 device_id, gint64 batch, gint64 *peak)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsWhatifLine) line = vs_predict_line_new (trace, device_id, 32, batch, &error);
  g_autoptr (VsPredictModel) m = NULL;
  VsPredictPoint p;

  g_assert_no_error (error);
  g_assert_nonnull (line);
  g_assert_cmpuint (line->steps->len, >, 2);
  for (guint i = 1; i < line->steps->len; i++)
    g_assert_cmpint (g_array_index (line->steps, VsWhatifStep, i - 1).time_ns, <=,
                     g_array_index (line->steps, VsWhatifStep, i).time_ns);
  g_assert_cmpint (g_array_index (line->steps, VsWhatifStep, 0).time_ns, >=, 0);
  g_assert_cmpint (g_array_index (line->steps, VsWhatifStep, line->steps->len - 1).time_ns, <=,
                   vs_trace_get_duration_ns (trace));
  g_assert_cmpint (line_max (line), ==, line->result.peak_reserved_bytes);
  m = vs_predict_model_new (trace, line->allocator_id, 32, NULL, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_true (vs_predict_model_replay (m, batch, VS_UNKNOWN, FALSE, &p, &error));
  g_assert_cmpint (p.peak_reserved_bytes, ==, line->result.peak_reserved_bytes);
  g_assert_cmpint (p.peak_allocated_bytes, ==, line->result.peak_allocated_bytes);
  g_assert_cmpint (line->own.peak_reserved_bytes, ==, 1551892480); /* memory_stats() */
  *peak = line->result.peak_reserved_bytes;
}

static void
test_line (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (trace_path, &error);
  gint64 half, same, twice;

  g_assert_no_error (error);
  const GPtrArray *devices = vs_trace_get_devices (trace);
  g_assert_cmpuint (devices->len, ==, 1);
  gint64 dev = ((const VsDeviceInfo *)g_ptr_array_index (devices, 0))->id;
  check_line (trace, dev, 32, &same);
  check_line (trace, dev, 16, &half);
  check_line (trace, dev, 64, &twice);
  /* recorded reserved peak 1551892480 (memory_stats()), within 0.5 % */
  g_assert_cmpfloat (ABS ((double)same - 1551892480.0), <=, 0.005 * 1551892480.0);
  g_assert_cmpint (half, <, same);
  g_assert_cmpint (twice, >, same);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  trace_path = vs_test_import_snapshot ("predict", "resnet18-batch-32");
  g_test_add_func ("/predict/line", test_line);
  rc = g_test_run ();
  vs_test_import_remove (trace_path);
  return rc;
}
