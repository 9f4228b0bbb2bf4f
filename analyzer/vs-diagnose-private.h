/* SPDX-License-Identifier: MIT */
/* vs-diagnose-private.h — the parts of the diagnosis shared between its
 * files, not part of the library's interface. */
#pragma once

#include "vs-diagnose.h"

G_BEGIN_DECLS

/* Backs the allocator-setting remedies of findings[first …] on dd's
 * device with what the caching-allocator model (vs-whatif.h) predicts
 * under that setting: the peak reserved and whether the failed requests
 * would fit, appended to the remedy; a setting the replay shows would not
 * help is said so, and gets no saving.  Does nothing without a PyTorch
 * allocator.  FALSE with error set when the trace cannot be read. */
gboolean vs_diagnose_whatif (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                             guint first, GError **error);

/* Backs the "half the batch" remedies (dd->lower_peak and findings[first
 * …]) with the predicted peaks at half the batch and the largest batch that
 * fits (vs-diagnose-predict.c).  FALSE with error set when the trace cannot
 * be read. */
gboolean vs_diagnose_predict (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                              guint first, GError **error);

G_END_DECLS
