/* SPDX-License-Identifier: MIT */
/* vs-compare-pane.h — the comparison pane: what differs between the two
 * runs (a banner), how B is laid over A on the timelines, and the
 * analyzer's diff as a sortable table (vs-compare-pane.ui).
 *
 * Property "comparison" (VsComparison, NULL: none shown).
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-comparison.h"

G_BEGIN_DECLS

#define VS_TYPE_COMPARE_PANE (vs_compare_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsComparePane, vs_compare_pane, VS, COMPARE_PANE, GtkWidget)

void vs_compare_pane_set_comparison (VsComparePane *self, VsComparison *comparison);

/* The rows in the order shown (the column view's sorted model; tests). */
GListModel *vs_compare_pane_get_rows (VsComparePane *self);
/* The banner's text, NULL while it is hidden (tests). */
const char *vs_compare_pane_get_banner (VsComparePane *self);

G_END_DECLS
