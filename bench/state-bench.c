/* SPDX-License-Identifier: MIT */
/* state-bench.c — how fast the viewer steps through the allocators' state.
 *
 * Opens TRACE in the real viewer window (needs a display: run it under
 * xvfb-run, as bench/state-bench.sh does), shows Fragmentation stepping
 * (`--pane state`) at the instant the window selects, then steps forward
 * STEPS times and back as many, as the Next Event and Previous Event
 * actions do, and measures for each step the time from the request to the
 * end of the first frame painted with the new state (a span of events
 * loaded again in a worker when the step leaves the one held, included).
 * Then, without a window, the analyzer's side alone on the same trace:
 * loading the span around the same step and computing the state after
 * each event from its checkpoint.  Prints "key value" lines:
 *   first_state_ms        the pane settled on its first event
 *   step_ms_p50/p95/max   request to the first frame painted with the
 *                         step's state, per step, stepping on at once
 *                         (the session's instant waits for a pause): the
 *                         latency
 *                         the user sees, which includes the wait for the
 *                         frame clock's next tick (up to one refresh
 *                         interval, 16.7 ms at 60 Hz) before the frame
 *                         starts
 *   settle_ms_forward/back  after the last step of each run (forward, then
 *                         back), the user pausing: that step's request to
 *                         the window settled, the session's instant,
 *                         Attribution and the timelines following it
 *   step_frame_ms_*       the work of that frame itself, from the start of
 *                         its update phase to the end of its paint (layout,
 *                         snapshot, drawing, rendering), as viewer-bench
 *                         measures frames: the < 16 ms frame target
 *   step_sync_ms_*        the step's own work (state, view, labels),
 *                         before the frame
 *   step_reloads          steps that loaded a new span
 *   live_pieces, span_events, checkpoint_every, checkpoints
 *   load_ms               vs_alloc_steps_load of one span
 *   state_ms_p50/p95/max  vs_alloc_steps_state, per event
 *   peak_rss_mb
 *
 * Usage: state-bench TRACE [STEPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-application.h"
#include "vs-window-private.h"
#include "vs-bench-stats.h"

static VsWindow *window;
static guint paints;
static gint64 frame_start_us; /* the current frame's start (before its update phase) */
static double frame_ms;       /* the last painted frame's work */
static double first_frame_ms; /* the first frame's painted since it was set < 0 */

/* Emitted by every frame before its update phase. */
static void
on_before_paint (GdkFrameClock *clock, gpointer data)
{
  frame_start_us = g_get_monotonic_time ();
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  frame_ms = (g_get_monotonic_time () - frame_start_us) / 1000.0;
  if (first_frame_ms < 0)
    first_frame_ms = frame_ms;
  paints++;
}

static gboolean
settled (void)
{
  return vs_window_get_settled (window);
}

/* Runs the main loop until the window is settled and a frame was painted
 * since paints was `before`; FALSE after 300 s. */
static gboolean
wait_painted (guint before)
{
  gint64 deadline = g_get_monotonic_time () + 300 * G_USEC_PER_SEC;

  while (!settled () || paints == before)
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, TRUE);
    }
  return TRUE;
}

/* Runs the main loop until the pane holds its step (no span being read)
 * and a frame was painted since paints was `before`: what a user stepping
 * on sees, without waiting for the session's instant, which follows only
 * once stepping pauses; FALSE after 300 s. */
static gboolean
wait_stepped (guint before)
{
  gint64 deadline = g_get_monotonic_time () + 300 * G_USEC_PER_SEC;

  while (vs_state_pane_is_loading (window->state_pane) || paints == before)
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, TRUE);
    }
  return TRUE;
}

static void
print_percentiles (const char *key, GArray *ms)
{
  g_array_sort (ms, vs_bench_cmp_double);
  if (ms->len == 0)
    return;
  printf ("%s_p50 %.3f\n", key, g_array_index (ms, double, ms->len / 2));
  printf ("%s_p95 %.3f\n", key, g_array_index (ms, double, MIN (ms->len - 1, ms->len * 95 / 100)));
  printf ("%s_max %.3f\n", key, g_array_index (ms, double, ms->len - 1));
}

/* The analyzer alone: the span around seq and the state after each of
 * its events. */
static void
bench_analyzer (const char *path, gint64 device_id, gint64 seq)
{
  g_autoptr (GError) error = NULL;
  VsTrace *trace = vs_trace_open (path, &error);
  g_autoptr (GArray) ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (VsAllocSteps) steps = NULL;
  gint64 t0;
  guint n, stride;

  if (trace == NULL)
    {
      fprintf (stderr, "state-bench: %s\n", error->message);
      exit (1);
    }
  t0 = g_get_monotonic_time ();
  steps = vs_alloc_steps_load (trace, device_id, seq, 0, &error);
  if (steps == NULL)
    {
      fprintf (stderr, "state-bench: %s\n", error->message);
      exit (1);
    }
  printf ("load_ms %.1f\n", (g_get_monotonic_time () - t0) / 1000.0);
  n = vs_alloc_steps_get_n (steps);
  printf ("span_events %u\n", n);
  printf ("checkpoint_every %u\n", vs_alloc_steps_get_checkpoint_every (steps));
  printf ("checkpoints %u\n", vs_alloc_steps_get_n_checkpoints (steps));
  {
    g_autoptr (VsAllocState) st = vs_alloc_steps_state (steps, -1);
    printf ("live_blocks %u\nlive_segments %u\n", st->blocks->len, st->segments->len);
  }
  /* At most 2000 events spread over the span. */
  stride = MAX (1, n / 2000);
  for (guint i = 0; i < n; i += stride)
    {
      gint64 t = g_get_monotonic_time ();
      g_autoptr (VsAllocState) st = vs_alloc_steps_state (steps, (gint)i);
      double d = (g_get_monotonic_time () - t) / 1000.0;
      g_array_append_val (ms, d);
    }
  print_percentiles ("state_ms", ms);
  vs_trace_free (trace);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GFile) file = NULL;
  g_autoptr (GArray) ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) sync_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) work_ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) settle_ms = g_array_new (FALSE, FALSE, sizeof (double));
  VsApplication *app;
  VsStatePane *pane;
  guint n_steps = 300, reloads = 0;
  gint64 t0, device_id, seq;

  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: state-bench TRACE [STEPS]\n");
      return 1;
    }
  if (argc == 3)
    n_steps = (guint)MAX (1, atoi (argv[2]));
  if (!gtk_init_check ())
    {
      fprintf (stderr, "state-bench: cannot open a display\n");
      return 1;
    }
  adw_init ();
  vs_application_choose_renderer ();
  app = vs_application_new ();
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "state-bench: %s\n", error->message);
      return 1;
    }
  window = vs_window_new (ADW_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 860);
  gtk_window_present (GTK_WINDOW (window));
  g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (window)), "before-paint",
                    G_CALLBACK (on_before_paint), NULL);
  g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (window)), "after-paint",
                    G_CALLBACK (on_after_paint), NULL);
  file = g_file_new_for_path (argv[1]);
  vs_window_open (window, file);
  while (vs_session_get_document (vs_window_get_session (window)) == NULL || !settled ())
    g_main_context_iteration (NULL, TRUE);

  pane = window->state_pane;
  t0 = g_get_monotonic_time ();
  {
    guint before = paints;
    vs_window_show_pane (window, "state");
    if (!wait_painted (before) || vs_state_pane_get_step (pane) == NULL)
      {
        fprintf (stderr, "state-bench: no allocator event to step from\n");
        return 1;
      }
  }
  printf ("first_state_ms %.1f\n", (g_get_monotonic_time () - t0) / 1000.0);
  device_id = vs_session_get_instant (vs_window_get_session (window))->device_id;
  seq = vs_state_pane_get_step (pane)->seq;

  for (guint k = 0; k < 2 * n_steps; k++)
    {
      gint64 t = g_get_monotonic_time ();
      gboolean reloaded;
      guint before = paints;
      double d;

      first_frame_ms = -1;
      vs_state_pane_step (pane, k < n_steps ? 1 : -1);
      d = (g_get_monotonic_time () - t) / 1000.0;
      g_array_append_val (sync_ms, d);
      reloaded = vs_state_pane_is_loading (pane);
      if (!wait_stepped (before))
        return 1;
      d = (g_get_monotonic_time () - t) / 1000.0;
      reloads += reloaded;
      g_array_append_val (ms, d);
      /* The frame that showed the step: the first painted after it. */
      g_array_append_val (work_ms, first_frame_ms);
      /* At the end of each run of steps, the user pauses: the session's
       * instant follows the last step, and the window settles. */
      if (k == n_steps - 1 || k == 2 * n_steps - 1)
        {
          if (!wait_painted (paints))
            return 1;
          d = (g_get_monotonic_time () - t) / 1000.0;
          g_array_append_val (settle_ms, d);
          if (vs_session_get_selected_time (vs_window_get_session (window))
              != vs_state_pane_get_step (pane)->time_ns)
            {
              fprintf (stderr, "state-bench: the session did not follow the last step\n");
              return 1;
            }
        }
    }
  print_percentiles ("step_ms", ms);
  for (guint i = 0; i < settle_ms->len; i++)
    printf ("settle_ms_%s %.3f\n", i == 0 ? "forward" : "back",
            g_array_index (settle_ms, double, i));
  print_percentiles ("step_frame_ms", work_ms);
  print_percentiles ("step_sync_ms", sync_ms);
  printf ("step_reloads %u\n", reloads);
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (app);

  bench_analyzer (argv[1], device_id, seq);
  printf ("peak_rss_mb %.0f\n", vs_bench_peak_rss_kb () / 1024.0);
  return 0;
}
