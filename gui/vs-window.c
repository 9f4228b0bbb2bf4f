/* SPDX-License-Identifier: MIT */
/* vs-window.c — the main window: opening traces, the header bar's
 * actions, the panes.
 *
 * The window owns a VsSession (document, visible range, selection,
 * selected instant) that its panes bind in the .ui files; the timelines
 * (vs-window-timelines.c) and following a recording (vs-window-follow.c)
 * keep it current.  Actions are installed on the class.  The window's own
 * state is readable as properties: "session", "settled" (a trace is shown
 * and nothing is being fetched), "error" (the last failure) and
 * "following".  A file that cannot be opened while a trace is shown
 * leaves that trace and says why in a toast.
 */
#include "vs-window-private.h"

#include <glib/gi18n.h>

#include "vs-blocks-pane.h"
#include "vs-snapshot-open.h"
#include "vs-time-format.h"

#define MAX_RECENT 10

enum
{
  PROP_0,
  PROP_SESSION,
  PROP_SETTLED,
  PROP_ERROR,
  PROP_FOLLOWING,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsWindow, vs_window, ADW_TYPE_APPLICATION_WINDOW)

static void
set_error (VsWindow *self, const char *message)
{
  if (g_strcmp0 (message, self->error) == 0)
    return;
  g_free (self->error);
  self->error = g_strdup (message);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_ERROR]);
}

/* See vs-window-private.h. */
void
vs_window_set_error (VsWindow *self, const char *message)
{
  set_error (self, message);
}

/* See vs-window-private.h. */
void
vs_window_show_error (VsWindow *self, const char *message)
{
  adw_status_page_set_description (self->error_page, message);
  gtk_stack_set_visible_child_name (self->main_stack, "error");
  adw_window_title_set_subtitle (self->window_title, "");
  set_error (self, message);
}

/* See vs-window-private.h. */
void
vs_window_update_settled (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  gboolean settled = vs_session_is_settled (self->session) && self->slots->len > 0 && doc != NULL
                     && vs_document_is_diagnosed (doc) && !vs_window_whatif_is_running (self)
                     && self->comparing == 0 && !vs_state_pane_is_loading (self->state_pane)
                     && !vs_state_pane_is_selecting (self->state_pane);

  GtkWidget *blocks = adw_view_stack_get_child_by_name (self->pane_stack, "blocks");

  for (guint i = 0; settled && i < self->slots->len; i++)
    settled = vs_query_slot_is_idle (&g_array_index (self->slots, VsChartSlot, i).query);
  /* Over Time, when shown, has its bands for the view. */
  if (settled && blocks != NULL && gtk_widget_get_mapped (blocks))
    settled = vs_blocks_chart_is_settled (vs_blocks_pane_get_chart (VS_BLOCKS_PANE (blocks)));
  if (settled == self->settled)
    return;
  self->settled = settled;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SETTLED]);
}

/* ------------------------------------------------------------- instant -- */

/* The line above the panes: which device, when, how much. */
static void
update_instant_label (VsWindow *self)
{
  const VsInstant *in = vs_session_get_instant (self->session);
  VsDocument *doc = vs_session_get_document (self->session);
  g_autofree char *t = NULL;
  g_autofree char *a = NULL;
  g_autofree char *r = NULL;
  g_autofree char *text = NULL;
  gint64 idx = 0;
  GPtrArray *devices;

  if (in == NULL || doc == NULL)
    {
      gtk_label_set_text (self->instant_label, "");
      return;
    }
  devices = vs_document_get_devices (doc);
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
      text = g_strdup_printf (_("GPU %lld · range %s – %s, at "
                                "its peak %s · %s allocated · %s reserved · "
                                "blocks made in the range"),
                              (long long)idx, ta, tb, t, a, r);
    }
  else if (vs_session_get_selected_time (self->session) < 0)
    text = g_strdup_printf (_("GPU %lld at %s (peak) · %s allocated "
                              "· %s reserved"),
                            (long long)idx, t, a, r);
  else
    text = g_strdup_printf (_("GPU %lld at %s · %s allocated "
                              "· %s reserved"),
                            (long long)idx, t, a, r);
  gtk_label_set_text (self->instant_label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->instant_label), text);
}

static void
on_session_instant (VsSession *session, GParamSpec *pspec, VsWindow *self)
{
  update_instant_label (self);
  vs_window_update_settled (self);
}

static void
on_session_loading (VsSession *session, GParamSpec *pspec, VsWindow *self)
{
  vs_window_update_settled (self);
}

static void
on_instant_failed (VsSession *session, const char *message, VsWindow *self)
{
  gtk_label_set_text (self->instant_label, message);
  set_error (self, message);
}

/* The failed allocations pane asked to see a failure at t. */
static void
on_oom_instant (VsOomPane *pane, gint64 t, VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  GPtrArray *ooms = doc ? vs_document_get_ooms (doc) : NULL;
  gint64 device = vs_session_get_device (self->session);

  for (guint i = 0; ooms != NULL && i < ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (ooms, i);
      if (o->time_ns == t && o->device_id != VS_UNKNOWN)
        device = o->device_id;
    }
  vs_session_select_instant (self->session, device, t);
  adw_view_stack_set_visible_child_name (self->pane_stack, "fragmentation");
}

/* The Diagnosis pane asked to see a finding: its instant on the timeline,
 * its site in Attribution. */
static void
on_finding_activated (VsDiagnosisPane *pane, gint64 device_id, gint64 t, const char *site,
                      VsWindow *self)
{
  if (t != VS_UNKNOWN)
    vs_session_select_instant (self->session, device_id, t);
  /* A user site leads the tree of the user's own frames. */
  if (site != NULL)
    vs_attribution_pane_set_hide_library (self->attribution_pane, TRUE);
  vs_attribution_pane_show_site (self->attribution_pane, site);
  adw_view_stack_set_visible_child_name (self->pane_stack, "attribution");
  /* The button that asked is hidden now: the keyboard goes on in
   * Attribution. */
  gtk_widget_child_focus (GTK_WIDGET (self->attribution_pane), GTK_DIR_TAB_FORWARD);
}

/* A band was selected in Over Time: its allocation's instant on the
 * timeline, its site in Attribution (the pane shown stays). */
static void
on_band_selected (VsBlocksPane *pane, gint64 device_id, gint64 t, const char *site, VsWindow *self)
{
  vs_session_select_instant (self->session, device_id, t);
  /* A site leads the tree of the user's own frames, as a finding's does. */
  if (site != NULL && *site != '\0')
    vs_attribution_pane_set_hide_library (self->attribution_pane, TRUE);
  vs_attribution_pane_show_site (self->attribution_pane, site);
}

/* The Fragmentation pane opens at the instant of worst fragmentation of
 * the device shown, while the instant is the one chosen at load (the
 * peak): an instant the user chose stays. */
static void
on_pane_shown (AdwViewStack *stack, GParamSpec *pspec, VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  const char *name = adw_view_stack_get_visible_child_name (stack);
  gint64 device = vs_session_get_device (self->session);
  GPtrArray *devices;

  if (doc == NULL || g_strcmp0 (name, "fragmentation") != 0
      || vs_session_get_selected_time (self->session) >= 0
      || vs_session_get_selection (self->session)->end
             > vs_session_get_selection (self->session)->begin)
    return;
  devices = vs_document_get_devices (doc);
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (devices, i);

      if ((device < 0 || d->id == device) && d->worst_fragmentation_ns != VS_UNKNOWN)
        {
          vs_session_select_instant (self->session, d->id, d->worst_fragmentation_ns);
          return;
        }
    }
}

/* ------------------------------------------------------------- loading -- */

static void
clear_document (VsWindow *self)
{
  VsDocument *old = vs_session_get_document (self->session);

  g_cancellable_cancel (self->cancellable);
  /* What it held for its timelines ends at once (cancelled), its
   * diagnosis is dropped. */
  if (old != NULL)
    vs_document_close (old);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++;
  vs_window_set_following (self, FALSE);
  vs_window_clear_timelines (self);
  vs_session_set_document (self->session, NULL);
  vs_window_whatif_reset (self);
  vs_window_compare_clear (self);
  set_error (self, NULL);
  vs_window_update_settled (self);
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

  data.mime_type = vs_snapshot_open_is_snapshot (file)
                       ? (char *)"application/x-pytorch-memory-snapshot"
                       : (char *)"application/vnd.sqlite3";
  data.app_name = (char *)"vramscope-view";
  data.app_exec = (char *)"vramscope-view %f";
  data.groups = groups;
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

/* See vs-window-private.h. */
void
vs_window_update_oom_badge (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  guint n = doc ? vs_document_get_ooms (doc)->len : 0;

  adw_view_stack_page_set_needs_attention (self->oom_page, n > 0);
  adw_view_stack_page_set_badge_number (self->oom_page, n);
}

/* The second phase of the load: the diagnosis of the document shown was
 * read.  The Diagnosis pane lists it by itself; the charts draw the
 * fragmentation it found, the Fragmentation pane opens at the worst
 * instant it found (as at load) and What If… offers its presets. */
static void
on_diagnosed (VsDocument *doc, GParamSpec *pspec, VsWindow *self)
{
  GPtrArray *devices = vs_document_get_devices (doc);
  gboolean hurt = FALSE;

  if (doc != vs_session_get_document (self->session))
    return;
  for (guint i = 0; i < devices->len; i++)
    hurt |= ((const VsDocumentDevice *)g_ptr_array_index (devices, i))->fragmentation_hurt;
  if (hurt)
    {
      vs_window_invalidate_timelines (self);
      vs_window_request_all_charts (self);
    }
  vs_window_whatif_diagnosed (self);
  on_pane_shown (self->pane_stack, NULL, self);
  vs_window_update_settled (self);
}

/* Shows the freshly loaded doc: its title, then one timeline per device
 * and the state at the peak (the session selects it). */
static void
show_document (VsWindow *self, VsDocument *doc)
{
  g_autofree char *name = g_file_get_basename (vs_document_get_file (doc));
  g_autofree char *desc = vs_document_describe (doc);

  vs_time_format_set_event_order (vs_document_is_event_order (doc));
  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, desc);
  gtk_window_set_title (GTK_WINDOW (self), name);
  gtk_stack_set_visible_child_name (self->main_stack, "trace");
  gtk_widget_set_visible (self->zoom_box, TRUE);
  /* Offered while the trace is a recording in progress. */
  gtk_widget_set_visible (self->follow_button, !vs_document_is_finalized (doc));
  /* The timelines first: the panes' instant waits for their data. */
  vs_document_hold_queries (doc);
  vs_session_set_document (self->session, doc);
  vs_window_whatif_reset (self);
  vs_window_update_oom_badge (self);

  if (vs_document_get_devices (doc)->len == 0)
    {
      vs_document_release_queries (doc);
      vs_window_show_error (self, _("The trace holds no device memory events: there is "
                                    "nothing to chart."));
      return;
    }
  vs_window_add_timelines (self);
  /* The timelines first; the diagnosis follows once they have their data
   * (held with the panes' queries). */
  g_signal_connect_object (doc, "notify::diagnosed", G_CALLBACK (on_diagnosed), self, 0);
  vs_document_diagnose (doc);
  vs_window_set_following (self, !vs_document_is_finalized (doc));
  vs_window_compare_start_pending (self);
  /* A trace opened on the Fragmentation pane (--pane, or the pane left
   * shown) opens at its worst instant too. */
  on_pane_shown (self->pane_stack, NULL, self);
}

typedef struct
{
  VsWindow *self;
  guint serial;
  GFile *file;
  gboolean snapshot; /* file is a snapshot, opened through its trace */
} LoadRequest;

/* A failed open while a trace is shown: the trace stays, a toast says
 * why. */
static void
keep_document (VsWindow *self, GFile *file, const char *message)
{
  VsDocument *doc = vs_session_get_document (self->session);
  g_autofree char *name = g_file_get_basename (vs_document_get_file (doc));
  g_autofree char *desc = vs_document_describe (doc);
  g_autofree char *failed = g_file_get_basename (file);
  g_autofree char *text = g_strdup_printf (_("Cannot open %s: %s"), failed, message);
  g_autofree char *markup = g_markup_escape_text (text, -1);
  AdwToast *toast = adw_toast_new (markup);

  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, desc);
  gtk_stack_set_visible_child_name (self->main_stack,
                                    vs_document_get_devices (doc)->len > 0 ? "trace" : "error");
  adw_toast_set_timeout (toast, 10);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
  set_error (self, message);
}

static void
on_load_done (GObject *source, GAsyncResult *result, gpointer data)
{
  LoadRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsDocument) doc = vs_document_load_finish (result, &error);

  if (req->serial != self->load_serial)
    ;
  else if (doc == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        ;
      else if (vs_session_get_document (self->session) != NULL)
        keep_document (self, req->file, error->message);
      else
        vs_window_show_error (self, error->message);
    }
  else
    {
      clear_document (self);
      add_to_recent (req->snapshot ? req->file : vs_document_get_file (doc));
      show_document (self, doc);
      if (req->snapshot)
        {
          /* Named after the snapshot the user opened, not its cache. */
          g_autofree char *name = g_file_get_basename (req->file);
          adw_window_title_set_title (self->window_title, name);
          gtk_window_set_title (GTK_WINDOW (self), name);
        }
    }
  g_object_unref (req->file);
  g_object_unref (self);
  g_free (req);
}

/* A snapshot imported (or its cached trace found): its trace is opened
 * as any other; a broken snapshot fails as a trace would. */
static void
on_snapshot_done (GObject *source, GAsyncResult *result, gpointer data)
{
  LoadRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (GFile) trace = vs_snapshot_open_finish (result, &error);

  if (req->serial == self->load_serial && trace != NULL)
    {
      vs_document_load_async (trace, self->load_cancellable, on_progress, self, on_load_done, req);
      return;
    }
  if (req->serial != self->load_serial || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    ;
  else if (vs_session_get_document (self->session) != NULL)
    keep_document (self, req->file, error->message);
  else
    vs_window_show_error (self, error->message);
  g_object_unref (req->file);
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
  g_return_if_fail (G_IS_FILE (file));
  /* The shown trace, if any, stays until the new one has loaded. */
  if (vs_session_get_document (self->session) == NULL)
    clear_document (self);
  g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  self->load_serial++;
  name = g_file_get_basename (file);
  /* A killed recording's spool beside the trace: say how to recover it. */
  g_autoptr (GFile) dir = g_file_get_parent (file);
  g_autofree char *hint
      = dir && g_file_peek_path (dir) ? vs_spool_leftover_hint (g_file_peek_path (dir)) : NULL;
  if (hint != NULL)
    g_message ("%s", hint);
  adw_window_title_set_title (self->window_title, name);
  adw_window_title_set_subtitle (self->window_title, _("Loading…"));
  gtk_label_set_text (self->loading_label, _("Opening the trace"));
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");

  req = g_new0 (LoadRequest, 1);
  req->self = g_object_ref (self);
  req->serial = self->load_serial;
  req->file = g_object_ref (file);
  if (vs_snapshot_open_is_snapshot (file))
    {
      /* A PyTorch snapshot: imported (or its cached trace found) first. */
      gtk_label_set_text (self->loading_label, _("Importing the snapshot"));
      req->snapshot = TRUE;
      vs_snapshot_open_async (file, self->load_cancellable, on_progress, self, on_snapshot_done,
                              req);
      return;
    }
  vs_document_load_async (file, self->load_cancellable, on_progress, self, on_load_done, req);
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
open_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  GtkFileChooserNative *chooser
      = gtk_file_chooser_native_new (_("Open a Trace or a PyTorch Snapshot"), GTK_WINDOW (self),
                                     GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  GtkFileFilter *traces = gtk_file_filter_new ();
  GtkFileFilter *all = gtk_file_filter_new ();

  gtk_file_filter_set_name (traces, _("vramscope traces and PyTorch snapshots"));
  gtk_file_filter_add_pattern (traces, "*.db");
  gtk_file_filter_add_pattern (traces, "*.vstrace");
  gtk_file_filter_add_pattern (traces, "*.sqlite");
  gtk_file_filter_add_mime_type (traces, "application/vnd.sqlite3");
  gtk_file_filter_add_pattern (traces, "*.pickle");
  gtk_file_filter_add_pattern (traces, "*.pkl");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), traces);
  gtk_file_filter_set_name (all, _("All files"));
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
  g_object_unref (traces);
  g_object_unref (all);
  g_signal_connect (chooser, "response", G_CALLBACK (on_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
open_recent_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));

  gtk_menu_button_popdown (VS_WINDOW (widget)->recent_button);
  vs_window_open (VS_WINDOW (widget), file);
}

/* The first timeline zooms or pans; its visible range, bound to the
 * session's, brings the new view to the session, and from there to every
 * timeline. */
static VsMemoryChart *
first_chart (VsWindow *self)
{
  return self->slots->len > 0 ? g_array_index (self->slots, VsChartSlot, 0).chart : NULL;
}

static void
zoom_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsMemoryChart *chart = first_chart (VS_WINDOW (widget));

  if (chart != NULL)
    vs_memory_chart_zoom (chart, g_str_equal (name, "win.zoom-in") ? 1.5 : 1 / 1.5);
}

static void
pan_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsMemoryChart *chart = first_chart (VS_WINDOW (widget));

  if (chart != NULL)
    vs_memory_chart_pan (chart, g_str_equal (name, "win.pan-left") ? -0.2 : 0.2);
}

static void
zoom_reset_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  VsDocument *doc = vs_session_get_document (self->session);

  if (doc != NULL)
    vs_session_set_visible_range (self->session, 0, MAX (1, vs_document_get_duration (doc)));
}

/* Alt+1…8: the panes in the switcher's order (Alt+8: Comparison, while
 * comparing). */
static void
show_pane_action (GtkWidget *widget, const char *name, GVariant *param)
{
  vs_window_show_pane (VS_WINDOW (widget), g_variant_get_string (param, NULL));
}

/* Ctrl+F: the shown pane's search, when it has one. */
static void
find_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  GtkWidget *pane = adw_view_stack_get_visible_child (self->pane_stack);

  if (gtk_widget_get_mapped (GTK_WIDGET (self->pane_stack)) && VS_IS_PANE (pane))
    vs_pane_start_search (VS_PANE (pane));
}

/* Ctrl+C, Shift+Ctrl+C: the shown pane's copy of its selection (an entry
 * with the focus copies its own text first). */
static void
copy_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsWindow *self = VS_WINDOW (widget);
  GtkWidget *pane = adw_view_stack_get_visible_child (self->pane_stack);

  if (gtk_widget_get_mapped (GTK_WIDGET (self->pane_stack)) && VS_IS_PANE (pane))
    gtk_widget_activate_action (
        pane, g_str_equal (name, "win.copy-stack") ? "pane.copy-stack" : "pane.copy-row", NULL);
}

static int
recent_newer_first (gconstpointer a, gconstpointer b)
{
  GDateTime *ma = gtk_recent_info_get_modified ((GtkRecentInfo *)a);
  GDateTime *mb = gtk_recent_info_get_modified ((GtkRecentInfo *)b);
  return g_date_time_compare (mb, ma);
}

/* The folder of uri as the user writes it: "~/runs" under the home
 * folder, the full path elsewhere, the URI for a remote file. */
static char *
recent_folder (const char *uri)
{
  g_autoptr (GFile) file = g_file_new_for_uri (uri);
  g_autoptr (GFile) parent = g_file_get_parent (file);
  g_autoptr (GFile) home = g_file_new_for_path (g_get_home_dir ());
  g_autofree char *rel = NULL;

  if (parent == NULL)
    return g_strdup ("");
  if (g_file_equal (parent, home))
    return g_strdup ("~");
  rel = g_file_get_relative_path (home, parent);
  if (rel != NULL)
    return g_build_filename ("~", rel, NULL);
  return g_file_get_parse_name (parent);
}

/* The recent traces: files this viewer opened, newest first, each row
 * its file name (as it is: no mnemonics) over its folder.  A row is
 * actionable: activating it runs win.open-recent with its URI. */
static void
rebuild_recent_menu (GtkRecentManager *manager, VsWindow *self)
{
  GtkPopover *popover = gtk_menu_button_get_popover (self->recent_button);
  GtkWidget *box = gtk_list_box_new ();
  GList *items = gtk_recent_manager_get_items (manager);
  guint n = 0;

  gtk_widget_add_css_class (box, "recent-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (box), GTK_SELECTION_NONE);
  items = g_list_sort (items, recent_newer_first);
  for (GList *l = items; l != NULL && n < MAX_RECENT; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      GtkWidget *row, *labels, *name, *folder;
      g_autofree char *dir = NULL;

      if (!gtk_recent_info_has_group (info, "vramscope"))
        continue;
      dir = recent_folder (gtk_recent_info_get_uri (info));
      row = gtk_list_box_row_new ();
      labels = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      name = gtk_label_new (gtk_recent_info_get_display_name (info));
      folder = gtk_label_new (dir);
      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_label_set_xalign (GTK_LABEL (folder), 0);
      gtk_label_set_ellipsize (GTK_LABEL (folder), PANGO_ELLIPSIZE_START);
      gtk_label_set_max_width_chars (GTK_LABEL (folder), 48);
      gtk_widget_add_css_class (folder, "dim-label");
      gtk_widget_add_css_class (folder, "caption");
      gtk_box_append (GTK_BOX (labels), name);
      gtk_box_append (GTK_BOX (labels), folder);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), labels);
      gtk_widget_set_tooltip_text (row, gtk_recent_info_get_uri_display (info));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "win.open-recent");
      gtk_actionable_set_action_target_value (
          GTK_ACTIONABLE (row), g_variant_new_string (gtk_recent_info_get_uri (info)));
      gtk_list_box_append (GTK_LIST_BOX (box), row);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify)gtk_recent_info_unref);
  if (n == 0)
    {
      GtkWidget *none = gtk_label_new (_("No recent traces"));
      gtk_widget_add_css_class (none, "dim-label");
      gtk_list_box_set_placeholder (GTK_LIST_BOX (box), none);
    }
  /* The list is replaced inside the one popover, even while it is shown:
   * the manager says it changed whenever it reads its file again, which
   * may come at any moment. */
  if (popover == NULL)
    {
      popover = GTK_POPOVER (gtk_popover_new ());
      gtk_menu_button_set_popover (self->recent_button, GTK_WIDGET (popover));
    }
  gtk_popover_set_child (popover, box);
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
vs_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsWindow *self = VS_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, self->session);
      break;
    case PROP_SETTLED:
      g_value_set_boolean (value, self->settled);
      break;
    case PROP_ERROR:
      g_value_set_string (value, self->error);
      break;
    case PROP_FOLLOWING:
      g_value_set_boolean (value, self->follow_source != 0);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  VsWindow *self = VS_WINDOW (object);

  switch (prop_id)
    {
    case PROP_FOLLOWING:
      vs_window_set_following (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_window_dispose (GObject *object)
{
  VsWindow *self = VS_WINDOW (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  if (self->whatif_cancellable != NULL)
    g_cancellable_cancel (self->whatif_cancellable);
  if (self->compare_cancellable != NULL)
    g_cancellable_cancel (self->compare_cancellable);
  if (self->session != NULL && vs_session_get_document (self->session) != NULL)
    vs_document_close (vs_session_get_document (self->session));
  g_clear_object (&self->compare_cancellable);
  g_clear_object (&self->comparison);
  g_clear_object (&self->whatif_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_handle_id (&self->follow_source, g_source_remove);
  g_signal_handlers_disconnect_by_data (gtk_recent_manager_get_default (), self);
  if (self->session != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->session, self);
      vs_session_set_document (self->session, NULL);
    }
  g_clear_object (&self->cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_WINDOW);
  g_clear_object (&self->session);
  G_OBJECT_CLASS (vs_window_parent_class)->dispose (object);
}

static void
vs_window_finalize (GObject *object)
{
  VsWindow *self = VS_WINDOW (object);

  g_array_unref (self->slots);
  g_free (self->error);
  g_free (self->comparison_text);
  g_clear_object (&self->compare_pending);
  g_free (self->whatif_pending);
  G_OBJECT_CLASS (vs_window_parent_class)->finalize (object);
}

static void
vs_window_class_init (VsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->get_property = vs_window_get_property;
  object_class->set_property = vs_window_set_property;
  object_class->dispose = vs_window_dispose;
  object_class->finalize = vs_window_finalize;

  /* What is shown, for the panes to bind. */
  props[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, VS_TYPE_SESSION, ro);
  /* A trace is shown and diagnosed, every timeline has its data and the
   * panes their instant, and nothing more is being fetched. */
  props[PROP_SETTLED] = g_param_spec_boolean ("settled", NULL, NULL, FALSE, ro);
  /* The last load or query failure (NULL: none since the last open). */
  props[PROP_ERROR] = g_param_spec_string ("error", NULL, NULL, NULL, ro);
  /* Reading what the recording commits, every second. */
  props[PROP_FOLLOWING]
      = g_param_spec_boolean ("following", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  g_type_ensure (VS_TYPE_SESSION);
  g_type_ensure (VS_TYPE_ATTRIBUTION_PANE);
  g_type_ensure (VS_TYPE_FLAME_PANE);
  g_type_ensure (VS_TYPE_ALLOCATIONS_PANE);
  g_type_ensure (VS_TYPE_BLOCKS_PANE);
  g_type_ensure (VS_TYPE_FRAGMENTATION_VIEW);
  g_type_ensure (VS_TYPE_OOM_PANE);
  g_type_ensure (VS_TYPE_DIAGNOSIS_PANE);
  g_type_ensure (VS_TYPE_STATE_PANE);
  g_type_ensure (VS_TYPE_COMPARE_PANE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/vramscope/View/vs-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, VsWindow, name)
  CHILD (window_title);
  CHILD (toast_overlay);
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
  CHILD (state_pane);
  CHILD (compare_page);
  CHILD (compare_pane);
#undef CHILD
  gtk_widget_class_bind_template_callback (widget_class, on_oom_instant);
  gtk_widget_class_bind_template_callback (widget_class, on_finding_activated);
  gtk_widget_class_bind_template_callback (widget_class, on_band_selected);
  gtk_widget_class_bind_template_callback (widget_class, on_pane_shown);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-reset", NULL, zoom_reset_action);
  gtk_widget_class_install_action (widget_class, "win.pan-left", NULL, pan_action);
  gtk_widget_class_install_action (widget_class, "win.pan-right", NULL, pan_action);
  gtk_widget_class_install_property_action (widget_class, "win.follow", "following");
  gtk_widget_class_install_action (widget_class, "win.show-pane", "s", show_pane_action);
  gtk_widget_class_install_action (widget_class, "win.find", NULL, find_action);
  gtk_widget_class_install_action (widget_class, "win.copy-row", NULL, copy_action);
  gtk_widget_class_install_action (widget_class, "win.copy-stack", NULL, copy_action);
  vs_window_whatif_class_init (widget_class);
  vs_window_compare_class_init (widget_class);

#define KEY(key, action)                                                                           \
  gtk_widget_class_add_binding_action (widget_class, key, GDK_CONTROL_MASK, action, NULL)
  KEY (GDK_KEY_o, "win.open");
  KEY (GDK_KEY_plus, "win.zoom-in");
  KEY (GDK_KEY_equal, "win.zoom-in");
  KEY (GDK_KEY_KP_Add, "win.zoom-in");
  KEY (GDK_KEY_minus, "win.zoom-out");
  KEY (GDK_KEY_KP_Subtract, "win.zoom-out");
  KEY (GDK_KEY_0, "win.zoom-reset");
  KEY (GDK_KEY_KP_0, "win.zoom-reset");
  KEY (GDK_KEY_Left, "win.pan-left");
  KEY (GDK_KEY_Right, "win.pan-right");
  KEY (GDK_KEY_f, "win.find");
  KEY (GDK_KEY_c, "win.copy-row");
#undef KEY
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.copy-stack", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_C, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.copy-stack", NULL);
  {
    static const char *const panes[] = { "diagnosis",     "attribution", "flame",  "allocations",
                                         "fragmentation", "oom",         "blocks", "compare" };
    for (guint i = 0; i < G_N_ELEMENTS (panes); i++)
      {
        gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1 + i, GDK_ALT_MASK,
                                             "win.show-pane", "s", panes[i]);
        gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_1 + i, GDK_ALT_MASK,
                                             "win.show-pane", "s", panes[i]);
      }
  }
}

static void
vs_window_init (VsWindow *self)
{
  GtkDropTarget *drop;
  GtkRecentManager *recent = gtk_recent_manager_get_default ();

  /* Before the template: its panes bind the session's properties. */
  self->session = vs_session_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  self->slots = g_array_new (FALSE, TRUE, sizeof (VsChartSlot));
  self->cancellable = g_cancellable_new ();

  vs_window_init_timelines (self);
  g_signal_connect_swapped (vs_blocks_pane_get_chart (VS_BLOCKS_PANE (
                                adw_view_stack_get_child_by_name (self->pane_stack, "blocks"))),
                            "bands-changed", G_CALLBACK (vs_window_update_settled), self);
  g_signal_connect (self->session, "notify::instant", G_CALLBACK (on_session_instant), self);
  g_signal_connect (self->session, "notify::loading", G_CALLBACK (on_session_loading), self);
  g_signal_connect (self->session, "instant-failed", G_CALLBACK (on_instant_failed), self);
  g_signal_connect_swapped (self->state_pane, "notify::loading",
                            G_CALLBACK (vs_window_update_settled), self);
  g_signal_connect_swapped (self->state_pane, "notify::selecting",
                            G_CALLBACK (vs_window_update_settled), self);

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
VsSession *
vs_window_get_session (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), NULL);
  return self->session;
}

/* See vs-window.h. */
gboolean
vs_window_get_settled (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), FALSE);
  return self->settled;
}

/* See vs-window.h. */
const char *
vs_window_get_error (VsWindow *self)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), NULL);
  return self->error;
}

/* See vs-window.h. */
gboolean
vs_window_show_pane (VsWindow *self, const char *name)
{
  g_return_val_if_fail (VS_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  /* The allocator's state step by step: Fragmentation, stepping. */
  if (g_str_equal (name, "state"))
    {
      adw_view_stack_set_visible_child_name (self->pane_stack, "fragmentation");
      vs_state_pane_start_stepping (self->state_pane);
      return TRUE;
    }
  {
    GtkWidget *child = adw_view_stack_get_child_by_name (self->pane_stack, name);

    /* A hidden page (Comparison while not comparing) is not shown. */
    if (child == NULL
        || !adw_view_stack_page_get_visible (adw_view_stack_get_page (self->pane_stack, child)))
      return FALSE;
  }
  adw_view_stack_set_visible_child_name (self->pane_stack, name);
  return TRUE;
}
