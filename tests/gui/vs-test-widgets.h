/* SPDX-License-Identifier: MIT */
/* vs-test-widgets.h — finding a window's widgets in GUI tests, as a user
 * finds them: by type, by the text of a label, by name, or by any test
 * of the test's own. */
#pragma once

#include <gtk/gtk.h>

/* Whether widget is the one looked for; data is vs_test_find()'s. */
typedef gboolean (*VsTestWidgetMatch) (GtkWidget *widget, gconstpointer data);

/* The first widget under widget (widget itself included), depth first,
 * for which match (w, data) holds; NULL when none does. */
GtkWidget *vs_test_find (GtkWidget *widget, VsTestWidgetMatch match, gconstpointer data);
/* The first widget of type under widget (widget itself included), depth
 * first; NULL when none is. */
GtkWidget *vs_test_find_type (GtkWidget *widget, GType type);
/* The first mapped label under widget whose text is text; NULL when none
 * is. */
GtkWidget *vs_test_find_label (GtkWidget *widget, const char *text);
/* The first widget under widget whose name (gtk_widget_get_name) is name;
 * NULL when none is. */
GtkWidget *vs_test_find_named (GtkWidget *widget, const char *name);
