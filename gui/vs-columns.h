/* vs-columns.h — text columns for GtkColumnView, shared by the panes.
 *
 * A column is a label per row whose text a function computes from the row's
 * item (a GtkTreeListRow is unwrapped to its item first), with an optional
 * sorter, so each pane only says what a cell shows.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Returns the text of item's cell (a new string, or NULL for empty). */
typedef char *(*VsCellTextFunc) (gpointer item);

/* Appends a column titled title to view.  xalign 0 for text, 1 for
 * numbers (drawn in tabular figures).  sorter may be NULL (transfer full).
 * expand: whether the column takes the spare width.  tree: TRUE for the
 * column that shows the tree expander (rows are GtkTreeListRow).  Returns
 * the column (owned by view). */
GtkColumnViewColumn *vs_columns_add (GtkColumnView *view, const char *title, VsCellTextFunc text,
                                     float xalign, GtkSorter *sorter, gboolean expand,
                                     gboolean tree);

/* The item a list row stands for: the item of a GtkTreeListRow, else
 * item itself. */
gpointer vs_columns_unwrap (gpointer item);

G_END_DECLS
