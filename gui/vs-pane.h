/* SPDX-License-Identifier: MIT */
/* vs-pane.h — a pane showing the state at the selected instant.
 *
 * The base of the list panes: a vertical GtkBox with a "session" property
 * (the window's .ui binds it to the window's session) and an "instant"
 * property that the subclass's .ui binds to the session's instant:
 *
 *   <binding name="instant">
 *     <lookup name="instant" type="VsSession">
 *       <lookup name="session">VsMyPane</lookup>
 *     </lookup>
 *   </binding>
 *
 * A subclass shows vs_pane_get_instant() in its instant_changed vfunc.
 *
 * Every pane has the actions "pane.copy-frame", "pane.copy-stack" and
 * "pane.copy-row" (the window's Ctrl+C runs the shown pane's copy-row,
 * Shift+Ctrl+C its copy-stack): they put the subclass's copy() text for
 * its selection on the clipboard.  A
 * right click on a row selects it and offers them in a menu
 * (vs_pane_popup_menu()), as the Menu key and Shift+F10 do for the focused
 * row ("pane.menu").  start_search() is what Ctrl+F does in the
 * pane (the window calls it for the pane shown).
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-instant.h"
#include "vs-session.h"

G_BEGIN_DECLS

#define VS_TYPE_PANE (vs_pane_get_type ())
G_DECLARE_DERIVABLE_TYPE (VsPane, vs_pane, VS, PANE, GtkBox)

/* What the copy actions copy. */
typedef enum
{
  VS_PANE_COPY_FRAME, /* the selected frame's text */
  VS_PANE_COPY_STACK, /* its call stack, one frame a line, innermost first */
  VS_PANE_COPY_ROW,   /* the row as shown, its cells separated by tabs */
} VsPaneCopy;

struct _VsPaneClass
{
  GtkBoxClass parent_class;

  /* The instant changed (possibly to NULL); the template is built. */
  void (*instant_changed) (VsPane *self);
  /* The text to copy for the selection (a new string), NULL when nothing
   * is selected. */
  char *(*copy) (VsPane *self, VsPaneCopy what);
  /* Moves the keyboard focus to the pane's search entry. */
  void (*start_search) (VsPane *self);
};

/* The session whose instant the pane shows (NULL: none). */
VsSession *vs_pane_get_session (VsPane *self);
void vs_pane_set_session (VsPane *self, VsSession *session);

/* The instant shown (NULL: none); setting a new one calls
 * instant_changed. */
VsInstant *vs_pane_get_instant (VsPane *self);
void vs_pane_set_instant (VsPane *self, VsInstant *instant);

/* The text copy() gives for what (NULL: nothing selected, or the pane
 * copies nothing). */
char *vs_pane_get_copy_text (VsPane *self, VsPaneCopy what);

/* Focuses the pane's search; FALSE when it has none. */
gboolean vs_pane_start_search (VsPane *self);

/* The copy menu at (x, y) of widget, a descendant of self. */
void vs_pane_popup_menu (VsPane *self, GtkWidget *widget, double x, double y);

/* For a right click at (x, y) on a list or column view: selects the row
 * there (as a left click would) and pops the copy menu up. */
void vs_pane_popup_menu_on_row (VsPane *self, GtkWidget *view, double x, double y);

G_END_DECLS
