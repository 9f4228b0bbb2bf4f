/* SPDX-License-Identifier: MIT */
/* vs-blocks-chart.h — allocations over time: every allocated block a band
 * from its allocation to its free, stacked as memory_viz stacks them.
 *
 * Bound to a VsSession: it draws the session's selected device over the
 * timelines' visible range, querying the bands (vs_block_bands_query) in
 * a worker thread through the document, one query in flight and the
 * latest request waiting (VsQuerySlot), and only while it is shown.
 * Hovering a band shows its size, times and stack (the user's own frames
 * first) in a tooltip; a click, or Up/Down/Home/End with the keyboard,
 * selects a band: it is outlined at once, "band-selected" is emitted, and
 * the picture is asked again with its site's bands opaque and the others
 * faded.  The picture is drawn in the worker with the bands, so a frame
 * only shows it and outlines one or two bands.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-session.h"

G_BEGIN_DECLS

#define VS_TYPE_BLOCKS_CHART (vs_blocks_chart_get_type ())
G_DECLARE_FINAL_TYPE (VsBlocksChart, vs_blocks_chart, VS, BLOCKS_CHART, GtkWidget)

/* The session drawn (NULL: none). */
void vs_blocks_chart_set_session (VsBlocksChart *self, VsSession *session);

/* The bands drawn (NULL until the first query answers).  Owned by self. */
const VsBlockBands *vs_blocks_chart_get_bands (VsBlocksChart *self);

/* Whether the bands drawn are those of the session's current device,
 * range and the chart's width, with nothing asked since (tests, bench). */
gboolean vs_blocks_chart_is_settled (VsBlocksChart *self);

/* The band under the pointer, the selected band (-1: none), as indexes
 * into the bands drawn. */
int vs_blocks_chart_get_hovered (VsBlocksChart *self);
int vs_blocks_chart_get_selected (VsBlocksChart *self);

/* Selects band index of the bands drawn (-1 clears), as a click on it
 * does: emits "band-selected". */
void vs_blocks_chart_select (VsBlocksChart *self, int index);

/* The text describing band index: size, allocation and free times, and
 * the stack with the user's own frames first.  A new string. */
char *vs_blocks_chart_describe (VsBlocksChart *self, int index);

G_END_DECLS
