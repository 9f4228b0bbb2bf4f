/* SPDX-License-Identifier: MIT */
/* vs-memory-chart.h — one device's memory timeline as an interactive widget.
 *
 * Draws a VsChartData with vs_chart_draw() (cached as a render node until
 * the data, the visible range, the size or the style changes) and puts the
 * hover line, the selected instant and the selected range on top.
 * Scrolling or pinching zooms around the pointer, dragging pans,
 * shift-dragging selects a range, a click selects an instant, hovering
 * shows the exact values in a tooltip.
 *
 * Properties: "visible-range" (VsTimeSpan, clamped to the limits; the
 * user's pans and zooms change it, so a two-way binding with the
 * session's moves every chart), "instant" (the time marked, < 0: none),
 * "selection" (VsTimeSpan, empty: none), "plot-width" (read-only).  A
 * click or shift-drag is reported as a signal ("instant-selected",
 * "range-selected") for the window to select it in the session; the
 * window fetches data for the new view.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-chart-data.h"
#include "vs-document.h"

G_BEGIN_DECLS

#define VS_TYPE_MEMORY_CHART (vs_memory_chart_get_type ())
G_DECLARE_FINAL_TYPE (VsMemoryChart, vs_memory_chart, VS, MEMORY_CHART, GtkWidget)

GtkWidget *vs_memory_chart_new (void);

/* Replaces the data drawn (a reference is taken; NULL clears). */
void vs_memory_chart_set_data (VsMemoryChart *self, VsChartData *data);
VsChartData *vs_memory_chart_get_data (VsMemoryChart *self);

/* The document and device the chart shows, for the details of its failed
 * allocations (a reference is taken; NULL: none). */
void vs_memory_chart_set_document (VsMemoryChart *self, VsDocument *document, gint64 device_id);

/* What the tooltip at widget point (x, y) says about the NVTX range or
 * the failed allocation drawn there, as Pango markup (free it); NULL when
 * neither is there. */
char *vs_memory_chart_describe (VsMemoryChart *self, double x, double y);

/* The range of times the user may pan and zoom over ([0, duration]). */
void vs_memory_chart_set_limits (VsMemoryChart *self, gint64 duration_ns);

void vs_memory_chart_get_view (VsMemoryChart *self, gint64 *t0, gint64 *t1);

/* Zooms by factor (> 1 zooms in) around the centre of the view, as the
 * keyboard shortcuts do; emits "view-changed". */
void vs_memory_chart_zoom (VsMemoryChart *self, double factor);

/* Pans by fraction of the visible span (> 0 later, < 0 earlier), as the
 * keyboard shortcuts do; emits "view-changed". */
void vs_memory_chart_pan (VsMemoryChart *self, double fraction);

/* The selected instant (a vertical line; < 0: none) and range (a shaded
 * band; a >= b: none). */
void vs_memory_chart_set_instant (VsMemoryChart *self, gint64 t);
void vs_memory_chart_set_selection (VsMemoryChart *self, gint64 a, gint64 b);

/* Width of the plotting area in pixels: the number of buckets worth
 * asking the analyzer for. */
guint vs_memory_chart_get_plot_width (VsMemoryChart *self);

/* Microseconds the last rebuild of the cached drawing took (benchmarks). */
gint64 vs_memory_chart_get_last_draw_us (VsMemoryChart *self);

G_END_DECLS
