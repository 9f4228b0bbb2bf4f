/* SPDX-License-Identifier: MIT */
/* vs-chart-compare.c — the compared trace's lines (see vs-chart-compare.h).
 * One min/max pair per pixel column from the compared data's buckets,
 * which are already on the first trace's time axis; a step line through
 * the columns' maxima, and a translucent vertical stroke where the value
 * moved inside one pixel.
 */
#include "vs-chart-compare.h"

typedef struct
{
  gboolean has;
  double max_a, min_a; /* y of allocated's max and min */
  double max_r, min_r; /* y of reserved's */
} CompareColumn;

/* Strokes the step line through one quantity's column maxima; then,
 * translucent so that the first trace stays visible beneath, each
 * column's min..max range where the value moved inside one pixel. */
static void
stroke_steps (cairo_t *cr, double x0, const CompareColumn *col, int n, gboolean reserved,
              const GdkRGBA *c)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha);
  for (int i = 0; i < n;)
    {
      int j;

      if (!col[i].has)
        {
          i++;
          continue;
        }
      cairo_new_path (cr);
      for (j = i; j < n && col[j].has; j++)
        {
          double y = reserved ? col[j].max_r : col[j].max_a;

          if (j == i)
            cairo_move_to (cr, x0 + j, y);
          else
            cairo_line_to (cr, x0 + j, y);
          cairo_line_to (cr, x0 + j + 1, y);
        }
      cairo_stroke (cr);
      i = j;
    }
  cairo_new_path (cr);
  for (int i = 0; i < n; i++)
    {
      double y = reserved ? col[i].max_r : col[i].max_a;
      double lo = reserved ? col[i].min_r : col[i].min_a;

      if (col[i].has && lo - y >= 1.5)
        {
          cairo_move_to (cr, x0 + i + 0.5, y);
          cairo_line_to (cr, x0 + i + 0.5, lo);
        }
    }
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha * 0.35);
  cairo_stroke (cr);
}

/* See vs-chart-compare.h. */
void
vs_chart_draw_compare (cairo_t *cr, const VsChartData *d, const VsChartLayout *l, gint64 v0,
                       gint64 v1, const VsChartPalette *p)
{
  int n = (int)l->chart.size.width;
  double span, dash[] = { 6, 3 };
  g_autofree CompareColumn *col = NULL;

  if (d == NULL || d->compare == NULL || n <= 0 || v1 <= v0)
    return;
  col = g_new0 (CompareColumn, n);
  span = (double)(v1 - v0) / n;
  for (int i = 0; i < n; i++)
    {
      VsChartBucket b;
      gint64 a = v0 + (gint64)(i * span);
      gint64 e = MAX (a + 1, v0 + (gint64)((i + 1) * span));

      if (!vs_chart_data_span (d->compare, a, e, &b))
        continue;
      col[i].has = TRUE;
      /* Half a pixel up so a whole-pixel line covers its row exactly. */
      col[i].max_a = round (vs_chart_y_for_bytes (l, b.max_allocated)) - 1;
      col[i].min_a = round (vs_chart_y_for_bytes (l, b.min_allocated)) - 1;
      col[i].max_r = round (vs_chart_y_for_bytes (l, MAX (b.max_reserved, b.max_allocated))) - 1;
      col[i].min_r = round (vs_chart_y_for_bytes (l, b.min_reserved)) - 1;
    }
  cairo_save (cr);
  cairo_set_line_width (cr, 2);
  stroke_steps (cr, l->chart.origin.x, col, n, FALSE, &p->compare);
  cairo_set_line_width (cr, 1.5);
  cairo_set_dash (cr, dash, 2, 0);
  stroke_steps (cr, l->chart.origin.x, col, n, TRUE, &p->compare);
  cairo_restore (cr);
}
