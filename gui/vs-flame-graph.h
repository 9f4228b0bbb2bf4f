/* vs-flame-graph.h — live memory at an instant as a flame graph.
 *
 * Callers on top, callees below (an icicle of the analyzer's top-down
 * tree): each frame is a box as wide as the bytes allocated under it.
 * Clicking a box zooms into it; clicking the top row zooms back out;
 * hovering shows the frame, its bytes and share.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_FLAME_GRAPH (vs_flame_graph_get_type ())
G_DECLARE_FINAL_TYPE (VsFlameGraph, vs_flame_graph, VS, FLAME_GRAPH, GtkWidget)

/* Shows instant's top-down tree (NULL clears). */
void vs_flame_graph_set_instant (VsFlameGraph *self, VsInstant *instant);

G_END_DECLS
