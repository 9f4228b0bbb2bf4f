/* SPDX-License-Identifier: MIT */
/* vs-diagnose-predict.c — the diagnosis's "half the batch" remedies backed
 * by a prediction (vs-predict.h).
 *
 * The trace does not say what batch size it ran with, so the prediction is
 * made from the one run in relative units: the recorded batch counts as
 * UNITS, half the batch as UNITS / 2, and the largest batch that fits is
 * said as a multiple of the recorded one.  The activations are scaled and
 * the history replayed through the caching-allocator model, as `vramscope
 * predict RUN@B --batch B/2` does; the limit is the device's capacity less
 * the memory held outside the allocator.  A remedy that says "half the
 * batch" (the dominant-role remedy, and any finding's) gets the predicted
 * peaks at half the batch and the largest batch that fits.  Histories of
 * more than MAX_ALLOCS allocations are left alone: classifying every
 * block's role would cost more than the rest of the diagnosis.
 */
#include "vs-diagnose-private.h"
#include "vs-format.h"
#include "vs-predict.h"

#include <string.h>

#define UNITS 64
#define MAX_TIMES 64 /* the largest batch searched, in recorded batches */
#define MAX_ALLOCS 1000000
#define HALF_THE_BATCH "half the batch"

/* The sentence appended to a remedy, or NULL when nothing is predicted. */
static char *
prediction_text (VsTrace *trace, VsDeviceDiagnosis *dd, GError **error)
{
  g_autoptr (VsPredictModel) m = NULL;
  VsPredictPoint half;
  gint64 limit = VS_UNKNOWN, largest = -1;

  m = vs_predict_model_new (trace, dd->allocator_id, UNITS, NULL, 0, 0, error);
  if (m == NULL || !vs_predict_model_replay (m, UNITS / 2, VS_UNKNOWN, FALSE, &half, error))
    return NULL;
  /* A run that failed stopped there: its history holds part of a step, so
   * no largest batch is claimed from it. */
  gboolean stopped = dd->allocator.failed_alloc_count > 0;
  if (!stopped && dd->device->total_bytes != VS_UNKNOWN)
    limit = dd->device->total_bytes
            - MAX (0, dd->all.peak_reserved_bytes - dd->allocator.peak_reserved_bytes);
  if (limit != VS_UNKNOWN
      && (largest = vs_predict_model_largest (m, limit, FALSE, MAX_TIMES * UNITS, NULL, error)) < 0)
    return NULL;
  g_autofree char *alloc = vs_format_bytes (half.peak_allocated_bytes);
  g_autofree char *res = vs_format_bytes (half.peak_reserved_bytes);
  g_autofree char *was = vs_format_bytes (dd->allocator.peak_reserved_bytes);
  if (stopped)
    return g_strdup_printf ("predicted at half the batch (this run's activations scaled and "
                            "replayed up to its failure, which ended the history: the whole "
                            "step needs more): peak allocated %s, reserved %s (now %s)",
                            alloc, res, was);
  if (largest < 0)
    return g_strdup_printf ("predicted at half the batch (this run's activations scaled and "
                            "replayed): peak allocated %s, reserved %s (now %s)",
                            alloc, res, was);
  if (largest == 0)
    return g_strdup_printf ("predicted at half the batch (this run's activations scaled and "
                            "replayed): peak allocated %s, reserved %s (now %s); no batch "
                            "fits the device as predicted",
                            alloc, res, was);
  if (largest >= MAX_TIMES * UNITS)
    return g_strdup_printf ("predicted at half the batch (this run's activations scaled and "
                            "replayed): peak allocated %s, reserved %s (now %s); a batch %d× "
                            "this run's still fits the device",
                            alloc, res, was, MAX_TIMES);
  return g_strdup_printf ("predicted at half the batch (this run's activations scaled and "
                          "replayed): peak allocated %s, reserved %s (now %s); the largest "
                          "batch that fits the device is about %.2f× this run's",
                          alloc, res, was, (double)largest / UNITS);
}

static void
append (char **remedy, const char *text)
{
  char *joined = g_strdup_printf ("%s; %s", *remedy, text);
  g_free (*remedy);
  *remedy = joined;
}

gboolean
vs_diagnose_predict (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, guint first,
                     GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr (GError) local = NULL;
  gboolean wanted = dd->lower_peak != NULL && strstr (dd->lower_peak, HALF_THE_BATCH) != NULL;

  for (guint i = first; i < findings->len && !wanted; i++)
    {
      const VsFinding *f = g_ptr_array_index (findings, i);
      wanted = f->remedy != NULL && strstr (f->remedy, HALF_THE_BATCH) != NULL;
    }
  if (!wanted || dd->allocator_id == 0 || dd->allocator.alloc_count > MAX_ALLOCS
      || dd->allocator.alloc_count <= 0)
    return TRUE;
  text = prediction_text (trace, dd, &local);
  if (text == NULL)
    {
      /* A history the model cannot take (no allocation of its own) is no
       * failure of the diagnosis: the remedy stays as it was. */
      if (g_error_matches (local, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (dd->lower_peak != NULL && strstr (dd->lower_peak, HALF_THE_BATCH) != NULL)
    append (&dd->lower_peak, text);
  for (guint i = first; i < findings->len; i++)
    {
      VsFinding *f = g_ptr_array_index (findings, i);
      if (f->remedy != NULL && strstr (f->remedy, HALF_THE_BATCH) != NULL)
        append (&f->remedy, text);
    }
  return TRUE;
}
