/* SPDX-License-Identifier: MIT */
/* vs-window-timelines.c — the window's timelines: one VsMemoryChart per
 * device, bound to the session's visible range (both ways: a pan or zoom
 * on one chart moves the session's, and so every chart), selection and
 * instant.
 *
 * Each chart asks its VsDocument (worker threads) for one VsChartData
 * covering the visible range plus one screen width on each side, so a pan
 * draws from data already there while the next query runs.  A chart's
 * query goes through its VsQuerySlot: at most one in flight, the latest
 * request waiting.  Clicks and shift-drags on a chart select an instant
 * or a range on its device in the session; the bindings bring them back
 * to every chart.
 */
#include "vs-window-private.h"

static void request_chart (VsWindow *self, guint index);

typedef struct
{
  VsWindow *self;
  guint generation;
  guint index;
} ChartRequest;

static VsChartSlot *
slot_at (VsWindow *self, guint index)
{
  g_assert (index < self->slots->len);
  return &g_array_index (self->slots, VsChartSlot, index);
}

/* Once every chart has its first data: when memory use starts late
 * (CUDA start-up often takes most of a short run), shows from just before
 * the first change to the end instead of a flat line. */
static void
fit_initial_view (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  gint64 first = G_MAXINT64;
  gint64 duration = MAX (1, vs_document_get_duration (doc));

  for (guint i = 0; i < self->slots->len; i++)
    {
      VsChartSlot *s = slot_at (self, i);
      VsChartData *d = vs_memory_chart_get_data (s->chart);

      if (!s->query.loaded || d == NULL)
        return;
      for (guint b = 0; b < d->n_buckets; b++)
        if (d->buckets[b].has_data && d->buckets[b].max_reserved > 0)
          {
            first = MIN (first, d->t0 + (gint64)((double)b * (d->t1 - d->t0) / d->n_buckets));
            break;
          }
    }
  self->fit_pending = FALSE;
  if (first != G_MAXINT64 && first > duration / 5)
    vs_session_set_visible_range (self->session, MAX (0, first - (duration - first) / 20),
                                  duration);
}

/* Once every timeline has its first data (or one failed), the queries the
 * document held for them (the panes' instant) run. */
static void
release_when_loaded (VsWindow *self, gboolean failed)
{
  VsDocument *doc = vs_session_get_document (self->session);

  for (guint i = 0; !failed && i < self->slots->len; i++)
    if (!slot_at (self, i)->query.loaded)
      return;
  if (doc != NULL)
    vs_document_release_queries (doc);
}

static void
on_chart_done (GObject *source, GAsyncResult *result, gpointer data)
{
  ChartRequest *req = data;
  VsWindow *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsChartData) chart_data
      = VS_IS_COMPARISON (source)
            ? vs_comparison_query_chart_finish (VS_COMPARISON (source), result, &error)
            : vs_document_query_chart_finish (VS_DOCUMENT (source), result, &error);

  if (req->generation == self->generation && req->index < self->slots->len)
    {
      VsChartSlot *s = slot_at (self, req->index);
      gboolean again = vs_query_slot_end (&s->query, chart_data != NULL);

      if (chart_data != NULL)
        vs_memory_chart_set_data (s->chart, chart_data);
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        vs_window_show_error (self, error->message);
      release_when_loaded (self, chart_data == NULL);
      if (again && vs_session_get_document (self->session) != NULL)
        request_chart (self, req->index);
      if (self->fit_pending && vs_session_get_document (self->session) != NULL)
        fit_initial_view (self);
      vs_window_update_settled (self);
    }
  g_object_unref (self);
  g_free (req);
}

/* Whether slot's data already covers the visible range at the current
 * resolution (then a pan needs no query). */
static gboolean
chart_covers (VsWindow *self, VsChartSlot *s, guint width)
{
  VsChartData *d = vs_memory_chart_get_data (s->chart);
  const VsTimeSpan *view = vs_session_get_visible_range (self->session);
  gint64 span = view->end - view->begin;
  double per = d ? (double)(d->t1 - d->t0) / d->n_buckets : 0;

  return d != NULL && s->width == width && d->t0 <= view->begin
         && d->t1 >= MIN (view->end,
                          vs_document_get_duration (vs_session_get_document (self->session)))
         && per <= (double)span / width * 1.05 && per >= (double)span / width / 1.5;
}

/* Asks for the data of chart index over the visible range ± one span. */
static void
request_chart (VsWindow *self, guint index)
{
  VsChartSlot *s = slot_at (self, index);
  VsDocument *doc = vs_session_get_document (self->session);
  const VsTimeSpan *view = vs_session_get_visible_range (self->session);
  guint width = vs_memory_chart_get_plot_width (s->chart);
  gint64 duration = MAX (1, vs_document_get_duration (doc));
  gint64 span = MAX (1, view->end - view->begin);
  gint64 a = MAX (0, view->begin - span);
  /* Up to and including the last instant: the trace's last event is there. */
  gint64 b = MIN (duration + 1, view->end + span);
  ChartRequest *req;
  double n;

  if (!s->query.in_flight && (width < 8 || chart_covers (self, s, width)))
    return;
  /* While one runs, the request is remembered and made again, with the
   * view current then, once it ends. */
  if (!vs_query_slot_begin (&s->query))
    return;
  if (b <= a)
    b = a + 1;
  n = (double)(b - a) / span * width;
  s->width = width;
  req = g_new0 (ChartRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  req->index = index;
  /* Compared with another trace: its lines on the same grid. */
  if (self->comparison != NULL)
    vs_comparison_query_chart_async (self->comparison, s->device_id, a, b,
                                     (guint)CLAMP (n, 16, 100000), self->cancellable, on_chart_done,
                                     req);
  else
    vs_document_query_chart_async (doc, s->device_id, a, b, (guint)CLAMP (n, 16, 100000),
                                   self->cancellable, on_chart_done, req);
}

/* See vs-window-private.h. */
void
vs_window_request_all_charts (VsWindow *self)
{
  if (vs_session_get_document (self->session) == NULL)
    return;
  for (guint i = 0; i < self->slots->len; i++)
    request_chart (self, i);
  vs_window_update_settled (self);
}

/* The session's visible range changed (the charts bound to it show it):
 * every chart fetches what it misses. */
static void
on_visible_range (VsSession *session, GParamSpec *pspec, VsWindow *self)
{
  vs_window_request_all_charts (self);
}

/* The session's instant, as the time a chart marks; none (the session
 * has not fetched one yet) leaves the chart's mark where it is. */
static gboolean
instant_to_time (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  const VsInstant *in = g_value_get_boxed (from);

  if (in == NULL)
    return FALSE;
  g_value_set_int64 (to, in->time_ns);
  return TRUE;
}

static void
on_chart_resized (GObject *chart, GParamSpec *pspec, VsWindow *self)
{
  vs_window_request_all_charts (self);
}

static gint64
slot_device (VsWindow *self, VsMemoryChart *chart)
{
  for (guint i = 0; i < self->slots->len; i++)
    if (slot_at (self, i)->chart == chart)
      return slot_at (self, i)->device_id;
  return -1;
}

static void
on_instant_selected (VsMemoryChart *chart, gint64 t, VsWindow *self)
{
  vs_session_select_instant (self->session, slot_device (self, chart), t);
}

static void
on_range_selected (VsMemoryChart *chart, gint64 a, gint64 b, VsWindow *self)
{
  if (b > a)
    vs_session_select_range (self->session, slot_device (self, chart), a, b);
}

/* See vs-window-private.h. */
void
vs_window_add_timelines (VsWindow *self)
{
  VsDocument *doc = vs_session_get_document (self->session);
  GPtrArray *devices = vs_document_get_devices (doc);
  gint64 duration = MAX (1, vs_document_get_duration (doc));

  g_assert (self->slots->len == 0);
  for (guint i = 0; i < devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (devices, i);
      VsChartSlot s = { 0 };

      s.chart = VS_MEMORY_CHART (vs_memory_chart_new ());
      s.device_id = d->id;
      vs_memory_chart_set_document (s.chart, doc, d->id);
      vs_memory_chart_set_limits (s.chart, duration);
      /* Created at runtime, one per device: bound here rather than in the
       * window's template. */
      g_object_bind_property (self->session, "visible-range", s.chart, "visible-range",
                              G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
      g_object_bind_property (self->session, "selection", s.chart, "selection",
                              G_BINDING_SYNC_CREATE);
      g_object_bind_property_full (self->session, "instant", s.chart, "instant",
                                   G_BINDING_SYNC_CREATE, instant_to_time, NULL, NULL, NULL);
      g_signal_connect (s.chart, "instant-selected", G_CALLBACK (on_instant_selected), self);
      g_signal_connect (s.chart, "range-selected", G_CALLBACK (on_range_selected), self);
      g_signal_connect (s.chart, "notify::plot-width", G_CALLBACK (on_chart_resized), self);
      gtk_widget_set_vexpand (GTK_WIDGET (s.chart), TRUE);
      gtk_box_append (self->charts_box, GTK_WIDGET (s.chart));
      g_array_append_val (self->slots, s);
    }
  self->fit_pending = TRUE;
  vs_window_request_all_charts (self);
}

/* See vs-window-private.h. */
void
vs_window_clear_timelines (VsWindow *self)
{
  GtkWidget *child;

  g_array_set_size (self->slots, 0);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->charts_box))))
    gtk_box_remove (self->charts_box, child);
}

/* See vs-window-private.h. */
void
vs_window_invalidate_timelines (VsWindow *self)
{
  gint64 duration = MAX (1, vs_document_get_duration (vs_session_get_document (self->session)));

  for (guint i = 0; i < self->slots->len; i++)
    {
      VsChartSlot *s = slot_at (self, i);
      vs_memory_chart_set_limits (s->chart, duration);
      s->width = 0; /* the data is stale: query again */
    }
}

/* See vs-window-private.h. */
/* A step in Fragmentation: every timeline marks its event's time at once,
 * before the session's instant follows (which sets the same time). */
static void
on_step_time (VsStatePane *pane, GParamSpec *pspec, VsWindow *self)
{
  gint64 t = -1;

  g_object_get (pane, "step-time", &t, NULL);
  if (t < 0)
    return;
  for (guint i = 0; i < self->slots->len; i++)
    g_object_set (g_array_index (self->slots, VsChartSlot, i).chart, "instant", t, NULL);
}

void
vs_window_init_timelines (VsWindow *self)
{
  g_signal_connect (self->session, "notify::visible-range", G_CALLBACK (on_visible_range), self);
  g_signal_connect (self->state_pane, "notify::step-time", G_CALLBACK (on_step_time), self);
}
