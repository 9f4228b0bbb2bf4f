/* SPDX-License-Identifier: MIT */
/* vs-window-compare.c — Compare With…: the shown trace (A) compared with
 * another (B).  B's lines are drawn on A's timelines (their queries go
 * through the VsComparison, see vs-window-timelines.c) and the
 * Comparison pane shows the diff, what differs between the runs and the
 * alignment toggle, whose changes draw the timelines again.
 */
#include "vs-window-private.h"

#include <glib/gi18n.h>

#include "vs-analyzer.h"

typedef struct
{
  VsWindow *self;
  char *name_b;
  guint generation;
  gboolean keep_pane; /* chosen with the trace (--compare): a pane chosen too stays */
} CompareRequest;

static void
on_alignment (VsComparison *comparison, GParamSpec *pspec, VsWindow *self)
{
  vs_window_invalidate_timelines (self);
  vs_window_request_all_charts (self);
}

/* Shows comparison (NULL: none) on the timelines and in the pane. */
static void
set_comparison (VsWindow *self, VsComparison *comparison)
{
  if (self->comparison != NULL)
    g_signal_handlers_disconnect_by_data (self->comparison, self);
  g_set_object (&self->comparison, comparison);
  vs_compare_pane_set_comparison (self->compare_pane, comparison);
  adw_view_stack_page_set_visible (self->compare_page, comparison != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.compare-stop", comparison != NULL);
  if (comparison != NULL)
    g_signal_connect (comparison, "notify::align-by-iteration", G_CALLBACK (on_alignment), self);
  if (vs_session_get_document (self->session) != NULL)
    {
      vs_window_invalidate_timelines (self);
      vs_window_request_all_charts (self);
    }
}

/* A comparison failed: a toast and the "error" property say why. */
static void
say_failed (VsWindow *self, const char *name_b, const GError *error)
{
  g_autofree char *text
      = g_strdup_printf (_("Cannot compare with %s: %s"), name_b, error->message);
  g_autofree char *markup = g_markup_escape_text (text, -1);
  AdwToast *toast = adw_toast_new (markup);

  adw_toast_set_timeout (toast, 10);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
  vs_window_set_error (self, text);
}

static void
request_free (CompareRequest *r)
{
  g_object_unref (r->self);
  g_free (r->name_b);
  g_free (r);
}

/* The diff made: the pane's table, banner and alignment. */
static void
on_computed (GObject *source, GAsyncResult *result, gpointer data)
{
  CompareRequest *r = data;
  VsWindow *self = r->self;
  VsComparison *comparison = VS_COMPARISON (source);
  g_autoptr (GError) error = NULL;

  self->comparing--;
  if (!vs_comparison_compute_finish (comparison, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        say_failed (self, r->name_b, error);
      if (self->comparison == comparison)
        vs_window_stop_comparing (self);
    }
  else if (self->comparison == comparison)
    {
      g_free (self->comparison_text);
      self->comparison_text = g_strdup (vs_comparison_get_text (comparison));
    }
  vs_window_update_settled (self);
  request_free (r);
}

/* B open: drawn on the timelines at once, the diff made meanwhile. */
static void
on_compared (GObject *source, GAsyncResult *result, gpointer data)
{
  CompareRequest *r = data;
  VsWindow *self = r->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsComparison) comparison = vs_comparison_new_finish (result, &error);

  if (comparison != NULL && r->generation == self->generation)
    {
      set_comparison (self, comparison);
      if (!r->keep_pane
          || g_strcmp0 (adw_view_stack_get_visible_child_name (self->pane_stack), "diagnosis") == 0)
        vs_window_show_pane (self, "compare");
      vs_comparison_compute_async (comparison, self->compare_cancellable, on_computed, r);
      return;
    }
  self->comparing--;
  if (comparison == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    say_failed (self, r->name_b, error);
  vs_window_update_settled (self);
  request_free (r);
}

/* Starts comparing with file, or keeps it for the next trace shown
 * (NULL returned). */
static CompareRequest *
start (VsWindow *self, GFile *file)
{
  VsDocument *doc = vs_session_get_document (self->session);
  CompareRequest *r;

  if (doc == NULL || vs_document_get_devices (doc)->len == 0)
    {
      g_set_object (&self->compare_pending, file);
      return NULL;
    }
  if (self->compare_cancellable != NULL)
    g_cancellable_cancel (self->compare_cancellable);
  g_clear_object (&self->compare_cancellable);
  self->compare_cancellable = g_cancellable_new ();
  r = g_new0 (CompareRequest, 1);
  r->self = g_object_ref (self);
  r->name_b = g_file_get_basename (file);
  r->generation = self->generation;
  self->comparing++;
  vs_window_update_settled (self);
  vs_comparison_new_async (doc, file, self->compare_cancellable, on_compared, r);
  return r;
}

/* See vs-window.h. */
void
vs_window_compare_with (VsWindow *self, GFile *file)
{
  g_return_if_fail (VS_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));
  start (self, file);
}

/* See vs-window.h. */
void
vs_window_stop_comparing (VsWindow *self)
{
  g_return_if_fail (VS_IS_WINDOW (self));
  if (self->compare_cancellable != NULL)
    g_cancellable_cancel (self->compare_cancellable);
  if (self->comparison == NULL)
    return;
  if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->pane_stack), "compare") == 0)
    vs_window_show_pane (self, "diagnosis");
  set_comparison (self, NULL);
}

/* See vs-window-private.h. */
void
vs_window_compare_clear (VsWindow *self)
{
  vs_window_stop_comparing (self);
}

/* See vs-window-private.h. */
void
vs_window_compare_start_pending (VsWindow *self)
{
  g_autoptr (GFile) file = g_steal_pointer (&self->compare_pending);
  CompareRequest *r;

  if (file == NULL)
    return;
  r = start (self, file);
  if (r != NULL)
    r->keep_pane = TRUE;
}

/* See vs-window.h. */
VsComparison *
vs_window_get_comparison (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), NULL);
  return self->comparison;
}

/* See vs-window.h. */
const char *
vs_window_get_comparison_text (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), NULL);
  return self->comparison_text;
}

/* See vs-window.h. */
gboolean
vs_window_is_comparing (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), FALSE);
  return self->comparing > 0;
}

static void
on_compare_response (GtkNativeDialog *dialog, int response, VsWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file != NULL)
        vs_window_compare_with (self, file);
    }
  g_object_unref (dialog);
}

/* Compare With…: picks the trace or snapshot B to compare the shown one
 * with. */
static void
compare_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  GtkFileChooserNative *chooser;

  if (vs_session_get_document (self->session) == NULL)
    return;
  chooser
      = gtk_file_chooser_native_new (_("Compare With a Trace"), GTK_WINDOW (self),
                                     GTK_FILE_CHOOSER_ACTION_OPEN, _("_Compare"), _("_Cancel"));
  g_signal_connect (chooser, "response", G_CALLBACK (on_compare_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
compare_stop_action (GtkWidget *widget, const char *name, GVariant *param)
{
  vs_window_stop_comparing (VS_WINDOW (widget));
}

/* See vs-window-private.h. */
void
vs_window_compare_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.compare", NULL, compare_action);
  gtk_widget_class_install_action (widget_class, "win.compare-stop", NULL, compare_stop_action);
}
