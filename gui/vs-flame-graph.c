/* SPDX-License-Identifier: MIT */
/* vs-flame-graph.c — the flame graph of live memory.
 *
 * Drawn with one colour node and at most one text layout per visible box;
 * boxes narrower than a pixel are skipped (their parent's width already
 * accounts for them), so drawing cost follows the screen, not the tree.
 */
#include "vs-flame-graph.h"

#include <string.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "vs-table.h"
#include "vs-tree-item.h"

#define ROW_HEIGHT 20

struct _VsFlameGraph
{
  GtkWidget parent_instance;

  VsInstant *instant;
  const VsTreeNode *focus; /* the node drawn full width */
  const VsTreeNode *hover;
  const VsTreeNode *selected;
  char *search; /* NULL: none */
  guint depth;
  gboolean user_only; /* only the user's own frames (the *_user trees) */
};

enum
{
  PROP_0,
  PROP_INSTANT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsFlameGraph, vs_flame_graph, GTK_TYPE_WIDGET)

static void
vs_flame_graph_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_INSTANT:
      g_value_set_boxed (value, VS_FLAME_GRAPH (object)->instant);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_flame_graph_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_INSTANT:
      vs_flame_graph_set_instant (VS_FLAME_GRAPH (object), g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The levels of the tree under n, n included.  MAX() evaluates its
 * arguments twice: the child's depth is taken once, or the walk doubles
 * at every level (an optimizer merging the two calls hid it). */
static guint
tree_depth (const VsTreeNode *n)
{
  guint d = 0;
  if (n->children != NULL)
    for (guint i = 0; i < n->children->len; i++)
      {
        guint child = tree_depth (g_ptr_array_index (n->children, i));

        d = MAX (d, child);
      }
  return d + 1;
}

/* The colour of a frame: warm hues picked by a hash of its text; the
 * user's own frames in blues. */
static void
frame_color (const char *label, gboolean user_code, gboolean dark, GdkRGBA *c)
{
  guint h = g_str_hash (label ? label : "");
  float t = (h % 1000) / 1000.f;

  if (user_code)
    {
      c->red = dark ? 0.20f + 0.15f * t : 0.45f + 0.20f * t;
      c->green = dark ? 0.42f + 0.20f * ((h >> 10) % 100) / 100.f
                      : 0.65f + 0.20f * ((h >> 10) % 100) / 100.f;
      c->blue = dark ? 0.80f : 0.98f;
      c->alpha = 1;
      return;
    }
  c->red = dark ? 0.80f + 0.15f * t : 0.96f;
  c->green = dark ? 0.38f + 0.30f * ((h >> 10) % 100) / 100.f
                  : 0.55f + 0.35f * ((h >> 10) % 100) / 100.f;
  c->blue = dark ? 0.20f : 0.30f * t + 0.15f;
  c->alpha = 1;
}

/* Calls fn for each box of the subtree of n drawn at (x, depth) with width
 * w; stops when fn returns TRUE and returns that node. */
typedef gboolean (*BoxFunc) (const VsTreeNode *n, double x, double w, guint depth, gpointer data);

static const VsTreeNode *
walk (const VsTreeNode *n, double x, double w, guint depth, BoxFunc fn, gpointer data)
{
  double cx = x;

  if (w < 1.0)
    return NULL;
  if (fn (n, x, w, depth, data))
    return n;
  if (n->children == NULL || n->total_bytes <= 0)
    return NULL;
  for (guint i = 0; i < n->children->len; i++)
    {
      const VsTreeNode *c = g_ptr_array_index (n->children, i);
      double cw = w * (double)c->total_bytes / (double)n->total_bytes;
      const VsTreeNode *hit = walk (c, cx, cw, depth + 1, fn, data);
      if (hit != NULL)
        return hit;
      cx += cw;
    }
  return NULL;
}

typedef struct
{
  VsFlameGraph *self;
  GtkSnapshot *snapshot;
  PangoLayout *layout;
  gboolean dark;
} DrawCtx;

static gboolean
draw_box (const VsTreeNode *n, double x, double w, guint depth, gpointer data)
{
  DrawCtx *c = data;
  GdkRGBA color;
  double y = depth * ROW_HEIGHT;
  const char *label = n->parent == NULL ? _("all live memory") : n->label;

  frame_color (label, n->user_code, c->dark, &color);
  if (n == c->self->hover)
    color.alpha = 0.75f;
  /* A search fades what it did not find. */
  if (c->self->search != NULL && !vs_tree_node_matches (n, c->self->search))
    color.alpha = 0.25f;
  if (n == c->self->selected && n != c->self->focus)
    {
      static const GdkRGBA outline = { 0.21f, 0.52f, 0.89f, 1 };
      const float wd[4] = { 2, 2, 2, 2 };
      const GdkRGBA oc[4] = { outline, outline, outline, outline };
      GskRoundedRect r;

      gsk_rounded_rect_init_from_rect (
          &r, &GRAPHENE_RECT_INIT (x + 0.5f, y + 1, MAX (1, w - 1), ROW_HEIGHT - 2), 0);
      gtk_snapshot_append_border (c->snapshot, &r, wd, oc);
    }
  gtk_snapshot_append_color (c->snapshot, &color,
                             &GRAPHENE_RECT_INIT (x + 0.5f, y + 1, MAX (1, w - 1), ROW_HEIGHT - 2));
  if (w > 36)
    {
      static const GdkRGBA ink = { 0.14f, 0.12f, 0.19f, 1 };
      g_autofree char *b = vs_format_bytes (n->total_bytes);
      /* Boxes are narrow: the file's name without its folders (the
       * tooltip has the whole frame). */
      const char *slash = strrchr (label, '/');
      const char *space = strchr (label, ' ');
      g_autofree char *text = g_strdup_printf (
          "%s  %s", slash != NULL && (space == NULL || slash < space) ? slash + 1 : label, b);
      pango_layout_set_text (c->layout, text, -1);
      pango_layout_set_width (c->layout, (int)((w - 8) * PANGO_SCALE));
      gtk_snapshot_save (c->snapshot);
      gtk_snapshot_translate (c->snapshot, &GRAPHENE_POINT_INIT (x + 4, y + 3));
      gtk_snapshot_append_layout (c->snapshot, c->layout, &ink);
      gtk_snapshot_restore (c->snapshot);
    }
  return FALSE;
}

static void
vs_flame_graph_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  VsFlameGraph *self = VS_FLAME_GRAPH (widget);
  DrawCtx c
      = { self, snapshot, NULL, adw_style_manager_get_dark (adw_style_manager_get_default ()) };
  PangoFontDescription *font;

  if (self->focus == NULL)
    return;
  c.layout = gtk_widget_create_pango_layout (widget, NULL);
  font = pango_font_description_from_string ("9");
  pango_layout_set_font_description (c.layout, font);
  pango_font_description_free (font);
  pango_layout_set_ellipsize (c.layout, PANGO_ELLIPSIZE_END);
  walk (self->focus, 0, gtk_widget_get_width (widget), 0, draw_box, &c);
  g_object_unref (c.layout);
}

static void
vs_flame_graph_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                        int *natural, int *minimum_baseline, int *natural_baseline)
{
  VsFlameGraph *self = VS_FLAME_GRAPH (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = 200;
  else
    *minimum = *natural = MAX (1, self->depth) * ROW_HEIGHT;
}

typedef struct
{
  double x, y;
} HitCtx;

static gboolean
hit_box (const VsTreeNode *n, double x, double w, guint depth, gpointer data)
{
  HitCtx *h = data;
  return h->y >= depth * ROW_HEIGHT && h->y < (depth + 1) * ROW_HEIGHT && h->x >= x && h->x < x + w;
}

static const VsTreeNode *
node_at (VsFlameGraph *self, double x, double y)
{
  HitCtx h = { x, y };
  if (self->focus == NULL)
    return NULL;
  return walk (self->focus, 0, gtk_widget_get_width (GTK_WIDGET (self)), 0, hit_box, &h);
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, VsFlameGraph *self)
{
  const VsTreeNode *n = node_at (self, x, y);
  if (n != self->hover)
    {
      self->hover = n;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_pressed (GtkGestureClick *g, int n_press, double x, double y, VsFlameGraph *self)
{
  const VsTreeNode *n = node_at (self, x, y);

  if (n == NULL || self->instant == NULL)
    return;
  /* The top row zooms out one level (to the whole tree from there). */
  if (n == self->focus)
    self->focus = n->parent ? n->parent : n;
  else
    self->focus = n;
  self->selected = self->focus;
  self->depth = tree_depth (self->focus);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean kb, GtkTooltip *tooltip, gpointer data)
{
  VsFlameGraph *self = VS_FLAME_GRAPH (widget);
  const VsTreeNode *n = node_at (self, x, y);
  const VsTreeNode *root;
  g_autofree char *b = NULL;
  g_autofree char *text = NULL;
  g_autofree char *esc = NULL;

  if (n == NULL)
    return FALSE;
  for (root = n; root->parent; root = root->parent)
    ;
  b = vs_format_bytes (n->total_bytes);
  esc = g_markup_escape_text (n->parent ? n->label : _("all live memory"), -1);
  text = g_strdup_printf (
      ngettext ("<b>%s</b>\n%s · %.1f %% · %lld allocation",
                "<b>%s</b>\n%s · %.1f %% · %lld allocations", (gulong)n->total_count),
      esc, b, root->total_bytes > 0 ? 100.0 * n->total_bytes / root->total_bytes : 0,
      (long long)n->total_count);
  gtk_tooltip_set_markup (tooltip, text);
  return TRUE;
}

static void
vs_flame_graph_dispose (GObject *object)
{
  VsFlameGraph *self = VS_FLAME_GRAPH (object);
  g_clear_pointer (&self->instant, vs_instant_unref);
  g_clear_pointer (&self->search, g_free);
  G_OBJECT_CLASS (vs_flame_graph_parent_class)->dispose (object);
}

static void
vs_flame_graph_class_init (VsFlameGraphClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = vs_flame_graph_dispose;
  object_class->get_property = vs_flame_graph_get_property;
  object_class->set_property = vs_flame_graph_set_property;
  /* The instant drawn (NULL: none); the window binds the session's. */
  props[PROP_INSTANT]
      = g_param_spec_boxed ("instant", NULL, NULL, VS_TYPE_INSTANT,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  widget_class->snapshot = vs_flame_graph_snapshot;
  widget_class->measure = vs_flame_graph_measure;
  gtk_widget_class_set_css_name (widget_class, "flamegraph");
}

static void
vs_flame_graph_init (VsFlameGraph *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkGesture *click = gtk_gesture_click_new ();

  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);
}

/* See vs-flame-graph.h. */
void
vs_flame_graph_set_instant (VsFlameGraph *self, VsInstant *instant)
{
  g_return_if_fail (VS_IS_FLAME_GRAPH (self));

  if (instant == self->instant)
    return;
  if (instant != NULL)
    vs_instant_ref (instant);
  g_clear_pointer (&self->instant, vs_instant_unref);
  self->instant = instant;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
  self->focus = vs_flame_graph_get_root (self);
  self->selected = self->focus;
  self->hover = NULL;
  self->depth = self->focus ? tree_depth (self->focus) : 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

/* See vs-flame-graph.h. */
void
vs_flame_graph_set_search (VsFlameGraph *self, const char *search)
{
  g_return_if_fail (VS_IS_FLAME_GRAPH (self));
  g_free (self->search);
  self->search = search != NULL && *search != '\0' ? g_strdup (search) : NULL;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gint64
matched_bytes (const VsTreeNode *n, const char *needle)
{
  gint64 sum = 0;

  if (vs_tree_node_matches (n, needle))
    return n->total_bytes;
  for (guint i = 0; n->children != NULL && i < n->children->len; i++)
    sum += matched_bytes (g_ptr_array_index (n->children, i), needle);
  return sum;
}

/* See vs-flame-graph.h. */
gint64
vs_flame_graph_get_search_bytes (VsFlameGraph *self)
{
  g_return_val_if_fail (VS_IS_FLAME_GRAPH (self), 0);
  if (self->search == NULL || self->instant == NULL)
    return 0;
  return matched_bytes (vs_flame_graph_get_root (self), self->search);
}

/* See vs-flame-graph.h. */
const VsTreeNode *
vs_flame_graph_get_selected (VsFlameGraph *self)
{
  g_return_val_if_fail (VS_IS_FLAME_GRAPH (self), NULL);
  return self->selected;
}

/* See vs-flame-graph.h. */
gboolean
vs_flame_graph_select_at (VsFlameGraph *self, double x, double y)
{
  const VsTreeNode *n;

  g_return_val_if_fail (VS_IS_FLAME_GRAPH (self), FALSE);
  n = node_at (self, x, y);
  if (n == NULL)
    return FALSE;
  self->selected = n;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return TRUE;
}

/* See vs-flame-graph.h. */
const VsTreeNode *
vs_flame_graph_get_root (VsFlameGraph *self)
{
  g_return_val_if_fail (VS_IS_FLAME_GRAPH (self), NULL);
  if (self->instant == NULL)
    return NULL;
  return self->user_only ? self->instant->top_down_user : self->instant->top_down;
}

/* See vs-flame-graph.h. */
void
vs_flame_graph_set_user_only (VsFlameGraph *self, gboolean user_only)
{
  g_return_if_fail (VS_IS_FLAME_GRAPH (self));
  if (self->user_only == !!user_only)
    return;
  self->user_only = !!user_only;
  self->focus = vs_flame_graph_get_root (self);
  self->selected = self->focus;
  self->hover = NULL;
  self->depth = self->focus ? tree_depth (self->focus) : 0;
  gtk_widget_queue_resize (GTK_WIDGET (self));
}
