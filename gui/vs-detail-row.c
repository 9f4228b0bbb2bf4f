/* SPDX-License-Identifier: MIT */
/* vs-detail-row.c — a heading over body text (see vs-detail-row.h).
 *
 * Two labels in a vertical box, styled by style.css (.detail-row): the
 * heading in the "heading" style, the body at the body size and full
 * contrast, wrapped at word boundaries (long paths anywhere).
 */
#include "vs-detail-row.h"

/* See vs-detail-row.h. */
GtkWidget *
vs_detail_label_new (const char *text)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  return label;
}

/* See vs-detail-row.h. */
GtkWidget *
vs_detail_row_new (const char *title, const char *text, const char *name)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *heading = gtk_label_new (title);
  GtkWidget *body;

  g_return_val_if_fail (title != NULL && text != NULL, NULL);
  body = vs_detail_label_new (text);
  gtk_widget_add_css_class (box, "detail-row");
  gtk_widget_add_css_class (heading, "heading");
  gtk_widget_add_css_class (body, "body");
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  /* Selectable labels take the focus on their own; the row's text is
   * reached with Tab, not grabbed when the row opens. */
  gtk_widget_set_focus_on_click (body, FALSE);
  gtk_box_append (GTK_BOX (box), heading);
  gtk_box_append (GTK_BOX (box), body);
  g_object_set_data (G_OBJECT (box), "vs-detail-body", body);
  if (name != NULL)
    gtk_widget_set_name (box, name);
  return box;
}

/* See vs-detail-row.h. */
const char *
vs_detail_row_get_text (GtkWidget *row)
{
  GtkWidget *body;

  g_return_val_if_fail (GTK_IS_WIDGET (row), NULL);
  body = g_object_get_data (G_OBJECT (row), "vs-detail-body");
  g_return_val_if_fail (GTK_IS_LABEL (body), NULL);
  return gtk_label_get_text (GTK_LABEL (body));
}
