/* SPDX-License-Identifier: MIT */
/* vs-diagnose-private.h — the parts of the diagnosis shared between its
 * files, not part of the library's interface. */
#pragma once

#include "vs-diagnose.h"

G_BEGIN_DECLS

/* A finding of kind on device_id (allocator_id 0: the device), its
 * counts, times, stack and saving unknown; the caller fills the rest. */
VsFinding *vs_diagnose_finding_new (VsFindingKind kind, gint64 device_id, gint64 allocator_id);

/* n bytes as text (vs_format_bytes), a negative n as 0. */
char *vs_diagnose_bytes (gint64 n);

/* How g grew over its iterations (each named unit), as the evidence of a
 * growth finding says it: "grew in 7 of 8 steps, by 32.00 MiB per step". */
char *vs_diagnose_growth_how (const VsGrowth *g, const char *unit);

/* How to lower memory held by the dominant role of r (at the instant
 * `at` names), with the expected saving in *saving and its basis; NULL
 * when no role dominates (autocast: the program already runs under it). */
char *vs_diagnose_role_remedy (const VsRoles *r, const char *at, gboolean autocast, gint64 *saving);

/* The rules on failed requests (vs-diagnose-failures.c): appends to
 * findings one finding per allocator and cause of its out-of-memory
 * failures on dd's device, and one for other processes holding the device
 * at a failure.  FALSE with error set when the trace cannot be read. */
gboolean vs_diagnose_failures (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                               GError **error);

/* The rules on memory held (vs-diagnose-held.c), each appending its
 * finding to findings when its evidence holds on dd's device: growth per
 * iteration (dd->growth); activations of the forward pass never used by a
 * backward pass among peak_blocks (the live blocks at the device's peak of
 * allocated memory, NULL when it has none); device memory leaked at exit;
 * fragmentation at the peak; memory outside every allocator at the peak
 * reserved (after vs_diagnose_measure_outside).  Those that read the trace
 * return FALSE with error set when it cannot be read. */
void vs_diagnose_growth (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings);
gboolean vs_diagnose_unused_activations (VsTrace *trace, VsDeviceDiagnosis *dd, GArray *peak_blocks,
                                         GPtrArray *findings, GError **error);
gboolean vs_diagnose_leaks (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                            GError **error);
gboolean vs_diagnose_fragmentation (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                                    GError **error);
gboolean vs_diagnose_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                              GError **error);

/* The rule on framework pools (vs-diagnose-pools.c): appends a
 * growth-per-iteration finding on the pool's allocator for each pool of
 * dd's device whose reserved memory grows per iteration of
 * dd->iterations while what it hands out, where known, does not
 * (vs-pool-growth.h), with its framework's remedies.  FALSE with error
 * set when the trace cannot be read. */
gboolean vs_diagnose_pool_growth (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                                  GError **error);

/* Fills dd's allocator_at_peak_bytes and outside_at_peak_bytes: at the
 * device's peak reserved, the PyTorch allocator's reserved and what every
 * allocator together did not hold.  FALSE with error set when the trace
 * cannot be read. */
gboolean vs_diagnose_measure_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GError **error);

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
