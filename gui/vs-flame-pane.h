/* SPDX-License-Identifier: MIT */
/* vs-flame-pane.h — the flame graph pane: a search over frames above the
 * flame graph of the session's instant.
 *
 * A VsPane: Ctrl+F goes to its search, which fades the frames that do not
 * match and says how much memory lies under those that do; the copy
 * actions copy the selected box's frame, stack or row, and a right click
 * on a box selects it and offers them.
 */
#pragma once

#include "vs-flame-graph.h"
#include "vs-pane.h"

G_BEGIN_DECLS

#define VS_TYPE_FLAME_PANE (vs_flame_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsFlamePane, vs_flame_pane, VS, FLAME_PANE, VsPane)

/* The pane's flame graph. */
VsFlameGraph *vs_flame_pane_get_flame_graph (VsFlamePane *self);

/* Turns "Hide Library Frames" on or off, as its toggle does (on when the
 * pane is made). */
void vs_flame_pane_set_hide_library (VsFlamePane *self, gboolean hide);

G_END_DECLS
