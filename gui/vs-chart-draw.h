/* SPDX-License-Identifier: MIT */
/* vs-chart-draw.h — draws one device's memory timeline into a GtkSnapshot.
 *
 * Callable without a window: it takes a snapshot, the reduced data, the
 * visible time range, a size, a palette and a PangoContext, so tests render
 * it offscreen with the cairo renderer and check pixels.  The VsMemoryChart
 * widget records its output once per data/view/size change and replays the
 * cached node on every frame, drawing hover and selection on top.
 *
 * Picture, top to bottom: a header row (device title, legend), NVTX range
 * lanes, a kernel density lane, the chart (allocated as a filled area,
 * reserved as a line above it with the gap between them hatched as
 * "cached, free", brackets over that gap where fragmentation hurt, the
 * allocator's limit as a labelled solid line, the device's capacity as a
 * dashed line, peak and failed
 * allocation markers, and — when the data has one — the reserved line
 * replayed under another allocator setting, dashed, and — when the data
 * has a compared trace — that trace's allocated and reserved lines in
 * another colour), and the time axis.  The y axis is labelled in the
 * left gutter.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-chart-data.h"
#include "vs-chart-layout.h"

G_BEGIN_DECLS

/* Draws data for the visible range [view_t0, view_t1) into a width × height
 * box at the snapshot's origin.  pango must be a PangoCairo context (a
 * widget's, or one made from pango_cairo_font_map_get_default()).
 * data may be NULL (draws the empty frame).  Requires view_t1 > view_t0. */
void vs_chart_draw (GtkSnapshot *snapshot, const VsChartData *data, gint64 view_t0, gint64 view_t1,
                    int width, int height, const VsChartPalette *palette, PangoContext *pango);

G_END_DECLS
