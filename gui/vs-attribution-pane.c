/* vs-attribution-pane.c — the bottom-up / top-down attribution trees.
 *
 * Model: the analyzer's tree → VsTreeItem lists → GtkTreeListModel →
 * GtkSortListModel with a GtkTreeListRowSorter (children sort inside their
 * parent) → GtkSingleSelection → GtkColumnView.
 */
#include "vs-attribution-pane.h"

#include "vs-columns.h"
#include "vs-table.h"
#include "vs-tree-item.h"

struct _VsAttributionPane
{
  GtkBox parent_instance;

  GtkToggleButton *bottom_up_button;
  GtkLabel *summary_label;
  GtkColumnView *column_view;

  VsInstant *instant;
  GtkColumnViewColumn *bytes_column;
};

G_DEFINE_FINAL_TYPE (VsAttributionPane, vs_attribution_pane, GTK_TYPE_BOX)

static const VsTreeNode *
node_of (gpointer item)
{
  return vs_tree_item_get_node (VS_TREE_ITEM (item));
}

static char *
frame_text (gpointer item)
{
  return g_strdup (node_of (item)->label);
}

static char *
bytes_text (gpointer item)
{
  return vs_format_bytes (node_of (item)->total_bytes);
}

static char *
percent_text (gpointer item)
{
  return g_strdup_printf ("%.1f %%", vs_tree_item_get_percent (item));
}

static char *
count_text (gpointer item)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT, node_of (item)->total_count);
}

static char *
self_text (gpointer item)
{
  gint64 b = node_of (item)->self_bytes;
  return b > 0 ? vs_format_bytes (b) : NULL;
}

#define CMP(a, b)                                                                                  \
  ((a) < (b) ? GTK_ORDERING_SMALLER : (a) > (b) ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL)

static int
cmp_bytes (gconstpointer a, gconstpointer b, gpointer data)
{
  return CMP (node_of ((gpointer)a)->total_bytes, node_of ((gpointer)b)->total_bytes);
}

static int
cmp_count (gconstpointer a, gconstpointer b, gpointer data)
{
  return CMP (node_of ((gpointer)a)->total_count, node_of ((gpointer)b)->total_count);
}

static int
cmp_self (gconstpointer a, gconstpointer b, gpointer data)
{
  return CMP (node_of ((gpointer)a)->self_bytes, node_of ((gpointer)b)->self_bytes);
}

static int
cmp_frame (gconstpointer a, gconstpointer b, gpointer data)
{
  return g_strcmp0 (node_of ((gpointer)a)->label, node_of ((gpointer)b)->label);
}

static void
rebuild (VsAttributionPane *self)
{
  g_autoptr (GListModel) roots = NULL;
  GtkTreeListModel *tree;
  GtkSorter *row_sorter;
  GtkSortListModel *sorted;
  const VsTreeNode *root;

  if (self->instant == NULL)
    {
      gtk_column_view_set_model (self->column_view, NULL);
      gtk_label_set_text (self->summary_label, "");
      return;
    }
  root = gtk_toggle_button_get_active (self->bottom_up_button) ? self->instant->bottom_up
                                                               : self->instant->top_down;
  roots = vs_tree_item_list_roots (self->instant, root);
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
    g_autofree char *s = g_strdup_printf ("%s in %" G_GINT64_FORMAT " live allocation%s", b,
                                          root->total_count, root->total_count == 1 ? "" : "s");
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

  g_clear_pointer (&self->instant, vs_instant_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_ATTRIBUTION_PANE);
  G_OBJECT_CLASS (vs_attribution_pane_parent_class)->dispose (object);
}

static void
vs_attribution_pane_class_init (VsAttributionPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_attribution_pane_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-attribution-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, bottom_up_button);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, summary_label);
  gtk_widget_class_bind_template_child (widget_class, VsAttributionPane, column_view);
  gtk_widget_class_bind_template_callback (widget_class, on_order_toggled);
}

static void
vs_attribution_pane_init (VsAttributionPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  vs_columns_add (self->column_view, "Frame", frame_text, 0,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_frame, NULL, NULL)), TRUE, TRUE);
  self->bytes_column
      = vs_columns_add (self->column_view, "Bytes", bytes_text, 1,
                        GTK_SORTER (gtk_custom_sorter_new (cmp_bytes, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "%", percent_text, 1,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_bytes, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Count", count_text, 1,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_count, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Self", self_text, 1,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_self, NULL, NULL)), FALSE, FALSE);
  gtk_column_view_sort_by_column (self->column_view, self->bytes_column, GTK_SORT_DESCENDING);
}

/* See vs-attribution-pane.h. */
void
vs_attribution_pane_set_instant (VsAttributionPane *self, VsInstant *instant)
{
  g_return_if_fail (VS_IS_ATTRIBUTION_PANE (self));

  if (instant != NULL)
    vs_instant_ref (instant);
  g_clear_pointer (&self->instant, vs_instant_unref);
  self->instant = instant;
  rebuild (self);
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
