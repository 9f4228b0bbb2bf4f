/* SPDX-License-Identifier: MIT */
/* vs-predict-line.h — one device's reserved memory over time as it is
 * predicted at another batch size: the line the viewer's What If… strip
 * draws beside the recorded one (a VsWhatifLine, vs-whatif-line.h).
 */
#pragma once

#include "vs-whatif-line.h"

G_BEGIN_DECLS

/* The reserved line of device_id's PyTorch caching allocator (as
 * vs_whatif_line_allocator finds it) predicted from this one run at batch,
 * the run counting as recorded_batch (vs-predict.h, one run: activations
 * scaled, history replayed with no limit).  The line's own result is the
 * trace's own what-if replay; its result holds the prediction's peaks
 * (alloc_conf: the trace's settings, limit_bytes: VS_UNKNOWN).  Returns a
 * new line, or NULL with error set. */
VsWhatifLine *vs_predict_line_new (VsTrace *trace, gint64 device_id, gint64 recorded_batch,
                                   gint64 batch, GError **error);

G_END_DECLS
