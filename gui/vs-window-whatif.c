/* SPDX-License-Identifier: MIT */
/* vs-window-whatif.c — the window's what-if strip: choosing an allocator
 * setting for the memory timelines.
 *
 * The "What If…" popover offers the settings the diagnosis suggests for
 * the trace (each PYTORCH_CUDA_ALLOC_CONF key added to the trace's own
 * settings, as `diagnose` and `whatif` replay them, and the whole device
 * as the limit when the trace failed at its cap) and a free entry checked
 * as it is typed.  A choice replays PyTorch's caching allocator of every
 * device in a worker thread (vs_document_whatif_async) behind the strip's
 * progress bar, which can stop it; then every chart draws the replayed
 * reserved line and the strip states the prediction.  Clearing removes
 * the line.  A trace without a PyTorch allocator to replay leaves the
 * control insensitive, its tooltip saying why.
 */
#include "vs-window-private.h"

#include <glib/gi18n.h>

#include <string.h>

#include "vs-alloc-conf.h"
#include "vs-time-format.h"

/* A setting offered: a key added to the trace's own settings. */
static const struct
{
  const char *key;   /* PYTORCH_CUDA_ALLOC_CONF key:value */
  const char *about; /* what it does, for people (translated) */
} presets[] = {
  { VS_ALLOC_CONF_EXPANDABLE, N_("map pages into growing segments instead of new ones") },
  { VS_ALLOC_CONF_GC, N_("give cached blocks back above 80 % of the limit") },
  { "max_split_size_mb:128", N_("never split cached blocks larger than 128 MiB") },
  { "roundup_power2_divisions:4", N_("round requests up to quarter powers of two") },
};

/* The action's limit for "the limit derived from the trace". */
#define DERIVED_LIMIT (-1)

/* See vs-window-private.h. */
VsWhatifRequest *
vs_whatif_request_new (VsWindow *self, VsDocument *document, char *legend)
{
  VsWhatifRequest *r = g_new0 (VsWhatifRequest, 1);

  r->self = g_object_ref (self);
  r->document = g_object_ref (document);
  r->legend = legend;
  return r;
}

/* See vs-window-private.h. */
void
vs_whatif_request_free (VsWhatifRequest *r)
{
  g_object_unref (r->self);
  g_object_unref (r->document);
  g_free (r->legend);
  g_free (r);
}

/* See vs-window-private.h. */
gboolean
vs_window_whatif_is_running (VsWindow *self)
{
  return self->whatif_cancellable != NULL;
}

/* The first device that can be replayed, or NULL. */
static const VsDocumentDevice *
replayable_device (VsDocument *doc)
{
  GPtrArray *devices = doc ? vs_document_get_devices (doc) : NULL;

  for (guint i = 0; devices != NULL && i < devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (devices, i);
      if (d->own_alloc_conf != NULL)
        return d;
    }
  return NULL;
}

static void
set_running (VsWindow *self, GCancellable *cancellable)
{
  if (self->whatif_cancellable != NULL)
    g_cancellable_cancel (self->whatif_cancellable);
  g_clear_object (&self->whatif_cancellable);
  self->whatif_cancellable = cancellable;
  gtk_widget_set_visible (GTK_WIDGET (self->whatif_progress), cancellable != NULL);
  gtk_widget_set_visible (self->whatif_cancel, cancellable != NULL);
  gtk_progress_bar_set_fraction (self->whatif_progress, 0);
  vs_window_update_settled (self);
}

/* The charts draw lines (NULL: none) from now on. */
static void
show_lines (VsWindow *self, GPtrArray *lines, const char *legend)
{
  VsDocument *doc = vs_session_get_document (self->session);

  if (doc == NULL)
    return;
  vs_document_set_whatif (doc, lines, legend);
  gtk_widget_set_visible (self->whatif_clear, lines != NULL);
  vs_window_invalidate_timelines (self);
  vs_window_request_all_charts (self);
}

/* "peak reserved 10.6 GiB (−0.4 GiB), the failed request would fit" for
 * each device replayed. */
static char *
prediction_text (VsDocument *doc, GPtrArray *lines)
{
  GString *s = g_string_new (NULL);
  GPtrArray *devices = vs_document_get_devices (doc);

  for (guint i = 0; i < lines->len; i++)
    {
      const VsWhatifLine *l = g_ptr_array_index (lines, i);
      const VsWhatifResult *r = &l->result, *own = &l->own;
      gint64 delta = r->peak_reserved_bytes - own->peak_reserved_bytes;
      g_autofree char *peak = vs_format_bytes (r->peak_reserved_bytes);
      g_autofree char *change = vs_format_bytes (ABS (delta));

      if (s->len > 0)
        g_string_append (s, " · ");
      if (lines->len > 1 || devices->len > 1)
        for (guint d = 0; d < devices->len; d++)
          {
            const VsDocumentDevice *dev = g_ptr_array_index (devices, d);
            if (dev->id == l->device_id)
              g_string_append_printf (s, _("GPU %" G_GINT64_FORMAT ": "), dev->idx);
          }
      /* U+2212 MINUS SIGN */
      g_string_append_printf (s, _("peak reserved %s (%s%s)"), peak,
                              delta < 0   ? "\u2212"
                              : delta > 0 ? "+"
                                          : "±",
                              change);
      g_string_append (s, ", ");
      if (own->failed_alloc_count > 0 && r->failed_alloc_count == 0)
        g_string_append (s, ngettext ("the failed request would fit",
                                      "the failed requests would fit", own->failed_alloc_count));
      else if (own->failed_alloc_count > 0)
        g_string_append_printf (
            s,
            ngettext ("%" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " failed request would "
                      "still fail",
                      "%" G_GINT64_FORMAT " of the %" G_GINT64_FORMAT " failed requests would "
                      "still fail",
                      own->failed_alloc_count),
            r->failed_alloc_count, own->failed_alloc_count);
      else if (r->failed_alloc_count > 0)
        {
          g_autofree char *when = vs_format_time (r->first_failure_time_ns);
          g_string_append_printf (s,
                                  ngettext ("%" G_GINT64_FORMAT " request would fail (first at %s)",
                                            "%" G_GINT64_FORMAT
                                            " requests would fail (first at %s)",
                                            r->failed_alloc_count),
                                  r->failed_alloc_count, when);
        }
      else
        g_string_append (s, _("no request would fail"));
    }
  return g_string_free (s, FALSE);
}

static void
on_whatif_progress (const char *what, double fraction, gpointer data)
{
  VsWindow *self = data;

  if (self->whatif_cancellable != NULL)
    gtk_progress_bar_set_fraction (self->whatif_progress, fraction);
}

static void
on_whatif_done (GObject *source, GAsyncResult *result, gpointer data)
{
  VsWhatifRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) lines = vs_document_whatif_finish (VS_DOCUMENT (source), result, &error);

  /* A newer choice, or another document, replaced this one. */
  if (req->serial == self->whatif_serial
      && req->document == vs_session_get_document (self->session))
    {
      set_running (self, NULL);
      gtk_widget_remove_css_class (GTK_WIDGET (self->whatif_label), "error");
      if (lines != NULL)
        {
          g_autofree char *text = prediction_text (req->document, lines);
          gtk_label_set_text (self->whatif_label, text);
          gtk_widget_set_tooltip_text (GTK_WIDGET (self->whatif_label), text);
          show_lines (self, lines, req->legend);
        }
      else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text (self->whatif_label, "");
      else
        {
          gtk_widget_add_css_class (GTK_WIDGET (self->whatif_label), "error");
          gtk_label_set_text (self->whatif_label, error->message);
        }
    }
  vs_whatif_request_free (req);
}

/* Replays (conf, limit) and shows it once done. */
static void
start_replay (VsWindow *self, const char *conf, gint64 limit)
{
  VsDocument *doc = vs_session_get_document (self->session);
  VsWhatifRequest *req;
  GCancellable *cancellable;
  g_autofree char *setting = NULL;
  char *legend;

  if (doc == NULL || replayable_device (doc) == NULL)
    return;
  gtk_menu_button_popdown (self->whatif_button);
  if (limit != DERIVED_LIMIT)
    {
      g_autofree char *cap = vs_format_bytes (limit);
      setting = *conf != '\0' ? g_strdup_printf (_("%s and a %s limit"), conf, cap)
                              : g_strdup_printf (_("a %s limit"), cap);
    }
  else
    setting = g_strdup (*conf != '\0' ? conf : _("the default settings"));
  {
    /* The legend shares the chart's header with its title: a long
     * setting is cut (the strip's text names it whole).  GLib 2.74's
     * g_utf8_substring() reads past a string shorter than its end. */
    glong chars = g_utf8_strlen (setting, -1);
    g_autofree char *head = g_utf8_substring (setting, 0, MIN (chars, 59));
    g_autofree char *shown = chars > 60 ? g_strconcat (head, "…", NULL) : g_strdup (setting);
    legend = g_strdup_printf (_("reserved with %s"), shown);
  }
  req = vs_whatif_request_new (self, doc, legend);
  req->serial = ++self->whatif_serial;
  cancellable = g_cancellable_new ();
  set_running (self, cancellable);
  gtk_widget_remove_css_class (GTK_WIDGET (self->whatif_label), "error");
  {
    g_autofree char *text = g_strdup_printf (_("Replaying with %s…"), setting);
    gtk_label_set_text (self->whatif_label, text);
  }
  vs_document_whatif_async (doc, conf, limit == DERIVED_LIMIT ? VS_UNKNOWN : limit, cancellable,
                            on_whatif_progress, self, on_whatif_done, req);
}

/* win.whatif (s conf, x limit; limit -1: the trace's own). */
static void
whatif_action (GtkWidget *widget, const char *name, GVariant *param)
{
  const char *conf;
  gint64 limit;

  g_variant_get (param, "(&sx)", &conf, &limit);
  start_replay (VS_WINDOW (widget), conf, limit);
}

/* The entry's text as settings: NULL with error set when PyTorch would
 * refuse them. */
static gboolean
entry_is_valid (VsWindow *self, GError **error)
{
  VsAllocConf conf;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->whatif_entry));

  return vs_alloc_conf_parse (text, &conf, error);
}

static void
on_whatif_entry_changed (GtkEditable *entry, VsWindow *self)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = entry_is_valid (self, &error);

  gtk_widget_set_visible (GTK_WIDGET (self->whatif_error), !ok);
  if (!ok)
    gtk_label_set_text (self->whatif_error, error->message);
  if (ok)
    gtk_widget_remove_css_class (GTK_WIDGET (self->whatif_entry), "error");
  else
    gtk_widget_add_css_class (GTK_WIDGET (self->whatif_entry), "error");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.whatif-entry",
                                 ok && replayable_device (vs_session_get_document (self->session)));
}

/* win.whatif-entry: replays what the entry says. */
static void
whatif_entry_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  g_autofree char *text
      = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->whatif_entry))));

  if (entry_is_valid (self, NULL))
    start_replay (self, text, DERIVED_LIMIT);
}

static void
on_whatif_entry_activate (GtkEntry *entry, VsWindow *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.whatif-entry", NULL);
}

/* win.whatif-cancel: stops the replay running. */
static void
whatif_cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);

  if (self->whatif_cancellable != NULL)
    g_cancellable_cancel (self->whatif_cancellable);
}

/* win.whatif-clear: no replayed line any more. */
static void
whatif_clear_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);

  self->whatif_serial++;
  set_running (self, NULL);
  gtk_label_set_text (self->whatif_label, "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->whatif_label), NULL);
  show_lines (self, NULL, NULL);
}

/* A button of the popover replaying (conf, limit). */
static void
add_preset (VsWindow *self, const char *conf, gint64 limit, const char *title, const char *about)
{
  GtkWidget *button = gtk_button_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *t = gtk_label_new (title);
  GtkWidget *a = gtk_label_new (about);

  gtk_label_set_xalign (GTK_LABEL (t), 0);
  gtk_label_set_xalign (GTK_LABEL (a), 0);
  gtk_label_set_ellipsize (GTK_LABEL (t), PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_wrap (GTK_LABEL (a), TRUE);
  gtk_widget_add_css_class (a, "dim-label");
  gtk_widget_add_css_class (a, "caption");
  gtk_box_append (GTK_BOX (box), t);
  gtk_box_append (GTK_BOX (box), a);
  gtk_button_set_child (GTK_BUTTON (button), box);
  gtk_widget_add_css_class (button, "flat");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.whatif");
  gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "(sx)", conf, limit);
  gtk_box_append (self->whatif_presets, button);
}

/* Whether the diagnosis found a failure at the cap of device_id's
 * allocator. */
static gboolean
failed_at_limit (VsDocument *doc, gint64 device_id)
{
  const VsDiagnosis *dg = vs_document_get_diagnosis (doc);

  for (guint i = 0; dg != NULL && i < dg->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dg->findings, i);
      if (f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT && f->device_id == device_id)
        return TRUE;
    }
  return FALSE;
}

/* Fills the popover's presets for dev, the device replayed: its own
 * settings, the usual changes, no cap when the diagnosis found a failure
 * at the cap, and the batch field. */
static void
fill_presets (VsWindow *self, VsDocument *doc, const VsDocumentDevice *dev)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->whatif_presets))) != NULL)
    gtk_box_remove (self->whatif_presets, child);
  add_preset (self, dev->own_alloc_conf, DERIVED_LIMIT,
              *dev->own_alloc_conf ? dev->own_alloc_conf : _("The trace's own settings"),
              _("replayed as recorded: the line lies on the recorded one"));
  for (guint i = 0; i < G_N_ELEMENTS (presets); i++)
    {
      g_autofree char *name
          = g_strndup (presets[i].key, strchr (presets[i].key, ':') - presets[i].key);
      g_autofree char *conf = NULL;

      if (strstr (dev->own_alloc_conf, name) != NULL)
        continue; /* the trace already chose it */
      conf = *dev->own_alloc_conf ? g_strconcat (dev->own_alloc_conf, ",", presets[i].key, NULL)
                                  : g_strdup (presets[i].key);
      add_preset (self, conf, DERIVED_LIMIT, conf, _(presets[i].about));
    }
  if (dev->summary.capacity_bytes > 0 && failed_at_limit (doc, dev->id))
    {
      g_autofree char *cap = vs_format_bytes (dev->summary.capacity_bytes);
      g_autofree char *title = g_strdup_printf (_("No cap below the device's %s"), cap);
      add_preset (self, dev->own_alloc_conf, dev->summary.capacity_bytes, title,
                  _("a larger memory fraction: the trace failed at its cap"));
    }
  vs_window_whatif_add_batch (self);
}

/* See vs-window-private.h. */
void
vs_window_whatif_diagnosed (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  const VsDocumentDevice *dev = replayable_device (doc);

  /* Only the preset the diagnosis adds changes: a replay running stays. */
  if (dev != NULL && dev->summary.capacity_bytes > 0 && failed_at_limit (doc, dev->id))
    fill_presets (self, doc, dev);
}

/* See vs-window-private.h. */
void
vs_window_whatif_reset (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  const VsDocumentDevice *dev = replayable_device (doc);
  GtkWidget *child;

  self->whatif_serial++;
  set_running (self, NULL);
  gtk_label_set_text (self->whatif_label, "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->whatif_label), NULL);
  gtk_widget_set_visible (self->whatif_clear, FALSE);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->whatif_presets))) != NULL)
    gtk_box_remove (self->whatif_presets, child);
  gtk_widget_set_sensitive (GTK_WIDGET (self->whatif_button), dev != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.whatif", dev != NULL);
  if (dev == NULL)
    {
      gtk_widget_set_tooltip_text (
          GTK_WIDGET (self->whatif_button),
          doc == NULL ? NULL
                      : _("This trace has no PyTorch caching allocator to replay (one per "
                          "device, recorded from PyTorch or imported from its snapshot)"));
      on_whatif_entry_changed (GTK_EDITABLE (self->whatif_entry), self);
      return;
    }
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->whatif_button),
                               _("Replay PyTorch's caching allocator under another setting "
                                 "and draw its reserved memory"));
  fill_presets (self, doc, dev);
  gtk_editable_set_text (GTK_EDITABLE (self->whatif_entry), dev->own_alloc_conf);
  on_whatif_entry_changed (GTK_EDITABLE (self->whatif_entry), self);
  if (self->whatif_pending != NULL)
    {
      g_autofree char *conf = g_steal_pointer (&self->whatif_pending);
      start_replay (self, conf, self->whatif_pending_limit);
    }
}

/* See vs-window.h. */
void
vs_window_choose_whatif (VsWindow *self, const char *alloc_conf, gint64 limit_bytes)
{
  g_return_if_fail (VS_IS_WINDOW (self));
  g_return_if_fail (alloc_conf != NULL);
  g_return_if_fail (limit_bytes == VS_UNKNOWN || limit_bytes >= 0);

  if (limit_bytes == VS_UNKNOWN)
    limit_bytes = DERIVED_LIMIT;
  if (replayable_device (vs_session_get_document (self->session)) != NULL)
    {
      start_replay (self, alloc_conf, limit_bytes);
      return;
    }
  g_free (self->whatif_pending);
  self->whatif_pending = g_strdup (alloc_conf);
  self->whatif_pending_limit = limit_bytes;
}

/* See vs-window-private.h. */
void
vs_window_whatif_class_init (GtkWidgetClass *widget_class)
{
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, VsWindow, name)
  CHILD (whatif_button);
  CHILD (whatif_presets);
  CHILD (whatif_entry);
  CHILD (whatif_error);
  CHILD (whatif_label);
  CHILD (whatif_progress);
  CHILD (whatif_cancel);
  CHILD (whatif_clear);
#undef CHILD
  gtk_widget_class_bind_template_callback (widget_class, on_whatif_entry_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_whatif_entry_activate);
  gtk_widget_class_install_action (widget_class, "win.whatif", "(sx)", whatif_action);
  gtk_widget_class_install_action (widget_class, "win.whatif-entry", NULL, whatif_entry_action);
  gtk_widget_class_install_action (widget_class, "win.whatif-cancel", NULL, whatif_cancel_action);
  gtk_widget_class_install_action (widget_class, "win.whatif-clear", NULL, whatif_clear_action);
}
