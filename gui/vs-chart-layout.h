/* SPDX-License-Identifier: MIT */
/* vs-chart-layout.h — the timeline's palette and layout, shared by the
 * picture (vs-chart-draw.h), the compared trace's lines
 * (vs-chart-compare.h) and the widget's hit tests: the colours for a light
 * or dark style, where the header, range lanes, kernel lane, chart and
 * axis lie for a data set and size, and the mapping between time, bytes
 * and chart coordinates.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-chart-data.h"

G_BEGIN_DECLS

typedef struct
{
  GdkRGBA background;
  GdkRGBA grid;
  GdkRGBA text;
  GdkRGBA dim_text;
  GdkRGBA allocated_fill;
  GdkRGBA allocated_line;
  GdkRGBA reserved_line;
  GdkRGBA fragmentation;
  GdkRGBA capacity;
  GdkRGBA peak;
  GdkRGBA failed;
  GdkRGBA kernels;
  GdkRGBA selection;
  GdkRGBA cursor;
  GdkRGBA whatif;             /* the reserved line replayed under another setting (dashed) */
  GdkRGBA limit;              /* the allocator's limit (cap or memory fraction) */
  GdkRGBA fragmentation_hurt; /* brackets where free memory inside reserved hurt */
  GdkRGBA compare;            /* the compared trace's lines (vs-chart-compare.h) */
} VsChartPalette;

/* The palette for a light or dark style (static storage). */
const VsChartPalette *vs_chart_palette (gboolean dark);

/* Where each part of the picture lies for a given data set and size. */
typedef struct
{
  graphene_rect_t header;
  graphene_rect_t ranges;  /* zero height without NVTX ranges */
  graphene_rect_t kernels; /* zero height without kernels */
  graphene_rect_t chart;
  graphene_rect_t axis;
  double y_max; /* bytes at the chart's top edge */
  gboolean capacity_on_scale;
  gboolean limit_on_scale; /* the limit line is drawn */
} VsChartLayout;

#define VS_CHART_GUTTER 68
#define VS_CHART_HEADER_HEIGHT 22
#define VS_CHART_LANE_HEIGHT 16
#define VS_CHART_KERNEL_LANE_HEIGHT 12
#define VS_CHART_AXIS_HEIGHT 20
#define VS_CHART_MAX_RANGE_LANES 4

/* Computes the layout of data drawn at width × height. */
void vs_chart_layout (const VsChartData *data, int width, int height, VsChartLayout *layout);

/* The chart's x for time t, and the time at chart x (both in widget
 * coordinates), for the visible range [view_t0, view_t1). */
double vs_chart_x_for_time (const VsChartLayout *layout, gint64 view_t0, gint64 view_t1, gint64 t);
gint64 vs_chart_time_for_x (const VsChartLayout *layout, gint64 view_t0, gint64 view_t1, double x);

/* The chart's y for a byte count. */
double vs_chart_y_for_bytes (const VsChartLayout *layout, gint64 bytes);

G_END_DECLS
