/* vs-window-follow.c — following a trace that is still being recorded.
 *
 * Once a second, while following, the window asks the document to read the
 * trace again in a worker thread (vs_trace_refresh(): a new private copy
 * when the recorder has committed since, nothing otherwise).  When it
 * changed, the timelines are queried again: a view reaching the end of the
 * trace (the whole trace, as first shown) grows with it, any other zoom is
 * kept.  Following stops by itself when
 * the recording ends.
 */
#include "vs-window-private.h"

#define FOLLOW_INTERVAL_MS 1000

static void
on_refresh_done (GObject *source, GAsyncResult *result, gpointer data)
{
  VsWindow *self = data;
  VsDocument *doc = VS_DOCUMENT (source);
  g_autoptr (GError) error = NULL;
  gint64 old = MAX (1, vs_document_get_duration (doc));
  /* Whether the view reached the end of the trace (the whole trace, or
   * the first view fitted to where memory use starts), before it grew. */
  gboolean at_end = self->v1 >= old;
  gboolean changed = vs_document_refresh_finish (doc, result, &error);

  self->refresh_in_flight = FALSE;
  if (doc == self->doc && error == NULL && changed)
    {
      gint64 duration = MAX (1, vs_document_get_duration (doc));
      g_autofree char *desc = vs_document_describe (doc);

      adw_window_title_set_subtitle (self->window_title, desc);
      for (guint i = 0; i < self->slots->len; i++)
        {
          ChartSlot *s = &g_array_index (self->slots, ChartSlot, i);
          vs_memory_chart_set_limits (s->chart, duration);
          s->width = 0; /* the data is stale: query again */
        }
      if (at_end)
        vs_window_set_view (self, self->v0, duration);
      else
        vs_window_request_all_charts (self);
      vs_oom_pane_set_document (self->oom_pane, doc);
      vs_window_update_oom_badge (self);
      vs_window_request_instant (self);
    }
  else if (error != NULL && doc == self->doc)
    g_warning ("Reading %s again failed: %s", g_file_peek_path (vs_document_get_file (doc)),
               error->message);
  if (doc == self->doc && vs_document_is_finalized (doc))
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

  if (self->doc == NULL || self->refresh_in_flight)
    return G_SOURCE_CONTINUE;
  self->refresh_in_flight = TRUE;
  vs_document_refresh_async (self->doc, self->cancellable, on_refresh_done, g_object_ref (self));
  return G_SOURCE_CONTINUE;
}

/* See vs-window-private.h. */
void
vs_window_set_following (VsWindow *self, gboolean on)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "follow");

  g_clear_handle_id (&self->follow_source, g_source_remove);
  if (on && self->doc != NULL)
    self->follow_source = g_timeout_add (FOLLOW_INTERVAL_MS, on_follow_tick, self);
  if (action != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action),
                               g_variant_new_boolean (self->follow_source != 0));
}
