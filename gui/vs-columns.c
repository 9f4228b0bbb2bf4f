/* vs-columns.c — label columns for the panes' GtkColumnViews. */
#include "vs-columns.h"

/* See vs-columns.h. */
gpointer
vs_columns_unwrap (gpointer item)
{
  if (GTK_IS_TREE_LIST_ROW (item))
    {
      /* The row keeps its item alive; drop the reference the getter gave. */
      gpointer inner = gtk_tree_list_row_get_item (item);
      g_object_unref (inner);
      return inner;
    }
  return item;
}

static void
setup_cell (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  float xalign = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (f), "xalign")) / 100.f;
  gboolean tree = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (f), "tree"));
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), xalign);
  gtk_label_set_ellipsize (GTK_LABEL (label),
                           xalign > 0.5 ? PANGO_ELLIPSIZE_NONE : PANGO_ELLIPSIZE_MIDDLE);
  if (xalign > 0.5)
    gtk_widget_add_css_class (label, "numeric");
  if (tree)
    {
      GtkWidget *expander = gtk_tree_expander_new ();
      gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), label);
      gtk_list_item_set_child (li, expander);
    }
  else
    gtk_list_item_set_child (li, label);
}

static void
bind_cell (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  VsCellTextFunc text = (VsCellTextFunc)data;
  gpointer item = gtk_list_item_get_item (li);
  GtkWidget *child = gtk_list_item_get_child (li);
  GtkWidget *label = child;
  g_autofree char *s = NULL;

  if (GTK_IS_TREE_EXPANDER (child))
    {
      gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (child),
                                      GTK_IS_TREE_LIST_ROW (item) ? item : NULL);
      label = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (child));
    }
  s = text (vs_columns_unwrap (item));
  gtk_label_set_text (GTK_LABEL (label), s ? s : "");
  if (gtk_label_get_ellipsize (GTK_LABEL (label)) != PANGO_ELLIPSIZE_NONE)
    gtk_widget_set_tooltip_text (label, s);
}

/* See vs-columns.h. */
GtkColumnViewColumn *
vs_columns_add (GtkColumnView *view, const char *title, VsCellTextFunc text, float xalign,
                GtkSorter *sorter, gboolean expand, gboolean tree)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *column;

  g_object_set_data (G_OBJECT (factory), "xalign", GINT_TO_POINTER ((int)(xalign * 100)));
  g_object_set_data (G_OBJECT (factory), "tree", GINT_TO_POINTER (tree));
  g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), (gpointer)text);
  column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (column, expand);
  gtk_column_view_column_set_resizable (column, TRUE);
  if (sorter != NULL)
    {
      gtk_column_view_column_set_sorter (column, sorter);
      g_object_unref (sorter);
    }
  gtk_column_view_append_column (view, column);
  g_object_unref (column);
  return column;
}
