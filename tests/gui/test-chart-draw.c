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

/* Renders data over [v0, v1) at W × H into img (RGBA bytes), replacing
 * the picture img held (NULL pixels: none). */
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
  g_free (img->pixels);
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

/* What each drawing test starts from: the test data and the palette it
 * is drawn with (dark when the test's data says so); the layout and the
 * pictures the test renders, freed after it. */
typedef struct
{
  VsChartData *d;
  const VsChartPalette *p;
  VsChartLayout l;
  Image img, plain;
} Chart;

static void
chart_set_up (Chart *f, gconstpointer dark)
{
  f->d = make_data ();
  f->p = vs_chart_palette (GPOINTER_TO_INT (dark));
}

static void
chart_tear_down (Chart *f, gconstpointer dark)
{
  g_free (f->img.pixels);
  g_free (f->plain.pixels);
  vs_chart_data_unref (f->d);
}

static void
test_levels_drawn_where_they_belong (Chart *f, gconstpointer data)
{
  int x, y_alloc, y_res, y_cap;

  render (f->d, f->d->t0, f->d->t1, FALSE, &f->img);
  vs_chart_layout (f->d, W, H, &f->l);
  g_assert_true (f->l.capacity_on_scale);
  x = (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 7 * G_GINT64_CONSTANT (1000000000)) + 3;
  y_alloc = (int)round (vs_chart_y_for_bytes (&f->l, 2 * GIB));
  y_res = (int)round (vs_chart_y_for_bytes (&f->l, 3 * GIB));
  y_cap = (int)vs_chart_y_for_bytes (&f->l, 4 * GIB);

  /* Allocated fill well below the allocated level. */
  g_assert_true (
      near_color (&f->img, x, y_alloc + 20, &f->p->allocated_fill, &f->p->background, 0.06));
  g_assert_true (near_color (&f->img, x, (int)(f->l.chart.origin.y + f->l.chart.size.height) - 3,
                             &f->p->allocated_fill, &f->p->background, 0.06));
  /* The reserved line's row is the reserved colour. */
  g_assert_true (near_color (&f->img, x, y_res - 1, &f->p->reserved_line, &f->p->background, 0.15));
  /* Between them: the fragmentation hatch, orange-tinted, neither fill nor
   * background. */
  {
    double r, g, b;
    pixel (&f->img, x, (y_alloc + y_res) / 2, &r, &g, &b);
    g_assert_cmpfloat (r, >, b + 0.15);
  }
  /* Background above reserved, below the capacity line. */
  g_assert_true (
      near_color (&f->img, x, (y_res + y_cap) / 2, &f->p->background, &f->p->background, 0.02));
  /* The capacity line, dashed: one of a few pixels along it is red. */
  {
    gboolean seen = FALSE;
    for (int dx = 0; dx < 10; dx++)
      seen |= near_color (&f->img, x + dx, y_cap, &f->p->capacity, &f->p->background, 0.15);
    g_assert_true (seen);
  }
  /* Before the first event (first second): background, no fill. */
  x = (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 500000000);
  g_assert_true (near_color (&f->img, x, y_alloc + 20, &f->p->background, &f->p->background, 0.02));
}

static void
test_failed_marker_and_zoom (Chart *f, gconstpointer data)
{
  gint64 v0 = 4 * G_GINT64_CONSTANT (1000000000), v1 = 6 * G_GINT64_CONSTANT (1000000000);
  int x, found = 0;

  /* Zoomed to [4 s, 6 s): the failure at 5 s sits mid-chart. */
  render (f->d, v0, v1, FALSE, &f->img);
  vs_chart_layout (f->d, W, H, &f->l);
  x = (int)vs_chart_x_for_time (&f->l, v0, v1, 5 * G_GINT64_CONSTANT (1000000000));
  g_assert_cmpint (abs (x - (int)(f->l.chart.origin.x + f->l.chart.size.width / 2)), <=, 1);
  for (int y = (int)f->l.chart.origin.y; y < f->l.chart.origin.y + 14; y++)
    found += near_color (&f->img, x, y, &f->p->failed, &f->p->background, 0.1);
  g_assert_cmpint (found, >=, 3);

  /* Zoomed away from it: no failure colour in that column's marker row. */
  render (f->d, 7 * G_GINT64_CONSTANT (1000000000), f->d->t1, FALSE, &f->img);
  found = 0;
  for (int y = (int)f->l.chart.origin.y; y < f->l.chart.origin.y + 14; y++)
    found += near_color (&f->img, x, y, &f->p->failed, &f->p->background, 0.1);
  g_assert_cmpint (found, ==, 0);
}

static void
test_close_failures_share_a_disc (Chart *f, gconstpointer data)
{
  gint64 v0 = 4 * G_GINT64_CONSTANT (1000000000), v1 = 6 * G_GINT64_CONSTANT (1000000000);
  gint64 s = G_GINT64_CONSTANT (1000000000);
  double x1, x2, x3;
  int disc_y;

  vs_chart_layout (f->d, W, H, &f->l);
  /* A second failure 4 pixels after the one at 5 s, a third far away. */
  x1 = floor (vs_chart_x_for_time (&f->l, v0, v1, 5 * s)) + 0.5;
  vs_chart_data_add_marker (f->d, VS_CHART_MARKER_FAILED,
                            vs_chart_time_for_x (&f->l, v0, v1, x1 + 4.2), 300 * MIB);
  vs_chart_data_add_marker (f->d, VS_CHART_MARKER_FAILED, 5 * s + s / 2, 100 * MIB);
  x2 = floor (vs_chart_x_for_time (&f->l, v0, v1, vs_chart_time_for_x (&f->l, v0, v1, x1 + 4.2)))
       + 0.5;
  x3 = floor (vs_chart_x_for_time (&f->l, v0, v1, 5 * s + s / 2)) + 0.5;
  g_assert_cmpfloat (x2 - x1, >=, 3);
  g_assert_cmpfloat (x2 - x1, <=, 5);
  render (f->d, v0, v1, FALSE, &f->img);
  disc_y = (int)(f->l.chart.origin.y + 7);
  /* One disc at the first: red at its centre, nothing red just right of
   * its edge, where the second's own disc would reach. */
  g_assert_true (near_color (&f->img, (int)x1 - 3, disc_y, &f->p->failed, &f->p->background, 0.15));
  g_assert_false (
      near_color (&f->img, (int)x1 + 7, disc_y, &f->p->failed, &f->p->background, 0.35));
  /* The far one keeps its own disc. */
  g_assert_true (near_color (&f->img, (int)x3 - 3, disc_y, &f->p->failed, &f->p->background, 0.15));
}

static void
test_dark_palette_background (Chart *f, gconstpointer data)
{

  render (f->d, f->d->t0, f->d->t1, TRUE, &f->img);
  vs_chart_layout (f->d, W, H, &f->l);
  g_assert_true (near_color (&f->img, W - 4, H / 2, &f->p->background, &f->p->background, 0.02));
  g_assert_true (near_color (&f->img, (int)(f->l.chart.origin.x + f->l.chart.size.width) - 5,
                             (int)vs_chart_y_for_bytes (&f->l, GIB), &f->p->allocated_fill,
                             &f->p->background, 0.06));
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
test_whatif_line (Chart *f, gconstpointer data)
{
  int y, on = 0, off = 0, legend = 0;
  gint64 sec = G_GINT64_CONSTANT (1000000000);

  for (guint i = 500; i < 1000; i++)
    {
      VsChartBucket *b = &f->d->buckets[i];
      b->has_whatif = TRUE;
      b->min_whatif = b->max_whatif = b->last_whatif = 5 * GIB / 2;
    }
  render (f->d, f->d->t0, f->d->t1, FALSE, &f->plain);
  f->d->whatif_label = g_strdup ("reserved with expandable_segments:True");
  render (f->d, f->d->t0, f->d->t1, FALSE, &f->img);
  vs_chart_layout (f->d, W, H, &f->l);
  y = (int)round (vs_chart_y_for_bytes (&f->l, 5 * GIB / 2)) - 1;
  /* along its row after 5 s: dashes (5 on, 3 off); before: none */
  for (int x = (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 6 * sec);
       x < (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 9 * sec); x++)
    on += near_color (&f->img, x, y, &f->p->whatif, &f->p->background, 0.08)
          || near_color (&f->img, x, y + 1, &f->p->whatif, &f->p->background, 0.08);
  for (int x = (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 2 * sec);
       x < (int)vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 4 * sec); x++)
    for (int dy = -2; dy <= 2; dy++)
      off += near_color (&f->img, x, y + dy, &f->p->whatif, &f->p->background, 0.08);
  /* the legend in the header row */
  for (int x = 0; x < W; x++)
    for (int yy = 0; yy < VS_CHART_HEADER_HEIGHT; yy++)
      legend += near_color (&f->img, x, yy, &f->p->whatif, &f->p->background, 0.08);
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
        any += near_color (&f->plain, x, yy, &f->p->whatif, &f->p->background, 0.08);
    g_assert_cmpint (any, ==, 0);
  }
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
test_limit_and_fragmentation (Chart *f, gconstpointer data)
{
  gint64 sec = G_GINT64_CONSTANT (1000000000);
  int y, on = 0, n = 0, any = 0, bracket = 0, outside = 0, xb, y_res, y_alloc;

  render (f->d, f->d->t0, f->d->t1, FALSE, &f->plain);
  f->d->limit_bytes = 7 * GIB / 2;
  f->d->limit_label = g_strdup ("limit 3.50 GiB (memory fraction 0.875)");
  vs_chart_data_add_fragmentation (f->d, 7 * sec, 2 * GIB, 3 * GIB);
  render (f->d, f->d->t0, f->d->t1, FALSE, &f->img);
  vs_chart_layout (f->d, W, H, &f->l);
  g_assert_true (f->l.limit_on_scale);
  y = (int)round (vs_chart_y_for_bytes (&f->l, 7 * GIB / 2));
  /* Right of its label, across the chart: rows y - 1 and y (but where
   * the failed allocation's dashed line at 5 s crosses it). */
  for (int x = (int)(f->l.chart.origin.x + 0.4 * f->l.chart.size.width);
       x < (int)(f->l.chart.origin.x + f->l.chart.size.width) - 1; x++)
    if (fabs (x - vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 5 * sec)) > 2 && ++n)
      on += near_color (&f->img, x, y - 1, &f->p->limit, &f->p->background, 0.08)
            && near_color (&f->img, x, y, &f->p->limit, &f->p->background, 0.08)
            && !near_color (&f->img, x, y - 4, &f->p->limit, &f->p->background, 0.08)
            && !near_color (&f->img, x, y + 3, &f->p->limit, &f->p->background, 0.08);
  g_assert_cmpint (on, ==, n);
  g_assert_cmpint (legend_pixels (&f->img, &f->p->limit, &f->p->background), >, 5);
  for (int yy = 0; yy < H; yy++)
    for (int x = 0; x < W; x++)
      any += near_color (&f->plain, x, yy, &f->p->limit, &f->p->background, 0.08);
  g_assert_cmpint (any, ==, 0);

  /* The bracket: its 3 px stem from reserved down to allocated. */
  xb = (int)floor (vs_chart_x_for_time (&f->l, f->d->t0, f->d->t1, 7 * sec));
  y_res = (int)round (vs_chart_y_for_bytes (&f->l, 3 * GIB));
  y_alloc = (int)round (vs_chart_y_for_bytes (&f->l, 2 * GIB));
  for (int yy = y_res + 1; yy < y_alloc - 1; yy++)
    bracket += near_color (&f->img, xb, yy, &f->p->fragmentation_hurt, &f->p->background, 0.08);
  g_assert_cmpint (bracket, ==, y_alloc - y_res - 2);
  /* Not elsewhere in the gap (the cached, free hatching is lighter). */
  for (int yy = y_res + 1; yy < y_alloc - 1; yy++)
    outside
        += near_color (&f->img, xb - 40, yy, &f->p->fragmentation_hurt, &f->p->background, 0.08);
  g_assert_cmpint (outside, ==, 0);
  g_assert_cmpint (legend_pixels (&f->img, &f->p->fragmentation_hurt, &f->p->background), >, 5);
  g_assert_cmpint (legend_pixels (&f->plain, &f->p->fragmentation_hurt, &f->p->background), ==, 0);
}

/* The drawing tests, each run on its own Chart. */
static const struct
{
  const char *path;
  void (*test) (Chart *f, gconstpointer data);
  gboolean dark;
} drawing_tests[] = {
  { "/chart-draw/levels", test_levels_drawn_where_they_belong, FALSE },
  { "/chart-draw/failed-marker-zoom", test_failed_marker_and_zoom, FALSE },
  { "/chart-draw/close-failures", test_close_failures_share_a_disc, FALSE },
  { "/chart-draw/dark", test_dark_palette_background, TRUE },
  { "/chart-draw/whatif-line", test_whatif_line, FALSE },
  { "/chart-draw/limit-and-fragmentation", test_limit_and_fragmentation, FALSE },
};

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Without gtk_init() (no display here), asking for one node type
   * registers them all. */
  g_type_ensure (GSK_TYPE_CAIRO_NODE);
  for (gsize i = 0; i < G_N_ELEMENTS (drawing_tests); i++)
    g_test_add (drawing_tests[i].path, Chart, GINT_TO_POINTER (drawing_tests[i].dark), chart_set_up,
                drawing_tests[i].test, chart_tear_down);
  g_test_add_func ("/chart-data/span", test_span_combines_buckets);
  return g_test_run ();
}
