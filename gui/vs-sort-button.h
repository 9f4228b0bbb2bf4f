/* SPDX-License-Identifier: MIT */
/* vs-sort-button.h — sorting a column view from the keyboard.
 *
 * GTK 4.8's column headers sort on a click but cannot take the keyboard
 * focus.  VsSortButton is a menu button (mnemonic Alt+O, "S_ort") whose
 * menu lists the column view's sortable columns ("Sort By") and the
 * order (Ascending, Descending) as radio items; choosing one sorts the
 * view as a click on that header would (gtk_column_view_sort_by_column).
 * The marks show the sort chosen from the menu; after a header click
 * (which GTK 4.8 does not let us read back) none is marked until the
 * menu is used again.
 *
 * Property "column-view" (GtkColumnView, set once, in the .ui).  Actions,
 * on the button: "sort.column" (int32: the column's position among the
 * view's columns; state -1 when unknown) and "sort.order" (string:
 * "ascending" or "descending"; state "" when unknown).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define VS_TYPE_SORT_BUTTON (vs_sort_button_get_type ())
G_DECLARE_FINAL_TYPE (VsSortButton, vs_sort_button, VS, SORT_BUTTON, GtkWidget)

/* The column view sorted (not owned), NULL before it is set. */
GtkColumnView *vs_sort_button_get_column_view (VsSortButton *self);
void vs_sort_button_set_column_view (VsSortButton *self, GtkColumnView *column_view);

/* What the menu marks: the column's position (-1: none) and the order
 * ("ascending", "descending", "": none; free it). */
void vs_sort_button_get_marks (VsSortButton *self, gint *column, char **order);

/* The menu button inside (tests: its popover). */
GtkMenuButton *vs_sort_button_get_menu_button (VsSortButton *self);

G_END_DECLS
