/* SPDX-License-Identifier: MIT */
/* vs-detail-row.h — a heading over body text, one row of an expander row
 * in the Diagnosis and Failed panes.
 *
 * The text is what the user reads and acts on (a finding's evidence and
 * remedy, a failure's cause): body text, wrapped, selectable so that it
 * can be copied — not a row's dim subtitle.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A new row showing title (a heading) over text (plain text, not markup),
 * its widget name set to name (may be NULL) so that tests and CSS find
 * it. */
GtkWidget *vs_detail_row_new (const char *title, const char *text, const char *name);

/* A label for text the user reads and copies: left-aligned, wrapped at
 * word boundaries (long words anywhere), selectable.  The body of a
 * detail row, and of the Failed pane's stack. */
GtkWidget *vs_detail_label_new (const char *text);

/* The body text of a row made by vs_detail_row_new(). */
const char *vs_detail_row_get_text (GtkWidget *row);

G_END_DECLS
