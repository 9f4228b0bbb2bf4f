/* SPDX-License-Identifier: MIT */
/* vs-test-widgets.c — finding widgets for GUI tests (see
 * vs-test-widgets.h). */
#include "vs-test-widgets.h"

GtkWidget *
vs_test_find (GtkWidget *widget, VsTestWidgetMatch match, gconstpointer data)
{
  if (match (widget, data))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = vs_test_find (c, match, data);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
is_of_type (GtkWidget *widget, gconstpointer type)
{
  return G_TYPE_CHECK_INSTANCE_TYPE (widget, *(const GType *)type);
}

GtkWidget *
vs_test_find_type (GtkWidget *widget, GType type)
{
  return vs_test_find (widget, is_of_type, &type);
}

static gboolean
is_mapped_label (GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL (widget) && gtk_widget_get_mapped (widget)
         && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0;
}

GtkWidget *
vs_test_find_label (GtkWidget *widget, const char *text)
{
  return vs_test_find (widget, is_mapped_label, text);
}

static gboolean
is_named (GtkWidget *widget, gconstpointer name)
{
  return g_strcmp0 (gtk_widget_get_name (widget), name) == 0;
}

GtkWidget *
vs_test_find_named (GtkWidget *widget, const char *name)
{
  return vs_test_find (widget, is_named, name);
}
