/* SPDX-License-Identifier: MIT */
/* vs-session.c — the document, visible range, selection and selected
 * instant shared by the window and its panes, and the query that keeps
 * the instant's state current. */
#include "vs-session.h"

#include "vs-query-slot.h"
#include "vs-time-format.h"

struct _VsSession
{
  GObject parent_instance;

  VsDocument *document;
  VsTimeSpan visible_range;
  VsTimeSpan selection;
  VsInstant *instant;

  /* What is selected: the instant t (< 0: the peak) on device. */
  gint64 device_id;
  gint64 t;

  /* generation changes with every document, so late results for an
   * earlier one are dropped. */
  GCancellable *cancellable;
  guint generation;
  VsQuerySlot query;
};

enum
{
  PROP_0,
  PROP_DOCUMENT,
  PROP_VISIBLE_RANGE,
  PROP_SELECTION,
  PROP_INSTANT,
  PROP_LOADING,
  PROP_SELECTED_TIME,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

enum
{
  INSTANT_FAILED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (VsSession, vs_session, G_TYPE_OBJECT)

static void request_instant (VsSession *self);

typedef struct
{
  VsSession *self;
  guint generation;
} InstantRequest;

static void
on_instant_done (GObject *source, GAsyncResult *result, gpointer data)
{
  InstantRequest *req = data;
  VsSession *self = req->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsInstant) in
      = vs_document_query_instant_finish (VS_DOCUMENT (source), result, &error);

  if (req->generation == self->generation)
    {
      gboolean again = vs_query_slot_end (&self->query, in != NULL);

      if (in != NULL)
        {
          g_clear_pointer (&self->instant, vs_instant_unref);
          self->instant = g_steal_pointer (&in);
          g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_signal_emit (self, signals[INSTANT_FAILED], 0, error->message);
      if (again && self->document != NULL)
        request_instant (self);
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
    }
  g_object_unref (self);
  g_free (req);
}

/* Asks for the state at the selection; coalesced by the query slot. */
static void
request_instant (VsSession *self)
{
  InstantRequest *req;
  gint64 a = -1, b = -1;

  if (self->document == NULL || self->device_id < 0)
    return;
  if (!vs_query_slot_begin (&self->query))
    return;
  if (!vs_time_span_is_empty (&self->selection))
    {
      a = self->selection.begin;
      b = self->selection.end;
    }
  req = g_new0 (InstantRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  vs_document_query_instant_async (self->document, self->device_id, self->t, a, b,
                                   self->cancellable, on_instant_done, req);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
}

static void
set_selection (VsSession *self, gint64 a, gint64 b)
{
  VsTimeSpan s = { a, b };

  if (vs_time_span_equal (&s, &self->selection))
    return;
  self->selection = s;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTION]);
}

/* See vs-session.h. */
void
vs_session_select_instant (VsSession *self, gint64 device_id, gint64 t)
{
  g_return_if_fail (VS_IS_SESSION (self));
  self->device_id = device_id;
  self->t = t;
  set_selection (self, 0, 0);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTED_TIME]);
  request_instant (self);
}

/* See vs-session.h. */
void
vs_session_select_range (VsSession *self, gint64 device_id, gint64 a, gint64 b)
{
  g_return_if_fail (VS_IS_SESSION (self));
  g_return_if_fail (b > a);
  self->device_id = device_id;
  self->t = b;
  set_selection (self, a, b);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTED_TIME]);
  request_instant (self);
}

/* See vs-session.h. */
void
vs_session_reload (VsSession *self)
{
  g_return_if_fail (VS_IS_SESSION (self));
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DOCUMENT]);
  request_instant (self);
}

/* See vs-session.h. */
void
vs_session_set_document (VsSession *self, VsDocument *document)
{
  GPtrArray *devices;

  g_return_if_fail (VS_IS_SESSION (self));
  g_return_if_fail (document == NULL || VS_IS_DOCUMENT (document));

  if (document == self->document)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++;
  vs_query_slot_reset (&self->query);
  g_set_object (&self->document, document);
  if (self->instant != NULL)
    {
      g_clear_pointer (&self->instant, vs_instant_unref);
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
    }
  self->device_id = -1;
  self->t = -1;
  set_selection (self, 0, 0);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DOCUMENT]);
  if (document == NULL)
    {
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
      return;
    }
  {
    gint64 from, to;

    vs_document_get_first_view (document, &from, &to);
    vs_session_set_visible_range (self, from, to);
  }
  devices = vs_document_get_devices (document);
  if (devices->len > 0)
    vs_session_select_instant (self, ((VsDocumentDevice *)g_ptr_array_index (devices, 0))->id, -1);
}

/* See vs-session.h. */
VsDocument *
vs_session_get_document (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), NULL);
  return self->document;
}

/* See vs-session.h. */
void
vs_session_set_visible_range (VsSession *self, gint64 begin, gint64 end)
{
  VsTimeSpan s = { begin, end };

  g_return_if_fail (VS_IS_SESSION (self));
  /* Inside the document, as the timelines bound to it keep their range. */
  if (self->document != NULL)
    vs_time_span_clamp (
        &s, MAX (MAX (1, vs_document_get_duration (self->document)), vs_time_format_min_span ()),
        vs_time_format_min_span ());
  if (s.begin == self->visible_range.begin && s.end == self->visible_range.end)
    return;
  self->visible_range = s;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_VISIBLE_RANGE]);
}

/* See vs-session.h. */
const VsTimeSpan *
vs_session_get_visible_range (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), NULL);
  return &self->visible_range;
}

/* See vs-session.h. */
const VsTimeSpan *
vs_session_get_selection (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), NULL);
  return &self->selection;
}

/* See vs-session.h. */
VsInstant *
vs_session_get_instant (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), NULL);
  return self->instant;
}

/* See vs-session.h. */
gint64
vs_session_get_device (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), -1);
  return self->device_id;
}

/* See vs-session.h. */
gint64
vs_session_get_selected_time (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), -1);
  return self->t;
}

/* See vs-session.h. */
gboolean
vs_session_get_loading (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), FALSE);
  return self->query.in_flight || self->query.pending;
}

/* See vs-session.h. */
gboolean
vs_session_is_settled (VsSession *self)
{
  g_return_val_if_fail (VS_IS_SESSION (self), FALSE);
  return self->document != NULL && vs_query_slot_is_idle (&self->query);
}

static void
vs_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsSession *self = VS_SESSION (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      g_value_set_object (value, self->document);
      break;
    case PROP_VISIBLE_RANGE:
      g_value_set_boxed (value, &self->visible_range);
      break;
    case PROP_SELECTION:
      g_value_set_boxed (value, &self->selection);
      break;
    case PROP_INSTANT:
      g_value_set_boxed (value, self->instant);
      break;
    case PROP_LOADING:
      g_value_set_boolean (value, vs_session_get_loading (self));
      break;
    case PROP_SELECTED_TIME:
      g_value_set_int64 (value, self->t);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_session_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  VsSession *self = VS_SESSION (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      vs_session_set_document (self, g_value_get_object (value));
      break;
    case PROP_VISIBLE_RANGE:
      {
        const VsTimeSpan *s = g_value_get_boxed (value);
        if (s != NULL)
          vs_session_set_visible_range (self, s->begin, s->end);
      }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_session_dispose (GObject *object)
{
  VsSession *self = VS_SESSION (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->document);
  g_clear_pointer (&self->instant, vs_instant_unref);
  G_OBJECT_CLASS (vs_session_parent_class)->dispose (object);
}

static void
vs_session_class_init (VsSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->get_property = vs_session_get_property;
  object_class->set_property = vs_session_set_property;
  object_class->dispose = vs_session_dispose;

  props[PROP_DOCUMENT] = g_param_spec_object ("document", NULL, NULL, VS_TYPE_DOCUMENT, rw);
  props[PROP_VISIBLE_RANGE]
      = g_param_spec_boxed ("visible-range", NULL, NULL, VS_TYPE_TIME_SPAN, rw);
  props[PROP_SELECTION] = g_param_spec_boxed ("selection", NULL, NULL, VS_TYPE_TIME_SPAN, ro);
  props[PROP_INSTANT] = g_param_spec_boxed ("instant", NULL, NULL, VS_TYPE_INSTANT, ro);
  props[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, FALSE, ro);
  /* Notified each time an instant or a span is selected, even the one
   * already selected. */
  props[PROP_SELECTED_TIME]
      = g_param_spec_int64 ("selected-time", NULL, NULL, G_MININT64, G_MAXINT64, -1, ro);
  g_object_class_install_properties (object_class, N_PROPS, props);

  signals[INSTANT_FAILED]
      = g_signal_new ("instant-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
vs_session_init (VsSession *self)
{
  self->cancellable = g_cancellable_new ();
  self->device_id = -1;
  self->t = -1;
}

/* See vs-session.h. */
VsSession *
vs_session_new (void)
{
  return g_object_new (VS_TYPE_SESSION, NULL);
}
