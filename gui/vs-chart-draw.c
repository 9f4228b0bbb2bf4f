/* SPDX-License-Identifier: MIT */
/* vs-chart-draw.c — the timeline picture, drawn with cairo into a
 * GtkSnapshot.
 *
 * Work per call is proportional to the chart's width in pixels (one
 * min/max column per pixel, taken from the analyzer's buckets), plus the
 * markers and ranges in view; nothing here depends on the number of events
 * in the trace.
 */
#include "vs-chart-draw.h"
#include "vs-chart-compare.h"
#include "vs-chart-layout.h"

#include <math.h>

#include "vs-table.h"
#include "vs-time-format.h"

#define RGBA(r, g, b, a)                                                                           \
  {                                                                                                \
    r / 255.f, g / 255.f, b / 255.f, a                                                             \
  }

/* Soft colours for NVTX range bars, picked by a hash of the name. */
static const GdkRGBA range_colors[] = {
  RGBA (153, 193, 241, 1), RGBA (143, 240, 164, 1), RGBA (249, 240, 107, 1),
  RGBA (255, 190, 111, 1), RGBA (246, 151, 151, 1), RGBA (220, 138, 221, 1),
  RGBA (205, 171, 143, 1), RGBA (192, 191, 188, 1),
};

/* A "nice" step (1, 2 or 5 times a power of ten) at least min_step. */
static double
nice_step (double min_step)
{
  double p = pow (10, floor (log10 (min_step)));
  if (p >= min_step)
    return p;
  if (2 * p >= min_step)
    return 2 * p;
  if (5 * p >= min_step)
    return 5 * p;
  return 10 * p;
}

/* The byte unit used for y labels: the largest binary unit not above v. */
static double
byte_unit (double v)
{
  double u = 1;
  while (v >= 1024 * u && u < 1024.0 * 1024 * 1024 * 1024)
    u *= 1024;
  return u;
}

static void
set_source (cairo_t *cr, const GdkRGBA *c)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha);
}

/* Shows text with its top-left (align 0), top-centre (0.5) or top-right (1)
 * at x, y; returns the text's width. */
static double
show_text (cairo_t *cr, PangoLayout *layout, const char *text, double x, double y, double align,
           const GdkRGBA *color)
{
  int w, h;

  pango_layout_set_text (layout, text, -1);
  pango_layout_get_pixel_size (layout, &w, &h);
  set_source (cr, color);
  cairo_move_to (cr, round (x - align * w), round (y));
  pango_cairo_show_layout (cr, layout);
  return w;
}

/* Per-pixel-column values of the visible range. */
typedef struct
{
  gboolean has;
  double max_a, max_r, min_r; /* in y pixels */
  guint32 kernels;
  gboolean has_w;
  double max_w, min_w; /* the replayed reserved line, in y pixels */
} Column;

static void
draw_grid_and_axes (cairo_t *cr, PangoLayout *pl, const VsChartLayout *l, gint64 v0, gint64 v1,
                    const VsChartPalette *p)
{
  const graphene_rect_t *c = &l->chart;
  double unit = byte_unit (l->y_max / 1.1);
  double ystep_u = nice_step (l->y_max / unit / MAX (1, c->size.height / 36));
  double ystep = ystep_u * unit;
  int decimals = (int)CLAMP (-floor (log10 (ystep_u) + 1e-9), 0, 3);
  double tstep = nice_step ((double)(v1 - v0) / MAX (1, c->size.width / 96));
  int ui = (int)round (log2 (unit) / 10);

  cairo_set_line_width (cr, 1);
  for (double b = 0; b <= l->y_max; b += ystep)
    {
      double y = floor (vs_chart_y_for_bytes (l, (gint64)b)) + 0.5;
      g_autofree char *label = NULL;

      set_source (cr, &p->grid);
      cairo_move_to (cr, c->origin.x, y);
      cairo_line_to (cr, c->origin.x + c->size.width, y);
      cairo_stroke (cr);
      if (b == 0)
        label = g_strdup ("0");
      else
        label = vs_format_bytes_in_unit (b, ui, decimals);
      show_text (cr, pl, label, c->origin.x - 6, y - 7, 1.0, &p->dim_text);
    }

  for (double t = ceil (v0 / tstep) * tstep; t < v1; t += tstep)
    {
      double x = floor (vs_chart_x_for_time (l, v0, v1, (gint64)t)) + 0.5;
      g_autofree char *label = vs_format_time_tick ((gint64)t, (gint64)tstep);

      set_source (cr, &p->grid);
      cairo_move_to (cr, x, c->origin.y);
      cairo_line_to (cr, x, c->origin.y + c->size.height + 4);
      cairo_stroke (cr);
      show_text (cr, pl, label, x, l->axis.origin.y + 3, 0.5, &p->dim_text);
    }
}

/* A 6×6 diagonal hatch in the fragmentation colour, for the gap between
 * allocated and reserved. */
static cairo_pattern_t *
hatch_pattern (const GdkRGBA *c)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 6, 6);
  cairo_t *cr = cairo_create (s);
  cairo_pattern_t *pat;

  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha);
  cairo_paint (cr);
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, MIN (1, c->alpha * 2));
  cairo_set_line_width (cr, 1.2);
  cairo_move_to (cr, -1, 7);
  cairo_line_to (cr, 7, -1);
  cairo_stroke (cr);
  cairo_destroy (cr);
  pat = cairo_pattern_create_for_surface (s);
  cairo_pattern_set_extend (pat, CAIRO_EXTEND_REPEAT);
  cairo_surface_destroy (s);
  return pat;
}

/* The y of column k's field (a double at byte offset off in Column). */
#define COL_Y(col, k, off) (*(const double *)((const char *)&(col)[k] + (off)))

/* Adds the step line through column values [i, j) to the current path,
 * left to right (or right to left with backwards), starting with a
 * line_to to the first point.  Only changes of value add points, so a flat
 * stretch costs two points whatever its width: cairo's rasterizer work
 * follows the shape, not the pixel count. */
static void
step_path (cairo_t *cr, double x0, const Column *col, int i, int j, gsize off, double dy,
           gboolean backwards)
{
  if (!backwards)
    {
      double y = COL_Y (col, i, off) + dy;
      cairo_line_to (cr, x0 + i, y);
      for (int k = i + 1; k < j; k++)
        {
          double ny = COL_Y (col, k, off) + dy;
          if (ny != y)
            {
              cairo_line_to (cr, x0 + k, y);
              cairo_line_to (cr, x0 + k, ny);
              y = ny;
            }
        }
      cairo_line_to (cr, x0 + j, y);
    }
  else
    {
      double y = COL_Y (col, j - 1, off) + dy;
      cairo_line_to (cr, x0 + j, y);
      for (int k = j - 2; k >= i; k--)
        {
          double ny = COL_Y (col, k, off) + dy;
          if (ny != y)
            {
              cairo_line_to (cr, x0 + k + 1, y);
              cairo_line_to (cr, x0 + k + 1, ny);
              y = ny;
            }
        }
      cairo_line_to (cr, x0 + i, y);
    }
}

static void
draw_series (cairo_t *cr, const VsChartLayout *l, const Column *col, int n, const VsChartPalette *p)
{
  double x0 = l->chart.origin.x;
  double base = l->chart.origin.y + l->chart.size.height;
  cairo_pattern_t *hatch = hatch_pattern (&p->fragmentation);
  gsize off_a = G_STRUCT_OFFSET (Column, max_a);
  gsize off_r = G_STRUCT_OFFSET (Column, max_r);

  for (int i = 0; i < n;)
    {
      int j;

      if (!col[i].has)
        {
          i++;
          continue;
        }
      for (j = i; j < n && col[j].has; j++)
        ;
      /* Areas are unions of pixel columns: no antialiasing needed, and
       * without it cairo fills them far faster. */
      cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);

      /* Fragmentation: between reserved (above) and allocated (below). */
      cairo_new_path (cr);
      step_path (cr, x0, col, i, j, off_r, 0, FALSE);
      step_path (cr, x0, col, i, j, off_a, 0, TRUE);
      cairo_close_path (cr);
      cairo_set_source (cr, hatch);
      cairo_fill (cr);

      /* Allocated: filled from the baseline. */
      cairo_move_to (cr, x0 + i, base);
      step_path (cr, x0, col, i, j, off_a, 0, FALSE);
      cairo_line_to (cr, x0 + j, base);
      cairo_close_path (cr);
      set_source (cr, &p->allocated_fill);
      cairo_fill (cr);
      cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);

      cairo_set_line_width (cr, 1);
      cairo_new_path (cr);
      step_path (cr, x0, col, i, j, off_a, -0.5, FALSE);
      set_source (cr, &p->allocated_line);
      cairo_stroke (cr);

      /* Reserved: a step line, with the column's min..max range drawn as a
       * vertical stroke where reserved moved inside one pixel. */
      cairo_set_line_width (cr, 1.5);
      cairo_new_path (cr);
      step_path (cr, x0, col, i, j, off_r, -0.75, FALSE);
      set_source (cr, &p->reserved_line);
      cairo_stroke (cr);
      for (int k = i; k < j; k++)
        if (col[k].min_r - col[k].max_r >= 1.5)
          {
            cairo_move_to (cr, x0 + k + 0.5, col[k].max_r);
            cairo_line_to (cr, x0 + k + 0.5, col[k].min_r);
          }
      cairo_stroke (cr);
      i = j;
    }
  cairo_pattern_destroy (hatch);
}

/* The reserved line replayed under another setting: a dashed step line
 * over the recorded one, with a column's min..max range as a vertical
 * stroke where it moved inside one pixel. */
static void
draw_whatif (cairo_t *cr, const VsChartLayout *l, const Column *col, int n, const VsChartPalette *p)
{
  double x0 = l->chart.origin.x;
  double dash[] = { 5, 3 };
  gsize off = G_STRUCT_OFFSET (Column, max_w);

  cairo_set_line_width (cr, 2);
  cairo_set_dash (cr, dash, 2, 0);
  set_source (cr, &p->whatif);
  for (int i = 0; i < n;)
    {
      int j;

      if (!col[i].has_w)
        {
          i++;
          continue;
        }
      for (j = i; j < n && col[j].has_w; j++)
        ;
      cairo_new_path (cr);
      step_path (cr, x0, col, i, j, off, -1, FALSE);
      cairo_stroke (cr);
      for (int k = i; k < j; k++)
        if (col[k].min_w - col[k].max_w >= 1.5)
          {
            cairo_move_to (cr, x0 + k + 0.5, col[k].max_w - 1);
            cairo_line_to (cr, x0 + k + 0.5, col[k].min_w - 1);
          }
      cairo_stroke (cr);
      i = j;
    }
  cairo_set_dash (cr, NULL, 0, 0);
}

static void
draw_capacity (cairo_t *cr, PangoLayout *pl, const VsChartData *d, const VsChartLayout *l,
               const VsChartPalette *p)
{
  const graphene_rect_t *c = &l->chart;
  g_autofree char *cap = NULL;
  g_autofree char *label = NULL;

  if (d->capacity_bytes <= 0)
    return;
  /* Far above the peak the line would flatten the curves; the header's
   * title names the capacity instead. */
  if (!l->capacity_on_scale)
    return;
  cap = vs_format_bytes (d->capacity_bytes);
  double y = floor (vs_chart_y_for_bytes (l, d->capacity_bytes)) + 0.5;
  double dash[] = { 6, 4 };
  label = g_strdup_printf ("capacity %s", cap);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, 1);
  set_source (cr, &p->capacity);
  cairo_move_to (cr, c->origin.x, y);
  cairo_line_to (cr, c->origin.x + c->size.width, y);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  show_text (cr, pl, label, c->origin.x + c->size.width - 4, y - 16, 1.0, &p->capacity);
}

/* The allocator's limit: a solid line across the chart, labelled at its
 * left end above the line (the capacity's label is at the right). */
static void
draw_limit (cairo_t *cr, PangoLayout *pl, const VsChartData *d, const VsChartLayout *l,
            const VsChartPalette *p)
{
  const graphene_rect_t *c = &l->chart;
  double y;

  if (!l->limit_on_scale)
    return;
  /* A 2 px line on whole pixels: rows y - 1 and y. */
  y = round (vs_chart_y_for_bytes (l, d->limit_bytes));
  set_source (cr, &p->limit);
  cairo_rectangle (cr, c->origin.x, y - 1, c->size.width, 2);
  cairo_fill (cr);
  if (d->limit_label != NULL)
    show_text (cr, pl, d->limit_label, c->origin.x + 6, y - 15, 0.0, &p->limit);
}

/* Where free memory inside reserved hurt: a bracket over the gap between
 * allocated and reserved at that instant, 3 px wide with ticks at both
 * ends. */
static void
draw_fragmentation (cairo_t *cr, const VsChartData *d, const VsChartLayout *l, gint64 v0, gint64 v1,
                    const VsChartPalette *p)
{
  for (guint i = 0; i < d->fragmentation->len; i++)
    {
      const VsChartFragmentation *f = &g_array_index (d->fragmentation, VsChartFragmentation, i);
      double x, top, bottom;

      if (f->ts < v0 || f->ts >= v1 || f->reserved_bytes <= f->allocated_bytes)
        continue;
      x = floor (vs_chart_x_for_time (l, v0, v1, f->ts));
      top = round (vs_chart_y_for_bytes (l, f->reserved_bytes));
      bottom = round (vs_chart_y_for_bytes (l, f->allocated_bytes));
      set_source (cr, &p->fragmentation_hurt);
      cairo_rectangle (cr, x - 1, top, 3, MAX (1, bottom - top));
      cairo_rectangle (cr, x - 4, top, 9, 2);
      cairo_rectangle (cr, x - 4, bottom - 2, 9, 2);
      cairo_fill (cr);
    }
}

/* Labels placed so far, so later ones go where they do not overlap. */
typedef struct
{
  GArray *taken; /* graphene_rect_t: labels placed */
  GArray *marks; /* graphene_rect_t: discs drawn (a label may touch its own) */
  const graphene_rect_t *bounds;
} Labels;

/* Shows text near (x, y): right of it, else left of it, else one line
 * higher or lower on either side, wherever it overlaps no earlier label
 * (keeping a small gap) and no disc, and stays inside the chart; skips it
 * when there is no such place. */
static void
place_label (cairo_t *cr, PangoLayout *pl, Labels *labels, const char *text, double x, double y,
             const GdkRGBA *color)
{
  int w, h;
  const double dx[] = { 8, -8, 8, -8, 8, -8 };
  const double dy[] = { 0, 0, -14, -14, 14, 14 };

  pango_layout_set_text (pl, text, -1);
  pango_layout_get_pixel_size (pl, &w, &h);
  for (guint i = 0; i < G_N_ELEMENTS (dx); i++)
    {
      graphene_rect_t r
          = GRAPHENE_RECT_INIT (dx[i] > 0 ? x + dx[i] : x + dx[i] - w, y + dy[i] - h / 2.0, w, h);
      /* Labels keep a small gap between them, not just no overlap. */
      graphene_rect_t spaced
          = GRAPHENE_RECT_INIT (r.origin.x - 4, r.origin.y, r.size.width + 8, r.size.height);
      gboolean free = graphene_rect_contains_rect (labels->bounds, &r);

      for (guint j = 0; free && j < labels->taken->len; j++)
        free = !graphene_rect_intersection (&g_array_index (labels->taken, graphene_rect_t, j),
                                            &spaced, NULL);
      for (guint j = 0; free && j < labels->marks->len; j++)
        free = !graphene_rect_intersection (&g_array_index (labels->marks, graphene_rect_t, j), &r,
                                            NULL);
      if (!free)
        continue;
      g_array_append_val (labels->taken, r);
      show_text (cr, pl, text, r.origin.x, r.origin.y, 0.0, color);
      return;
    }
}

/* Failed allocations whose discs would touch: drawn as one disc with one
 * label for all of them. */
typedef struct
{
  double x;    /* the first one's line: the disc */
  double last; /* the last one's line */
  guint n;
  gint64 min_bytes, max_bytes;
} FailureGroup;

/* A failure closer than this (pixels) to the previous one joins its
 * group: one disc and one label for a run of them. */
#define FAILURE_GROUP_PX 12

static void
draw_failure_disc (cairo_t *cr, double x, double y, const VsChartPalette *p)
{
  set_source (cr, &p->failed);
  cairo_arc (cr, x, y, 5, 0, 2 * G_PI);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_set_line_width (cr, 1.5);
  cairo_move_to (cr, x - 2.2, y - 2.2);
  cairo_line_to (cr, x + 2.2, y + 2.2);
  cairo_move_to (cr, x + 2.2, y - 2.2);
  cairo_line_to (cr, x - 2.2, y + 2.2);
  cairo_stroke (cr);
}

static void
draw_markers (cairo_t *cr, PangoLayout *pl, const VsChartData *d, const VsChartLayout *l, gint64 v0,
              gint64 v1, const VsChartPalette *p)
{
  const graphene_rect_t *c = &l->chart;
  graphene_rect_t bounds
      = GRAPHENE_RECT_INIT (c->origin.x, c->origin.y - 2, c->size.width, c->size.height);
  Labels labels = { g_array_new (FALSE, FALSE, sizeof (graphene_rect_t)),
                    g_array_new (FALSE, FALSE, sizeof (graphene_rect_t)), &bounds };
  g_autoptr (GArray) groups = g_array_new (FALSE, FALSE, sizeof (FailureGroup));
  double disc_y = c->origin.y + 7;

  /* Markers first, then labels: peaks get the first choice of place,
   * then failed allocations left to right.  Every failure keeps its own
   * dashed line; a run of failures closer together than a disc shares
   * one disc and one label ("29 failed, 24.50 MiB – 50.14 MiB"). */
  for (guint i = 0; i < d->markers->len; i++)
    {
      const VsChartMarker *m = &g_array_index (d->markers, VsChartMarker, i);
      double x, y;
      double dash[] = { 3, 3 };
      FailureGroup *last;

      if (m->ts < v0 || m->ts >= v1)
        continue;
      if (m->kind != VS_CHART_MARKER_FAILED)
        {
          x = vs_chart_x_for_time (l, v0, v1, m->ts);
          y = vs_chart_y_for_bytes (l, m->bytes) - 3;
          set_source (cr, m->kind == VS_CHART_MARKER_PEAK_ALLOCATED ? &p->peak : &p->reserved_line);
          cairo_move_to (cr, x, y);
          cairo_line_to (cr, x - 5, y - 7);
          cairo_line_to (cr, x + 5, y - 7);
          cairo_close_path (cr);
          cairo_fill (cr);
          continue;
        }
      x = floor (vs_chart_x_for_time (l, v0, v1, m->ts)) + 0.5;
      set_source (cr, &p->failed);
      cairo_set_line_width (cr, 1);
      cairo_set_dash (cr, dash, 2, 0);
      cairo_move_to (cr, x, disc_y + 5);
      cairo_line_to (cr, x, c->origin.y + c->size.height);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      last = groups->len > 0 ? &g_array_index (groups, FailureGroup, groups->len - 1) : NULL;
      if (last != NULL && x - last->last < FAILURE_GROUP_PX)
        {
          last->last = x;
          last->n++;
          last->min_bytes = MIN (last->min_bytes, m->bytes);
          last->max_bytes = MAX (last->max_bytes, m->bytes);
        }
      else
        {
          FailureGroup g = { x, x, 1, m->bytes, m->bytes };
          g_array_append_val (groups, g);
        }
    }
  for (guint i = 0; i < groups->len; i++)
    {
      const FailureGroup *g = &g_array_index (groups, FailureGroup, i);
      /* The disc itself is taken space too. */
      graphene_rect_t r = GRAPHENE_RECT_INIT (g->x - 6, disc_y - 6, 12, 12);

      draw_failure_disc (cr, g->x, disc_y, p);
      g_array_append_val (labels.marks, r);
    }

  for (guint i = 0; i < d->markers->len; i++)
    {
      const VsChartMarker *m = &g_array_index (d->markers, VsChartMarker, i);
      g_autofree char *b = NULL;
      g_autofree char *label = NULL;
      gboolean alloc = m->kind == VS_CHART_MARKER_PEAK_ALLOCATED;

      if (m->ts < v0 || m->ts >= v1 || m->kind == VS_CHART_MARKER_FAILED)
        continue;
      b = vs_format_bytes (m->bytes);
      label = g_strdup_printf (alloc ? "peak allocated %s" : "peak reserved %s", b);
      place_label (cr, pl, &labels, label, vs_chart_x_for_time (l, v0, v1, m->ts),
                   vs_chart_y_for_bytes (l, m->bytes) - 7, alloc ? &p->peak : &p->reserved_line);
    }
  for (guint i = 0; i < groups->len; i++)
    {
      const FailureGroup *g = &g_array_index (groups, FailureGroup, i);
      g_autofree char *lo = vs_format_bytes (g->min_bytes);
      g_autofree char *hi = vs_format_bytes (g->max_bytes);
      g_autofree char *label = NULL;

      if (g->n == 1)
        label = g_strdup_printf ("failed %s", lo);
      else if (g->min_bytes == g->max_bytes)
        label = g_strdup_printf ("%u failed, %s each", g->n, lo);
      else
        label = g_strdup_printf ("%u failed, %s – %s", g->n, lo, hi);
      place_label (cr, pl, &labels, label, g->x, disc_y, &p->failed);
    }
  g_array_unref (labels.taken);
  g_array_unref (labels.marks);
}

static void
draw_ranges (cairo_t *cr, PangoLayout *pl, const VsChartData *d, const VsChartLayout *l, gint64 v0,
             gint64 v1, const VsChartPalette *p)
{
  const graphene_rect_t *r = &l->ranges;
  double right = r->origin.x + r->size.width;

  if (r->size.height <= 0)
    return;
  show_text (cr, pl, "ranges", r->origin.x - 6, r->origin.y + 1, 1.0, &p->dim_text);
  cairo_save (cr);
  cairo_rectangle (cr, r->origin.x, r->origin.y, r->size.width, r->size.height);
  cairo_clip (cr);
  for (guint i = 0; i < d->ranges->len; i++)
    {
      const VsChartRange *g = &g_array_index (d->ranges, VsChartRange, i);
      gint64 end = g->end_ns < 0 ? d->trace_end_ns : g->end_ns;
      double xa, xb, y;
      const GdkRGBA *c;

      if (g->depth >= VS_CHART_MAX_RANGE_LANES || end < v0 || g->start_ns >= v1)
        continue;
      xa = MAX (r->origin.x - 1, vs_chart_x_for_time (l, v0, v1, g->start_ns));
      xb = MIN (right + 1, vs_chart_x_for_time (l, v0, v1, end));
      xb = MAX (xb, xa + 1);
      y = r->origin.y + g->depth * VS_CHART_LANE_HEIGHT;
      c = &range_colors[g_str_hash (g->name != NULL ? g->name : "") % G_N_ELEMENTS (range_colors)];
      set_source (cr, c);
      cairo_rectangle (cr, xa, y + 1, xb - xa, VS_CHART_LANE_HEIGHT - 2);
      cairo_fill (cr);
      if (xb - xa > 24)
        {
          static const GdkRGBA ink = RGBA (36, 31, 49, 1);
          double tx = MAX (xa, r->origin.x) + 3;
          /* One line, ellipsized where the bar ends (wrapping would push
           * the rest of the name below the lane). */
          pango_layout_set_width (pl, (int)(MIN (xb, right) - tx - 2) * PANGO_SCALE);
          pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_END);
          show_text (cr, pl, g->name, tx, y + 1, 0.0, &ink);
          pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_NONE);
          pango_layout_set_width (pl, -1);
        }
    }
  cairo_restore (cr);
}

static void
draw_kernels (cairo_t *cr, PangoLayout *pl, const VsChartLayout *l, const Column *col, int n,
              const VsChartPalette *p)
{
  const graphene_rect_t *k = &l->kernels;
  guint32 most = 0;

  if (k->size.height <= 0)
    return;
  show_text (cr, pl, "kernels", k->origin.x - 6, k->origin.y - 2, 1.0, &p->dim_text);
  for (int i = 0; i < n; i++)
    most = MAX (most, col[i].kernels);
  if (most == 0)
    return;
  for (int i = 0; i < n; i++)
    if (col[i].kernels > 0)
      {
        GdkRGBA c = p->kernels;
        c.alpha = 0.25 + 0.75 * col[i].kernels / (double)most;
        set_source (cr, &c);
        cairo_rectangle (cr, k->origin.x + i, k->origin.y, 1, k->size.height);
        cairo_fill (cr);
      }
}

static void
draw_header (cairo_t *cr, PangoLayout *pl, const VsChartData *d, const VsChartLayout *l,
             const VsChartPalette *p)
{
  double x = l->chart.origin.x + l->chart.size.width;
  double y = 4;
  struct
  {
    const char *name;
    const GdkRGBA *c;
    int style;
  } legend[] = {
    { d != NULL ? d->whatif_label : NULL, &p->whatif, 4 },
    { "failed allocation", &p->failed, 3 },
    /* Fragmentation only where it hurt: a request the free memory inside
     * reserved could not serve (the analyzer's finding). */
    { "fragmentation", &p->fragmentation_hurt, 5 },
    { d != NULL && d->limit_label != NULL && l->limit_on_scale ? "limit" : NULL, &p->limit, 1 },
    /* Reserved but unallocated: the allocator's cache. */
    { "cached, free", &p->fragmentation, 2 },
    { "reserved", &p->reserved_line, 1 },
    { "allocated", &p->allocated_fill, 0 },
    /* A compared trace (drawn leftmost, read first): both files named,
     * the second's line styles. */
    { d != NULL && d->compare != NULL ? "B reserved" : NULL, &p->compare, 4 },
    { d != NULL && d->compare != NULL ? d->compare_label : NULL, &p->compare, 1 },
    { d != NULL && d->compare != NULL ? d->label : NULL, &p->allocated_fill, 0 },
  };

  if (d != NULL && d->title != NULL)
    {
      PangoFontDescription *bold = pango_font_description_from_string ("Bold");
      pango_layout_set_font_description (pl, bold);
      show_text (cr, pl, d->title, 8, y - 1, 0.0, &p->text);
      pango_layout_set_font_description (pl, NULL);
      pango_font_description_free (bold);
    }
  gboolean any_failed = FALSE;

  for (guint i = 0; d != NULL && i < d->markers->len; i++)
    any_failed |= g_array_index (d->markers, VsChartMarker, i).kind == VS_CHART_MARKER_FAILED;
  /* The replayed line's entry only where there is one, the
   * failed-allocation entry only where there are failures. */
  for (guint i = 0; i < G_N_ELEMENTS (legend); i++)
    {
      int w, h;
      if (legend[i].name == NULL || (legend[i].c == &p->failed && !any_failed)
          || (legend[i].c == &p->fragmentation_hurt && (d == NULL || d->fragmentation->len == 0)))
        continue;
      pango_layout_set_text (pl, legend[i].name, -1);
      pango_layout_get_pixel_size (pl, &w, &h);
      x -= w;
      show_text (cr, pl, legend[i].name, x, y - 1, 0.0, &p->dim_text);
      x -= 16;
      set_source (cr, legend[i].c);
      if (legend[i].style == 1)
        cairo_rectangle (cr, x, y + 6, 12, 2);
      else if (legend[i].style == 4)
        {
          cairo_rectangle (cr, x, y + 6, 5, 2);
          cairo_rectangle (cr, x + 8, y + 6, 4, 2);
        }
      else if (legend[i].style == 3)
        cairo_arc (cr, x + 6, y + 7, 4.5, 0, 2 * G_PI);
      else if (legend[i].style == 5)
        {
          /* The bracket, as drawn on the chart. */
          cairo_rectangle (cr, x + 5, y + 2, 3, 11);
          cairo_rectangle (cr, x + 2, y + 2, 9, 2);
          cairo_rectangle (cr, x + 2, y + 11, 9, 2);
        }
      else
        cairo_rectangle (cr, x, y + 2, 12, 10);
      cairo_fill (cr);
      x -= 14;
    }
}

/* See vs-chart-draw.h. */
void
vs_chart_draw (GtkSnapshot *snapshot, const VsChartData *d, gint64 v0, gint64 v1, int width,
               int height, const VsChartPalette *p, PangoContext *pango)
{
  VsChartLayout l;
  cairo_t *cr;
  PangoLayout *pl;
  PangoFontDescription *font;
  g_autofree Column *col = NULL;
  int n;
  double span;

  g_return_if_fail (v1 > v0);
  if (width <= VS_CHART_GUTTER + 16 || height <= 60)
    return;

  vs_chart_layout (d, width, height, &l);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  set_source (cr, &p->background);
  cairo_paint (cr);

  pl = pango_layout_new (pango);
  font = pango_font_description_from_string ("Sans 8");
  pango_layout_set_font_description (pl, font);
  pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_END);

  n = (int)l.chart.size.width;
  col = g_new0 (Column, n);
  span = (double)(v1 - v0) / n;
  if (d != NULL)
    for (int i = 0; i < n; i++)
      {
        VsChartBucket b;
        gint64 a = v0 + (gint64)(i * span);
        gint64 e = MAX (a + 1, v0 + (gint64)((i + 1) * span));
        if (!vs_chart_data_span (d, a, e, &b))
          continue;
        /* Whole pixels: neighbouring columns at the same level merge into
         * one path segment, and edges stay crisp. */
        col[i].has = TRUE;
        col[i].max_a = round (vs_chart_y_for_bytes (&l, b.max_allocated));
        col[i].max_r = round (vs_chart_y_for_bytes (&l, MAX (b.max_reserved, b.max_allocated)));
        col[i].min_r = round (vs_chart_y_for_bytes (&l, b.min_reserved));
        col[i].kernels = b.kernels;
        col[i].has_w = b.has_whatif && d->whatif_label != NULL;
        col[i].max_w = round (vs_chart_y_for_bytes (&l, b.max_whatif));
        col[i].min_w = round (vs_chart_y_for_bytes (&l, b.min_whatif));
      }

  draw_grid_and_axes (cr, pl, &l, v0, v1, p);
  pango_layout_set_font_description (pl, NULL);
  draw_header (cr, pl, d, &l, p);
  pango_layout_set_font_description (pl, font);
  cairo_save (cr);
  cairo_rectangle (cr, l.chart.origin.x, l.chart.origin.y - 20, l.chart.size.width,
                   l.chart.size.height + 20);
  cairo_clip (cr);
  draw_series (cr, &l, col, n, p);
  draw_whatif (cr, &l, col, n, p);
  vs_chart_draw_compare (cr, d, &l, v0, v1, p);
  if (d != NULL)
    {
      draw_fragmentation (cr, d, &l, v0, v1, p);
      draw_capacity (cr, pl, d, &l, p);
      draw_limit (cr, pl, d, &l, p);
      draw_markers (cr, pl, d, &l, v0, v1, p);
    }
  cairo_restore (cr);
  if (d != NULL)
    draw_ranges (cr, pl, d, &l, v0, v1, p);
  draw_kernels (cr, pl, &l, col, n, p);

  /* The chart's baseline and left edge. */
  set_source (cr, &p->dim_text);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, l.chart.origin.x - 0.5, l.chart.origin.y);
  cairo_line_to (cr, l.chart.origin.x - 0.5, l.chart.origin.y + l.chart.size.height + 0.5);
  cairo_line_to (cr, l.chart.origin.x + l.chart.size.width,
                 l.chart.origin.y + l.chart.size.height + 0.5);
  cairo_stroke (cr);

  pango_font_description_free (font);
  g_object_unref (pl);
  cairo_destroy (cr);
}
