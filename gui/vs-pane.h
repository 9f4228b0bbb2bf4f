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
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-instant.h"
#include "vs-session.h"

G_BEGIN_DECLS

#define VS_TYPE_PANE (vs_pane_get_type ())
G_DECLARE_DERIVABLE_TYPE (VsPane, vs_pane, VS, PANE, GtkBox)

struct _VsPaneClass
{
  GtkBoxClass parent_class;

  /* The instant changed (possibly to NULL); the template is built. */
  void (*instant_changed) (VsPane *self);
};

/* The session whose instant the pane shows (NULL: none). */
VsSession *vs_pane_get_session (VsPane *self);
void vs_pane_set_session (VsPane *self, VsSession *session);

/* The instant shown (NULL: none); setting a new one calls
 * instant_changed. */
VsInstant *vs_pane_get_instant (VsPane *self);
void vs_pane_set_instant (VsPane *self, VsInstant *instant);

G_END_DECLS
