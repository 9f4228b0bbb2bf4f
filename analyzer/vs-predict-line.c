/* SPDX-License-Identifier: MIT */
/* vs-predict-line.c — the predicted reserved line at another batch size
 * (see vs-predict-line.h): a one-run prediction's replay, its changes of
 * reserved memory placed at the times of the recorded events that caused
 * them, so that it lines up with the recorded series.
 */
#include "vs-predict-line.h"

#include "vs-predict.h"

VsWhatifLine *
vs_predict_line_new (VsTrace *trace, gint64 device_id, gint64 recorded_batch, gint64 batch,
                     GError **error)
{
  g_autoptr (VsWhatifLine) line = g_new0 (VsWhatifLine, 1);
  g_autoptr (VsPredictModel) m = NULL;
  VsPredictPoint p;
  gint64 id;

  g_return_val_if_fail (trace != NULL && recorded_batch >= 1 && batch >= 1, NULL);
  id = vs_whatif_line_allocator (trace, device_id, error);
  if (id == 0)
    return NULL;
  line->device_id = device_id;
  line->allocator_id = id;
  if (!vs_whatif_run (trace, id, NULL, VS_UNKNOWN, VS_WHATIF_NONE, &line->own, error))
    return NULL;
  m = vs_predict_model_new (trace, id, recorded_batch, NULL, 0, 0, error);
  if (m == NULL)
    return NULL;
  line->steps = g_array_new (FALSE, FALSE, sizeof (VsWhatifStep));
  if (!vs_predict_model_replay_steps (m, batch, line->steps, &p, error))
    return NULL;
  line->result.device_id = device_id;
  line->result.allocator_id = id;
  line->result.alloc_conf = g_strdup (vs_predict_model_get_alloc_conf (m));
  line->result.limit_bytes = VS_UNKNOWN;
  line->result.peak_reserved_bytes = p.peak_reserved_bytes;
  line->result.peak_allocated_bytes = p.peak_allocated_bytes;
  line->result.failed_alloc_count = 0;
  line->result.first_failure_time_ns = VS_UNKNOWN;
  line->result.request_count = vs_predict_model_get_n_allocations (m);
  if (line->steps->len > 0)
    line->result.final_reserved_bytes
        = g_array_index (line->steps, VsWhatifStep, line->steps->len - 1).reserved_bytes;
  return g_steal_pointer (&line);
}
