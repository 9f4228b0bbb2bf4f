/* SPDX-License-Identifier: MIT */
/* vs-session.h — what the viewer shows of one trace, as properties.
 *
 * The window and its panes share one VsSession: the open document, the
 * visible range of the timelines, the selected range and the state of the
 * selected device at the selected instant.  Panes bind these properties in
 * their .ui templates (a `session` property, then lookups through it), so
 * nothing pushes state to each pane.  The session fetches the instant's
 * state itself (a VsDocument worker query, at most one in flight, the
 * latest request waiting) whenever the selection or the document changes.
 *
 * Properties: "document" (VsDocument), "visible-range" (VsTimeSpan),
 * "selection" (VsTimeSpan, empty when no range is selected), "instant"
 * (VsInstant, NULL until the first query answers), "loading" (a query of
 * the instant runs or waits).  Signal "instant-failed" (message): the
 * query of the instant failed.
 */
#pragma once

#include <glib-object.h>

#include "vs-document.h"
#include "vs-instant.h"
#include "vs-time-span.h"

G_BEGIN_DECLS

#define VS_TYPE_SESSION (vs_session_get_type ())
G_DECLARE_FINAL_TYPE (VsSession, vs_session, VS, SESSION, GObject)

VsSession *vs_session_new (void);

/* The document shown (NULL: none).  Setting one drops what was fetched for
 * the previous one, shows the whole trace and selects the peak of its
 * first device. */
VsDocument *vs_session_get_document (VsSession *self);
void vs_session_set_document (VsSession *self, VsDocument *document);

/* The visible range of the timelines, [begin, end) ns: with a document,
 * kept inside [0, its duration] and at least the shortest span the
 * timelines show (vs_time_span_clamp), as the timelines bound to it keep
 * theirs. */
const VsTimeSpan *vs_session_get_visible_range (VsSession *self);
void vs_session_set_visible_range (VsSession *self, gint64 begin, gint64 end);

/* The selected range (empty when an instant, not a range, is selected). */
const VsTimeSpan *vs_session_get_selection (VsSession *self);

/* The state at the selected instant (NULL until fetched).  Owned by self. */
VsInstant *vs_session_get_instant (VsSession *self);

/* Whether a query of the instant is running or waiting. */
gboolean vs_session_get_loading (VsSession *self);

/* Whether the instant's state was fetched and nothing newer is asked. */
gboolean vs_session_is_settled (VsSession *self);

/* Selects instant t (ns; < 0: the peak of allocated memory) on device_id
 * and clears the selected range. */
void vs_session_select_instant (VsSession *self, gint64 device_id, gint64 t);

/* Selects the range [a, b) on device_id: the instant shown is the range's
 * peak, listing the blocks allocated inside the range. */
void vs_session_select_range (VsSession *self, gint64 device_id, gint64 a, gint64 b);

/* The device of the selected instant (-1: none). */
gint64 vs_session_get_device (VsSession *self);

/* The selected instant as asked for (ns; < 0: the peak), the end of the
 * selected range when a range is selected. */
gint64 vs_session_get_selected_time (VsSession *self);

/* The document was read again (a recording committed more): notifies
 * "document" so that what binds it shows the new contents, and fetches
 * the selected instant's state again. */
void vs_session_reload (VsSession *self);

G_END_DECLS
