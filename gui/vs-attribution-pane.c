/* vs-attribution-pane.c — the bottom-up / top-down attribution trees.
 *
 * Model: the analyzer's tree → VsTreeItem lists → GtkTreeListModel →
 * GtkSortListModel with a GtkTreeListRowSorter (children sort inside their
 * parent) → GtkSingleSelection → GtkColumnView.  The columns and their
 * sorters are declared in vs-attribution-pane.ui; the instant comes from
 * the session through a binding there.
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
  GtkLabel *summary_label;
  GtkColumnView *column_view;
  GtkColumnViewColumn *bytes_column;
};

G_DEFINE_FINAL_TYPE (VsAttributionPane, vs_attribution_pane, VS_TYPE_PANE)

static void
rebuild (VsAttributionPane *self)
{
  g_autoptr (GListModel) roots = NULL;
  GtkTreeListModel *tree;
  GtkSorter *row_sorter;
  GtkSortListModel *sorted;
  const VsTreeNode *root;
  VsInstant *instant = vs_pane_get_instant (VS_PANE (self));

  g_assert (self->column_view != NULL); /* the template is built */
  if (instant == NULL)
    {
      gtk_column_view_set_model (self->column_view, NULL);
      gtk_label_set_text (self->summary_label, "");
      return;
    }
  root = gtk_toggle_button_get_active (self->bottom_up_button) ? instant->bottom_up
                                                               : instant->top_down;
  roots = vs_tree_item_list_roots (instant, root);
  tree = gtk_tree_list_model_new (g_object_ref (roots), FALSE, FALSE, vs_tree_item_create_children,
                                  NULL, NULL);
  row_sorter = GTK_SORTER (
      gtk_tree_list_row_sorter_new (g_object_ref (gtk_column_view_get_sorter (self->column_view))));
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (tree), row_sorter);
  gtk_column_view_set_model (
      self->column_view, GTK_SELECTION_MODEL (gtk_single_selection_new (G_LIST_MODEL (sorted))));
  g_object_unref (gtk_column_view_get_model (self->column_view));

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
static void
show_instant (VsPane *pane)
{
  rebuild (VS_ATTRIBUTION_PANE (pane));
}

static void
vs_attribution_pane_class_init (VsAttributionPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_attribution_pane_dispose;
  VS_PANE_CLASS (klass)->instant_changed = show_instant;
  g_type_ensure (VS_TYPE_TREE_ITEM);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-attribution-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, bottom_up_button);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, summary_label);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, column_view);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, bytes_column);
  gtk_widget_class_bind_template_callback (widget_class, on_order_toggled);
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
  m = G_LIST_MODEL (gtk_column_view_get_model (self->column_view));
  return m ? g_list_model_get_n_items (m) : 0;
}
