/* SPDX-License-Identifier: MIT */
/* viewer-bench.c — how fast the viewer shows and moves a large trace.
 *
 * Opens TRACE in the real viewer window (needs a display: run it under
 * xvfb-run, as bench/viewer-bench.sh does) and measures, with the window's
 * GdkFrameClock:
 *   first_frame_ms   process start to the end of the first frame that shows
 *                    every device's timeline with data (target < 1000);
 *   frame_*_ms       per frame of a scripted interaction (zoom in, pan,
 *                    zoom out: one step per frame), the work from the
 *                    frame's update phase to the end of its paint: layout,
 *                    snapshot, the chart redraw and rendering (target
 *                    < 16 ms, i.e. 60 frames/s);
 *   chart_draw_ms_*  the chart's own redraw from its reduced data;
 *   peak_rss_mb      the process's peak resident memory (target < 1024).
 * Prints "key value" lines.
 *
 * With OTHER, the window compares TRACE with it (`--compare OTHER`): the
 * first frame is then the first with the compared trace's lines on every
 * timeline, and every frame draws both.
 *
 * Usage: viewer-bench TRACE [FRAMES_PER_PHASE [OTHER]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-application.h"
#include "vs-memory-chart.h"
#include "vs-bench-stats.h"

typedef enum
{
  WAITING,
  SETTLING,
  ANIMATING,
  DONE
} Phase;

static gint64 start_us;
static Phase phase = WAITING;
static guint frame_index, frames_per_phase = 60, settle_frames;
static gint64 update_us;
static GArray *frame_ms; /* double */
static GArray *draw_ms;  /* double */
static double first_frame_ms = -1;
static GtkWidget *window;
static GPtrArray *charts;
static const char *other; /* compared trace, NULL: none */

static void
find_charts (GtkWidget *w)
{
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      if (VS_IS_MEMORY_CHART (c))
        g_ptr_array_add (charts, c);
      find_charts (c);
    }
}

static gboolean
all_charts_drawn (void)
{
  g_ptr_array_set_size (charts, 0);
  find_charts (window);
  if (charts->len == 0)
    return FALSE;
  for (guint i = 0; i < charts->len; i++)
    {
      VsChartData *d = vs_memory_chart_get_data (g_ptr_array_index (charts, i));

      if (d == NULL || (other != NULL && d->compare == NULL))
        return FALSE;
    }
  return TRUE;
}

static void
report (void)
{
  printf ("first_frame_ms %.0f target < 1000\n", first_frame_ms);
  printf ("frames %u\n", frame_ms->len);
  printf ("frame_p50_ms %.2f\n", vs_bench_percentile (frame_ms, 0.5));
  printf ("frame_p95_ms %.2f target < 16\n", vs_bench_percentile (frame_ms, 0.95));
  printf ("frame_max_ms %.2f\n", vs_bench_percentile (frame_ms, 1.0));
  printf ("chart_draw_p50_ms %.2f\n", vs_bench_percentile (draw_ms, 0.5));
  printf ("chart_draw_max_ms %.2f\n", vs_bench_percentile (draw_ms, 1.0));
  printf ("peak_rss_mb %.0f target < 1024\n", vs_bench_peak_rss_kb () / 1024.0);
  fflush (stdout);
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  gint64 now = g_get_monotonic_time ();

  if (phase == WAITING && all_charts_drawn ())
    {
      first_frame_ms = (now - start_us) / 1000.0;
      phase = SETTLING;
    }
  else if (phase == ANIMATING && update_us > 0)
    {
      double ms = (now - update_us) / 1000.0;
      double d = 0;
      for (guint i = 0; i < charts->len; i++)
        d = MAX (d, vs_memory_chart_get_last_draw_us (g_ptr_array_index (charts, i)) / 1000.0);
      g_array_append_val (frame_ms, ms);
      g_array_append_val (draw_ms, d);
      update_us = 0;
    }
}

/* Update phase of each frame: one step of the scripted interaction. */
static gboolean
tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  VsMemoryChart *chart;

  if (phase == SETTLING && ++settle_frames > 30)
    phase = ANIMATING;
  if (phase != ANIMATING)
    return G_SOURCE_CONTINUE;
  if (frame_index >= 3 * frames_per_phase)
    {
      phase = DONE;
      report ();
      gtk_window_destroy (GTK_WINDOW (window));
      return G_SOURCE_REMOVE;
    }
  chart = g_ptr_array_index (charts, 0);
  update_us = g_get_monotonic_time ();
  if (frame_index < frames_per_phase)
    vs_memory_chart_zoom (chart, 1.08);
  else if (frame_index < 2 * frames_per_phase)
    vs_memory_chart_pan (chart, 0.03);
  else
    vs_memory_chart_zoom (chart, 1 / 1.08);
  frame_index++;
  return G_SOURCE_CONTINUE;
}

static void
on_window_added (GtkApplication *app, GtkWindow *w, gpointer data)
{
  window = GTK_WIDGET (w);
  gtk_widget_add_tick_callback (window, tick, NULL, NULL);
}

static void
on_map (GtkWidget *w, gpointer data)
{
  g_signal_connect (gtk_widget_get_frame_clock (w), "after-paint", G_CALLBACK (on_after_paint),
                    NULL);
}

static void
on_window_added_map (GtkApplication *app, GtkWindow *w, gpointer data)
{
  g_signal_connect (w, "map", G_CALLBACK (on_map), NULL);
}

int
main (int argc, char **argv)
{
  g_autoptr (VsApplication) app = NULL;
  char *app_argv[] = { argv[0], (char *)"--size", (char *)"1280x860", NULL, NULL, NULL, NULL };
  int app_argc = 4;

  start_us = g_get_monotonic_time ();
  if (argc < 2 || argc > 4)
    {
      fprintf (stderr, "usage: viewer-bench TRACE [FRAMES_PER_PHASE [OTHER]]\n");
      return 1;
    }
  if (argc >= 3)
    frames_per_phase = (guint)MAX (1, atoi (argv[2]));
  if (argc == 4)
    other = argv[3];
  if (!gtk_init_check ())
    {
      fprintf (stderr, "viewer-bench: cannot open a display\n");
      return 1;
    }
  vs_application_choose_renderer ();
  frame_ms = g_array_new (FALSE, FALSE, sizeof (double));
  draw_ms = g_array_new (FALSE, FALSE, sizeof (double));
  charts = g_ptr_array_new ();
  app = vs_application_new ();
  app_argv[3] = argv[1];
  if (other != NULL)
    {
      app_argv[4] = (char *)"--compare";
      app_argv[5] = (char *)other;
      app_argc = 6;
    }
  g_signal_connect (app, "window-added", G_CALLBACK (on_window_added), NULL);
  g_signal_connect (app, "window-added", G_CALLBACK (on_window_added_map), NULL);
  g_application_run (G_APPLICATION (app), app_argc, app_argv);
  return phase == DONE ? 0 : 1;
}
