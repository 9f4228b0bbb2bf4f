/* SPDX-License-Identifier: MIT */
/* test-whatif-batch.c — the What If… strip's batch field: a batch typed
 * there draws the reserved line predicted at that batch, the same line
 * vs_predict_line_new gives, in every chart.
 *
 * Environment: VS_DATA (tests/data).
 */
#include "vs-test-wait.h"
#include <adwaita.h>

#include "vs-application.h"
#include "vs-window-private.h"

#define WAIT_US (60 * G_USEC_PER_SEC)
#define TRACE "whatif/default.db"

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

static gboolean
has_whatif (gpointer data)
{
  return vs_document_get_whatif (data) != NULL;
}

/* The batch field: the entry of the popover's row named whatif-batch. */
static GtkWidget *
batch_entry (VsWindow *window)
{
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (window->whatif_presets));
       row != NULL; row = gtk_widget_get_next_sibling (row))
    for (GtkWidget *w = gtk_widget_get_first_child (row); w != NULL;
         w = gtk_widget_get_next_sibling (w))
      if (g_strcmp0 (gtk_widget_get_name (w), "whatif-batch") == 0)
        return w;
  return NULL;
}

static void
test_batch (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), TRACE, NULL);
  g_autoptr (VsApplication) app = vs_application_new ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsWhatifLine) want = NULL;
  VsWindow *window;
  VsDocument *doc;
  GtkWidget *entry;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_application_open (G_APPLICATION (app), &file, 1, "");
  window = VS_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  g_object_ref (window);
  g_assert_true (vs_test_wait_until (window_settled, window, WAIT_US));
  doc = vs_session_get_document (vs_window_get_session (window));
  entry = batch_entry (window);
  g_assert_nonnull (entry);

  /* not two batches: refused, nothing drawn */
  gtk_editable_set_text (GTK_EDITABLE (entry), "64");
  g_signal_emit_by_name (entry, "activate");
  g_assert_true (gtk_widget_has_css_class (entry, "error"));
  g_assert_null (vs_document_get_whatif (doc));

  gtk_editable_set_text (GTK_EDITABLE (entry), "64 → 32");
  g_signal_emit_by_name (entry, "activate");
  g_assert_false (gtk_widget_has_css_class (entry, "error"));
  g_assert_true (vs_test_wait_until (has_whatif, doc, WAIT_US));

  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  const VsDocumentDevice *dev = g_ptr_array_index (vs_document_get_devices (doc), 0);
  want = vs_predict_line_new (trace, dev->id, 64, 32, &error);
  g_assert_no_error (error);
  GPtrArray *lines = vs_document_get_whatif (doc);
  g_assert_cmpuint (lines->len, ==, 1);
  const VsWhatifLine *got = g_ptr_array_index (lines, 0);
  g_assert_cmpint (got->result.peak_reserved_bytes, ==, want->result.peak_reserved_bytes);
  g_assert_cmpuint (got->steps->len, ==, want->steps->len);
  /* half the batch: below the recorded reserved peak */
  g_assert_cmpint (got->result.peak_reserved_bytes, <, got->own.peak_reserved_bytes);
  g_assert_true (gtk_widget_get_visible (window->whatif_clear));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.whatif-clear", NULL));
  g_assert_null (vs_document_get_whatif (doc));

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_object_unref (window);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  adw_init ();
  g_test_add_func ("/whatif/batch", test_batch);
  return g_test_run ();
}
