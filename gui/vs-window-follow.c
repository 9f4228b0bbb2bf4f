/* SPDX-License-Identifier: MIT */
/* vs-window-follow.c — following a trace that is still being recorded.
 *
 * Once a second, while following, the window asks the document to read the
 * trace again in a worker thread (vs_trace_refresh(): a new private copy
 * when the recorder has committed since, nothing otherwise).  When it
 * changed, the session is told (the panes bound to it show the new state)
 * and the timelines are queried again: a view reaching the end of the
 * trace (the whole trace, as first shown) grows with it, any other zoom is
 * kept.  Following stops by itself when the recording ends.
 */
#include "vs-window-private.h"

#define FOLLOW_INTERVAL_MS 1000

static void
on_refresh_done (GObject *source, GAsyncResult *result, gpointer data)
{
  VsWindow *self = data;
  VsDocument *doc = VS_DOCUMENT (source);
  gboolean current = doc == vs_session_get_document (self->session);
  g_autoptr (GError) error = NULL;
  gint64 old = MAX (1, vs_document_get_duration (doc));
  const VsTimeSpan *view = vs_session_get_visible_range (self->session);
  /* Whether the view reached the end of the trace (the whole trace, or
   * the first view fitted to where memory use starts), before it grew. */
  gboolean at_end = view->end >= old;
  gint64 v0 = view->begin;
  gboolean changed = vs_document_refresh_finish (doc, result, &error);

  self->refresh_in_flight = FALSE;
  if (current && error == NULL && changed)
    {
      gint64 duration = MAX (1, vs_document_get_duration (doc));
      g_autofree char *desc = vs_document_describe (doc);

      adw_window_title_set_subtitle (self->window_title, desc);
      vs_window_invalidate_timelines (self);
      /* A new visible range fetches the timelines' data by itself. */
      if (at_end && vs_session_get_visible_range (self->session)->end != duration)
        vs_session_set_visible_range (self->session, v0, duration);
      else
        vs_window_request_all_charts (self);
      vs_session_reload (self->session);
      vs_window_update_oom_badge (self);
    }
  else if (error != NULL && current)
    g_warning ("Reading %s again failed: %s", g_file_peek_path (vs_document_get_file (doc)),
               error->message);
  if (current && vs_document_is_finalized (doc))
    {
      g_autofree char *desc = vs_document_describe (doc);

      adw_window_title_set_subtitle (self->window_title, desc);
      vs_window_set_following (self, FALSE);
    }
  g_object_unref (self);
}

static gboolean
on_follow_tick (gpointer data)
{
  VsWindow *self = data;
  VsDocument *doc = vs_session_get_document (self->session);

  if (doc == NULL || self->refresh_in_flight)
    return G_SOURCE_CONTINUE;
  self->refresh_in_flight = TRUE;
  vs_document_refresh_async (doc, self->cancellable, on_refresh_done, g_object_ref (self));
  return G_SOURCE_CONTINUE;
}

/* See vs-window-private.h. */
void
vs_window_set_following (VsWindow *self, gboolean on)
{
  gboolean was = self->follow_source != 0;

  g_clear_handle_id (&self->follow_source, g_source_remove);
  if (on && vs_session_get_document (self->session) != NULL)
    self->follow_source = g_timeout_add (FOLLOW_INTERVAL_MS, on_follow_tick, self);
  if (was != (self->follow_source != 0))
    g_object_notify (G_OBJECT (self), "following");
}
