/* SPDX-License-Identifier: MIT */
/* vs-memory-chart.c — the interactive memory timeline of one device.
 *
 * Per frame this widget replays one cached render node and draws up to
 * three overlay rectangles; the cached node is rebuilt from the reduced
 * data (one column per pixel) only when the data, view, size or style
 * changes, so panning and zooming cost one vs_chart_draw() per frame at
 * most, independent of the trace's size.
 */
#include "vs-memory-chart.h"

#include <math.h>
#include <string.h>

#include <adwaita.h>

#include <glib/gi18n.h>

#include "vs-chart-draw.h"
#include "vs-oom-text.h"
#include "vs-table.h"
#include "vs-time-format.h"
#include "vs-time-span.h"

#define MIN_SPAN_NS vs_time_format_min_span ()

struct _VsMemoryChart
{
  GtkWidget parent_instance;

  VsChartData *data;
  VsDocument *document; /* for the failures' details; NULL: none */
  gint64 device_id;
  GskRenderNode *cache;
  gint64 last_draw_us;
  guint plot_width; /* last allocated, for notify::plot-width */

  gint64 limit;   /* duration: the view stays inside [0, limit] */
  gint64 v0, v1;  /* visible range */
  gint64 instant; /* < 0: none */
  gint64 sel_a, sel_b;
  double hover_x; /* < 0: pointer not over the chart */

  /* Gesture state. */
  gint64 drag_v0, drag_v1;
  double drag_x;
  gboolean selecting;
  double pinch_span;
};

enum
{
  VIEW_CHANGED,
  INSTANT_SELECTED,
  RANGE_SELECTED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_PLOT_WIDTH,
  PROP_VISIBLE_RANGE,
  PROP_INSTANT,
  PROP_SELECTION,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (VsMemoryChart, vs_memory_chart, GTK_TYPE_WIDGET)

static void
invalidate (VsMemoryChart *self)
{
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
get_layout (VsMemoryChart *self, VsChartLayout *l)
{
  vs_chart_layout (self->data, gtk_widget_get_width (GTK_WIDGET (self)),
                   gtk_widget_get_height (GTK_WIDGET (self)), l);
}

/* Clamps [t0, t1) into [0, limit] keeping its span where possible, and
 * applies it; emits "view-changed" when emit is set and it changed. */
static void
apply_view (VsMemoryChart *self, gint64 t0, gint64 t1, gboolean emit)
{
  VsTimeSpan s = { t0, t1 };

  vs_time_span_clamp (&s, self->limit, MIN_SPAN_NS);
  if (s.begin == self->v0 && s.end == self->v1)
    return;
  self->v0 = s.begin;
  self->v1 = s.end;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE_RANGE]);
  if (emit)
    g_signal_emit (self, signals[VIEW_CHANGED], 0, s.begin, s.end);
}

/* Zooms by factor around time t (fixed on screen). */
static void
zoom_at (VsMemoryChart *self, gint64 t, double factor)
{
  double span = (double)(self->v1 - self->v0);
  double ns = span / factor;
  double frac = span > 0 ? (double)(t - self->v0) / span : 0.5;
  gint64 t0 = t - (gint64)(frac * ns);
  apply_view (self, t0, t0 + (gint64)ns, TRUE);
}

static void
vs_memory_chart_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  VsMemoryChart *self = VS_MEMORY_CHART (widget);
  int w = gtk_widget_get_width (widget);
  int h = gtk_widget_get_height (widget);
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  const VsChartPalette *p = vs_chart_palette (dark);
  VsChartLayout l;
  double top, height;

  if (self->v1 <= self->v0 || w <= 0 || h <= 0)
    return;
  if (self->cache == NULL)
    {
      gint64 start = g_get_monotonic_time ();
      GtkSnapshot *s = gtk_snapshot_new ();
      vs_chart_draw (s, self->data, self->v0, self->v1, w, h, p,
                     gtk_widget_get_pango_context (widget));
      self->cache = gtk_snapshot_free_to_node (s);
      self->last_draw_us = g_get_monotonic_time () - start;
    }
  if (self->cache != NULL)
    gtk_snapshot_append_node (snapshot, self->cache);

  get_layout (self, &l);
  top = l.ranges.size.height > 0    ? l.ranges.origin.y
        : l.kernels.size.height > 0 ? l.kernels.origin.y
                                    : l.chart.origin.y;
  height = l.chart.origin.y + l.chart.size.height - top;
  gtk_snapshot_push_clip (snapshot,
                          &GRAPHENE_RECT_INIT (l.chart.origin.x, top, l.chart.size.width, height));
  if (self->sel_b > self->sel_a)
    {
      double xa = vs_chart_x_for_time (&l, self->v0, self->v1, self->sel_a);
      double xb = vs_chart_x_for_time (&l, self->v0, self->v1, self->sel_b);
      gtk_snapshot_append_color (snapshot, &p->selection,
                                 &GRAPHENE_RECT_INIT (xa, top, MAX (1, xb - xa), height));
    }
  if (self->instant >= 0)
    {
      double x = vs_chart_x_for_time (&l, self->v0, self->v1, self->instant);
      gtk_snapshot_append_color (snapshot, &p->peak,
                                 &GRAPHENE_RECT_INIT (floor (x) - 1, top, 2, height));
    }
  if (self->hover_x >= l.chart.origin.x)
    gtk_snapshot_append_color (snapshot, &p->cursor,
                               &GRAPHENE_RECT_INIT (floor (self->hover_x), top, 1, height));
  gtk_snapshot_pop (snapshot);
}

static void
vs_memory_chart_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  VsMemoryChart *self = VS_MEMORY_CHART (widget);
  guint w;

  invalidate (self);
  w = vs_memory_chart_get_plot_width (self);
  if (w != self->plot_width)
    {
      self->plot_width = w;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PLOT_WIDTH]);
    }
}

static void
vs_memory_chart_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsMemoryChart *self = VS_MEMORY_CHART (object);

  switch (prop_id)
    {
    case PROP_PLOT_WIDTH:
      g_value_set_uint (value, self->plot_width);
      break;
    case PROP_VISIBLE_RANGE:
      g_value_take_boxed (value, vs_time_span_copy (&(VsTimeSpan){ self->v0, self->v1 }));
      break;
    case PROP_INSTANT:
      g_value_set_int64 (value, self->instant);
      break;
    case PROP_SELECTION:
      g_value_take_boxed (value, vs_time_span_copy (&(VsTimeSpan){ self->sel_a, self->sel_b }));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_memory_chart_set_property (GObject *object, guint prop_id, const GValue *value,
                              GParamSpec *pspec)
{
  VsMemoryChart *self = VS_MEMORY_CHART (object);
  const VsTimeSpan *s;

  switch (prop_id)
    {
    case PROP_VISIBLE_RANGE:
      s = g_value_get_boxed (value);
      if (s != NULL)
        apply_view (self, s->begin, s->end, FALSE);
      break;
    case PROP_INSTANT:
      vs_memory_chart_set_instant (self, g_value_get_int64 (value));
      break;
    case PROP_SELECTION:
      s = g_value_get_boxed (value);
      if (vs_time_span_is_empty (s))
        vs_memory_chart_set_selection (self, 0, 0);
      else
        vs_memory_chart_set_selection (self, s->begin, s->end);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_memory_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                         int *natural, int *minimum_baseline, int *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = 320;
  else
    {
      *minimum = 180;
      *natural = 260;
    }
}

/* Pixels either side of a failure marker's line that still point at it
 * (the marker's disc is 10 pixels wide). */
#define FAILURE_REACH 6

/* The NVTX range drawn at (x, y) in the range lanes, as tooltip markup;
 * NULL when there is none. */
static char *
describe_range (VsMemoryChart *self, const VsChartLayout *l, double x, double y)
{
  const graphene_rect_t *r = &l->ranges;
  const VsChartRange *hit = NULL;
  gint64 t, end;
  guint lane;
  g_autofree char *name = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *d = NULL;

  if (r->size.height <= 0 || y < r->origin.y || y >= r->origin.y + r->size.height || x < r->origin.x
      || x >= r->origin.x + r->size.width)
    return NULL;
  lane = (guint)((y - r->origin.y) / VS_CHART_LANE_HEIGHT);
  t = vs_chart_time_for_x (l, self->v0, self->v1, x);
  for (guint i = 0; i < self->data->ranges->len; i++)
    {
      const VsChartRange *g = &g_array_index (self->data->ranges, VsChartRange, i);
      gint64 e = g->end_ns < 0 ? self->data->trace_end_ns : g->end_ns;

      /* Ranges come by start: the last one that covers t is on top. */
      if (g->depth == lane && g->start_ns <= t && t < MAX (e, g->start_ns + 1))
        hit = g;
    }
  if (hit == NULL)
    return NULL;
  end = hit->end_ns < 0 ? self->data->trace_end_ns : hit->end_ns;
  name = g_markup_escape_text (hit->name != NULL ? hit->name : _("(unnamed)"), -1);
  a = vs_format_time (hit->start_ns);
  b = vs_format_time (end);
  d = vs_format_duration (end - hit->start_ns);
  if (hit->end_ns < 0)
    return g_strdup_printf (_("<b>%s</b>\nNVTX range from %s, still open at the end of "
                              "the trace (%s so far)\nnesting level %u"),
                            name, a, d, hit->depth + 1);
  return g_strdup_printf (_("<b>%s</b>\nNVTX range from %s to %s · %s\nnesting level %u"), name, a,
                          b, d, hit->depth + 1);
}

/* The failed allocation whose marker is at (x, y), as tooltip markup:
 * what failed, its size, when, the state of the allocator then and why
 * it failed; NULL when no marker is there. */
static char *
describe_failure (VsMemoryChart *self, const VsChartLayout *l, double x, double y)
{
  const graphene_rect_t *c = &l->chart;
  /* Around the disc (and its label's row) the reach is wider than on the
   * dashed line below it. */
  double reach = y < c->origin.y + 16 ? FAILURE_REACH : 2.5;
  GPtrArray *ooms;
  const VsOom *best = NULL;
  guint best_i = 0, n_near = 0;
  double best_dx = G_MAXDOUBLE;
  GString *text;

  if (self->document == NULL || y < c->origin.y - 2 || y >= c->origin.y + c->size.height)
    return NULL;
  ooms = vs_document_get_ooms (self->document);
  for (guint i = 0; i < ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (ooms, i);
      double dx;

      if (o->device_id != self->device_id || o->time_ns < self->v0 || o->time_ns >= self->v1)
        continue;
      dx = fabs (floor (vs_chart_x_for_time (l, self->v0, self->v1, o->time_ns)) + 0.5 - x);
      if (dx > reach)
        continue;
      n_near++;
      if (dx < best_dx)
        {
          best = o;
          best_i = i;
          best_dx = dx;
        }
    }
  if (best == NULL)
    return NULL;
  text = g_string_new (NULL);
  {
    g_autofree char *title = vs_oom_title (best);
    g_autofree char *when = vs_oom_when (self->document, best);
    g_autofree char *state = vs_oom_state_text (&best->allocator);
    const char *evidence = NULL;
    VsOomCause cause = vs_document_get_oom_cause (self->document, best_i, &evidence);
    g_autofree char *why
        = g_strdup_printf ("%s: %s", vs_oom_cause_title (cause), evidence != NULL ? evidence : "");
    const char *stack = vs_document_get_oom_stack (self->document, best_i);
    const char *sep = strstr (stack, VS_STACK_SEPARATOR);
    g_autofree char *frame = sep ? g_strndup (stack, sep - stack) : g_strdup (stack);
    g_autofree char *e_title = g_markup_escape_text (title, -1);
    g_autofree char *e_when = g_markup_escape_text (when, -1);
    g_autofree char *e_state = g_markup_escape_text (state, -1);
    g_autofree char *e_why = g_markup_escape_text (why, -1);
    g_autofree char *e_frame = g_markup_escape_text (frame, -1);

    g_string_append_printf (text, "<b>%s</b>\n%s\n%s %s\n%s", e_title, e_when,
                            best->allocator_id == 0 ? _("Device memory of the process:")
                                                    : _("The allocator that failed:"),
                            e_state, e_why);
    if (*frame != '\0')
      g_string_append_printf (text, _("\nRequested from %s"), e_frame);
  }
  if (n_near > 1)
    g_string_append_printf (text,
                            ngettext ("\n<i>%u more failed allocation here: zoom in to tell "
                                      "them apart</i>",
                                      "\n<i>%u more failed allocations here: zoom in to tell "
                                      "them apart</i>",
                                      n_near - 1),
                            n_near - 1);
  return g_string_free (text, FALSE);
}

/* See vs-memory-chart.h. */
char *
vs_memory_chart_describe (VsMemoryChart *self, double x, double y)
{
  VsChartLayout l;
  char *text;

  g_return_val_if_fail (VS_IS_MEMORY_CHART (self), NULL);
  if (self->data == NULL)
    return NULL;
  get_layout (self, &l);
  text = describe_range (self, &l, x, y);
  if (text == NULL)
    text = describe_failure (self, &l, x, y);
  return text;
}

/* Tooltip: the NVTX range or the failed allocation under the pointer, or
 * else the exact values of the pixel column under it. */
/* lo bytes, or "lo – hi" when they differ. */
static char *
format_bytes_range (gint64 lo, gint64 hi)
{
  g_autofree char *l = NULL;
  g_autofree char *h = NULL;

  if (lo == hi)
    return vs_format_bytes (hi);
  l = vs_format_bytes (lo);
  h = vs_format_bytes (hi);
  return g_strdup_printf ("%s – %s", l, h);
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer user_data)
{
  VsMemoryChart *self = VS_MEMORY_CHART (widget);
  VsChartLayout l;
  VsChartBucket b;
  gint64 a, e;
  g_autofree char *t = NULL;
  g_autofree char *res = NULL;
  g_autofree char *alloc = NULL;
  g_autofree char *frag = NULL;
  g_autofree char *text = NULL;

  if (self->data == NULL)
    return FALSE;
  text = vs_memory_chart_describe (self, x + 0.5, y + 0.5);
  if (text != NULL)
    {
      gtk_tooltip_set_markup (tooltip, text);
      return TRUE;
    }
  get_layout (self, &l);
  if (x < l.chart.origin.x || x >= l.chart.origin.x + l.chart.size.width)
    return FALSE;
  a = vs_chart_time_for_x (&l, self->v0, self->v1, floor (x));
  e = vs_chart_time_for_x (&l, self->v0, self->v1, floor (x) + 1);
  t = vs_format_time (a);
  if (!vs_chart_data_span (self->data, a, MAX (e, a + 1), &b))
    {
      text = g_strdup_printf ("%s\nno memory recorded yet", t);
      gtk_tooltip_set_text (tooltip, text);
      return TRUE;
    }
  alloc = format_bytes_range (b.min_allocated, b.max_allocated);
  res = format_bytes_range (b.min_reserved, b.max_reserved);
  frag = vs_format_bytes (b.last_reserved - b.last_allocated);
  text = g_strdup_printf ("<b>%s</b>\nallocated\t%s\nreserved\t%s\n"
                          "cached, free\t%s",
                          t, alloc, res, frag);
  if (b.has_whatif && self->data->whatif_label != NULL)
    {
      /* the replayed line's value: "reserved with SETTING  1.2 GiB" */
      g_autofree char *label = g_markup_escape_text (self->data->whatif_label, -1);
      g_autofree char *w = vs_format_bytes (b.max_whatif);
      g_autofree char *more = g_strdup_printf ("%s\n%s\t%s", text, label, w);
      g_free (text);
      text = g_steal_pointer (&more);
    }
  if (self->data->limit_label != NULL)
    {
      /* the line the allocator cannot go past: "limit 6.00 GiB (memory
       * fraction 0.0758)" */
      g_autofree char *label = g_markup_escape_text (self->data->limit_label, -1);
      g_autofree char *more = g_strdup_printf ("%s\n%s", text, label);
      g_free (text);
      text = g_steal_pointer (&more);
    }
  gtk_tooltip_set_markup (tooltip, text);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *c, double x, double y, VsMemoryChart *self)
{
  self->hover_x = x;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *c, VsMemoryChart *self)
{
  self->hover_x = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, VsMemoryChart *self)
{
  VsChartLayout l;
  double x = self->hover_x;

  get_layout (self, &l);
  if (x < l.chart.origin.x)
    x = l.chart.origin.x + l.chart.size.width / 2;
  if (dx != 0)
    {
      gint64 shift = (gint64)(dx * 40 / l.chart.size.width * (double)(self->v1 - self->v0));
      apply_view (self, self->v0 + shift, self->v1 + shift, TRUE);
    }
  if (dy != 0)
    zoom_at (self, vs_chart_time_for_x (&l, self->v0, self->v1, x), pow (1.2, -dy));
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, VsMemoryChart *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (g));
  self->drag_v0 = self->v0;
  self->drag_v1 = self->v1;
  self->drag_x = x;
  self->selecting = (mods & GDK_SHIFT_MASK) != 0;
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, VsMemoryChart *self)
{
  VsChartLayout l;

  get_layout (self, &l);
  if (self->selecting)
    {
      gint64 a = vs_chart_time_for_x (&l, self->v0, self->v1, self->drag_x);
      gint64 b = vs_chart_time_for_x (&l, self->v0, self->v1, self->drag_x + dx);
      vs_memory_chart_set_selection (self, MIN (a, b), MAX (a, b));
    }
  else
    {
      gint64 shift = (gint64)(-dx / l.chart.size.width * (double)(self->drag_v1 - self->drag_v0));
      apply_view (self, self->drag_v0 + shift, self->drag_v1 + shift, TRUE);
    }
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, VsMemoryChart *self)
{
  VsChartLayout l;

  get_layout (self, &l);
  if (fabs (dx) < 3 && fabs (dy) < 3)
    {
      if (self->drag_x >= l.chart.origin.x)
        {
          gint64 t = vs_chart_time_for_x (&l, self->v0, self->v1, self->drag_x);
          g_signal_emit (self, signals[INSTANT_SELECTED], 0, t);
        }
      return;
    }
  if (self->selecting && self->sel_b > self->sel_a)
    g_signal_emit (self, signals[RANGE_SELECTED], 0, self->sel_a, self->sel_b);
}

static void
on_pinch_begin (GtkGesture *g, GdkEventSequence *seq, VsMemoryChart *self)
{
  self->pinch_span = (double)(self->v1 - self->v0);
  self->drag_v0 = self->v0;
  self->drag_v1 = self->v1;
}

static void
on_pinch_scale (GtkGestureZoom *g, double scale, VsMemoryChart *self)
{
  VsChartLayout l;
  double cx, cy;
  gint64 t;

  if (scale <= 0)
    return;
  get_layout (self, &l);
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &cx, &cy))
    cx = l.chart.origin.x + l.chart.size.width / 2;
  t = vs_chart_time_for_x (&l, self->drag_v0, self->drag_v1, cx);
  /* Zoom from the span at the pinch's start, not cumulatively. */
  self->v0 = self->drag_v0;
  self->v1 = self->drag_v1;
  zoom_at (self, t, scale);
}

static void
on_dark_changed (AdwStyleManager *sm, GParamSpec *pspec, VsMemoryChart *self)
{
  invalidate (self);
}

static void
vs_memory_chart_dispose (GObject *object)
{
  VsMemoryChart *self = VS_MEMORY_CHART (object);

  g_signal_handlers_disconnect_by_data (adw_style_manager_get_default (), self);
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  g_clear_pointer (&self->data, vs_chart_data_unref);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (vs_memory_chart_parent_class)->dispose (object);
}

static void
vs_memory_chart_class_init (VsMemoryChartClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = vs_memory_chart_dispose;
  object_class->get_property = vs_memory_chart_get_property;
  object_class->set_property = vs_memory_chart_set_property;
  widget_class->snapshot = vs_memory_chart_snapshot;
  widget_class->size_allocate = vs_memory_chart_size_allocate;
  widget_class->measure = vs_memory_chart_measure;

  /* The user panned or zoomed: (t0, t1) is the new visible range. */
  signals[VIEW_CHANGED]
      = g_signal_new ("view-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);
  /* The user clicked an instant. */
  signals[INSTANT_SELECTED]
      = g_signal_new ("instant-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  /* The user selected a range [a, b). */
  signals[RANGE_SELECTED]
      = g_signal_new ("range-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);
  /* Width of the plotting area in pixels; changes when the widget is
   * resized. */
  properties[PROP_PLOT_WIDTH]
      = g_param_spec_uint ("plot-width", NULL, NULL, 0, G_MAXUINT, 0,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* The visible range [begin, end) (VsTimeSpan), kept inside the limits:
   * set from outside, or changed by the user's pans and zooms.  Bound
   * both ways to the session's. */
  properties[PROP_VISIBLE_RANGE]
      = g_param_spec_boxed ("visible-range", NULL, NULL, VS_TYPE_TIME_SPAN,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* The selected instant drawn as a vertical line (< 0: none). */
  properties[PROP_INSTANT]
      = g_param_spec_int64 ("instant", NULL, NULL, G_MININT64, G_MAXINT64, -1,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* The selected range drawn as a band (VsTimeSpan; empty: none). */
  properties[PROP_SELECTION]
      = g_param_spec_boxed ("selection", NULL, NULL, VS_TYPE_TIME_SPAN,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_css_name (widget_class, "memorychart");
}

static void
vs_memory_chart_init (VsMemoryChart *self)
{
  GtkEventController *motion, *scroll;
  GtkGesture *drag, *pinch;

  self->instant = -1;
  self->hover_x = -1;
  self->v1 = 1;
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (on_pinch_begin), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (on_pinch_scale), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (pinch));

  g_signal_connect (adw_style_manager_get_default (), "notify::dark", G_CALLBACK (on_dark_changed),
                    self);
}

/* See vs-memory-chart.h. */
GtkWidget *
vs_memory_chart_new (void)
{
  return g_object_new (VS_TYPE_MEMORY_CHART, NULL);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_set_data (VsMemoryChart *self, VsChartData *data)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));

  if (data != NULL)
    vs_chart_data_ref (data);
  g_clear_pointer (&self->data, vs_chart_data_unref);
  self->data = data;
  invalidate (self);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_set_document (VsMemoryChart *self, VsDocument *document, gint64 device_id)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  g_return_if_fail (document == NULL || VS_IS_DOCUMENT (document));
  g_set_object (&self->document, document);
  self->device_id = device_id;
}

/* See vs-memory-chart.h. */
VsChartData *
vs_memory_chart_get_data (VsMemoryChart *self)
{
  g_return_val_if_fail (VS_IS_MEMORY_CHART (self), NULL);
  return self->data;
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_set_limits (VsMemoryChart *self, gint64 duration_ns)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  self->limit = MAX (duration_ns, MIN_SPAN_NS);
  apply_view (self, self->v0, self->v1, FALSE);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_get_view (VsMemoryChart *self, gint64 *t0, gint64 *t1)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  *t0 = self->v0;
  *t1 = self->v1;
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_zoom (VsMemoryChart *self, double factor)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  zoom_at (self, self->v0 + (self->v1 - self->v0) / 2, factor);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_pan (VsMemoryChart *self, double fraction)
{
  gint64 shift;

  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  shift = (gint64)(fraction * (double)(self->v1 - self->v0));
  apply_view (self, self->v0 + shift, self->v1 + shift, TRUE);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_set_instant (VsMemoryChart *self, gint64 t)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  if (t == self->instant)
    return;
  self->instant = t;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INSTANT]);
}

/* See vs-memory-chart.h. */
void
vs_memory_chart_set_selection (VsMemoryChart *self, gint64 a, gint64 b)
{
  g_return_if_fail (VS_IS_MEMORY_CHART (self));
  if (a == self->sel_a && b == self->sel_b)
    return;
  self->sel_a = a;
  self->sel_b = b;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION]);
}

/* See vs-memory-chart.h. */
guint
vs_memory_chart_get_plot_width (VsMemoryChart *self)
{
  VsChartLayout l;

  g_return_val_if_fail (VS_IS_MEMORY_CHART (self), 0);
  get_layout (self, &l);
  return (guint)MAX (1, l.chart.size.width);
}

/* See vs-memory-chart.h. */
gint64
vs_memory_chart_get_last_draw_us (VsMemoryChart *self)
{
  g_return_val_if_fail (VS_IS_MEMORY_CHART (self), 0);
  return self->last_draw_us;
}
