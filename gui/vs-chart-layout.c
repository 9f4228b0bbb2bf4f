/* SPDX-License-Identifier: MIT */
/* vs-chart-layout.c — the timeline's palettes, where each part of the
 * picture lies, and the mapping between time, bytes and chart coordinates
 * (see vs-chart-layout.h).
 */
#include "vs-chart-layout.h"

#define RGBA(r, g, b, a)                                                                           \
  {                                                                                                \
    r / 255.f, g / 255.f, b / 255.f, a                                                             \
  }

static const VsChartPalette light_palette = {
  .background = RGBA (255, 255, 255, 1),
  .grid = RGBA (0, 0, 0, 0.08),
  .text = RGBA (36, 31, 49, 1),
  .dim_text = RGBA (94, 92, 100, 1),
  .allocated_fill = RGBA (53, 132, 228, 0.55),
  .allocated_line = RGBA (28, 113, 216, 1),
  .reserved_line = RGBA (230, 97, 0, 1),
  .fragmentation = RGBA (255, 163, 72, 0.30),
  .capacity = RGBA (192, 28, 40, 0.9),
  .peak = RGBA (26, 95, 180, 1),
  .failed = RGBA (224, 27, 36, 1),
  .kernels = RGBA (38, 162, 105, 1),
  .selection = RGBA (53, 132, 228, 0.18),
  .cursor = RGBA (36, 31, 49, 0.6),
  .whatif = RGBA (129, 61, 156, 1),
  .limit = RGBA (99, 69, 44, 1),
  .fragmentation_hurt = RGBA (198, 70, 0, 1),
  .compare = RGBA (0, 128, 128, 1),
};

static const VsChartPalette dark_palette = {
  .background = RGBA (36, 36, 36, 1),
  .grid = RGBA (255, 255, 255, 0.09),
  .text = RGBA (255, 255, 255, 1),
  .dim_text = RGBA (192, 191, 188, 1),
  .allocated_fill = RGBA (53, 132, 228, 0.60),
  .allocated_line = RGBA (98, 160, 234, 1),
  .reserved_line = RGBA (255, 163, 72, 1),
  .fragmentation = RGBA (255, 163, 72, 0.28),
  .capacity = RGBA (246, 97, 81, 0.9),
  .peak = RGBA (153, 193, 241, 1),
  .failed = RGBA (246, 97, 81, 1),
  .kernels = RGBA (87, 227, 137, 1),
  .selection = RGBA (120, 174, 237, 0.22),
  .cursor = RGBA (255, 255, 255, 0.6),
  .whatif = RGBA (192, 97, 203, 1),
  .limit = RGBA (205, 171, 143, 1),
  .fragmentation_hurt = RGBA (255, 120, 0, 1),
  .compare = RGBA (102, 204, 204, 1),
};

/* See vs-chart-layout.h. */
const VsChartPalette *
vs_chart_palette (gboolean dark)
{
  return dark ? &dark_palette : &light_palette;
}

/* See vs-chart-layout.h. */
void
vs_chart_layout (const VsChartData *data, int width, int height, VsChartLayout *l)
{
  double y = VS_CHART_HEADER_HEIGHT;
  double lanes = 0, klane = 0;
  double cx = VS_CHART_GUTTER, cw = MAX (1, width - VS_CHART_GUTTER - 12);
  gint64 peak = 0;

  if (data != NULL)
    {
      lanes = MIN (data->max_range_depth, VS_CHART_MAX_RANGE_LANES) * VS_CHART_LANE_HEIGHT;
      klane = data->has_kernels ? VS_CHART_KERNEL_LANE_HEIGHT + 2 : 0;
      peak = data->peak_bytes;
    }
  l->header = GRAPHENE_RECT_INIT (0, 0, width, VS_CHART_HEADER_HEIGHT);
  l->ranges = GRAPHENE_RECT_INIT (cx, y, cw, lanes);
  y += lanes;
  l->kernels = GRAPHENE_RECT_INIT (cx, y, cw, klane ? klane - 2 : 0);
  y += klane + 4;
  l->chart = GRAPHENE_RECT_INIT (cx, y, cw, MAX (1, height - y - VS_CHART_AXIS_HEIGHT));
  l->axis = GRAPHENE_RECT_INIT (cx, height - VS_CHART_AXIS_HEIGHT, cw, VS_CHART_AXIS_HEIGHT);

  /* Room above the peak for its label; the capacity line joins the scale
   * only when it is close enough not to flatten the curves. */
  l->y_max = MAX (peak * 1.18, 1024.0 * 1024.0);
  l->capacity_on_scale = FALSE;
  l->limit_on_scale = FALSE;
  if (data != NULL && data->capacity_bytes > 0 && data->capacity_bytes <= peak * 1.6)
    {
      l->y_max = MAX (l->y_max, data->capacity_bytes * 1.08);
      l->capacity_on_scale = TRUE;
    }
  /* The limit is what a failure at the allocator's cap ran into: on the
   * scale unless it is far above everything drawn (then the curves would
   * flatten). */
  if (data != NULL && data->limit_bytes > 0 && data->limit_bytes <= MAX (peak, 1) * 4)
    {
      l->y_max = MAX (l->y_max, data->limit_bytes * 1.12);
      l->limit_on_scale = TRUE;
    }
}

/* See vs-chart-layout.h. */
double
vs_chart_x_for_time (const VsChartLayout *l, gint64 view_t0, gint64 view_t1, gint64 t)
{
  return l->chart.origin.x
         + (double)(t - view_t0) / (double)(view_t1 - view_t0) * l->chart.size.width;
}

/* See vs-chart-layout.h. */
gint64
vs_chart_time_for_x (const VsChartLayout *l, gint64 view_t0, gint64 view_t1, double x)
{
  return view_t0
         + (gint64)((x - l->chart.origin.x) / l->chart.size.width * (double)(view_t1 - view_t0));
}

/* See vs-chart-layout.h. */
double
vs_chart_y_for_bytes (const VsChartLayout *l, gint64 bytes)
{
  double bottom = l->chart.origin.y + l->chart.size.height;
  return bottom - (double)bytes / l->y_max * l->chart.size.height;
}
