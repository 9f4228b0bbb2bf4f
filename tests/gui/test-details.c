/* SPDX-License-Identifier: MIT */
/* test-details.c — the viewer's details, in a real window driven by real
 * input events (XTest) at 1024 px wide.
 *
 * Proves that:
 * - Attribution and the Flame Graph open with library frames hidden, on
 *   the user's line that holds the most memory, and a click on the toggle
 *   shows them;
 * - the allocator's limit (PyTorch's memory fraction × the device's
 *   capacity, read here from the trace's settings) is drawn on the screen
 *   as a line at its height, and only there;
 * - the selected instant and the pane switcher fit a 1024 px window
 *   without being cut;
 * - a finding's evidence and remedy are body text, not dim captions;
 * - on every committed trace with failed allocations (and every committed
 *   snapshot with any), the Failed pane says each failure's cause in the
 *   very words `vramscope report FILE --format csv oom` prints, and states
 *   CUDA's free memory with the device's capacity where the trace knows
 *   it.
 *
 * Environment: VS_DATA (tests/data), VS_CLI (the vramscope command).
 */
#include "vs-test-wait.h"
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include <X11/keysym.h>

#include "vs-attribution-pane.h"
#include "vs-chart-draw.h"
#include "vs-detail-row.h"
#include "vs-flame-pane.h"
#include "vs-memory-chart.h"
#include "vs-oom-text.h"
#include "vs-test-x11.h"
#include "vs-test-widgets.h"
#include "vs-test-window.h"
#include "vs-window-private.h"

#define WAIT_US (30 * G_USEC_PER_SEC)
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static VsWindow *window;
static char *limit_trace; /* a trace whose settings give a limit */

/* ----------------------------------------------------- waiting, input -- */

/* Alt+digit: the pane switcher's shortcut. */
static void
alt_digit (guint digit)
{
  const KeySym alt[] = { XK_Alt_L };

  vs_test_x11_key (XK_0 + digit, alt, 1);
  vs_test_x11_spin (60);
}

typedef struct
{
  GtkToggleButton *toggle;
  gboolean active;
} ToggleWait;

static gboolean
toggle_is (gpointer data)
{
  ToggleWait *w = data;
  return gtk_toggle_button_get_active (w->toggle) == w->active;
}

/* Clicks toggle and waits until it has turned (a loaded machine can take
 * longer than the click's own pause to deliver the events). */
static void
click_toggle (GtkToggleButton *toggle)
{
  ToggleWait w = { toggle, !gtk_toggle_button_get_active (toggle) };

  vs_test_x11_click (GTK_WIDGET (toggle));
  g_assert_true (wait_until (toggle_is, &w));
}

static gboolean
is_color (GtkWidget *widget, double x, double y, const GdkRGBA *c)
{
  guint32 p = vs_test_x11_screen_pixel (widget, x, y);
  double r = ((p >> 16) & 0xff) / 255.0, g = ((p >> 8) & 0xff) / 255.0, b = (p & 0xff) / 255.0;

  return fabs (r - c->red) < 0.08 && fabs (g - c->green) < 0.08 && fabs (b - c->blue) < 0.08;
}

/* ------------------------------------------------------------ widgets -- */

/* The toggle button under widget labelled label. */
static gboolean
is_toggle (GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_TOGGLE_BUTTON (widget)
         && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0;
}

static GtkToggleButton *
find_toggle (GtkWidget *widget, const char *label)
{
  GtkWidget *found = vs_test_find (widget, is_toggle, label);

  return found != NULL ? GTK_TOGGLE_BUTTON (found) : NULL;
}

static GtkWidget *
shown_pane (void)
{
  return adw_view_stack_get_visible_child (window->pane_stack);
}

static gboolean
pane_named (gpointer data)
{
  return g_strcmp0 (adw_view_stack_get_visible_child_name (window->pane_stack), data) == 0;
}

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

/* Whether the window shows a document other than data, settled. */
static gboolean
shows_another (gpointer data)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  return doc != NULL && doc != data && vs_window_get_settled (window);
}

/* Opens path (a trace, or a snapshot imported first) and waits until it
 * is shown. */
static void
open_and_wait (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  VsDocument *before = vs_session_get_document (vs_window_get_session (window));

  vs_window_open (window, file);
  g_assert_true (wait_until (shows_another, before));
}

static VsInstant *
instant (void)
{
  return vs_session_get_instant (vs_window_get_session (window));
}

/* -------------------------------------------------------------- tests -- */

/* Attribution and the Flame Graph open on the user's own frames. */
static void
test_hide_library_default (void)
{
  VsDocument *doc;
  const VsDiagnosis *diagnosis;
  const VsDeviceDiagnosis *dd;
  const VsGroup *top;
  GtkToggleButton *toggle;
  VsAttributionPane *attribution;
  VsFlameGraph *graph;
  VsInstant *in;
  const VsTreeNode *first;

  open_and_wait (limit_trace);
  g_assert_true (vs_test_x11_focus (GTK_WINDOW (window)));
  doc = vs_session_get_document (vs_window_get_session (window));
  diagnosis = vs_document_get_diagnosis (doc);
  dd = g_ptr_array_index (diagnosis->devices, 0);
  top = &g_array_index (dd->sites, VsGroup, 0);

  alt_digit (2);
  g_assert_true (wait_until (pane_named, "attribution"));
  g_assert_true (wait_until (window_settled, window));
  attribution = VS_ATTRIBUTION_PANE (shown_pane ());
  toggle = find_toggle (shown_pane (), "Hide Library Frames");
  g_assert_nonnull (toggle);
  g_assert_true (gtk_toggle_button_get_active (toggle));
  g_assert_nonnull (gtk_widget_get_tooltip_text (GTK_WIDGET (toggle)));
  in = instant ();
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (attribution), ==,
                    in->bottom_up_user->children->len);
  /* The first row: the user's line that holds the most at the peak, as
   * the diagnosis names it. */
  first = g_ptr_array_index (in->bottom_up_user->children, 0);
  g_assert_true (first->user_code);
  g_assert_cmpstr (first->label, ==, top->site);
  g_assert_cmpint (first->total_bytes, ==, top->bytes);

  /* A click shows the library frames. */
  click_toggle (toggle);
  g_assert_false (gtk_toggle_button_get_active (toggle));
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (attribution), ==,
                    in->bottom_up->children->len);
  click_toggle (toggle);
  g_assert_true (gtk_toggle_button_get_active (toggle));

  alt_digit (3);
  g_assert_true (wait_until (pane_named, "flame"));
  toggle = find_toggle (shown_pane (), "Hide Library Frames");
  g_assert_nonnull (toggle);
  g_assert_true (gtk_toggle_button_get_active (toggle));
  graph = vs_flame_pane_get_flame_graph (VS_FLAME_PANE (shown_pane ()));
  g_assert_true (vs_flame_graph_get_root (graph) == in->top_down_user);
  click_toggle (toggle);
  g_assert_true (vs_flame_graph_get_root (graph) == in->top_down);
  click_toggle (toggle);
  g_assert_true (vs_flame_graph_get_root (graph) == in->top_down_user);
}

/* The limit: a 2 px line at its height across the chart, on the screen. */
static void
test_limit_line (void)
{
  VsChartSlot *slot = &g_array_index (window->slots, VsChartSlot, 0);
  GtkWidget *chart = GTK_WIDGET (slot->chart);
  VsChartData *data;
  VsChartLayout l;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (GError) error = NULL;
  VsAllocatorSettings settings;
  const VsChartPalette *p
      = vs_chart_palette (adw_style_manager_get_dark (adw_style_manager_get_default ()));
  guint on_line = 0, above = 0, n = 0;
  double y;

  g_assert_true (wait_until (window_settled, window));
  data = vs_memory_chart_get_data (slot->chart);
  g_assert_nonnull (data);
  /* The limit as the trace's settings give it, read here. */
  trace = vs_trace_open (limit_trace, &error);
  g_assert_no_error (error);
  vs_allocator_settings_read (trace, g_array_index (window->slots, VsChartSlot, 0).device_id,
                              &settings);
  g_assert_cmpfloat (settings.memory_fraction, >, 0);
  g_assert_cmpint (settings.limit_bytes, >, 0);
  g_assert_cmpint (data->limit_bytes, ==, settings.limit_bytes);
  g_assert_nonnull (strstr (data->limit_label, "limit"));
  vs_allocator_settings_clear (&settings);

  vs_chart_layout (data, gtk_widget_get_width (chart), gtk_widget_get_height (chart), &l);
  g_assert_true (l.limit_on_scale);
  y = round (vs_chart_y_for_bytes (&l, data->limit_bytes));
  /* Columns across the chart, right of the label: the line's two rows
   * (y - 1 and y) are its colour (where a curve or marker crosses it they are not);
   * 6 px above it they are not. */
  for (double x = l.chart.origin.x + 0.3 * l.chart.size.width;
       x < l.chart.origin.x + l.chart.size.width - 2; x += 7)
    {
      n++;
      on_line += is_color (chart, x, y - 0.5, &p->limit) && is_color (chart, x, y + 0.5, &p->limit);
      above += is_color (chart, x, y - 7.5, &p->limit);
    }
  g_assert_cmpuint (n, >, 50);
  g_assert_cmpuint (on_line * 10, >=, n * 8);
  g_assert_cmpuint (above, ==, 0);
}

/* The instant and the pane switcher fit 1024 px. */
static void
test_status_at_1024 (void)
{
  PangoLayout *layout;

  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 1024);
  g_assert_true (wait_until (window_settled, window));
  g_assert_cmpstr (gtk_label_get_text (window->instant_label), !=, "");
  layout = gtk_label_get_layout (window->instant_label);
  g_assert_false (pango_layout_is_ellipsized (layout));
  g_assert_nonnull (strstr (gtk_label_get_text (window->instant_label), "reserved"));
}

/* A finding's evidence and remedy: body text under a heading. */
static void
test_body_text (void)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  const VsDiagnosis *diagnosis = vs_document_get_diagnosis (doc);
  const VsFinding *f = g_ptr_array_index (diagnosis->findings, 0);
  GtkWidget *evidence, *remedy, *body;

  alt_digit (1);
  g_assert_true (wait_until (pane_named, "diagnosis"));
  evidence = vs_test_find_named (shown_pane (), "evidence");
  remedy = vs_test_find_named (shown_pane (), "remedy");
  g_assert_nonnull (evidence);
  g_assert_nonnull (remedy);
  g_assert_cmpstr (vs_detail_row_get_text (evidence), ==, f->evidence);
  g_assert_cmpstr (vs_detail_row_get_text (remedy), ==, f->remedy);
  body = vs_test_find_type (evidence, GTK_TYPE_LABEL);
  body = gtk_widget_get_next_sibling (body);
  g_assert_true (gtk_widget_has_css_class (body, "body"));
  g_assert_false (gtk_widget_has_css_class (body, "dim-label"));
  g_assert_false (gtk_widget_has_css_class (body, "caption"));
  g_assert_true (gtk_label_get_selectable (GTK_LABEL (body)));
}

/* ------------------------------------------- the CLI's words, the pane's -- */

/* Splits RFC 4180 CSV text into rows of fields. */
static GPtrArray *
parse_csv (const char *text)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify)g_ptr_array_unref);
  GPtrArray *row = g_ptr_array_new_with_free_func (g_free);
  GString *field = g_string_new (NULL);
  gboolean quoted = FALSE;

  for (const char *c = text; *c; c++)
    {
      if (quoted)
        {
          if (*c == '"' && c[1] == '"')
            g_string_append_c (field, '"'), c++;
          else if (*c == '"')
            quoted = FALSE;
          else
            g_string_append_c (field, *c);
        }
      else if (*c == '"')
        quoted = TRUE;
      else if (*c == ',')
        g_ptr_array_add (row, g_string_free (g_string_new (field->str), FALSE)),
            g_string_truncate (field, 0);
      else if (*c == '\r')
        ;
      else if (*c == '\n')
        {
          g_ptr_array_add (row, g_strdup (field->str));
          g_string_truncate (field, 0);
          g_ptr_array_add (rows, row);
          row = g_ptr_array_new_with_free_func (g_free);
        }
      else
        g_string_append_c (field, *c);
    }
  g_ptr_array_unref (row);
  g_string_free (field, TRUE);
  return rows;
}

static int
column (GPtrArray *header, const char *name)
{
  for (guint i = 0; i < header->len; i++)
    if (strcmp (g_ptr_array_index (header, i), name) == 0)
      return (int)i;
  g_assert_not_reached ();
}

/* `vramscope report path --format csv oom`, parsed. */
static GPtrArray *
cli_oom (const char *path)
{
  const char *argv[] = { g_getenv ("VS_CLI"), "report", path, "--format", "csv", "oom", NULL };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s: %s", path, err);
  return parse_csv (out);
}

static VsOomCause
cause_named (const char *name)
{
  for (VsOomCause c = VS_OOM_CAUSE_DEVICE_FULL; c <= VS_OOM_CAUSE_FRAGMENTATION; c++)
    if (strcmp (vs_oom_cause_name (c), name) == 0)
      return c;
  g_assert_cmpstr (name, ==, "");
  return VS_OOM_CAUSE_UNKNOWN;
}

/* The Failed pane's expander row of failure i. */
static GtkWidget *
failure_row (guint i)
{
  GtkWidget *pane = adw_view_stack_get_child_by_name (window->pane_stack, "oom");
  GtkListBox *list = GTK_LIST_BOX (vs_test_find_type (pane, GTK_TYPE_LIST_BOX));
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, (int)i);

  g_assert_nonnull (row);
  return GTK_WIDGET (row);
}

/* Checks one trace: every failure the CLI lists is in the pane, in the
 * CLI's words. */
static guint
check_same_words (const char *path)
{
  g_autoptr (GPtrArray) rows = cli_oom (path);
  GPtrArray *header = g_ptr_array_index (rows, 0);
  int c_time = column (header, "time_ns"), c_req = column (header, "requested_bytes");
  int c_api = column (header, "api"), c_cause = column (header, "cause");
  int c_evidence = column (header, "cause_evidence");
  VsDocument *doc;
  GPtrArray *ooms;

  if (rows->len <= 1)
    return 0;
  g_test_message ("%s: %u failed allocations", path, rows->len - 1);
  open_and_wait (path);
  doc = vs_session_get_document (vs_window_get_session (window));
  ooms = vs_document_get_ooms (doc);
  g_assert_cmpuint (ooms->len, ==, rows->len - 1);
  for (guint r = 1; r < rows->len; r++)
    {
      GPtrArray *row = g_ptr_array_index (rows, r);
      gint64 t = g_ascii_strtoll (g_ptr_array_index (row, c_time), NULL, 10);
      gint64 req = g_ascii_strtoll (g_ptr_array_index (row, c_req), NULL, 10);
      const char *api = g_ptr_array_index (row, c_api);
      VsOomCause cause = cause_named (g_ptr_array_index (row, c_cause));
      const char *words = g_ptr_array_index (row, c_evidence);
      guint i = G_MAXUINT;
      GtkWidget *shown, *memory;
      const VsOom *o;
      gint64 capacity = 0;

      for (guint k = 0; k < ooms->len && i == G_MAXUINT; k++)
        {
          o = g_ptr_array_index (ooms, k);
          if (o->time_ns == t && o->requested_bytes == req && g_strcmp0 (o->api, api) == 0)
            i = k;
        }
      g_assert_cmpuint (i, !=, G_MAXUINT);
      o = g_ptr_array_index (ooms, i);
      shown = vs_test_find_named (failure_row (i), "failure-cause");
      g_assert_nonnull (shown);
      /* The heading names the CLI's cause; the text is the CLI's. */
      g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (vs_test_find_type (shown, GTK_TYPE_LABEL))),
                       ==, vs_oom_cause_title (cause));
      g_assert_cmpstr (vs_detail_row_get_text (shown), ==, words);
      /* CUDA's free memory with the device's capacity. */
      memory = vs_test_find_named (failure_row (i), "failure-memory");
      g_assert_nonnull (memory);
      for (guint k = 0; k < vs_document_get_devices (doc)->len; k++)
        {
          VsDocumentDevice *d = g_ptr_array_index (vs_document_get_devices (doc), k);
          if (d->id == o->device_id)
            capacity = d->summary.capacity_bytes;
        }
      if (o->device_total_bytes > 0)
        capacity = o->device_total_bytes;
      if (capacity > 0)
        {
          g_autofree char *cap = vs_format_bytes (capacity);
          g_autofree char *tail = g_strdup_printf (" of %s", cap);

          g_assert_true (g_str_has_suffix (vs_detail_row_get_text (memory), tail));
        }
    }
  return rows->len - 1;
}

/* Every committed trace under dir (recursively) and snapshot. */
static void
collect (const char *dir, GPtrArray *out)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          /* The hostile corpus holds broken snapshots on purpose. */
          if (strcmp (name, "corpus") != 0)
            collect (path, out);
        }
      else if (g_str_has_suffix (name, ".db") || g_str_has_suffix (name, ".pickle"))
        g_ptr_array_add (out, g_steal_pointer (&path));
    }
}

static gint
by_path (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *)a, *(const char *const *)b);
}

static void
test_same_words (void)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  guint traces = 0, failures = 0;

  collect (g_getenv ("VS_DATA"), files);
  g_ptr_array_sort (files, by_path);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autoptr (GPtrArray) rows = NULL;
      guint n;

      /* Only what the CLI can open (every committed trace is one; the
       * fixtures of broken files are not). */
      if (strstr (path, "hostile") != NULL || strstr (path, "broken") != NULL)
        continue;
      n = check_same_words (path);
      traces += n > 0;
      failures += n;
    }
  g_test_message ("%u traces with %u failed allocations", traces, failures);
  /* The committed OOM traces: the bundled one, the samples, the ranks,
   * the frameworks' (at least as many as today). */
  g_assert_cmpuint (traces, >=, 12);
}

int
main (int argc, char **argv)
{
  int status;

  vs_test_home_enter ("vs-details-XXXXXX");
  limit_trace = g_build_filename (g_getenv ("VS_DATA"), "diagnose", "torch-eval-leak.db", NULL);

  g_test_init (&argc, &argv, NULL);
  window = vs_test_window_new (1024, 768);

  g_test_add_func ("/details/hide-library-default", test_hide_library_default);
  g_test_add_func ("/details/limit-line", test_limit_line);
  g_test_add_func ("/details/status-at-1024", test_status_at_1024);
  g_test_add_func ("/details/body-text", test_body_text);
  g_test_add_func ("/details/same-words", test_same_words);
  status = vs_test_window_finish (g_test_run ());
  g_free (limit_trace);
  return status;
}
