/* SPDX-License-Identifier: MIT */
/* vs-attribution-pane.h — who holds the memory live at an instant, as a
 * tree of call stacks (bottom-up or top-down) with bytes, share and count,
 * sortable by each column.  The trees are the analyzer's (vs_tree_build). */
#pragma once

#include "vs-pane.h"

G_BEGIN_DECLS

#define VS_TYPE_ATTRIBUTION_PANE (vs_attribution_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsAttributionPane, vs_attribution_pane, VS, ATTRIBUTION_PANE, VsPane)

/* Shows instant's trees (NULL clears): the "instant" property. */
void vs_attribution_pane_set_instant (VsAttributionPane *self, VsInstant *instant);

/* Shows site's frames: searches for site (NULL or "" clears the
 * search). */
void vs_attribution_pane_show_site (VsAttributionPane *self, const char *site);

/* Shows only the user's own frames (the "Hide library frames" toggle). */
void vs_attribution_pane_set_hide_library (VsAttributionPane *self, gboolean hide);

/* The search text (tests). */
const char *vs_attribution_pane_get_search (VsAttributionPane *self);

/* The number of top-level rows shown (tests). */
guint vs_attribution_pane_get_n_roots (VsAttributionPane *self);

G_END_DECLS
