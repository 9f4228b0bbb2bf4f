/* SPDX-License-Identifier: MIT */
/* vs-test-widgets.c — finding widgets for GUI tests (see
 * vs-test-widgets.h). */
#include "vs-test-widgets.h"

GtkWidget *
vs_test_find_type (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = vs_test_find_type (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

GtkWidget *
vs_test_find_label (GtkWidget *widget, const char *text)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_get_mapped (widget)
      && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = vs_test_find_label (c, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

GtkWidget *
vs_test_find_named (GtkWidget *widget, const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (widget), name) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = vs_test_find_named (c, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}
