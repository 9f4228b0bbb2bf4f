/* SPDX-License-Identifier: MIT */
/* vs-blocks-draw.h — draws allocations over time (VsBlockBands) with cairo.
 *
 * Callable without a window: it takes a cairo context, the bands, a size
 * and a palette, so tests draw into an image surface and check pixels.
 * The VsBlocksChart widget draws in its worker thread, with each query
 * (new range, size or selected site), into an image that every frame
 * shows, with the hovered and selected bands outlined on top.
 *
 * Picture: the y axis (bytes) labelled in the left gutter, as wide as the
 * main chart's (VS_CHART_GUTTER) so that both share the time axis; one
 * column per pixel; each band a run of rectangles in its site's colour,
 * the other band (memory too small or too short-lived to draw at this
 * zoom) grey on top of them.  With a site selected, the other sites'
 * bands are faded.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-analyzer.h"

G_BEGIN_DECLS

/* Where the bands lie for a widget of width × height. */
typedef struct
{
  double x, y, width, height; /* the plot; one column per pixel from x */
  double y_max;               /* bytes at the plot's top */
} VsBlocksLayout;

/* The plot of bands drawn at width × height (bands may be NULL). */
void vs_blocks_layout (const VsBlockBands *bands, int width, int height, VsBlocksLayout *layout);

/* The number of columns to query for a widget width (at least 1). */
guint vs_blocks_columns_for_width (int width);

/* The colour of site's bands (one of a fixed palette, picked by the
 * site's text so that the same site has the same colour everywhere). */
void vs_blocks_site_color (const char *site, GdkRGBA *color);

/* The colour of the other band. */
void vs_blocks_other_color (gboolean dark, GdkRGBA *color);

/* Draws bands into a width × height box at cr's origin.  selected_site
 * (NULL: none) keeps its bands opaque and fades the others; pango must be
 * a PangoCairo context.  bands may be NULL (draws the empty plot). */
void vs_blocks_draw (cairo_t *cr, const VsBlockBands *bands, int width, int height,
                     const char *selected_site, gboolean dark, PangoContext *pango);

/* Adds band index's outline (its run of rectangles) to cr's path. */
void vs_blocks_band_path (cairo_t *cr, const VsBlockBands *bands, const VsBlocksLayout *layout,
                          guint index);

/* The band at widget point (x, y), -1 when none (the other band, the
 * empty plot, outside). */
int vs_blocks_band_at (const VsBlockBands *bands, const VsBlocksLayout *layout, double x, double y);

G_END_DECLS
