/* SPDX-License-Identifier: MIT */
/* vs-sort-button.c — a "Sort" menu for a column view (see
 * vs-sort-button.h).  The menu is a GMenu built from the view's columns
 * that have a sorter; two stateful actions carry the chosen column and
 * order and sort the view through gtk_column_view_sort_by_column.
 */
#include "vs-sort-button.h"

#include <glib/gi18n.h>

struct _VsSortButton
{
  GtkWidget parent_instance;

  GtkMenuButton *button;
  GtkColumnView *column_view; /* weak: the pane holding both owns it */
  GtkSorter *sorter;          /* the view's, watched for header clicks */
  GSimpleAction *column_action;
  GSimpleAction *order_action;
  gboolean sorting; /* our own sort is being applied */
};

enum
{
  PROP_0,
  PROP_COLUMN_VIEW,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsSortButton, vs_sort_button, GTK_TYPE_WIDGET)

/* Sorts the view by the chosen column in the chosen order (ascending
 * while none is chosen); nothing while no column is chosen. */
static void
apply (VsSortButton *self)
{
  g_autoptr (GVariant) column = g_action_get_state (G_ACTION (self->column_action));
  g_autoptr (GVariant) order = g_action_get_state (G_ACTION (self->order_action));
  g_autoptr (GtkColumnViewColumn) col = NULL;
  gint index = g_variant_get_int32 (column);

  if (self->column_view == NULL || index < 0)
    return;
  col = g_list_model_get_item (gtk_column_view_get_columns (self->column_view), (guint)index);
  if (col == NULL)
    return;
  self->sorting = TRUE;
  gtk_column_view_sort_by_column (self->column_view, col,
                                  g_str_equal (g_variant_get_string (order, NULL), "descending")
                                      ? GTK_SORT_DESCENDING
                                      : GTK_SORT_ASCENDING);
  self->sorting = FALSE;
}

static void
on_column (GSimpleAction *action, GVariant *value, gpointer data)
{
  VsSortButton *self = data;
  g_autoptr (GVariant) order = g_action_get_state (G_ACTION (self->order_action));

  g_simple_action_set_state (action, value);
  if (*g_variant_get_string (order, NULL) == '\0')
    g_simple_action_set_state (self->order_action, g_variant_new_string ("ascending"));
  apply (self);
}

static void
on_order (GSimpleAction *action, GVariant *value, gpointer data)
{
  const char *order = g_variant_get_string (value, NULL);

  if (!g_str_equal (order, "ascending") && !g_str_equal (order, "descending"))
    return;
  g_simple_action_set_state (action, value);
  apply (data);
}

/* A header was clicked: which column and order GTK 4.8 does not say, so
 * the menu marks none. */
static void
on_sorter_changed (GtkSorter *sorter, GtkSorterChange change, VsSortButton *self)
{
  if (self->sorting)
    return;
  g_simple_action_set_state (self->column_action, g_variant_new_int32 (-1));
  g_simple_action_set_state (self->order_action, g_variant_new_string (""));
}

/* The menu: the sortable columns by their titles, then the order. */
static GMenuModel *
build_menu (GtkColumnView *view)
{
  GListModel *columns = gtk_column_view_get_columns (view);
  g_autoptr (GMenu) by = g_menu_new ();
  g_autoptr (GMenu) order = g_menu_new ();
  GMenu *menu = g_menu_new ();

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) col = g_list_model_get_item (columns, i);
      g_autoptr (GMenuItem) item = NULL;

      if (gtk_column_view_column_get_sorter (col) == NULL)
        continue;
      item = g_menu_item_new (gtk_column_view_column_get_title (col), NULL);
      g_menu_item_set_action_and_target_value (item, "sort.column",
                                               g_variant_new_int32 ((gint32)i));
      g_menu_append_item (by, item);
    }
  g_menu_append (order, _("_Ascending"), "sort.order::ascending");
  g_menu_append (order, _("_Descending"), "sort.order::descending");
  g_menu_append_section (menu, _("Sort By"), G_MENU_MODEL (by));
  g_menu_append_section (menu, NULL, G_MENU_MODEL (order));
  return G_MENU_MODEL (menu);
}

/* See vs-sort-button.h. */
void
vs_sort_button_set_column_view (VsSortButton *self, GtkColumnView *column_view)
{
  g_autoptr (GMenuModel) menu = NULL;

  g_return_if_fail (VS_IS_SORT_BUTTON (self));
  g_return_if_fail (column_view == NULL || GTK_IS_COLUMN_VIEW (column_view));
  if (column_view == self->column_view)
    return;
  if (self->sorter != NULL)
    g_signal_handlers_disconnect_by_data (self->sorter, self);
  g_clear_object (&self->sorter);
  self->column_view = column_view;
  g_simple_action_set_state (self->column_action, g_variant_new_int32 (-1));
  g_simple_action_set_state (self->order_action, g_variant_new_string (""));
  if (column_view != NULL)
    {
      self->sorter = g_object_ref (gtk_column_view_get_sorter (column_view));
      g_signal_connect (self->sorter, "changed", G_CALLBACK (on_sorter_changed), self);
      menu = build_menu (column_view);
    }
  gtk_menu_button_set_menu_model (self->button, menu);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_COLUMN_VIEW]);
}

/* See vs-sort-button.h. */
GtkColumnView *
vs_sort_button_get_column_view (VsSortButton *self)
{
  g_return_val_if_fail (VS_IS_SORT_BUTTON (self), NULL);
  return self->column_view;
}

/* See vs-sort-button.h. */
void
vs_sort_button_get_marks (VsSortButton *self, gint *column, char **order)
{
  g_autoptr (GVariant) c = NULL;
  g_autoptr (GVariant) o = NULL;

  g_return_if_fail (VS_IS_SORT_BUTTON (self));
  c = g_action_get_state (G_ACTION (self->column_action));
  o = g_action_get_state (G_ACTION (self->order_action));
  *column = g_variant_get_int32 (c);
  *order = g_variant_dup_string (o, NULL);
}

/* See vs-sort-button.h. */
GtkMenuButton *
vs_sort_button_get_menu_button (VsSortButton *self)
{
  g_return_val_if_fail (VS_IS_SORT_BUTTON (self), NULL);
  return self->button;
}

static void
vs_sort_button_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  switch (id)
    {
    case PROP_COLUMN_VIEW:
      g_value_set_object (value, VS_SORT_BUTTON (object)->column_view);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_sort_button_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  switch (id)
    {
    case PROP_COLUMN_VIEW:
      vs_sort_button_set_column_view (VS_SORT_BUTTON (object), g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_sort_button_dispose (GObject *object)
{
  VsSortButton *self = VS_SORT_BUTTON (object);

  if (self->sorter != NULL)
    g_signal_handlers_disconnect_by_data (self->sorter, self);
  g_clear_object (&self->sorter);
  self->column_view = NULL;
  if (self->button != NULL)
    gtk_widget_unparent (GTK_WIDGET (self->button));
  self->button = NULL;
  g_clear_object (&self->column_action);
  g_clear_object (&self->order_action);
  G_OBJECT_CLASS (vs_sort_button_parent_class)->dispose (object);
}

static void
vs_sort_button_class_init (VsSortButtonClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = vs_sort_button_get_property;
  object_class->set_property = vs_sort_button_set_property;
  object_class->dispose = vs_sort_button_dispose;
  /* The column view the menu sorts. */
  props[PROP_COLUMN_VIEW]
      = g_param_spec_object ("column-view", NULL, NULL, GTK_TYPE_COLUMN_VIEW,
                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "sortbutton");
}

static void
vs_sort_button_init (VsSortButton *self)
{
  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();

  self->column_action
      = g_simple_action_new_stateful ("column", G_VARIANT_TYPE_INT32, g_variant_new_int32 (-1));
  self->order_action
      = g_simple_action_new_stateful ("order", G_VARIANT_TYPE_STRING, g_variant_new_string (""));
  g_signal_connect (self->column_action, "change-state", G_CALLBACK (on_column), self);
  g_signal_connect (self->order_action, "change-state", G_CALLBACK (on_order), self);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (self->column_action));
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (self->order_action));
  gtk_widget_insert_action_group (GTK_WIDGET (self), "sort", G_ACTION_GROUP (group));

  self->button = GTK_MENU_BUTTON (gtk_menu_button_new ());
  gtk_menu_button_set_label (self->button, _("S_ort"));
  gtk_menu_button_set_use_underline (self->button, TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->button),
                               _("Sort the table by a column, either way (Alt+O); a click on a "
                                 "column’s header sorts by it too"));
  gtk_widget_set_parent (GTK_WIDGET (self->button), GTK_WIDGET (self));
}
