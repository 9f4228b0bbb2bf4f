/* SPDX-License-Identifier: MIT */
/* vs-blocks-draw.c — allocations over time as stacked bands, drawn with
 * cairo (see vs-blocks-draw.h). */
#include "vs-blocks-draw.h"

#include <pango/pangocairo.h>

#include "vs-chart-draw.h"

#define TOP_MARGIN 8
#define BOTTOM_MARGIN 4
/* As the main chart's, so that both share the time axis. */
#define RIGHT_MARGIN 12

/* Tableau 10, the palette memory_viz colours its bands with. */
static const guint32 site_palette[] = { 0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                        0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0x86bcb6 };

/* See vs-blocks-draw.h. */
void
vs_blocks_layout (const VsBlockBands *bands, int width, int height, VsBlocksLayout *layout)
{
  layout->x = VS_CHART_GUTTER;
  layout->y = TOP_MARGIN;
  layout->width = MAX (1, width - VS_CHART_GUTTER - RIGHT_MARGIN);
  layout->height = MAX (1, height - TOP_MARGIN - BOTTOM_MARGIN);
  layout->y_max = bands != NULL && bands->max_total > 0 ? bands->max_total * 1.05 : 1.0;
}

/* See vs-blocks-draw.h. */
guint
vs_blocks_columns_for_width (int width)
{
  return (guint)CLAMP (width - VS_CHART_GUTTER - RIGHT_MARGIN, 1, 100000);
}

/* See vs-blocks-draw.h. */
void
vs_blocks_site_color (const char *site, GdkRGBA *color)
{
  guint32 rgb = site_palette[g_str_hash (site != NULL ? site : "") % G_N_ELEMENTS (site_palette)];

  color->red = ((rgb >> 16) & 0xff) / 255.0f;
  color->green = ((rgb >> 8) & 0xff) / 255.0f;
  color->blue = (rgb & 0xff) / 255.0f;
  color->alpha = 1.0f;
}

/* See vs-blocks-draw.h. */
void
vs_blocks_other_color (gboolean dark, GdkRGBA *color)
{
  float v = dark ? 0.40f : 0.72f;

  *color = (GdkRGBA){ v, v, v, 1.0f };
}

static double
y_for (const VsBlocksLayout *l, double bytes)
{
  return l->y + l->height - bytes / l->y_max * l->height;
}

/* The y axis: a line and a label at 0, half and the top. */
static void
draw_axis (cairo_t *cr, const VsBlocksLayout *l, gboolean dark, PangoContext *pango)
{
  const VsChartPalette *p = vs_chart_palette (dark);
  g_autoptr (PangoLayout) text = pango_layout_new (pango);
  double max = l->y_max / 1.05, top;
  int unit = 0;

  /* One unit for the three labels, that of the top, so that they fit. */
  while (unit < 5 && max >= 1024.0 * (double)(G_GINT64_CONSTANT (1) << (10 * unit)))
    unit++;
  top = max / (double)(G_GINT64_CONSTANT (1) << (10 * unit));

  for (int i = 0; i <= 2; i++)
    {
      double bytes = l->y_max / 1.05 * i / 2.0;
      double y = y_for (l, bytes);
      g_autofree char *label = i == 0 ? g_strdup ("0")
                                      : vs_format_bytes_in_unit (bytes, unit,
                                                                 top < 10    ? 2
                                                                 : top < 100 ? 1
                                                                             : 0);
      int tw, th;

      gdk_cairo_set_source_rgba (cr, &p->grid);
      cairo_rectangle (cr, l->x, floor (y), l->width, 1);
      cairo_fill (cr);
      pango_layout_set_text (text, label, -1);
      pango_layout_get_pixel_size (text, &tw, &th);
      gdk_cairo_set_source_rgba (cr, &p->dim_text);
      cairo_move_to (cr, l->x - 6 - tw, CLAMP (y - th / 2.0, 0, l->y + l->height - th));
      pango_cairo_show_layout (cr, text);
    }
}

/* Fills band i's run of columns, one rectangle per run of equal bottoms. */
static void
band_rectangles (cairo_t *cr, const VsBlockBands *r, const VsBlocksLayout *l, guint i)
{
  const VsBand *b = &g_array_index (r->bands, VsBand, i);
  const gint64 *bottoms = &g_array_index (r->bottoms, gint64, b->offset);
  double col = l->width / r->n_columns;
  guint k = 0;

  while (k < b->n_columns)
    {
      guint e = k + 1;
      double y0, y1;

      while (e < b->n_columns && bottoms[e] == bottoms[k])
        e++;
      y0 = y_for (l, (double)bottoms[k] + b->block.bytes);
      y1 = y_for (l, (double)bottoms[k]);
      /* At least a pixel high: a band too thin to see is still there. */
      if (y1 - y0 < 1.0)
        y0 = y1 - 1.0;
      cairo_rectangle (cr, l->x + (b->first_column + k) * col, y0, (e - k) * col, y1 - y0);
      k = e;
    }
}

/* See vs-blocks-draw.h. */
void
vs_blocks_band_path (cairo_t *cr, const VsBlockBands *bands, const VsBlocksLayout *layout,
                     guint index)
{
  g_return_if_fail (bands != NULL && index < bands->bands->len);
  band_rectangles (cr, bands, layout, index);
}

/* See vs-blocks-draw.h. */
void
vs_blocks_draw (cairo_t *cr, const VsBlockBands *r, int width, int height,
                const char *selected_site, gboolean dark, PangoContext *pango)
{
  VsBlocksLayout l;
  GdkRGBA other;
  double col;

  vs_blocks_layout (r, width, height, &l);
  gdk_cairo_set_source_rgba (cr, &vs_chart_palette (dark)->background);
  cairo_paint (cr);
  draw_axis (cr, &l, dark, pango);
  if (r == NULL)
    return;
  col = l.width / r->n_columns;
  for (guint i = 0; i < r->bands->len; i++)
    {
      const VsBand *b = &g_array_index (r->bands, VsBand, i);
      GdkRGBA c;

      if (b->n_columns == 0)
        continue;
      vs_blocks_site_color (b->stack->site, &c);
      if (selected_site != NULL && g_strcmp0 (selected_site, b->stack->site) != 0)
        c.alpha = 0.3f;
      gdk_cairo_set_source_rgba (cr, &c);
      band_rectangles (cr, r, &l, i);
      cairo_fill (cr);
    }
  /* The other band, on top of the bands as memory_viz draws its
   * summarized entry. */
  vs_blocks_other_color (dark, &other);
  gdk_cairo_set_source_rgba (cr, &other);
  for (guint c = 0; c < r->n_columns; c++)
    {
      gint64 base = g_array_index (r->banded, gint64, c);
      gint64 rest = vs_block_bands_other (r, c);

      if (rest > 0)
        {
          double y0 = y_for (&l, (double)base + rest), y1 = y_for (&l, (double)base);

          cairo_rectangle (cr, l.x + c * col, y0, col, MAX (y1 - y0, 1.0));
        }
    }
  cairo_fill (cr);
}

/* See vs-blocks-draw.h. */
int
vs_blocks_band_at (const VsBlockBands *r, const VsBlocksLayout *l, double x, double y)
{
  double col;
  guint c;
  gint64 bytes;
  int found;

  if (r == NULL || x < l->x || x >= l->x + l->width || y < l->y || y > l->y + l->height)
    return -1;
  col = l->width / r->n_columns;
  c = MIN ((guint)((x - l->x) / col), r->n_columns - 1);
  bytes = (gint64)((l->y + l->height - y) / l->height * l->y_max);
  found = vs_block_bands_find (r, c, bytes);
  if (found >= 0)
    return found;
  /* A band drawn a pixel high though thinner: the one just below. */
  return vs_block_bands_find (r, c, bytes - (gint64)(l->y_max / l->height));
}
