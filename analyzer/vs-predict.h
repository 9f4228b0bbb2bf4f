/* SPDX-License-Identifier: MIT */
/* vs-predict.h — the peaks of a PyTorch training run at another batch size
 * (or sequence length), predicted from one or two recorded runs.
 *
 * From two runs of the same program at sizes b1 < b2: their allocation
 * histories are matched (same stacks, same order, a few allocations in one
 * run only), each matched request size is fitted as a + b·batch, and the
 * first run's history with its sizes at the new batch is replayed through
 * the caching-allocator model (vs-caching-allocator.h) under the run's own
 * settings.  From one run: the requests whose role scales with the batch
 * (activations, their gradients and the backward pass's temporaries; see
 * vs-roles.h) are scaled by batch / b1, the rest (parameters, gradients,
 * optimizer state, inputs, everything else) kept, and replayed the same
 * way.  docs/predict.md states the assumptions and where it fails.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct _VsPredictModel VsPredictModel;

/* How a model was made. */
typedef enum
{
  VS_PREDICT_TWO_RUNS,
  VS_PREDICT_ONE_RUN,
} VsPredictBasis;

/* Builds the model of PyTorch allocator allocator1 of trace1, recorded at
 * batch1, and (when trace2 is not NULL) of allocator2 of trace2 recorded
 * at batch2 != batch1.  The traces must stay open while the model is used.
 * Returns NULL with error set when a trace cannot be read, an allocator has
 * no allocations, or the two runs are not the same program at two sizes
 * (VS_TRACE_ERROR_INVALID_ARGUMENT, the message says what differs: the
 * device, the allocator settings, or where the allocation histories stop
 * aligning). */
VsPredictModel *vs_predict_model_new (VsTrace *trace1, gint64 allocator1, gint64 batch1,
                                      VsTrace *trace2, gint64 allocator2, gint64 batch2,
                                      GError **error);
void vs_predict_model_free (VsPredictModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsPredictModel, vs_predict_model_free)

VsPredictBasis vs_predict_model_get_basis (VsPredictModel *model);

/* The allocations of the first run (the one replayed), those matched in the
 * second run (two runs) or scaled with the batch (one run), and those of
 * the second run found in it only. */
gint64 vs_predict_model_get_n_allocations (VsPredictModel *model);
gint64 vs_predict_model_get_n_varying (VsPredictModel *model);
gint64 vs_predict_model_get_n_unmatched (VsPredictModel *model);

/* The settings the first run's allocator ran with (PYTORCH_CUDA_ALLOC_CONF
 * text), the capacity of its device (VS_UNKNOWN when unknown). */
const char *vs_predict_model_get_alloc_conf (VsPredictModel *model);
gint64 vs_predict_model_get_device_total (VsPredictModel *model);

/* The run replayed at one batch. */
typedef struct
{
  gint64 batch;
  gint64 peak_allocated_bytes; /* requested bytes, as the trace's allocated */
  gint64 peak_reserved_bytes;
  gint64 failed_alloc_count; /* under the limit replayed; 0 without one */
} VsPredictPoint;

/* Replays the model at batch (>= 1) with no limit (limit_bytes VS_UNKNOWN)
 * or under limit_bytes: the cap set_per_process_memory_fraction() sets
 * when limit_is_fraction, else the device filling up (see
 * vs_caching_allocator_new).  Fills *out.  Returns FALSE with error set
 * when the settings cannot be parsed. */
gboolean vs_predict_model_replay (VsPredictModel *model, gint64 batch, gint64 limit_bytes,
                                  gboolean limit_is_fraction, VsPredictPoint *out, GError **error);

/* Replays the model without limit at each of the n batches (each >= 1)
 * and, when for_largest, at the two batches vs_predict_model_largest
 * starts from, on as many threads as there are processors and replays, and
 * keeps the results: vs_predict_model_replay at these batches, without
 * limit or under one their reserved peak stayed below, then costs nothing.
 * With a limit (limit_bytes not VS_UNKNOWN), the n batches are replayed
 * under it at the same time when the processors outnumber all these
 * replays.  A model is not to be used from two threads at once.  Returns
 * FALSE with error set when a replay fails. */
gboolean vs_predict_model_prepare (VsPredictModel *model, const gint64 *batches, guint n,
                                   gint64 limit_bytes, gboolean limit_is_fraction,
                                   gboolean for_largest, GError **error);

/* vs_predict_model_replay with no limit, appending to steps (a GArray of
 * VsWhatifStep, vs-whatif-line.h) one step per change of reserved memory,
 * at the time (ns since the trace's start) of the recorded event of the
 * replayed run that caused it: the run's reserved line at that batch. */
gboolean vs_predict_model_replay_steps (VsPredictModel *model, gint64 batch, GArray *steps,
                                        VsPredictPoint *out, GError **error);

/* The largest batch (>= 1, at most max_batch) whose replay under the limit
 * fails no request, assuming that a batch that fails makes every larger one
 * fail; 0 when even batch 1 fails.  *out (may be NULL) receives that
 * batch's replay under the limit (where the allocator released its cache
 * to stay under it, its reserved peak is below the unlimited replay's).
 * The search replays seven batches at once, each round cutting the
 * interval where the answer lies in eight.
 * Returns -1 with error set on failure. */
gint64 vs_predict_model_largest (VsPredictModel *model, gint64 limit_bytes,
                                 gboolean limit_is_fraction, gint64 max_batch, VsPredictPoint *out,
                                 GError **error);

G_END_DECLS
