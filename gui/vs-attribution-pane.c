/* SPDX-License-Identifier: MIT */
/* vs-attribution-pane.c — the bottom-up / top-down attribution trees.
 *
 * Model: the analyzer's tree → VsTreeItem lists → GtkTreeListModel →
 * GtkSortListModel with a GtkTreeListRowSorter (children sort inside their
 * parent) → GtkSingleSelection → GtkColumnView.  The columns and their
 * sorters are declared in vs-attribution-pane.ui; the instant comes from
 * the session through a binding there.  The search (Ctrl+F) keeps the
 * paths to the frames that contain its text, expanded; the copy actions
 * (VsPane) copy the selected row's frame, stack or cells.  While the pane
 * is hidden a new instant only marks the trees stale; they are built when
 * the pane is shown (or its roots are counted).
 */
#include "vs-attribution-pane.h"

#include <glib/gi18n.h>

#include "vs-analyzer.h"
#include "vs-cell-format.h"
#include "vs-tree-item.h"

struct _VsAttributionPane
{
  VsPane parent_instance;

  GtkToggleButton *bottom_up_button;
  GtkToggleButton *hide_library_button;
  GtkLabel *summary_label;
  GtkSearchEntry *search_entry;
  GtkColumnView *column_view;
  GtkColumnViewColumn *bytes_column;
  gboolean stale; /* an instant came while hidden: rebuilt when shown */
};

G_DEFINE_FINAL_TYPE (VsAttributionPane, vs_attribution_pane, VS_TYPE_PANE)

static void
rebuild (VsAttributionPane *self)
{
  g_autoptr (GListModel) roots = NULL;

  self->stale = FALSE;
  GtkTreeListModel *tree;
  GtkSorter *row_sorter;
  GtkSortListModel *sorted;
  const VsTreeNode *root;
  VsInstant *instant = vs_pane_get_instant (VS_PANE (self));
  const char *search = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  g_assert (self->column_view != NULL); /* the template is built */
  if (instant == NULL)
    {
      gtk_column_view_set_model (self->column_view, NULL);
      gtk_label_set_text (self->summary_label, "");
      return;
    }
  if (gtk_toggle_button_get_active (self->hide_library_button))
    root = gtk_toggle_button_get_active (self->bottom_up_button) ? instant->bottom_up_user
                                                                 : instant->top_down_user;
  else
    root = gtk_toggle_button_get_active (self->bottom_up_button) ? instant->bottom_up
                                                                 : instant->top_down;
  roots = vs_tree_item_list_roots (instant, root, search);
  /* Searching shows every path to a match, expanded. */
  tree = gtk_tree_list_model_new (g_object_ref (roots), FALSE, *search != '\0',
                                  vs_tree_item_create_children, NULL, NULL);
  row_sorter = GTK_SORTER (
      gtk_tree_list_row_sorter_new (g_object_ref (gtk_column_view_get_sorter (self->column_view))));
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (tree), row_sorter);
  gtk_column_view_set_model (
      self->column_view, GTK_SELECTION_MODEL (gtk_single_selection_new (G_LIST_MODEL (sorted))));
  g_object_unref (gtk_column_view_get_model (self->column_view));

  if (*search != '\0')
    {
      guint n = vs_tree_node_count_matches (root, search);
      g_autofree char *s = g_strdup_printf (ngettext ("%u frame matches", "%u frames match", n), n);
      gtk_label_set_text (self->summary_label, s);
    }
  else
    {
      g_autofree char *b = vs_format_bytes (root->total_bytes);
      g_autofree char *s
          = g_strdup_printf (ngettext ("%s in %lld live allocation", "%s in %lld live allocations",
                                       (gulong)root->total_count),
                             b, (long long)root->total_count);
      gtk_label_set_text (self->summary_label, s);
    }
}

static void
on_search_changed (VsAttributionPane *self, GtkSearchEntry *entry)
{
  rebuild (self);
}

/* Escape in the search: clear it and go back to the tree. */
static void
on_stop_search (VsAttributionPane *self, GtkSearchEntry *entry)
{
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  gtk_widget_grab_focus (GTK_WIDGET (self->column_view));
}

static void
on_context_click (GtkGestureClick *gesture, int n_press, double x, double y,
                  VsAttributionPane *self)
{
  vs_pane_popup_menu_on_row (VS_PANE (self), GTK_WIDGET (self->column_view), x, y);
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

/* The selected row's item, NULL when none. */
static VsTreeItem *
selected_item (VsAttributionPane *self)
{
  GtkSelectionModel *model = gtk_column_view_get_model (self->column_view);
  GtkTreeListRow *row;

  if (model == NULL)
    return NULL;
  row = gtk_single_selection_get_selected_item (GTK_SINGLE_SELECTION (model));
  return row ? gtk_tree_list_row_get_item (row) : NULL;
}

/* VsPane's copy: the selected row's frame, stack or cells. */
static char *
copy_text (VsPane *pane, VsPaneCopy what)
{
  VsAttributionPane *self = VS_ATTRIBUTION_PANE (pane);
  g_autoptr (VsTreeItem) item = selected_item (self);
  const VsTreeNode *n;

  if (item == NULL)
    return NULL;
  n = vs_tree_item_get_node (item);
  switch (what)
    {
    case VS_PANE_COPY_FRAME:
      return g_strdup (n->label);
    case VS_PANE_COPY_STACK:
      return vs_tree_node_stack_text (n, gtk_toggle_button_get_active (self->bottom_up_button));
    case VS_PANE_COPY_ROW:
    default:
      {
        g_autofree char *b = vs_cell_format_bytes (NULL, n->total_bytes);
        g_autofree char *p = vs_cell_format_percent (NULL, vs_tree_item_get_percent (item));
        g_autofree char *c = vs_cell_format_count (NULL, n->total_count);
        g_autofree char *sb = vs_cell_format_positive_bytes (NULL, n->self_bytes);
        return g_strdup_printf ("%s\t%s\t%s\t%s\t%s\n", n->label, b, p, c, sb ? sb : "");
      }
    }
}

/* VsPane's start_search. */
static void
start_search (VsPane *pane)
{
  gtk_widget_grab_focus (GTK_WIDGET (VS_ATTRIBUTION_PANE (pane)->search_entry));
}

static void
on_order_toggled (VsAttributionPane *self, GtkToggleButton *button)
{
  rebuild (self);
}

static void
vs_attribution_pane_dispose (GObject *object)
{
  VsAttributionPane *self = VS_ATTRIBUTION_PANE (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_ATTRIBUTION_PANE);
  G_OBJECT_CLASS (vs_attribution_pane_parent_class)->dispose (object);
}

/* VsPane's instant_changed. */
/* Hidden, the trees wait: an instant selected many times over (stepping
 * in Fragmentation) is built once, when the pane is shown. */
static void
show_instant (VsPane *pane)
{
  VsAttributionPane *self = VS_ATTRIBUTION_PANE (pane);

  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->stale = TRUE;
      return;
    }
  rebuild (self);
}

static void
vs_attribution_pane_map (GtkWidget *widget)
{
  VsAttributionPane *self = VS_ATTRIBUTION_PANE (widget);

  GTK_WIDGET_CLASS (vs_attribution_pane_parent_class)->map (widget);
  if (self->stale)
    rebuild (self);
}

static void
vs_attribution_pane_class_init (VsAttributionPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_attribution_pane_dispose;
  VS_PANE_CLASS (klass)->instant_changed = show_instant;
  widget_class->map = vs_attribution_pane_map;
  VS_PANE_CLASS (klass)->copy = copy_text;
  VS_PANE_CLASS (klass)->start_search = start_search;
  g_type_ensure (VS_TYPE_TREE_ITEM);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-attribution-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, bottom_up_button);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, hide_library_button);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, summary_label);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, search_entry);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, column_view);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, bytes_column);
  gtk_widget_class_bind_template_callback (widget_class, on_order_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_stop_search);
  gtk_widget_class_bind_template_callback (widget_class, on_context_click);
  vs_cell_format_add_callbacks (widget_class);
}

static void
vs_attribution_pane_init (VsAttributionPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  gtk_column_view_sort_by_column (self->column_view, self->bytes_column, GTK_SORT_DESCENDING);
}

/* See vs-attribution-pane.h. */
void
vs_attribution_pane_set_instant (VsAttributionPane *self, VsInstant *instant)
{
  g_return_if_fail (VS_IS_ATTRIBUTION_PANE (self));
  vs_pane_set_instant (VS_PANE (self), instant);
}

/* See vs-attribution-pane.h. */
guint
vs_attribution_pane_get_n_roots (VsAttributionPane *self)
{
  GListModel *m;

  g_return_val_if_fail (VS_IS_ATTRIBUTION_PANE (self), 0);
  if (self->stale)
    rebuild (self);
  m = G_LIST_MODEL (gtk_column_view_get_model (self->column_view));
  return m ? g_list_model_get_n_items (m) : 0;
}

/* See vs-attribution-pane.h. */
void
vs_attribution_pane_show_site (VsAttributionPane *self, const char *site)
{
  g_return_if_fail (VS_IS_ATTRIBUTION_PANE (self));
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), site != NULL ? site : "");
}

/* See vs-attribution-pane.h. */
const char *
vs_attribution_pane_get_search (VsAttributionPane *self)
{
  g_return_val_if_fail (VS_IS_ATTRIBUTION_PANE (self), NULL);
  return gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
}

/* See vs-attribution-pane.h. */
void
vs_attribution_pane_set_hide_library (VsAttributionPane *self, gboolean hide)
{
  g_return_if_fail (VS_IS_ATTRIBUTION_PANE (self));
  gtk_toggle_button_set_active (self->hide_library_button, hide);
}
