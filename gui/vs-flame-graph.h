/* SPDX-License-Identifier: MIT */
/* vs-flame-graph.h — live memory at an instant as a flame graph.
 *
 * Callers on top, callees below (an icicle of the analyzer's top-down
 * tree): each frame is a box as wide as the bytes allocated under it.
 * Clicking a box zooms into it and selects it; clicking the top row zooms
 * back out; hovering shows the frame, its bytes and share.  A search
 * fades the boxes whose frame does not contain its text.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_FLAME_GRAPH (vs_flame_graph_get_type ())
G_DECLARE_FINAL_TYPE (VsFlameGraph, vs_flame_graph, VS, FLAME_GRAPH, GtkWidget)

/* Shows instant's top-down tree (NULL clears). */
void vs_flame_graph_set_instant (VsFlameGraph *self, VsInstant *instant);

/* The frame text searched for (NULL or "": none): the other boxes fade. */
/* The tree drawn: the instant's top-down tree, or with user_only its
 * user-frames tree (NULL without an instant). */
const VsTreeNode *vs_flame_graph_get_root (VsFlameGraph *self);

/* Draws only the user's own frames ("Hide library frames"). */
void vs_flame_graph_set_user_only (VsFlameGraph *self, gboolean user_only);

void vs_flame_graph_set_search (VsFlameGraph *self, const char *search);

/* Bytes under the frames that match the search (a match under another
 * match counted once), over the whole tree; 0 without a search. */
gint64 vs_flame_graph_get_search_bytes (VsFlameGraph *self);

/* The selected node (the last one clicked, at first the root), NULL
 * without an instant.  Owned by the instant. */
const VsTreeNode *vs_flame_graph_get_selected (VsFlameGraph *self);

/* Selects the box at widget point (x, y) without zooming; FALSE when no
 * box is there. */
gboolean vs_flame_graph_select_at (VsFlameGraph *self, double x, double y);

G_END_DECLS
