/* SPDX-License-Identifier: MIT */
/* vs-comparison.h — the shown trace (A) compared with another (B): B's
 * document, the analyzer's diff of the two (vs_diff: peaks, roles, the 20
 * largest user sites at the peak, fragmentation, failures, findings),
 * what differs between the runs (vs_compare_differences) and how B is
 * laid over A in time.
 *
 * Made in two steps: vs_comparison_new_async() opens B (a PyTorch
 * snapshot is imported first, as the window opens one) — the timelines
 * can draw B from then on —, and vs_comparison_compute_async() computes
 * the rest in a GTask thread; "computed" turns TRUE when it is done
 * (the rows, items, differences and text are NULL until then).  Then
 * immutable but for the alignment: the property "align-by-iteration"
 * (FALSE: both runs from their starts; TRUE, only once computed: B
 * shifted so that its first iteration starts where A's does, the
 * iterations being vs_iterations_find's on the first device).
 */
#pragma once

#include <gio/gio.h>

#include "vs-chart-data.h"
#include "vs-document.h"

G_BEGIN_DECLS

#define VS_TYPE_COMPARISON (vs_comparison_get_type ())
G_DECLARE_FINAL_TYPE (VsComparison, vs_comparison, VS, COMPARISON, GObject)

/* Opens the trace or snapshot in file as B, in a thread, to compare a
 * with.  Finish returns the comparison (not yet computed), or NULL with
 * the error B's open gave. */
void vs_comparison_new_async (VsDocument *a, GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
VsComparison *vs_comparison_new_finish (GAsyncResult *result, GError **error);

/* Computes the diff, the differences, the iteration offset and the text
 * in a thread (once).  Finish returns FALSE with the analyzer's error. */
void vs_comparison_compute_async (VsComparison *self, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data);
gboolean vs_comparison_compute_finish (VsComparison *self, GAsyncResult *result, GError **error);
/* Whether it is computed ("computed"). */
gboolean vs_comparison_is_computed (VsComparison *self);

VsDocument *vs_comparison_get_b (VsComparison *self);
/* The files' names as the user opened them. */
const char *vs_comparison_get_name_a (VsComparison *self);
const char *vs_comparison_get_name_b (VsComparison *self);
/* The rows as a list of VsCompareItem. */
GListModel *vs_comparison_get_items (VsComparison *self);
/* What differs between the runs (VsCompareDifference*), maybe empty. */
GPtrArray *vs_comparison_get_differences (VsComparison *self);
/* The comparison as `vramscope diff A B --width 120` writes it: the diff,
 * then what differs between the runs. */
const char *vs_comparison_get_text (VsComparison *self);

/* Whether both runs have iterations to align by. */
gboolean vs_comparison_can_align_by_iteration (VsComparison *self);
gboolean vs_comparison_get_align_by_iteration (VsComparison *self);
void vs_comparison_set_align_by_iteration (VsComparison *self, gboolean on);
/* B's time minus A's at one instant under the current alignment (0 by
 * start). */
gint64 vs_comparison_get_offset (VsComparison *self);

/* A's chart data for device_id over [t0, t1) in n_buckets, with B's
 * (the device of the same index, shifted by the offset) as its compare
 * data and both files named in its legend; when B has no such device,
 * A's alone. */
void vs_comparison_query_chart_async (VsComparison *self, gint64 device_id, gint64 t0, gint64 t1,
                                      guint n_buckets, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);
VsChartData *vs_comparison_query_chart_finish (VsComparison *self, GAsyncResult *result,
                                               GError **error);

G_END_DECLS
