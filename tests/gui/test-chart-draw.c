/* SPDX-License-Identifier: MIT */
/* test-chart-draw.c — the timeline drawing function, rendered offscreen.
 *
 * Draws known data with the cairo renderer (no window, no display needed)
 * and checks pixels: the allocated fill under the allocated level, the
 * reserved line's row, the hatched fragmentation gap between them, the
 * background above reserved, the capacity line, the failed-allocation
 * marker (one disc for failures too close to tell apart, each its own
 * otherwise), the empty columns before the trace's first event, the
 * dashed reserved line replayed under another setting, the allocator's
 * limit line and the brackets where fragmentation hurt.
 */
#include <gtk/gtk.h>

#include "vs-chart-draw.h"

#define W 800
#define H 300
#define MIB (G_GINT64_CONSTANT (1) << 20)
#define GIB (G_GINT64_CONSTANT (1) << 30)

typedef struct
{
  guchar *pixels;
  gsize stride;
} Image;

/* Renders data over [v0, v1) at W × H into img (RGBA bytes). */
static void
render (const VsChartData *data, gint64 v0, gint64 v1, gboolean dark, Image *img)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  PangoContext *pango = pango_font_map_create_context (pango_cairo_font_map_get_default ());
  GskRenderer *renderer = gsk_cairo_renderer_new ();
  g_autoptr (GError) error = NULL;
  GskRenderNode *node;
  GdkTexture *texture;

  g_assert_true (gsk_renderer_realize (renderer, NULL, &error));
  g_assert_no_error (error);
  vs_chart_draw (snapshot, data, v0, v1, W, H, vs_chart_palette (dark), pango);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, W, H));
  g_assert_cmpint (gdk_texture_get_width (texture), ==, W);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, H);
  img->stride = W * 4;
  img->pixels = g_malloc (img->stride * H);
  /* gdk_texture_download gives cairo's native ARGB32 (BGRA in memory on
   * little-endian machines), premultiplied. */
  gdk_texture_download (texture, img->pixels, img->stride);
  if (g_getenv ("VS_TEST_SAVE_PNG"))
    gdk_texture_save_to_png (texture, g_getenv ("VS_TEST_SAVE_PNG"));
  g_object_unref (texture);
  gsk_render_node_unref (node);
  gsk_renderer_unrealize (renderer);
  g_object_unref (renderer);
  g_object_unref (pango);
}

/* The pixel at (x, y) as straight RGB. */
static void
pixel (const Image *img, int x, int y, double *r, double *g, double *b)
{
  const guchar *p = img->pixels + y * img->stride + x * 4;
  *b = p[0] / 255.0;
  *g = p[1] / 255.0;
  *r = p[2] / 255.0;
}

/* TRUE when (x, y) is within tol of colour c blended over bg (alpha from
 * c). */
static gboolean
near_color (const Image *img, int x, int y, const GdkRGBA *c, const GdkRGBA *bg, double tol)
{
  double r, g, b;
  double a = c->alpha;
  pixel (img, x, y, &r, &g, &b);
  return fabs (r - (c->red * a + bg->red * (1 - a))) < tol
         && fabs (g - (c->green * a + bg->green * (1 - a))) < tol
         && fabs (b - (c->blue * a + bg->blue * (1 - a))) < tol;
}

/* A trace of 10 s in 1000 buckets: nothing for the first second, then
 * allocated 2 GiB inside reserved 3 GiB; a failed 870 MiB request at 5 s;
 * a 4 GiB device. */
static VsChartData *
make_data (void)
{
  VsChartData *d = vs_chart_data_new (0, 10 * G_GINT64_CONSTANT (1000000000), 1000);
  d->title = g_strdup ("GPU 0 · test device");
  d->capacity_bytes = 4 * GIB;
  d->peak_bytes = 3 * GIB;
  for (guint i = 100; i < 1000; i++)
    {
      VsChartBucket *b = &d->buckets[i];
      b->has_data = TRUE;
      b->min_reserved = b->max_reserved = b->last_reserved = 3 * GIB;
      b->min_allocated = b->max_allocated = b->last_allocated = 2 * GIB;
    }
  vs_chart_data_add_marker (d, VS_CHART_MARKER_FAILED, 5 * G_GINT64_CONSTANT (1000000000),
                            870 * MIB);
  return d;
}

static void
test_levels_drawn_where_they_belong (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (FALSE);
  VsChartLayout l;
  Image img;
  int x, y_alloc, y_res, y_cap;

  render (d, d->t0, d->t1, FALSE, &img);
  vs_chart_layout (d, W, H, &l);
  g_assert_true (l.capacity_on_scale);
  x = (int)vs_chart_x_for_time (&l, d->t0, d->t1, 7 * G_GINT64_CONSTANT (1000000000)) + 3;
  y_alloc = (int)round (vs_chart_y_for_bytes (&l, 2 * GIB));
  y_res = (int)round (vs_chart_y_for_bytes (&l, 3 * GIB));
  y_cap = (int)vs_chart_y_for_bytes (&l, 4 * GIB);

  /* Allocated fill well below the allocated level. */
  g_assert_true (near_color (&img, x, y_alloc + 20, &p->allocated_fill, &p->background, 0.06));
  g_assert_true (near_color (&img, x, (int)(l.chart.origin.y + l.chart.size.height) - 3,
                             &p->allocated_fill, &p->background, 0.06));
  /* The reserved line's row is the reserved colour. */
  g_assert_true (near_color (&img, x, y_res - 1, &p->reserved_line, &p->background, 0.15));
  /* Between them: the fragmentation hatch, orange-tinted, neither fill nor
   * background. */
  {
    double r, g, b;
    pixel (&img, x, (y_alloc + y_res) / 2, &r, &g, &b);
    g_assert_cmpfloat (r, >, b + 0.15);
  }
  /* Background above reserved, below the capacity line. */
  g_assert_true (near_color (&img, x, (y_res + y_cap) / 2, &p->background, &p->background, 0.02));
  /* The capacity line, dashed: one of a few pixels along it is red. */
  {
    gboolean seen = FALSE;
    for (int dx = 0; dx < 10; dx++)
      seen |= near_color (&img, x + dx, y_cap, &p->capacity, &p->background, 0.15);
    g_assert_true (seen);
  }
  /* Before the first event (first second): background, no fill. */
  x = (int)vs_chart_x_for_time (&l, d->t0, d->t1, 500000000);
  g_assert_true (near_color (&img, x, y_alloc + 20, &p->background, &p->background, 0.02));
  g_free (img.pixels);
}

static void
test_failed_marker_and_zoom (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (FALSE);
  gint64 v0 = 4 * G_GINT64_CONSTANT (1000000000), v1 = 6 * G_GINT64_CONSTANT (1000000000);
  VsChartLayout l;
  Image img;
  int x, found = 0;

  /* Zoomed to [4 s, 6 s): the failure at 5 s sits mid-chart. */
  render (d, v0, v1, FALSE, &img);
  vs_chart_layout (d, W, H, &l);
  x = (int)vs_chart_x_for_time (&l, v0, v1, 5 * G_GINT64_CONSTANT (1000000000));
  g_assert_cmpint (abs (x - (int)(l.chart.origin.x + l.chart.size.width / 2)), <=, 1);
  for (int y = (int)l.chart.origin.y; y < l.chart.origin.y + 14; y++)
    found += near_color (&img, x, y, &p->failed, &p->background, 0.1);
  g_assert_cmpint (found, >=, 3);
  g_free (img.pixels);

  /* Zoomed away from it: no failure colour in that column's marker row. */
  render (d, 7 * G_GINT64_CONSTANT (1000000000), d->t1, FALSE, &img);
  found = 0;
  for (int y = (int)l.chart.origin.y; y < l.chart.origin.y + 14; y++)
    found += near_color (&img, x, y, &p->failed, &p->background, 0.1);
  g_assert_cmpint (found, ==, 0);
  g_free (img.pixels);
}

static void
test_close_failures_share_a_disc (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (FALSE);
  gint64 v0 = 4 * G_GINT64_CONSTANT (1000000000), v1 = 6 * G_GINT64_CONSTANT (1000000000);
  gint64 s = G_GINT64_CONSTANT (1000000000);
  VsChartLayout l;
  Image img;
  double x1, x2, x3;
  int disc_y;

  vs_chart_layout (d, W, H, &l);
  /* A second failure 4 pixels after the one at 5 s, a third far away. */
  x1 = floor (vs_chart_x_for_time (&l, v0, v1, 5 * s)) + 0.5;
  vs_chart_data_add_marker (d, VS_CHART_MARKER_FAILED, vs_chart_time_for_x (&l, v0, v1, x1 + 4.2),
                            300 * MIB);
  vs_chart_data_add_marker (d, VS_CHART_MARKER_FAILED, 5 * s + s / 2, 100 * MIB);
  x2 = floor (vs_chart_x_for_time (&l, v0, v1, vs_chart_time_for_x (&l, v0, v1, x1 + 4.2))) + 0.5;
  x3 = floor (vs_chart_x_for_time (&l, v0, v1, 5 * s + s / 2)) + 0.5;
  g_assert_cmpfloat (x2 - x1, >=, 3);
  g_assert_cmpfloat (x2 - x1, <=, 5);
  render (d, v0, v1, FALSE, &img);
  disc_y = (int)(l.chart.origin.y + 7);
  /* One disc at the first: red at its centre, nothing red just right of
   * its edge, where the second's own disc would reach. */
  g_assert_true (near_color (&img, (int)x1 - 3, disc_y, &p->failed, &p->background, 0.15));
  g_assert_false (near_color (&img, (int)x1 + 7, disc_y, &p->failed, &p->background, 0.35));
  /* The far one keeps its own disc. */
  g_assert_true (near_color (&img, (int)x3 - 3, disc_y, &p->failed, &p->background, 0.15));
  g_free (img.pixels);
}

static void
test_dark_palette_background (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (TRUE);
  VsChartLayout l;
  Image img;

  render (d, d->t0, d->t1, TRUE, &img);
  vs_chart_layout (d, W, H, &l);
  g_assert_true (near_color (&img, W - 4, H / 2, &p->background, &p->background, 0.02));
  g_assert_true (near_color (&img, (int)(l.chart.origin.x + l.chart.size.width) - 5,
                             (int)vs_chart_y_for_bytes (&l, GIB), &p->allocated_fill,
                             &p->background, 0.06));
  g_free (img.pixels);
}

static void
test_span_combines_buckets (void)
{
  g_autoptr (VsChartData) d = vs_chart_data_new (0, 100, 10);
  VsChartBucket b;

  for (guint i = 0; i < 10; i++)
    {
      d->buckets[i].has_data = i >= 2;
      d->buckets[i].min_allocated = d->buckets[i].max_allocated = d->buckets[i].last_allocated
          = i * 10;
      d->buckets[i].min_reserved = d->buckets[i].max_reserved = d->buckets[i].last_reserved
          = 100 + i;
      d->buckets[i].kernels = 1;
    }
  g_assert_false (vs_chart_data_span (d, 0, 20, &b));
  g_assert_true (vs_chart_data_span (d, 15, 45, &b));
  g_assert_cmpint (b.min_allocated, ==, 20);
  g_assert_cmpint (b.max_allocated, ==, 40);
  g_assert_cmpint (b.last_reserved, ==, 104);
  g_assert_cmpuint (b.kernels, ==, 3);
  g_assert_false (vs_chart_data_span (d, 100, 200, &b));
  g_assert_cmpint (vs_chart_data_bucket_at (d, 99), ==, 9);
  g_assert_cmpint (vs_chart_data_bucket_at (d, 100), ==, -1);
}

/* The replayed reserved line: dashed in its own colour at its level
 * (2.5 GiB, between allocated and reserved), only where the buckets have
 * it, with its legend entry; none of its colour without a label. */
static void
test_whatif_line (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (FALSE);
  VsChartLayout l;
  Image img, plain;
  int y, on = 0, off = 0, legend = 0;
  gint64 sec = G_GINT64_CONSTANT (1000000000);

  for (guint i = 500; i < 1000; i++)
    {
      VsChartBucket *b = &d->buckets[i];
      b->has_whatif = TRUE;
      b->min_whatif = b->max_whatif = b->last_whatif = 5 * GIB / 2;
    }
  render (d, d->t0, d->t1, FALSE, &plain);
  d->whatif_label = g_strdup ("reserved with expandable_segments:True");
  render (d, d->t0, d->t1, FALSE, &img);
  vs_chart_layout (d, W, H, &l);
  y = (int)round (vs_chart_y_for_bytes (&l, 5 * GIB / 2)) - 1;
  /* along its row after 5 s: dashes (5 on, 3 off); before: none */
  for (int x = (int)vs_chart_x_for_time (&l, d->t0, d->t1, 6 * sec);
       x < (int)vs_chart_x_for_time (&l, d->t0, d->t1, 9 * sec); x++)
    on += near_color (&img, x, y, &p->whatif, &p->background, 0.08)
          || near_color (&img, x, y + 1, &p->whatif, &p->background, 0.08);
  for (int x = (int)vs_chart_x_for_time (&l, d->t0, d->t1, 2 * sec);
       x < (int)vs_chart_x_for_time (&l, d->t0, d->t1, 4 * sec); x++)
    for (int dy = -2; dy <= 2; dy++)
      off += near_color (&img, x, y + dy, &p->whatif, &p->background, 0.08);
  /* the legend in the header row */
  for (int x = 0; x < W; x++)
    for (int yy = 0; yy < VS_CHART_HEADER_HEIGHT; yy++)
      legend += near_color (&img, x, yy, &p->whatif, &p->background, 0.08);
  g_test_message ("what-if: %d on its row, %d before it, %d in the legend", on, off, legend);
  g_assert_cmpint (off, ==, 0);
  /* three seconds are ~220 pixels, 5 of every 8 dashed */
  g_assert_cmpint (on, >, 100);
  g_assert_cmpint (on, <, 200);
  g_assert_cmpint (legend, >, 5);
  /* without a label the line is not drawn */
  {
    int any = 0;
    for (int yy = 0; yy < H; yy++)
      for (int x = 0; x < W; x++)
        any += near_color (&plain, x, yy, &p->whatif, &p->background, 0.08);
    g_assert_cmpint (any, ==, 0);
  }
  g_free (img.pixels);
  g_free (plain.pixels);
}

/* Counts the pixels of colour c in the header row (the legend). */
static int
legend_pixels (const Image *img, const GdkRGBA *c, const GdkRGBA *bg)
{
  int n = 0;

  for (int x = 0; x < W; x++)
    for (int y = 0; y < VS_CHART_HEADER_HEIGHT; y++)
      n += near_color (img, x, y, c, bg, 0.08);
  return n;
}

/* The allocator's limit (3.5 GiB): a 2 px line at its height across the
 * chart with its legend entry, nothing of its colour without it; the
 * fragmentation bracket at 7 s over the gap between allocated (2 GiB)
 * and reserved (3 GiB) with its legend entry, none without one. */
static void
test_limit_and_fragmentation (void)
{
  g_autoptr (VsChartData) d = make_data ();
  const VsChartPalette *p = vs_chart_palette (FALSE);
  gint64 sec = G_GINT64_CONSTANT (1000000000);
  VsChartLayout l;
  Image img, plain;
  int y, on = 0, n = 0, any = 0, bracket = 0, outside = 0, xb, y_res, y_alloc;

  render (d, d->t0, d->t1, FALSE, &plain);
  d->limit_bytes = 7 * GIB / 2;
  d->limit_label = g_strdup ("limit 3.50 GiB (memory fraction 0.875)");
  vs_chart_data_add_fragmentation (d, 7 * sec, 2 * GIB, 3 * GIB);
  render (d, d->t0, d->t1, FALSE, &img);
  vs_chart_layout (d, W, H, &l);
  g_assert_true (l.limit_on_scale);
  y = (int)round (vs_chart_y_for_bytes (&l, 7 * GIB / 2));
  /* Right of its label, across the chart: rows y - 1 and y (but where
   * the failed allocation's dashed line at 5 s crosses it). */
  for (int x = (int)(l.chart.origin.x + 0.4 * l.chart.size.width);
       x < (int)(l.chart.origin.x + l.chart.size.width) - 1; x++)
    if (fabs (x - vs_chart_x_for_time (&l, d->t0, d->t1, 5 * sec)) > 2 && ++n)
      on += near_color (&img, x, y - 1, &p->limit, &p->background, 0.08)
            && near_color (&img, x, y, &p->limit, &p->background, 0.08)
            && !near_color (&img, x, y - 4, &p->limit, &p->background, 0.08)
            && !near_color (&img, x, y + 3, &p->limit, &p->background, 0.08);
  g_assert_cmpint (on, ==, n);
  g_assert_cmpint (legend_pixels (&img, &p->limit, &p->background), >, 5);
  for (int yy = 0; yy < H; yy++)
    for (int x = 0; x < W; x++)
      any += near_color (&plain, x, yy, &p->limit, &p->background, 0.08);
  g_assert_cmpint (any, ==, 0);

  /* The bracket: its 3 px stem from reserved down to allocated. */
  xb = (int)floor (vs_chart_x_for_time (&l, d->t0, d->t1, 7 * sec));
  y_res = (int)round (vs_chart_y_for_bytes (&l, 3 * GIB));
  y_alloc = (int)round (vs_chart_y_for_bytes (&l, 2 * GIB));
  for (int yy = y_res + 1; yy < y_alloc - 1; yy++)
    bracket += near_color (&img, xb, yy, &p->fragmentation_hurt, &p->background, 0.08);
  g_assert_cmpint (bracket, ==, y_alloc - y_res - 2);
  /* Not elsewhere in the gap (the cached, free hatching is lighter). */
  for (int yy = y_res + 1; yy < y_alloc - 1; yy++)
    outside += near_color (&img, xb - 40, yy, &p->fragmentation_hurt, &p->background, 0.08);
  g_assert_cmpint (outside, ==, 0);
  g_assert_cmpint (legend_pixels (&img, &p->fragmentation_hurt, &p->background), >, 5);
  g_assert_cmpint (legend_pixels (&plain, &p->fragmentation_hurt, &p->background), ==, 0);
  g_free (img.pixels);
  g_free (plain.pixels);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Without gtk_init() (no display here), asking for one node type
   * registers them all. */
  g_type_ensure (GSK_TYPE_CAIRO_NODE);
  g_test_add_func ("/chart-draw/levels", test_levels_drawn_where_they_belong);
  g_test_add_func ("/chart-draw/failed-marker-zoom", test_failed_marker_and_zoom);
  g_test_add_func ("/chart-draw/close-failures", test_close_failures_share_a_disc);
  g_test_add_func ("/chart-draw/dark", test_dark_palette_background);
  g_test_add_func ("/chart-draw/whatif-line", test_whatif_line);
  g_test_add_func ("/chart-draw/limit-and-fragmentation", test_limit_and_fragmentation);
  g_test_add_func ("/chart-data/span", test_span_combines_buckets);
  return g_test_run ();
}
