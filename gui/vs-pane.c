/* SPDX-License-Identifier: MIT */
/* vs-pane.c — what every pane has: the session and instant, the copy
 * actions with their shortcuts and menu, and the search entry point. */
#include "vs-pane.h"

#include <glib/gi18n.h>

typedef struct
{
  VsSession *session;
  VsInstant *instant;
  GtkWidget *menu;     /* the copy menu, a child of the pane once made */
  GtkWidget *menu_for; /* the widget it was opened on (weak) */
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

/* See vs-pane.h. */
char *
vs_pane_get_copy_text (VsPane *self, VsPaneCopy what)
{
  g_return_val_if_fail (VS_IS_PANE (self), NULL);
  if (VS_PANE_GET_CLASS (self)->copy == NULL)
    return NULL;
  return VS_PANE_GET_CLASS (self)->copy (self, what);
}

/* See vs-pane.h. */
gboolean
vs_pane_start_search (VsPane *self)
{
  g_return_val_if_fail (VS_IS_PANE (self), FALSE);
  if (VS_PANE_GET_CLASS (self)->start_search == NULL)
    return FALSE;
  VS_PANE_GET_CLASS (self)->start_search (self);
  return TRUE;
}

static void
copy_action (GtkWidget *widget, const char *name, GVariant *param)
{
  VsPaneCopy what = g_str_equal (name, "pane.copy-frame")   ? VS_PANE_COPY_FRAME
                    : g_str_equal (name, "pane.copy-stack") ? VS_PANE_COPY_STACK
                                                            : VS_PANE_COPY_ROW;
  g_autofree char *text = vs_pane_get_copy_text (VS_PANE (widget), what);

  if (text != NULL)
    gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), text);
}

/* The menu closed: the keyboard focus back where the menu was opened, so
 * that Ctrl+C and the arrows go on working there. */
static gboolean
restore_focus (gpointer data)
{
  VsPane *self = data;
  VsPanePrivate *priv = vs_pane_get_instance_private (self);

  if (priv->menu_for != NULL && gtk_widget_get_mapped (priv->menu_for)
      && gtk_widget_get_focusable (priv->menu_for))
    gtk_widget_grab_focus (priv->menu_for);
  return G_SOURCE_REMOVE;
}

/* Once the click that closed it is over: moving the focus while a button
 * is down confuses GTK's accounting of pressed widgets. */
static void
on_menu_closed (GtkPopover *menu, VsPane *self)
{
  g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, restore_focus, g_object_ref (self), g_object_unref);
}

/* See vs-pane.h. */
void
vs_pane_popup_menu (VsPane *self, GtkWidget *widget, double x, double y)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (self);
  graphene_point_t p;

  g_return_if_fail (VS_IS_PANE (self));
  g_return_if_fail (GTK_IS_WIDGET (widget));
  if (priv->menu == NULL)
    {
      g_autoptr (GMenu) menu = g_menu_new ();

      g_menu_append (menu, _("Copy _Frame"), "pane.copy-frame");
      g_menu_append (menu, _("Copy _Stack"), "pane.copy-stack");
      g_menu_append (menu, _("Copy _Row"), "pane.copy-row");
      priv->menu = gtk_popover_menu_new_from_model (G_MENU_MODEL (menu));
      gtk_popover_set_has_arrow (GTK_POPOVER (priv->menu), FALSE);
      gtk_widget_set_halign (priv->menu, GTK_ALIGN_START);
      gtk_widget_set_parent (priv->menu, GTK_WIDGET (self));
      g_signal_connect (priv->menu, "closed", G_CALLBACK (on_menu_closed), self);
    }
  g_set_weak_pointer (&priv->menu_for, widget);
  if (!gtk_widget_compute_point (widget, GTK_WIDGET (self), &GRAPHENE_POINT_INIT (x, y), &p))
    p = GRAPHENE_POINT_INIT (x, y);
  gtk_popover_set_pointing_to (GTK_POPOVER (priv->menu), &(GdkRectangle){ p.x, p.y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (priv->menu));
}

/* Menu or Shift+F10: the copy menu at the focused row (or the pane's
 * middle when the focus is elsewhere). */
static void
menu_action (GtkWidget *widget, const char *name, GVariant *param)
{
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *focus = root ? gtk_root_get_focus (root) : NULL;

  if (focus != NULL && gtk_widget_is_ancestor (focus, widget))
    vs_pane_popup_menu (VS_PANE (widget), focus, gtk_widget_get_width (focus) / 2.0,
                        gtk_widget_get_height (focus) / 2.0);
  else
    vs_pane_popup_menu (VS_PANE (widget), widget, gtk_widget_get_width (widget) / 2.0,
                        gtk_widget_get_height (widget) / 2.0);
}

/* See vs-pane.h. */
void
vs_pane_popup_menu_on_row (VsPane *self, GtkWidget *view, double x, double y)
{
  GtkWidget *picked;

  g_return_if_fail (VS_IS_PANE (self));
  picked = gtk_widget_pick (view, x, y, GTK_PICK_DEFAULT);
  /* The row's own action, as a left click runs it. */
  if (picked != NULL)
    gtk_widget_activate_action (picked, "listitem.select", "(bb)", FALSE, FALSE);
  vs_pane_popup_menu (self, view, x, y);
}

static void
vs_pane_dispose (GObject *object)
{
  VsPanePrivate *priv = vs_pane_get_instance_private (VS_PANE (object));

  g_clear_weak_pointer (&priv->menu_for);
  g_clear_pointer (&priv->menu, gtk_widget_unparent);
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

  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "pane.copy-frame", NULL, copy_action);
  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "pane.copy-stack", NULL, copy_action);
  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "pane.copy-row", NULL, copy_action);
  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "pane.menu", NULL, menu_action);
  gtk_widget_class_add_binding_action (GTK_WIDGET_CLASS (klass), GDK_KEY_Menu, 0, "pane.menu",
                                       NULL);
  gtk_widget_class_add_binding_action (GTK_WIDGET_CLASS (klass), GDK_KEY_F10, GDK_SHIFT_MASK,
                                       "pane.menu", NULL);
}

static void
vs_pane_init (VsPane *self)
{
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
}
