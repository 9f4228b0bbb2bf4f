/* SPDX-License-Identifier: MIT */
/* vs-window-whatif-batch.c — the What If… strip's batch field: the reserved
 * memory predicted at another batch size, drawn as the replayed line is.
 *
 * The field takes the batch the trace was recorded with and the one to
 * predict ("32 64", or "32→64"); the prediction (vs_predict_line_new: this
 * one run's activations scaled, the history replayed through the
 * caching-allocator model) runs in a worker thread on a connection of its
 * own to the trace (a snapshot's imported trace), for every device with a PyTorch allocator, and its
 * lines replace the what-if lines of the charts.  The task's source is the
 * document, so that the strip's own completion reads its lines as it reads
 * a replay's.
 */
#include "vs-window-private.h"

#include <glib/gi18n.h>

#include "vs-snapshot-cache.h"

#include <stdio.h>
#include <string.h>

typedef struct
{
  char *path;
  GArray *device_ids; /* gint64 */
  gint64 recorded, batch;
} BatchQuery;

static void
batch_query_free (gpointer p)
{
  BatchQuery *q = p;
  g_free (q->path);
  g_array_unref (q->device_ids);
  g_free (q);
}

static void
batch_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  BatchQuery *q = task_data;
  g_autoptr (GPtrArray) lines
      = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_whatif_line_free);
  GError *error = NULL;
  g_autoptr (VsTrace) trace = NULL;

  /* a snapshot is shown from its import in the user's cache
   * (vs-snapshot-cache.h), as the window opened it */
  if (vs_snapshot_cache_is_snapshot (q->path))
    {
      char *cached = vs_snapshot_cache_path (q->path, &error);

      if (cached == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_free (q->path);
      q->path = cached;
    }
  trace = vs_trace_open (q->path, &error);

  for (guint i = 0; trace != NULL && i < q->device_ids->len; i++)
    {
      VsWhatifLine *line = vs_predict_line_new (trace, g_array_index (q->device_ids, gint64, i),
                                                q->recorded, q->batch, &error);
      if (line == NULL)
        break;
      g_ptr_array_add (lines, line);
    }
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_steal_pointer (&lines), (GDestroyNotify)g_ptr_array_unref);
}

static void
on_batch_done (GObject *source, GAsyncResult *result, gpointer data)
{
  VsWhatifRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) lines = g_task_propagate_pointer (G_TASK (result), &error);

  /* a trace opened since is not the one predicted */
  if (vs_session_get_document (self->session) == req->document)
    {
      if (lines != NULL && lines->len > 0)
        {
          const VsWhatifLine *l = g_ptr_array_index (lines, 0);
          g_autofree char *res = vs_format_bytes (l->result.peak_reserved_bytes);
          g_autofree char *alloc = vs_format_bytes (l->result.peak_allocated_bytes);
          g_autofree char *text = g_strdup_printf (
              _("%s: peak reserved %s, allocated %s (one run, activations scaled)"), req->legend,
              res, alloc);
          vs_document_set_whatif (req->document, lines, req->legend);
          gtk_widget_set_visible (self->whatif_clear, TRUE);
          gtk_widget_remove_css_class (GTK_WIDGET (self->whatif_label), "error");
          gtk_label_set_text (self->whatif_label, text);
        }
      else if (error != NULL)
        {
          gtk_widget_add_css_class (GTK_WIDGET (self->whatif_label), "error");
          gtk_label_set_text (self->whatif_label, error->message);
        }
    }
  vs_whatif_request_free (req);
}

/* "32 64", "32→64", "32:64": the recorded batch and the one to predict. */
static gboolean
parse_batches (const char *text, gint64 *recorded, gint64 *batch)
{
  g_autofree char *t = g_strdup (text);
  char *p = t;
  long long a, b;
  int used = 0;

  for (char *arrow; (arrow = strstr (p, "→")) != NULL;)
    memcpy (arrow, "  :", strlen ("→")); /* 3 bytes */
  for (; *p; p++)
    if (*p == ':' || *p == '>' || *p == '-')
      *p = ' ';
  if (sscanf (t, " %lld %lld %n", &a, &b, &used) != 2 || t[used] != '\0' || a < 1 || b < 1
      || a > G_MAXINT32 || b > G_MAXINT32)
    return FALSE;
  *recorded = a;
  *batch = b;
  return TRUE;
}

static void
on_batch_activate (GtkWidget *widget, gpointer data)
{
  VsWindow *self = data;
  GtkEditable *entry = g_object_get_data (G_OBJECT (widget), "vs-batch-entry");
  VsDocument *doc = vs_session_get_document (self->session);
  GPtrArray *devices = doc != NULL ? vs_document_get_devices (doc) : NULL;
  GFile *file = doc != NULL ? vs_document_get_file (doc) : NULL;
  gint64 recorded, batch;

  if (entry == NULL)
    entry = GTK_EDITABLE (widget);
  if (devices == NULL || file == NULL
      || !parse_batches (gtk_editable_get_text (entry), &recorded, &batch))
    {
      gtk_widget_add_css_class (GTK_WIDGET (entry), "error");
      return;
    }
  gtk_widget_remove_css_class (GTK_WIDGET (entry), "error");
  BatchQuery *q = g_new0 (BatchQuery, 1);
  q->path = g_file_get_path (file);
  q->device_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  q->recorded = recorded;
  q->batch = batch;
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (devices, i);
      if (d->own_alloc_conf != NULL)
        g_array_append_val (q->device_ids, d->id);
    }
  VsWhatifRequest *req = vs_whatif_request_new (
      self, doc,
      g_strdup_printf (_("reserved at batch %" G_GINT64_FORMAT " (recorded %" G_GINT64_FORMAT ")"),
                       batch, recorded));
  gtk_menu_button_popdown (self->whatif_button);
  {
    g_autofree char *text
        = g_strdup_printf (_("Predicting at batch %" G_GINT64_FORMAT "…"), batch);
    gtk_widget_remove_css_class (GTK_WIDGET (self->whatif_label), "error");
    gtk_label_set_text (self->whatif_label, text);
  }
  g_autoptr (GTask) task = g_task_new (doc, NULL, on_batch_done, req);
  g_task_set_task_data (task, q, batch_query_free);
  g_task_run_in_thread (task, batch_thread);
}

/* See vs-window-private.h. */
void
vs_window_whatif_add_batch (VsWindow *self)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *entry = gtk_entry_new ();
  GtkWidget *button = gtk_button_new_with_label (_("Predict"));

  gtk_widget_set_name (entry, "whatif-batch");
  gtk_entry_set_placeholder_text (GTK_ENTRY (entry), _("batch: recorded → new, e.g. 32 64"));
  gtk_widget_set_tooltip_text (entry, _("Predict the reserved memory at another batch size "
                                        "from this run (its activations scaled and replayed)"));
  gtk_widget_set_hexpand (entry, TRUE);
  g_object_set_data (G_OBJECT (button), "vs-batch-entry", entry);
  g_signal_connect (entry, "activate", G_CALLBACK (on_batch_activate), self);
  g_signal_connect (button, "clicked", G_CALLBACK (on_batch_activate), self);
  gtk_box_append (GTK_BOX (row), entry);
  gtk_box_append (GTK_BOX (row), button);
  gtk_box_append (self->whatif_presets, row);
}
