/* vs-pane.c — the session and instant every list pane has. */
#include "vs-pane.h"

typedef struct
{
  VsSession *session;
  VsInstant *instant;
} VsPanePrivate;

enum
{
  PROP_0,
  PROP_SESSION,
  PROP_INSTANT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (VsPane, vs_pane, GTK_TYPE_BOX)

/* See vs-pane.h. */
VsSession *
vs_pane_get_session (VsPane *self)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (self);

  g_return_val_if_fail (VS_IS_PANE (self), NULL);
  return priv->session;
}

/* See vs-pane.h. */
void
vs_pane_set_session (VsPane *self, VsSession *session)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (self);

  g_return_if_fail (VS_IS_PANE (self));
  g_return_if_fail (session == NULL || VS_IS_SESSION (session));
  if (g_set_object (&priv->session, session))
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SESSION]);
}

/* See vs-pane.h. */
VsInstant *
vs_pane_get_instant (VsPane *self)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (self);

  g_return_val_if_fail (VS_IS_PANE (self), NULL);
  return priv->instant;
}

/* See vs-pane.h. */
void
vs_pane_set_instant (VsPane *self, VsInstant *instant)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (self);

  g_return_if_fail (VS_IS_PANE (self));
  if (instant == priv->instant)
    return;
  if (instant != NULL)
    vs_instant_ref (instant);
  g_clear_pointer (&priv->instant, vs_instant_unref);
  priv->instant = instant;
  if (VS_PANE_GET_CLASS (self)->instant_changed != NULL)
    VS_PANE_GET_CLASS (self)->instant_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
}

static void
vs_pane_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsPane *self = VS_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, vs_pane_get_session (self));
      break;
    case PROP_INSTANT:
      g_value_set_boxed (value, vs_pane_get_instant (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_pane_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  VsPane *self = VS_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      vs_pane_set_session (self, g_value_get_object (value));
      break;
    case PROP_INSTANT:
      vs_pane_set_instant (self, g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_pane_dispose (GObject *object)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (VS_PANE (object));

  g_clear_object (&priv->session);
  g_clear_pointer (&priv->instant, vs_instant_unref);
  G_OBJECT_CLASS (vs_pane_parent_class)->dispose (object);
}

static void
vs_pane_class_init (VsPaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = vs_pane_get_property;
  object_class->set_property = vs_pane_set_property;
  object_class->dispose = vs_pane_dispose;

  /* The session whose instant the pane shows (bound in the window's .ui). */
  props[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, VS_TYPE_SESSION, rw);
  /* The instant shown (bound to the session's in the pane's .ui). */
  props[PROP_INSTANT] = g_param_spec_boxed ("instant", NULL, NULL, VS_TYPE_INSTANT, rw);
  g_object_class_install_properties (object_class, N_PROPS, props);
  g_type_ensure (VS_TYPE_SESSION);
}

static void
vs_pane_init (VsPane *self)
{
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
}
