/* SPDX-License-Identifier: MIT */
/* test-whatif.c — the viewer's what-if: the reserved line replayed under
 * another allocator setting, on a committed PyTorch trace.
 *
 * Needs a display (meson runs it under xvfb-run).  Proves that:
 * - choosing a setting replays in the background (the window is not
 *   settled meanwhile) and then gives exactly what `vramscope whatif`
 *   prints for the same setting: the replayed peak, the trace's own
 *   replay, the failures, and the prediction line built from them;
 * - every chart then carries the replayed line with its legend, never
 *   below the replay's own peak and never above it plus the memory the
 *   device held outside the allocator; clearing removes it; a replay
 *   stopped at once leaves nothing;
 * - a malformed setting typed in the entry shows PyTorch's complaint
 *   inline and cannot be replayed;
 * - a trace without a PyTorch allocator leaves the control insensitive
 *   with a tooltip;
 * - `vramscope-view --whatif CONF --screenshot` draws the dashed line in
 *   its own colour (and a plain screenshot has none of it).
 *
 * Environment: VS_DATA (tests/data), VS_CLI, VS_VIEW.
 */
#include "vs-test-wait.h"
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "vs-application.h"
#include "vs-chart-draw.h"
#include "vs-test-screenshot.h"
#include "vs-window-private.h"

#define WAIT_US (60 * G_USEC_PER_SEC)
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

/* A run recorded on the GPU machine with the default settings; with
 * expandable segments its peak reserved is lower. */
#define TRACE "whatif/default.db"
#define SETTING "expandable_segments:True"

static char *tmpdir;

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

/* The rows `vramscope whatif FILE --alloc-conf conf --format csv` prints,
 * each split into its fields (header dropped). */
static GPtrArray *
cli_whatif (const char *path, const char *conf)
{
  const char *argv[]
      = { g_getenv ("VS_CLI"), "whatif", path, "--alloc-conf", conf, "--format", "csv", NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify)g_strfreev);

  g_assert_true (
      g_spawn_sync (NULL, (char **)argv, NULL, 0, NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  g_assert_cmpstr (lines[0], ==,
                   "device,allocator,alloc_conf,limit_bytes,peak_reserved_bytes,"
                   "peak_allocated_bytes,failed_alloc_count,first_failure_time_ns");
  for (guint i = 1; lines[i] != NULL; i++)
    if (*lines[i] != '\0')
      g_ptr_array_add (rows, g_strsplit (lines[i], ",", -1));
  return rows;
}

static gint64
field (GPtrArray *rows, guint row, guint column)
{
  return g_ascii_strtoll (((char **)g_ptr_array_index (rows, row))[column], NULL, 10);
}

static VsWindow *
open_window (VsApplication *app, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  VsWindow *window;

  g_application_open (G_APPLICATION (app), &file, 1, "");
  window = VS_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  g_object_ref (window);
  g_assert_true (wait_until (window_settled, window));
  g_assert_null (vs_window_get_error (window));
  return window;
}

static void
close_window (VsWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_object_unref (window);
}

static VsMemoryChart *
first_chart (VsWindow *window)
{
  g_assert_cmpuint (window->slots->len, >, 0);
  return g_array_index (window->slots, VsChartSlot, 0).chart;
}

/* The largest replayed value the chart's data holds (-1: none). */
static gint64
chart_whatif_max (VsMemoryChart *chart)
{
  VsChartData *d = vs_memory_chart_get_data (chart);
  gint64 max = -1;

  for (guint i = 0; d != NULL && i < d->n_buckets; i++)
    if (d->buckets[i].has_whatif)
      max = MAX (max, d->buckets[i].max_whatif);
  return max;
}

static void
test_choose_and_clear (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), TRACE, NULL);
  g_autoptr (VsApplication) app = vs_application_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = cli_whatif (path, SETTING);
  VsWindow *window;
  VsDocument *doc;
  const VsDocumentDevice *dev;
  GPtrArray *lines;
  const VsWhatifLine *line;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = open_window (app, path);
  doc = vs_session_get_document (vs_window_get_session (window));
  dev = g_ptr_array_index (vs_document_get_devices (doc), 0);
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (window->whatif_button)));
  /* the trace's own settings, then the suggestions */
  g_assert_nonnull (gtk_widget_get_first_child (GTK_WIDGET (window->whatif_presets)));
  g_assert_null (vs_document_get_whatif (doc));

  /* Chosen: the replay runs behind the progress bar, then every number
   * is the CLI's. */
  g_assert_true (
      gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif", "(sx)", SETTING, (gint64)-1));
  g_assert_false (vs_window_get_settled (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->whatif_progress)));
  g_assert_true (wait_until (window_settled, window));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->whatif_progress)));
  g_assert_true (gtk_widget_get_visible (window->whatif_clear));
  lines = vs_document_get_whatif (doc);
  g_assert_nonnull (lines);
  g_assert_cmpuint (lines->len, ==, 1);
  line = g_ptr_array_index (lines, 0);
  g_assert_cmpuint (rows->len, ==, 2);
  g_assert_cmpint (line->own.peak_reserved_bytes, ==, field (rows, 0, 4));
  g_assert_cmpint (line->result.peak_reserved_bytes, ==, field (rows, 1, 4));
  g_assert_cmpint (line->result.peak_allocated_bytes, ==, field (rows, 1, 5));
  g_assert_cmpint (line->result.failed_alloc_count, ==, field (rows, 1, 6));
  /* the setting changes the prediction */
  g_assert_cmpint (field (rows, 1, 4), <, field (rows, 0, 4));
  {
    gint64 own = field (rows, 0, 4), peak = field (rows, 1, 4);
    g_autofree char *p = vs_format_bytes (peak);
    g_autofree char *delta = vs_format_bytes (own - peak);
    g_autofree char *want
        = g_strdup_printf ("peak reserved %s (\u2212%s), no request would fail", p, delta);
    g_assert_cmpint (field (rows, 0, 6), ==, 0);
    g_assert_cmpint (field (rows, 1, 6), ==, 0);
    g_assert_cmpstr (gtk_label_get_text (window->whatif_label), ==, want);
  }
  /* The chart draws it: the replayed peak plus at most what the device
   * held outside PyTorch's allocator. */
  {
    VsChartData *d = vs_memory_chart_get_data (first_chart (window));
    gint64 max = chart_whatif_max (first_chart (window));
    gint64 outside = dev->summary.peak_reserved_bytes - line->own.peak_reserved_bytes;

    g_assert_cmpstr (d->whatif_label, ==, "reserved with " SETTING);
    g_test_message ("drawn max %" G_GINT64_FORMAT ", replayed peak %" G_GINT64_FORMAT
                    ", outside %" G_GINT64_FORMAT,
                    max, line->result.peak_reserved_bytes, outside);
    g_assert_cmpint (outside, >=, 0);
    g_assert_cmpint (max, >=, line->result.peak_reserved_bytes);
    g_assert_cmpint (max, <=, line->result.peak_reserved_bytes + outside);
  }

  /* Cleared: no line anywhere. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif-clear", NULL));
  g_assert_null (vs_document_get_whatif (doc));
  g_assert_true (wait_until (window_settled, window));
  g_assert_null (vs_memory_chart_get_data (first_chart (window))->whatif_label);
  g_assert_cmpint (chart_whatif_max (first_chart (window)), ==, -1);
  g_assert_cmpstr (gtk_label_get_text (window->whatif_label), ==, "");

  /* Stopped at once: nothing shown. */
  g_assert_true (
      gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif", "(sx)", SETTING, (gint64)-1));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif-cancel", NULL));
  g_assert_true (wait_until (window_settled, window));
  g_assert_null (vs_document_get_whatif (doc));
  g_assert_cmpstr (gtk_label_get_text (window->whatif_label), ==, "");

  /* A malformed setting: PyTorch's complaint inline, no replay. */
  gtk_editable_set_text (GTK_EDITABLE (window->whatif_entry), "max_split_size_mb:1");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->whatif_error)));
  g_assert_nonnull (strstr (gtk_label_get_text (window->whatif_error), "max_split_size_mb"));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif-entry", NULL);
  g_assert_true (vs_window_get_settled (window)); /* nothing started */
  g_assert_null (vs_document_get_whatif (doc));
  gtk_editable_set_text (GTK_EDITABLE (window->whatif_entry), SETTING);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window->whatif_error)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif-entry", NULL));
  g_assert_true (wait_until (window_settled, window));
  g_assert_nonnull (vs_document_get_whatif (doc));
  g_assert_cmpint (((VsWhatifLine *)g_ptr_array_index (vs_document_get_whatif (doc), 0))
                       ->result.peak_reserved_bytes,
                   ==, field (rows, 1, 4));
  close_window (window);
}

/* No PyTorch allocator: nothing to replay, and the control says why. */
static void
test_no_allocator (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), "sample-oom.db", NULL);
  g_autoptr (VsApplication) app = vs_application_new ();
  g_autoptr (GError) error = NULL;
  VsWindow *window;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = open_window (app, path);
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (window->whatif_button)));
  g_assert_nonnull (gtk_widget_get_tooltip_text (GTK_WIDGET (window->whatif_button)));
  g_assert_null (gtk_widget_get_first_child (GTK_WIDGET (window->whatif_presets)));
  close_window (window);
}

/* Pixels of the what-if line's colour in a screenshot of the trace, with
 * the setting or without. */
static int
whatif_pixels (const char *conf)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), TRACE, NULL);
  g_autofree char *png = g_strdup_printf ("%s/%s.png", tmpdir, conf ? "whatif" : "plain");
  const char *argv[] = { g_getenv ("VS_VIEW"), "--screenshot", png, "--size", "1100x760", path,
                         "--whatif",           conf,           NULL };
  g_auto (GStrv) env
      = g_environ_setenv (g_get_environ (), "ADW_DEBUG_COLOR_SCHEME", "prefer-light", TRUE);
  g_autofree guchar *pixels = NULL;
  int n, w, h;

  if (conf == NULL)
    argv[6] = NULL;
  pixels = vs_test_screenshot (argv, (const char *const *)env, png, &w, &h);
  n = vs_test_count_colour (pixels, (gsize)w * h, &vs_chart_palette (FALSE)->whatif, 0.06);
  g_test_message ("%s: %d pixels of the what-if colour", png, n);
  if (g_getenv ("VS_KEEP_SCREENSHOTS") == NULL)
    g_unlink (png);
  return n;
}

static void
test_screenshot (void)
{
  g_assert_cmpint (whatif_pixels (SETTING), >, 300);
  g_assert_cmpint (whatif_pixels (NULL), ==, 0);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  adw_init ();
  tmpdir = g_dir_make_tmp ("vs-whatif-XXXXXX", NULL);
  g_test_add_func ("/whatif/choose-and-clear", test_choose_and_clear);
  g_test_add_func ("/whatif/no-allocator", test_no_allocator);
  g_test_add_func ("/whatif/screenshot", test_screenshot);
  status = g_test_run ();
  /* Left in place when screenshots are kept. */
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
