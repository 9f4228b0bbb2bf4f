/* SPDX-License-Identifier: MIT */
/* test-predict-rows.c — a history decoded by several threads at once
 * (vs-predict-rows.c) equals the history read on the trace's connection:
 * the same allocations (size, stream, stack, event id) and the same order
 * of allocations and frees, on a real run (ResNet-18 at batch 16, three
 * steps, tests/data/predict, imported here) cut into ranges of 64 ids.
 */

#include "vs-analyzer.h"
#include "vs-test-import.h"
#include "vs-predict-private.h"

static char *trace_path;

static void
read_history (VsTrace *trace, gint64 allocator_id, VsPredictKeys *keys, VsPredictHistory *h)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (vs_predict_history_read (h, trace, allocator_id, keys, &error));
  g_assert_no_error (error);
}

static void
test_parallel (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (trace_path, &error);
  g_autoptr (GArray) allocators = NULL;
  VsPredictHistory one = { 0 }, many = { 0 };
  VsPredictKeys keys;
  guint before;

  g_assert_no_error (error);
  allocators = vs_whatif_allocators (trace);
  g_assert_cmpuint (allocators->len, ==, 1);
  gint64 id = g_array_index (allocators, gint64, 0);
  vs_predict_keys_init (&keys);
  before = vs_predict_rows_get_parallel_reads ();
  read_history (trace, id, &keys, &one);
  g_assert_cmpuint (vs_predict_rows_get_parallel_reads (), ==, before);
  vs_predict_rows_set_parallel (64, 3);
  read_history (trace, id, &keys, &many);
  vs_predict_rows_set_parallel (131072, 0);
  g_assert_cmpuint (vs_predict_rows_get_parallel_reads (), ==, before + 1);
  /* the run's 994 allocations and their frees (memory_stats()) */
  g_assert_cmpuint (one.allocs->len, ==, 994);
  g_assert_cmpuint (many.allocs->len, ==, one.allocs->len);
  for (guint i = 0; i < one.allocs->len; i++)
    {
      const VsPredictAlloc *a = &g_array_index (one.allocs, VsPredictAlloc, i);
      const VsPredictAlloc *b = &g_array_index (many.allocs, VsPredictAlloc, i);
      g_assert_cmpint (b->size, ==, a->size);
      g_assert_cmpint (b->stream, ==, a->stream);
      g_assert_cmpint (b->event_id, ==, a->event_id);
      g_assert_cmpuint (b->key, ==, a->key);
    }
  g_assert_cmpmem (many.events->data, many.events->len * sizeof (gint32), one.events->data,
                   one.events->len * sizeof (gint32));
  g_assert_cmpmem (many.times->data, many.times->len * sizeof (gint64), one.times->data,
                   one.times->len * sizeof (gint64));
  vs_predict_history_clear (&one);
  vs_predict_history_clear (&many);
  vs_predict_keys_clear (&keys);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  trace_path = vs_test_import_snapshot ("predict", "resnet18-batch-16");
  g_test_add_func ("/predict/rows-parallel", test_parallel);
  rc = g_test_run ();
  vs_test_import_remove (trace_path);
  return rc;
}
