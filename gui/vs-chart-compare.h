/* SPDX-License-Identifier: MIT */
/* vs-chart-compare.h — the compared trace's lines on a timeline: its
 * allocated memory as a solid line and its reserved memory as a dashed
 * line, in the palette's compare colour, over the first trace's picture
 * (vs-chart-draw.h).  Callable without a window, like the rest of it.
 */
#pragma once

#include "vs-chart-layout.h"

G_BEGIN_DECLS

/* Draws d->compare (nothing when NULL) for the visible range [v0, v1)
 * into the chart area of layout l; cr is clipped to it by the caller. */
void vs_chart_draw_compare (cairo_t *cr, const VsChartData *d, const VsChartLayout *l, gint64 v0,
                            gint64 v1, const VsChartPalette *p);

G_END_DECLS
