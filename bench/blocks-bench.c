/* SPDX-License-Identifier: MIT */
/* blocks-bench.c — how fast the Over Time pane (allocations over time)
 * shows and follows a large trace, without a display.
 *
 * The pane's worker queries the bands of the visible range
 * (vs_block_bands_query) and draws them into a picture (vs_blocks_draw,
 * the selected site's bands opaque and the others faded): how long until
 * the pane follows a zoom, a pan or a selection.  The UI thread wraps
 * that picture in a texture without copying it and outlines the hovered
 * and selected bands: the only frame work that depends on the trace.  For
 * TRACE this prints "key value" lines:
 *   open_ms          vs_trace_open;
 *   first_query_ms   the bands of the whole trace (1190 columns, as the
 *                    pane is at the window's default 1280 px);
 *   first_draw_ms    drawing them at 1270 × 300;
 *   first_frame_ms   the three together (target < 1000);
 *   query_*_ms, draw_*_ms  per step of a scripted interaction like the
 *                    viewer's bench: 60 zooms in by 1.08 around the
 *                    middle, 60 pans by 3 %, 60 zooms out (worker);
 *   ui_*_ms          the largest band's outline drawn per step, on the
 *                    UI thread (target < 16 ms, a 60 frames/s frame);
 *   bands_max, candidates_max  the most bands drawn and blocks read.
 *
 * Usage: blocks-bench TRACE
 */
#include <stdio.h>

#include <pango/pangocairo.h>

#include "vs-blocks-draw.h"
#include "vs-bench-stats.h"

#define WIDTH 1270
#define HEIGHT 300
#define STEPS 60

static double
ms_since (gint64 t0)
{
  return (g_get_monotonic_time () - t0) / 1000.0;
}

/* Queries and draws [t0, t1); adds the times.  Returns FALSE on error. */
static gboolean
step (VsTrace *trace, gint64 device, gint64 t0, gint64 t1, PangoContext *pango, double *query_ms,
      double *draw_ms, double *ui_ms, guint *bands, gint64 *candidates)
{
  g_autoptr (GError) error = NULL;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
  cairo_t *cr = cairo_create (surface);
  gint64 t = g_get_monotonic_time ();
  VsBlockBands *r = vs_block_bands_query (trace, device, t0, t1,
                                          vs_blocks_columns_for_width (WIDTH), 2000, &error);

  *query_ms = ms_since (t);
  if (r == NULL)
    {
      fprintf (stderr, "blocks-bench: %s\n", error->message);
      return FALSE;
    }
  t = g_get_monotonic_time ();
  vs_blocks_draw (cr, r, WIDTH, HEIGHT, NULL, FALSE, pango);
  cairo_surface_flush (surface);
  *draw_ms = ms_since (t);
  /* The UI thread's share: the largest band outlined. */
  t = g_get_monotonic_time ();
  {
    VsBlocksLayout l;
    int largest = -1;

    vs_blocks_layout (r, WIDTH, HEIGHT, &l);
    for (guint i = 0; i < r->bands->len; i++)
      if (largest < 0
          || g_array_index (r->bands, VsBand, i).block.bytes
                 > g_array_index (r->bands, VsBand, largest).block.bytes)
        largest = (int)i;
    if (largest >= 0)
      vs_blocks_band_path (cr, r, &l, (guint)largest);
    cairo_set_line_width (cr, 2.0);
    cairo_stroke (cr);
    cairo_surface_flush (surface);
  }
  *ui_ms = ms_since (t);
  *bands = MAX (*bands, r->bands->len);
  *candidates = MAX (*candidates, r->candidates);
  vs_block_bands_free (r);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) queries = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) draws = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) uis = g_array_new (FALSE, FALSE, sizeof (double));
  PangoContext *pango;
  VsTrace *trace;
  gint64 t, device, duration, a, b;
  double open_ms, q, d, u;
  guint bands = 0;
  gint64 candidates = 0;

  if (argc != 2)
    {
      fprintf (stderr, "usage: blocks-bench TRACE\n");
      return 2;
    }
  pango = pango_font_map_create_context (pango_cairo_font_map_get_default ());
  t = g_get_monotonic_time ();
  trace = vs_trace_open (argv[1], &error);
  if (trace == NULL)
    {
      fprintf (stderr, "blocks-bench: %s\n", error->message);
      return 1;
    }
  open_ms = ms_since (t);
  device = ((const VsDeviceInfo *)g_ptr_array_index (vs_trace_get_devices (trace), 0))->id;
  duration = MAX (1, vs_trace_get_duration_ns (trace));
  if (!step (trace, device, 0, duration, pango, &q, &d, &u, &bands, &candidates))
    return 1;
  printf ("open_ms %.0f\nfirst_query_ms %.0f\nfirst_draw_ms %.1f\n", open_ms, q, d);
  printf ("first_frame_ms %.0f target < 1000\n", open_ms + q + d + u);
  a = 0;
  b = duration;
  for (int i = 0; i < 3 * STEPS; i++)
    {
      gint64 span = b - a, mid = a + span / 2;

      if (i < STEPS)
        span = (gint64)(span / 1.08);
      else if (i >= 2 * STEPS)
        span = MIN (duration, (gint64)(span * 1.08));
      else
        mid += span * 3 / 100;
      a = CLAMP (mid - span / 2, 0, duration - span);
      b = a + MAX (span, 1);
      if (!step (trace, device, a, b, pango, &q, &d, &u, &bands, &candidates))
        return 1;
      g_array_append_val (queries, q);
      g_array_append_val (draws, d);
      g_array_append_val (uis, u);
    }
  printf ("steps %u\n", queries->len);
  printf ("query_p50_ms %.0f\nquery_p95_ms %.0f\nquery_max_ms %.0f\n",
          vs_bench_percentile (queries, 0.5), vs_bench_percentile (queries, 0.95),
          vs_bench_percentile (queries, 1.0));
  printf ("draw_p50_ms %.2f\ndraw_p95_ms %.2f\ndraw_max_ms %.2f\n",
          vs_bench_percentile (draws, 0.5), vs_bench_percentile (draws, 0.95),
          vs_bench_percentile (draws, 1.0));
  printf ("ui_p50_ms %.2f\nui_p95_ms %.2f target < 16\nui_max_ms %.2f\n",
          vs_bench_percentile (uis, 0.5), vs_bench_percentile (uis, 0.95),
          vs_bench_percentile (uis, 1.0));
  printf ("bands_max %u\ncandidates_max %" G_GINT64_FORMAT "\n", bands, candidates);
  vs_trace_free (trace);
  g_object_unref (pango);
  return 0;
}
