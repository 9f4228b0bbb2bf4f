/* SPDX-License-Identifier: MIT */
/* test-session.c — the viewer's session, the panes bound to it, the
 * declared columns and the window's class actions, on real traces.
 *
 * Needs a display (meson runs it under xvfb-run).  Proves that:
 * - a VsSession given a document selects the peak of its first device and
 *   shows the whole trace; a selected range is its "selection" and gives
 *   the instant of that range; clearing the document clears the instant;
 * - panes given only the session (their "session" property, as the
 *   window's .ui gives it) show its instant and document through the
 *   bindings in their own .ui files, and follow it when it changes;
 * - the columns declared in the .ui files sort by the item properties
 *   their sorters name (size descending by default, then allocation time
 *   and address ascending; attribution by bytes);
 * - the actions installed on the window class zoom, pan, reset the view
 *   and toggle following, through the session's visible range.
 *
 * Environment: VS_DATA (tests/data, the committed traces).
 */
#include "vs-test-wait.h"
#include <adwaita.h>

#include "vs-allocations-pane.h"
#include "vs-application.h"
#include "vs-attribution-pane.h"
#include "vs-block-item.h"
#include "vs-oom-pane.h"
#include "vs-session.h"
#include "vs-test-widgets.h"
#include "vs-test-window.h"
#include "vs-tree-item.h"
#include "vs-window-private.h"

#define WAIT_US (30 * G_USEC_PER_SEC)

static char *trace_path;

/* Runs the main loop until done (data) holds or WAIT_US passed. */
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static gboolean
session_settled (gpointer data)
{
  return vs_session_is_settled (data);
}

static VsDocumentDevice *
first_device (VsDocument *doc)
{
  GPtrArray *devices = vs_document_get_devices (doc);

  g_assert_cmpuint (devices->len, >, 0);
  return g_ptr_array_index (devices, 0);
}

static void
test_session_selects (void)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (trace_path);
  g_autoptr (VsSession) session = vs_session_new ();
  VsDocumentDevice *dev = first_device (doc);
  gint64 duration = MAX (1, vs_document_get_duration (doc));
  g_autoptr (VsTimeSpan) view = NULL;
  g_autoptr (VsTimeSpan) selection = NULL;
  g_autoptr (VsDocument) bound = NULL;
  VsInstant *in;
  gint64 a = duration / 4, b = 3 * duration / 4;

  g_object_set (session, "document", doc, NULL);
  g_assert_true (wait_until (session_settled, session));
  g_object_get (session, "visible-range", &view, "selection", &selection, "document", &bound, NULL);
  g_assert_true (bound == doc);
  /* The first view covers where memory changes: not the idle start of
   * this trace, inside it, the peak in view. */
  {
    gint64 first_from, first_to;

    vs_document_get_first_view (doc, &first_from, &first_to);
    g_assert_cmpint (view->begin, ==, first_from);
    g_assert_cmpint (view->end, ==, first_to);
    g_assert_cmpint (view->begin, >, 0);
    g_assert_cmpint (view->end, <=, duration);
    g_assert_cmpint (view->begin, <=, dev->summary.peak_allocated_time_ns);
    g_assert_cmpint (view->end, >=, dev->summary.peak_allocated_time_ns);
  }
  g_assert_true (vs_time_span_is_empty (selection));
  in = vs_session_get_instant (session);
  g_assert_nonnull (in);
  g_assert_cmpint (in->device_id, ==, dev->id);
  g_assert_cmpint (in->time_ns, ==, dev->summary.peak_allocated_time_ns);
  g_assert_cmpint (in->point.allocated_bytes, ==, dev->summary.peak_allocated_bytes);

  /* A range: the selection, and the instant of that range. */
  vs_session_select_range (session, dev->id, a, b);
  g_clear_pointer (&selection, vs_time_span_free);
  g_object_get (session, "selection", &selection, NULL);
  g_assert_cmpint (selection->begin, ==, a);
  g_assert_cmpint (selection->end, ==, b);
  g_assert_true (wait_until (session_settled, session));
  in = vs_session_get_instant (session);
  g_assert_cmpint (in->range_t0, ==, a);
  g_assert_cmpint (in->range_t1, ==, b);
  g_assert_cmpint (in->time_ns, >=, a);
  g_assert_cmpint (in->time_ns, <=, b);

  /* An instant again clears the range. */
  vs_session_select_instant (session, dev->id, a);
  g_assert_true (vs_time_span_is_empty (vs_session_get_selection (session)));
  g_assert_true (wait_until (session_settled, session));
  g_assert_cmpint (vs_session_get_instant (session)->range_t1, <=,
                   vs_session_get_instant (session)->range_t0);

  vs_session_set_document (session, NULL);
  g_assert_null (vs_session_get_instant (session));
  g_assert_null (vs_session_get_document (session));
  g_assert_false (vs_session_is_settled (session));
}

/* The rows of view in their shown order: the items (rows of a tree
 * unwrapped), top-level rows only when top_only. */
static GPtrArray *
shown_items (GtkColumnView *view, gboolean top_only)
{
  GListModel *model = G_LIST_MODEL (gtk_column_view_get_model (view));
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; model != NULL && i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr (GObject) row = g_list_model_get_item (model, i);

      if (GTK_IS_TREE_LIST_ROW (row))
        {
          if (top_only && gtk_tree_list_row_get_depth (GTK_TREE_LIST_ROW (row)) > 0)
            continue;
          g_ptr_array_add (items, gtk_tree_list_row_get_item (GTK_TREE_LIST_ROW (row)));
        }
      else
        g_ptr_array_add (items, g_object_ref (row));
    }
  return items;
}

static GtkColumnView *
find_column_view (GtkWidget *widget)
{
  GtkWidget *found = vs_test_find_type (widget, GTK_TYPE_COLUMN_VIEW);

  return found != NULL ? GTK_COLUMN_VIEW (found) : NULL;
}

static GtkColumnViewColumn *
column_titled (GtkColumnView *view, const char *title)
{
  GListModel *columns = gtk_column_view_get_columns (view);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) c = g_list_model_get_item (columns, i);
      if (g_strcmp0 (gtk_column_view_column_get_title (c), title) == 0)
        return c; /* owned by the view */
    }
  g_assert_not_reached ();
}

/* Checks that the items' int64 property prop (or uint64 when unsigned_)
 * is ordered: ascending, or descending when down. */
static void
check_order (GPtrArray *items, const char *prop, gboolean unsigned_, gboolean down)
{
  for (guint i = 1; i < items->len; i++)
    {
      gint64 a = 0, b = 0;
      guint64 ua = 0, ub = 0;

      if (unsigned_)
        {
          g_object_get (g_ptr_array_index (items, i - 1), prop, &ua, NULL);
          g_object_get (g_ptr_array_index (items, i), prop, &ub, NULL);
          g_assert_true (down ? ua >= ub : ua <= ub);
        }
      else
        {
          g_object_get (g_ptr_array_index (items, i - 1), prop, &a, NULL);
          g_object_get (g_ptr_array_index (items, i), prop, &b, NULL);
          if (down)
            g_assert_cmpint (a, >=, b);
          else
            g_assert_cmpint (a, <=, b);
        }
    }
}

static gboolean
pane_shows (gpointer data)
{
  VsAllocationsPane *pane = data;
  VsInstant *in = NULL;
  gboolean ok;

  g_object_get (pane, "instant", &in, NULL);
  ok = in != NULL;
  g_clear_pointer (&in, vs_instant_unref);
  return ok;
}

/* Sorts view by the column titled title in order and checks that the
 * rows then shown (top-level rows only when top_only) are ordered by prop
 * as check_order says. */
static void
check_sorted_by (GtkColumnView *view, const char *title, GtkSortType order, gboolean top_only,
                 const char *prop, gboolean unsigned_)
{
  g_autoptr (GPtrArray) rows = NULL;

  gtk_column_view_sort_by_column (view, column_titled (view, title), order);
  rows = shown_items (view, top_only);
  check_order (rows, prop, unsigned_, order == GTK_SORT_DESCENDING);
}

static void
test_panes_bind_session (void)
{
  g_autoptr (VsDocument) doc = vs_test_document_load (trace_path);
  g_autoptr (VsSession) session = vs_session_new ();
  VsAllocationsPane *allocs
      = g_object_ref_sink (g_object_new (VS_TYPE_ALLOCATIONS_PANE, "session", session, NULL));
  VsAttributionPane *attr
      = g_object_ref_sink (g_object_new (VS_TYPE_ATTRIBUTION_PANE, "session", session, NULL));
  VsOomPane *ooms = g_object_ref_sink (g_object_new (VS_TYPE_OOM_PANE, "session", session, NULL));
  g_autoptr (GPtrArray) rows = NULL;
  g_autoptr (VsDocument) pane_doc = NULL;
  GtkColumnView *view;
  VsInstant *in;

  vs_session_set_document (session, doc);
  /* The failed allocations pane binds the document at once. */
  g_object_get (ooms, "document", &pane_doc, NULL);
  g_assert_true (pane_doc == doc);
  g_assert_cmpuint (vs_oom_pane_get_n_rows (ooms), ==, vs_document_get_ooms (doc)->len);
  g_assert_cmpuint (vs_oom_pane_get_n_rows (ooms), >, 0);

  g_assert_true (wait_until (session_settled, session));
  g_assert_true (pane_shows (allocs));
  in = vs_session_get_instant (session);
  g_assert_cmpuint (vs_allocations_pane_get_n_shown (allocs), ==, in->blocks->len);
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (attr), ==,
                    in->bottom_up_user->children ? in->bottom_up_user->children->len : 0);

  /* The allocations as declared: by size, largest first; then by the
   * time and the address each column's sorter reads. */
  view = find_column_view (GTK_WIDGET (allocs));
  g_assert_nonnull (view);
  g_assert_cmpuint (g_list_model_get_n_items (gtk_column_view_get_columns (view)), ==, 6);
  rows = shown_items (view, FALSE);
  g_assert_cmpuint (rows->len, ==, in->blocks->len);
  g_assert_true (VS_IS_BLOCK_ITEM (g_ptr_array_index (rows, 0)));
  check_order (rows, "bytes", FALSE, TRUE);
  check_sorted_by (view, "Allocated at", GTK_SORT_ASCENDING, FALSE, "alloc-time", FALSE);
  check_sorted_by (view, "Address", GTK_SORT_DESCENDING, FALSE, "address", TRUE);

  /* The attribution tree's top level, by bytes. */
  view = find_column_view (GTK_WIDGET (attr));
  g_clear_pointer (&rows, g_ptr_array_unref);
  rows = shown_items (view, TRUE);
  g_assert_cmpuint (rows->len, >, 1);
  g_assert_true (VS_IS_TREE_ITEM (g_ptr_array_index (rows, 0)));
  check_order (rows, "total-bytes", FALSE, TRUE);
  check_sorted_by (view, "Count", GTK_SORT_ASCENDING, TRUE, "total-count", FALSE);

  /* No document: every pane empties. */
  vs_session_set_document (session, NULL);
  g_assert_cmpuint (vs_allocations_pane_get_n_shown (allocs), ==, 0);
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (attr), ==, 0);
  g_assert_cmpuint (vs_oom_pane_get_n_rows (ooms), ==, 0);

  g_object_unref (allocs);
  g_object_unref (attr);
  g_object_unref (ooms);
}

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

static gint64
view_span (VsWindow *window)
{
  const VsTimeSpan *v = vs_session_get_visible_range (vs_window_get_session (window));
  return v->end - v->begin;
}

static void
test_window_actions (void)
{
  g_autoptr (VsApplication) app = vs_application_new ();
  g_autoptr (GFile) file = g_file_new_for_path (trace_path);
  g_autoptr (GError) error = NULL;
  VsWindow *window;
  VsSession *session;
  gint64 duration, span, begin;
  gboolean following = TRUE;

  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_application_open (G_APPLICATION (app), &file, 1, "");
  window = VS_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  g_object_ref (window);
  session = vs_window_get_session (window);
  g_assert_true (wait_until (window_settled, window));
  g_assert_null (vs_window_get_error (window));
  duration = MAX (1, vs_document_get_duration (vs_session_get_document (session)));

  /* Zoom in: a third less of the trace, around the centre. */
  span = view_span (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-in", NULL));
  g_assert_cmpfloat (fabs ((double)view_span (window) - span / 1.5), <=, span * 0.01 + 2);
  /* Later: the view moves right, keeping its span. */
  span = view_span (window);
  begin = vs_session_get_visible_range (session)->begin;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.pan-right", NULL));
  g_assert_cmpint (vs_session_get_visible_range (session)->begin, >, begin);
  g_assert_cmpint (view_span (window), ==, span);
  /* The whole trace again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-reset", NULL));
  g_assert_cmpint (vs_session_get_visible_range (session)->begin, ==, 0);
  g_assert_cmpint (vs_session_get_visible_range (session)->end, ==, duration);
  /* The timelines fetch the new view, then settle again. */
  g_assert_true (wait_until (window_settled, window));

  /* A finished trace is not followed; the property action toggles it. */
  g_object_get (window, "following", &following, NULL);
  g_assert_false (following);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.follow", NULL));
  g_object_get (window, "following", &following, NULL);
  g_assert_true (following);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.follow", NULL));
  g_object_get (window, "following", &following, NULL);
  g_assert_false (following);

  /* The failed allocations pane's locate button: the session selects that
   * failure's instant on its device, and the fragmentation pane shows. */
  {
    GPtrArray *ooms = vs_document_get_ooms (vs_session_get_document (session));
    const VsOom *o = g_ptr_array_index (ooms, ooms->len - 1);
    GtkWidget *pane = vs_test_find_type (GTK_WIDGET (window), VS_TYPE_OOM_PANE);

    g_assert_nonnull (pane);
    g_signal_emit_by_name (pane, "instant-selected", o->time_ns);
    g_assert_cmpint (vs_session_get_selected_time (session), ==, o->time_ns);
    g_assert_cmpint (vs_session_get_device (session), ==, o->device_id);
    g_assert_cmpstr (adw_view_stack_get_visible_child_name (window->pane_stack), ==,
                     "fragmentation");
    g_assert_true (wait_until (window_settled, window));
    g_assert_cmpint (vs_session_get_instant (session)->time_ns, ==, o->time_ns);
  }

  /* The application window's own actions still resolve beside the
   * class's "win." actions. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_object_unref (window);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  adw_init ();
  trace_path = g_build_filename (g_getenv ("VS_DATA"), "torch-eval-leak.db", NULL);
  g_test_add_func ("/session/selects", test_session_selects);
  g_test_add_func ("/session/panes-bind", test_panes_bind_session);
  g_test_add_func ("/session/window-actions", test_window_actions);
  status = g_test_run ();
  g_free (trace_path);
  return status;
}
