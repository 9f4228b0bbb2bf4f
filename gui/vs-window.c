/* vs-window.c — the main window: opening traces, the timelines, the panes.
 *
 * Data flow: the window asks its VsDocument (worker threads) for one
 * VsChartData per device covering the visible range plus one screen width
 * on each side (so a pan draws from data already there while the next
 * query runs), and for the VsInstant of the selected instant; results are
 * handed to the widgets on the main loop.  At most one query per chart and
 * one instant query are in flight; a newer request waits and replaces any
 * older waiting one.
 */
#include "vs-window-private.h"

#include "vs-time-format.h"

#define MAX_RECENT 10

G_DEFINE_FINAL_TYPE (VsWindow, vs_window, ADW_TYPE_APPLICATION_WINDOW)

static void request_chart (VsWindow *self, guint index);

/* See vs-window-private.h. */
void
vs_window_show_error (VsWindow *self, const char *message)
{
  adw_status_page_set_description (self->error_page, message);
  gtk_stack_set_visible_child_name (self->main_stack, "error");
  adw_window_title_set_subtitle (self->window_title, "");
  if (self->screenshot_path != NULL)
    {
      g_printerr ("vramscope-view: %s\n", message);
      self->failed = TRUE;
      gtk_window_destroy (GTK_WINDOW (self));
    }
}

/* -------------------------------------------------------------- charts -- */

typedef struct
{
  VsWindow *self;
  guint generation;
  guint index;
} ChartRequest;

/* Once every chart has its first data: when memory use starts late
 * (CUDA start-up often takes most of a short run), shows from just before
 * the first change to the end instead of a flat line. */
static void
fit_initial_view (VsWindow *self)
{
  gint64 first = G_MAXINT64;
  gint64 duration = MAX (1, vs_document_get_duration (self->doc));

  for (guint i = 0; i < self->slots->len; i++)
    {
      ChartSlot *s = &g_array_index (self->slots, ChartSlot, i);
      VsChartData *d = vs_memory_chart_get_data (s->chart);

      if (!s->loaded || d == NULL)
        return;
      for (guint b = 0; b < d->n_buckets; b++)
        if (d->buckets[b].has_data && d->buckets[b].max_reserved > 0)
          {
            first = MIN (first, d->t0 + (gint64)((double)b * (d->t1 - d->t0) / d->n_buckets));
            break;
          }
    }
  self->fit_pending = FALSE;
  if (first != G_MAXINT64 && first > duration / 5)
    vs_window_set_view (self, MAX (0, first - (duration - first) / 20), duration);
}

static void
on_chart_done (GObject *source, GAsyncResult *result, gpointer data)
{
  ChartRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsChartData) chart_data
      = vs_document_query_chart_finish (VS_DOCUMENT (source), result, &error);

  if (req->generation == self->generation && req->index < self->slots->len)
    {
      ChartSlot *s = &g_array_index (self->slots, ChartSlot, req->index);
      s->in_flight = FALSE;
      if (chart_data != NULL)
        {
          vs_memory_chart_set_data (s->chart, chart_data);
          s->loaded = TRUE;
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        vs_window_show_error (self, error->message);
      if (s->dirty && self->doc != NULL)
        {
          s->dirty = FALSE;
          request_chart (self, req->index);
        }
      if (self->fit_pending && self->doc != NULL)
        fit_initial_view (self);
      vs_window_maybe_screenshot (self);
    }
  g_object_unref (self);
  g_free (req);
}

/* Whether slot's data already covers the visible range at the current
 * resolution (then a pan needs no query). */
static gboolean
chart_covers (VsWindow *self, ChartSlot *s, guint width)
{
  VsChartData *d = vs_memory_chart_get_data (s->chart);
  gint64 span = self->v1 - self->v0;
  double per = d ? (double)(d->t1 - d->t0) / d->n_buckets : 0;

  return d != NULL && s->width == width && d->t0 <= self->v0
         && d->t1 >= MIN (self->v1, vs_document_get_duration (self->doc))
         && per <= (double)span / width * 1.05 && per >= (double)span / width / 1.5;
}

/* Asks for the data of chart index over the visible range ± one span. */
static void
request_chart (VsWindow *self, guint index)
{
  ChartSlot *s = &g_array_index (self->slots, ChartSlot, index);
  guint width = vs_memory_chart_get_plot_width (s->chart);
  gint64 duration = MAX (1, vs_document_get_duration (self->doc));
  gint64 span = MAX (1, self->v1 - self->v0);
  gint64 a = MAX (0, self->v0 - span);
  /* Up to and including the last instant: the trace's last event is there. */
  gint64 b = MIN (duration + 1, self->v1 + span);
  ChartRequest *req;
  double n;

  if (s->in_flight)
    {
      s->dirty = TRUE;
      return;
    }
  if (width < 8 || chart_covers (self, s, width))
    return;
  if (b <= a)
    b = a + 1;
  n = (double)(b - a) / span * width;
  s->width = width;
  s->in_flight = TRUE;
  req = g_new0 (ChartRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  req->index = index;
  vs_document_query_chart_async (self->doc, s->device_id, a, b, (guint)CLAMP (n, 16, 100000),
                                 self->cancellable, on_chart_done, req);
}

/* See vs-window-private.h. */
void
vs_window_request_all_charts (VsWindow *self)
{
  for (guint i = 0; i < self->slots->len; i++)
    request_chart (self, i);
}

/* Applies the shared view to every chart and fetches what is missing. */
/* See vs-window-private.h. */
void
vs_window_set_view (VsWindow *self, gint64 v0, gint64 v1)
{
  for (guint i = 0; i < self->slots->len; i++)
    {
      ChartSlot *s = &g_array_index (self->slots, ChartSlot, i);
      vs_memory_chart_set_view (s->chart, v0, v1);
      if (i == 0)
        vs_memory_chart_get_view (s->chart, &self->v0, &self->v1);
    }
  vs_window_request_all_charts (self);
}

static void
on_view_changed (VsMemoryChart *chart, gint64 v0, gint64 v1, VsWindow *self)
{
  vs_window_set_view (self, v0, v1);
}

static void
on_chart_resized (GObject *chart, GParamSpec *pspec, VsWindow *self)
{
  if (self->doc != NULL)
    vs_window_request_all_charts (self);
}

static gint64
slot_device (VsWindow *self, VsMemoryChart *chart)
{
  for (guint i = 0; i < self->slots->len; i++)
    if (g_array_index (self->slots, ChartSlot, i).chart == chart)
      return g_array_index (self->slots, ChartSlot, i).device_id;
  return -1;
}

static void
select_instant (VsWindow *self, gint64 device_id, gint64 t)
{
  self->instant_device = device_id;
  self->instant_t = t;
  self->range_a = self->range_b = -1;
  for (guint i = 0; i < self->slots->len; i++)
    vs_memory_chart_set_selection (g_array_index (self->slots, ChartSlot, i).chart, 0, 0);
  vs_window_request_instant (self);
}

static void
on_instant_selected (VsMemoryChart *chart, gint64 t, VsWindow *self)
{
  select_instant (self, slot_device (self, chart), t);
}

static void
on_range_selected (VsMemoryChart *chart, gint64 a, gint64 b, VsWindow *self)
{
  self->instant_device = slot_device (self, chart);
  self->instant_t = b;
  self->range_a = a;
  self->range_b = b;
  for (guint i = 0; i < self->slots->len; i++)
    vs_memory_chart_set_selection (g_array_index (self->slots, ChartSlot, i).chart, a, b);
  vs_window_request_instant (self);
}

static void
on_oom_instant (VsOomPane *pane, gint64 t, VsWindow *self)
{
  GPtrArray *ooms = vs_document_get_ooms (self->doc);
  gint64 device = self->instant_device;

  for (guint i = 0; i < ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (ooms, i);
      if (o->time_ns == t && o->device_id != VS_UNKNOWN)
        device = o->device_id;
    }
  select_instant (self, device, t);
  adw_view_stack_set_visible_child_name (self->pane_stack, "fragmentation");
}

/* ------------------------------------------------------------- instant -- */

static void
update_instant_label (VsWindow *self)
{
  const VsInstant *in = self->instant;
  g_autofree char *t = NULL;
  g_autofree char *a = NULL;
  g_autofree char *r = NULL;
  g_autofree char *text = NULL;
  gint64 idx = 0;
  GPtrArray *devices = vs_document_get_devices (self->doc);

  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (devices, i);
      if (d->id == in->device_id)
        idx = d->idx;
    }
  t = vs_format_time (in->time_ns);
  a = vs_format_bytes (in->point.allocated_bytes);
  r = vs_format_bytes (in->point.reserved_bytes);
  if (in->range_t1 > in->range_t0)
    {
      g_autofree char *ta = vs_format_time (in->range_t0);
      g_autofree char *tb = vs_format_time (in->range_t1);
      text = g_strdup_printf ("GPU %" G_GINT64_FORMAT " · range %s – %s, at "
                              "its peak %s · %s allocated · %s reserved · "
                              "blocks made in the range",
                              idx, ta, tb, t, a, r);
    }
  else
    text = g_strdup_printf ("GPU %" G_GINT64_FORMAT " at %s%s · %s allocated "
                            "· %s reserved",
                            idx, t, self->instant_t < 0 ? " (peak)" : "", a, r);
  gtk_label_set_text (self->instant_label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->instant_label), text);
}

typedef struct
{
  VsWindow *self;
  guint generation;
} InstantRequest;

static void
on_instant_done (GObject *source, GAsyncResult *result, gpointer data)
{
  InstantRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsInstant) in
      = vs_document_query_instant_finish (VS_DOCUMENT (source), result, &error);

  if (req->generation == self->generation)
    {
      self->instant_in_flight = FALSE;
      if (in != NULL)
        {
          g_clear_pointer (&self->instant, vs_instant_unref);
          self->instant = vs_instant_ref (in);
          self->instant_loaded = TRUE;
          vs_attribution_pane_set_instant (self->attribution_pane, in);
          vs_flame_graph_set_instant (self->flame_graph, in);
          vs_allocations_pane_set_instant (self->allocations_pane, in);
          vs_fragmentation_view_set_instant (self->fragmentation_view, in);
          for (guint i = 0; i < self->slots->len; i++)
            vs_memory_chart_set_instant (g_array_index (self->slots, ChartSlot, i).chart,
                                         in->time_ns);
          update_instant_label (self);
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          gtk_label_set_text (self->instant_label, error->message);
          if (self->screenshot_path != NULL)
            vs_window_show_error (self, error->message);
        }
      if (self->instant_dirty && self->doc != NULL)
        {
          self->instant_dirty = FALSE;
          vs_window_request_instant (self);
        }
      vs_window_maybe_screenshot (self);
    }
  g_object_unref (self);
  g_free (req);
}

/* See vs-window-private.h. */
void
vs_window_request_instant (VsWindow *self)
{
  InstantRequest *req;

  if (self->doc == NULL || self->instant_device < 0)
    return;
  if (self->instant_in_flight)
    {
      self->instant_dirty = TRUE;
      return;
    }
  self->instant_in_flight = TRUE;
  req = g_new0 (InstantRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  vs_document_query_instant_async (self->doc, self->instant_device, self->instant_t, self->range_a,
                                   self->range_b, self->cancellable, on_instant_done, req);
}

/* ------------------------------------------------------------- loading -- */

static void
clear_document (VsWindow *self)
{
  GtkWidget *child;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++;
  vs_window_set_following (self, FALSE);
  g_clear_object (&self->doc);
  g_clear_pointer (&self->instant, vs_instant_unref);
  g_array_set_size (self->slots, 0);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->charts_box))))
    gtk_box_remove (self->charts_box, child);
  self->instant_in_flight = self->instant_dirty = self->instant_loaded = FALSE;
  vs_attribution_pane_set_instant (self->attribution_pane, NULL);
  vs_flame_graph_set_instant (self->flame_graph, NULL);
  vs_allocations_pane_set_instant (self->allocations_pane, NULL);
  vs_fragmentation_view_set_instant (self->fragmentation_view, NULL);
  vs_oom_pane_set_document (self->oom_pane, NULL);
  gtk_widget_set_visible (self->zoom_box, FALSE);
  gtk_widget_set_visible (self->follow_button, FALSE);
}

static void
on_progress (const char *what, double fraction, gpointer data)
{
  VsWindow *self = data;
  gtk_label_set_text (self->loading_label, what);
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
}

static void
add_to_recent (GFile *file)
{
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentData data = { 0 };
  static char *groups[] = { (char *)"vramscope", NULL };

  data.mime_type = (char *)"application/vnd.sqlite3";
  data.app_name = (char *)"vramscope-view";
  data.app_exec = (char *)"vramscope-view %f";
  data.groups = groups;
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

/* See vs-window-private.h. */
void
vs_window_update_oom_badge (VsWindow *self)
{
  guint n = vs_document_get_ooms (self->doc)->len;
  adw_view_stack_page_set_needs_attention (self->oom_page, n > 0);
  adw_view_stack_page_set_badge_number (self->oom_page, n);
}

/* Builds one chart per device for the freshly loaded document. */
static void
show_document (VsWindow *self)
{
  GPtrArray *devices = vs_document_get_devices (self->doc);
  gint64 duration = MAX (1, vs_document_get_duration (self->doc));
  g_autofree char *name = g_file_get_basename (vs_document_get_file (self->doc));
  g_autofree char *desc = vs_document_describe (self->doc);

  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, desc);
  gtk_window_set_title (GTK_WINDOW (self), name);
  gtk_stack_set_visible_child_name (self->main_stack, "trace");
  gtk_widget_set_visible (self->zoom_box, TRUE);
  /* Offered while the trace is a recording in progress. */
  gtk_widget_set_visible (self->follow_button, !vs_document_is_finalized (self->doc));
  vs_oom_pane_set_document (self->oom_pane, self->doc);
  vs_window_update_oom_badge (self);

  if (devices->len == 0)
    {
      vs_window_show_error (self, "The trace holds no device memory events: there is "
                                  "nothing to chart.");
      return;
    }
  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (devices, i);
      ChartSlot s = { 0 };

      s.chart = VS_MEMORY_CHART (vs_memory_chart_new ());
      s.device_id = d->id;
      vs_memory_chart_set_limits (s.chart, duration);
      vs_memory_chart_set_view (s.chart, 0, duration);
      g_signal_connect (s.chart, "view-changed", G_CALLBACK (on_view_changed), self);
      g_signal_connect (s.chart, "instant-selected", G_CALLBACK (on_instant_selected), self);
      g_signal_connect (s.chart, "range-selected", G_CALLBACK (on_range_selected), self);
      g_signal_connect (s.chart, "notify::plot-width", G_CALLBACK (on_chart_resized), self);
      gtk_widget_set_vexpand (GTK_WIDGET (s.chart), TRUE);
      gtk_box_append (self->charts_box, GTK_WIDGET (s.chart));
      g_array_append_val (self->slots, s);
    }
  self->v0 = 0;
  self->v1 = duration;
  self->instant_device = ((VsDocumentDevice *)g_ptr_array_index (devices, 0))->id;
  self->instant_t = -1;
  self->range_a = self->range_b = -1;
  self->fit_pending = TRUE;
  vs_window_request_all_charts (self);
  vs_window_request_instant (self);
  vs_window_set_following (self, !vs_document_is_finalized (self->doc));
}

typedef struct
{
  VsWindow *self;
  guint generation;
} LoadRequest;

static void
on_load_done (GObject *source, GAsyncResult *result, gpointer data)
{
  LoadRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  VsDocument *doc = vs_document_load_finish (result, &error);

  if (req->generation != self->generation)
    g_clear_object (&doc);
  else if (doc == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        vs_window_show_error (self, error->message);
    }
  else
    {
      self->doc = doc;
      add_to_recent (vs_document_get_file (doc));
      show_document (self);
    }
  g_object_unref (self);
  g_free (req);
}

/* See vs-window.h. */
void
vs_window_open (VsWindow *self, GFile *file)
{
  LoadRequest *req;
  g_autofree char *name = NULL;

  g_return_if_fail (VS_IS_WINDOW (self));
  clear_document (self);
  name = g_file_get_basename (file);
  /* A killed recording's spool beside the trace: say how to recover it. */
  g_autoptr (GFile) dir = g_file_get_parent (file);
  g_autofree char *hint
      = dir && g_file_peek_path (dir) ? vs_spool_leftover_hint (g_file_peek_path (dir)) : NULL;
  if (hint != NULL)
    g_message ("%s", hint);
  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, "Loading…");
  gtk_label_set_text (self->loading_label, "Opening the trace");
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");

  req = g_new0 (LoadRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  vs_document_load_async (file, self->cancellable, on_progress, self, on_load_done, req);
}

/* ------------------------------------------------------------- actions -- */

static void
on_chooser_response (GtkNativeDialog *dialog, int response, VsWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file != NULL)
        vs_window_open (self, file);
    }
  g_object_unref (dialog);
}

static void
open_activated (GSimpleAction *action, GVariant *param, gpointer data)
{
  VsWindow *self = data;
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (
      "Open a Trace", GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileFilter *traces = gtk_file_filter_new ();
  GtkFileFilter *all = gtk_file_filter_new ();

  gtk_file_filter_set_name (traces, "vramscope traces");
  gtk_file_filter_add_pattern (traces, "*.db");
  gtk_file_filter_add_pattern (traces, "*.vstrace");
  gtk_file_filter_add_pattern (traces, "*.sqlite");
  gtk_file_filter_add_mime_type (traces, "application/vnd.sqlite3");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), traces);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
  g_object_unref (traces);
  g_object_unref (all);
  g_signal_connect (chooser, "response", G_CALLBACK (on_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
open_recent_activated (GSimpleAction *action, GVariant *param, gpointer data)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));
  vs_window_open (VS_WINDOW (data), file);
}

static void
zoom (VsWindow *self, double factor)
{
  if (self->slots->len == 0)
    return;
  /* The first chart zooms and reports the new view to all of them. */
  vs_memory_chart_zoom (g_array_index (self->slots, ChartSlot, 0).chart, factor);
}

static void
pan_left_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  VsWindow *self = data;
  if (self->slots->len > 0)
    vs_memory_chart_pan (g_array_index (self->slots, ChartSlot, 0).chart, -0.2);
}

static void
pan_right_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  VsWindow *self = data;
  if (self->slots->len > 0)
    vs_memory_chart_pan (g_array_index (self->slots, ChartSlot, 0).chart, 0.2);
}

static void
zoom_in_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  zoom (data, 1.5);
}

static void
zoom_out_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  zoom (data, 1 / 1.5);
}

static void
zoom_reset_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  VsWindow *self = data;
  if (self->doc != NULL)
    vs_window_set_view (self, 0, MAX (1, vs_document_get_duration (self->doc)));
}

static void
follow_changed (GSimpleAction *action, GVariant *value, gpointer data)
{
  vs_window_set_following (VS_WINDOW (data), g_variant_get_boolean (value));
}

static const GActionEntry win_actions[] = {
  { "open", open_activated },
  { "open-recent", open_recent_activated, "s" },
  { "zoom-in", zoom_in_activated },
  { "zoom-out", zoom_out_activated },
  { "zoom-reset", zoom_reset_activated },
  { "pan-left", pan_left_activated },
  { "pan-right", pan_right_activated },
  { "follow", NULL, NULL, "false", follow_changed },
};

static int
recent_newer_first (gconstpointer a, gconstpointer b)
{
  GDateTime *ma = gtk_recent_info_get_modified ((GtkRecentInfo *)a);
  GDateTime *mb = gtk_recent_info_get_modified ((GtkRecentInfo *)b);
  return g_date_time_compare (mb, ma);
}

/* The recent traces menu: files this viewer opened, newest first. */
static void
rebuild_recent_menu (GtkRecentManager *manager, VsWindow *self)
{
  g_autoptr (GMenu) menu = g_menu_new ();
  GList *items = gtk_recent_manager_get_items (manager);
  guint n = 0;

  items = g_list_sort (items, recent_newer_first);
  for (GList *l = items; l != NULL && n < MAX_RECENT; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      g_autoptr (GMenuItem) item = NULL;

      if (!gtk_recent_info_has_group (info, "vramscope"))
        continue;
      item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target_value (
          item, "win.open-recent", g_variant_new_string (gtk_recent_info_get_uri (info)));
      g_menu_append_item (menu, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify)gtk_recent_info_unref);
  if (n == 0)
    /* An item with no action shows greyed out. */
    g_menu_append (menu, "No recent traces", "win.no-recent-traces");
  gtk_menu_button_set_menu_model (self->recent_button, G_MENU_MODEL (menu));
}

/* --------------------------------------------------------- drag & drop -- */

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, VsWindow *self)
{
  GFile *file = g_value_get_object (value);

  if (file == NULL)
    return FALSE;
  vs_window_open (self, file);
  return TRUE;
}

/* ---------------------------------------------------------- life cycle -- */

static void
vs_window_dispose (GObject *object)
{
  VsWindow *self = VS_WINDOW (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->follow_source, g_source_remove);
  g_signal_handlers_disconnect_by_data (gtk_recent_manager_get_default (), self);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->doc);
  g_clear_pointer (&self->instant, vs_instant_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_WINDOW);
  G_OBJECT_CLASS (vs_window_parent_class)->dispose (object);
}

static void
vs_window_finalize (GObject *object)
{
  VsWindow *self = VS_WINDOW (object);

  g_array_unref (self->slots);
  g_free (self->screenshot_path);
  G_OBJECT_CLASS (vs_window_parent_class)->finalize (object);
}

static void
vs_window_class_init (VsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = vs_window_dispose;
  object_class->finalize = vs_window_finalize;

  g_type_ensure (VS_TYPE_ATTRIBUTION_PANE);
  g_type_ensure (VS_TYPE_FLAME_GRAPH);
  g_type_ensure (VS_TYPE_ALLOCATIONS_PANE);
  g_type_ensure (VS_TYPE_FRAGMENTATION_VIEW);
  g_type_ensure (VS_TYPE_OOM_PANE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/vramscope/View/vs-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, VsWindow, name)
  CHILD (window_title);
  CHILD (recent_button);
  CHILD (zoom_box);
  CHILD (follow_button);
  CHILD (main_stack);
  CHILD (loading_label);
  CHILD (progress_bar);
  CHILD (error_page);
  CHILD (paned);
  CHILD (charts_box);
  CHILD (instant_label);
  CHILD (pane_stack);
  CHILD (oom_page);
  CHILD (attribution_pane);
  CHILD (flame_graph);
  CHILD (allocations_pane);
  CHILD (fragmentation_view);
  CHILD (oom_pane);
#undef CHILD
}

static void
vs_window_init (VsWindow *self)
{
  GtkDropTarget *drop;
  GtkRecentManager *recent = gtk_recent_manager_get_default ();

  gtk_widget_init_template (GTK_WIDGET (self));
  self->slots = g_array_new (FALSE, TRUE, sizeof (ChartSlot));
  self->cancellable = g_cancellable_new ();
  self->instant_device = -1;
  self->range_a = self->range_b = -1;

  g_action_map_add_action_entries (G_ACTION_MAP (self), win_actions, G_N_ELEMENTS (win_actions),
                                   self);
  g_signal_connect (self->oom_pane, "instant-selected", G_CALLBACK (on_oom_instant), self);

  drop = gtk_drop_target_new (G_TYPE_FILE, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  g_signal_connect (recent, "changed", G_CALLBACK (rebuild_recent_menu), self);
  rebuild_recent_menu (recent, self);
  gtk_paned_set_position (self->paned, 430);
}

/* See vs-window.h. */
VsWindow *
vs_window_new (AdwApplication *application)
{
  return g_object_new (VS_TYPE_WINDOW, "application", application, NULL);
}

/* See vs-window.h. */
gboolean
vs_window_get_failed (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), TRUE);
  return self->failed;
}

/* See vs-window.h. */
gboolean
vs_window_show_pane (VsWindow *self, const char *name)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), FALSE);
  if (adw_view_stack_get_child_by_name (self->pane_stack, name) == NULL)
    return FALSE;
  adw_view_stack_set_visible_child_name (self->pane_stack, name);
  return TRUE;
}
