/* SPDX-License-Identifier: MIT */
/* vs-cell-format.h — what a table cell writes for a value.
 *
 * The panes declare their columns in .ui files: each cell is a label
 * bound to a <closure> over an item property (GtkBuilderListItemFactory),
 * and these are the closures.  They take the object the expression is
 * evaluated on (unused) and the value, and return a new string.
 * vs_cell_format_add_callbacks() makes them known to a widget class's
 * template scope under the names below, which its .ui files call.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* "format_bytes": "12.5 MiB". */
char *vs_cell_format_bytes (gpointer unused, gint64 bytes);
/* "format_known_bytes": as format_bytes, NULL (empty) for VS_UNKNOWN. */
char *vs_cell_format_known_bytes (gpointer unused, gint64 bytes);
/* "format_positive_bytes": as format_bytes, NULL (empty) for 0 or less. */
char *vs_cell_format_positive_bytes (gpointer unused, gint64 bytes);
/* "format_time": an exact time, "before the trace" for VS_UNKNOWN. */
char *vs_cell_format_time (gpointer unused, gint64 t);
/* "format_address": "0x7f…". */
char *vs_cell_format_address (gpointer unused, guint64 address);
/* "format_count": a plain integer. */
char *vs_cell_format_count (gpointer unused, gint64 n);
/* "format_percent": "12.5 %". */
char *vs_cell_format_percent (gpointer unused, double percent);
/* "format_site": the site, "(no stack)" when empty. */
char *vs_cell_format_site (gpointer unused, const char *site);

/* Adds the closures above to klass's template scope. */
void vs_cell_format_add_callbacks (GtkWidgetClass *klass);

G_END_DECLS
