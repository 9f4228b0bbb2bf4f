/* SPDX-License-Identifier: MIT */
/* vs-flame-pane.c — the flame graph pane: search, copy, context menu.
 *
 * The flame graph shows the pane's instant; this file forwards the search text and says what it found, and gives the
 * selected box's text to VsPane's copy actions.
 */
#include "vs-flame-pane.h"

#include <glib/gi18n.h>

#include "vs-cell-format.h"
#include "vs-tree-item.h"

struct _VsFlamePane
{
  VsPane parent_instance;

  GtkSearchEntry *search_entry;
  GtkLabel *match_label;
  VsFlameGraph *flame_graph;
  GtkToggleButton *hide_library_button;
};

G_DEFINE_FINAL_TYPE (VsFlamePane, vs_flame_pane, VS_TYPE_PANE)

/* What the search found, beside the entry. */
static void
update_matches (VsFlamePane *self)
{
  const char *search = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  VsInstant *instant = vs_pane_get_instant (VS_PANE (self));
  guint n;
  gint64 bytes, total;
  g_autofree char *b = NULL;
  g_autofree char *text = NULL;

  if (instant == NULL || *search == '\0')
    {
      gtk_label_set_text (self->match_label, "");
      return;
    }
  n = vs_tree_node_count_matches (vs_flame_graph_get_root (self->flame_graph), search);
  bytes = vs_flame_graph_get_search_bytes (self->flame_graph);
  total = vs_flame_graph_get_root (self->flame_graph)->total_bytes;
  b = vs_format_bytes (bytes);
  text = g_strdup_printf (
      ngettext ("%u frame matches · %s (%.1f %%)", "%u frames match · %s (%.1f %%)", n), n, b,
      total > 0 ? 100.0 * bytes / total : 0.0);
  gtk_label_set_text (self->match_label, text);
}

/* "Hide library frames": the graph of the user's own frames. */
static void
on_hide_library_toggled (VsFlamePane *self, GtkToggleButton *button)
{
  vs_flame_graph_set_user_only (self->flame_graph, gtk_toggle_button_get_active (button));
  update_matches (self);
}

static void
on_search_changed (VsFlamePane *self, GtkSearchEntry *entry)
{
  vs_flame_graph_set_search (self->flame_graph, gtk_editable_get_text (GTK_EDITABLE (entry)));
  update_matches (self);
}

static void
on_stop_search (VsFlamePane *self, GtkSearchEntry *entry)
{
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
}

static void
on_context_click (GtkGestureClick *gesture, int n_press, double x, double y, VsFlamePane *self)
{
  if (vs_flame_graph_select_at (self->flame_graph, x, y))
    vs_pane_popup_menu (VS_PANE (self), GTK_WIDGET (self->flame_graph), x, y);
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

/* VsPane's copy: the selected box. */
static char *
copy_text (VsPane *pane, VsPaneCopy what)
{
  VsFlamePane *self = VS_FLAME_PANE (pane);
  const VsTreeNode *n = vs_flame_graph_get_selected (self->flame_graph);
  const VsTreeNode *root = n;
  const char *label;

  if (n == NULL)
    return NULL;
  while (root->parent != NULL)
    root = root->parent;
  label = n->parent != NULL ? n->label : _("all live memory");
  switch (what)
    {
    case VS_PANE_COPY_FRAME:
      return g_strdup (label);
    case VS_PANE_COPY_STACK:
      /* Callers on top: the top-down tree. */
      return vs_tree_node_stack_text (n, FALSE);
    case VS_PANE_COPY_ROW:
    default:
      {
        g_autofree char *b = vs_cell_format_bytes (NULL, n->total_bytes);
        g_autofree char *p = vs_cell_format_percent (
            NULL, root->total_bytes > 0 ? 100.0 * n->total_bytes / root->total_bytes : 0);
        g_autofree char *c = vs_cell_format_count (NULL, n->total_count);
        return g_strdup_printf ("%s\t%s\t%s\t%s\n", label, b, p, c);
      }
    }
}

static void
start_search (VsPane *pane)
{
  gtk_widget_grab_focus (GTK_WIDGET (VS_FLAME_PANE (pane)->search_entry));
}

/* VsPane's instant_changed: the graph shows the pane's instant (set
 * here, not bound in the .ui: a template binding whose source is the
 * template's own object outlives it when the pane goes). */
static void
instant_changed (VsPane *pane)
{
  VsFlamePane *self = VS_FLAME_PANE (pane);

  vs_flame_graph_set_instant (self->flame_graph, vs_pane_get_instant (pane));
  update_matches (self);
}

static void
vs_flame_pane_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), VS_TYPE_FLAME_PANE);
  G_OBJECT_CLASS (vs_flame_pane_parent_class)->dispose (object);
}

static void
vs_flame_pane_class_init (VsFlamePaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_flame_pane_dispose;
  VS_PANE_CLASS (klass)->instant_changed = instant_changed;
  VS_PANE_CLASS (klass)->copy = copy_text;
  VS_PANE_CLASS (klass)->start_search = start_search;
  g_type_ensure (VS_TYPE_FLAME_GRAPH);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-flame-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsFlamePane, search_entry);
  gtk_widget_class_bind_template_child (widget_class, VsFlamePane, match_label);
  gtk_widget_class_bind_template_child (widget_class, VsFlamePane, flame_graph);
  gtk_widget_class_bind_template_child (widget_class, VsFlamePane, hide_library_button);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_hide_library_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_stop_search);
  gtk_widget_class_bind_template_callback (widget_class, on_context_click);
}

static void
vs_flame_pane_init (VsFlamePane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* Library frames start hidden (the .ui's toggle): the user's own lines
   * first. */
  vs_flame_graph_set_user_only (self->flame_graph,
                                gtk_toggle_button_get_active (self->hide_library_button));
}

/* See vs-flame-pane.h. */
VsFlameGraph *
vs_flame_pane_get_flame_graph (VsFlamePane *self)
{
  g_return_val_if_fail (VS_IS_FLAME_PANE (self), NULL);
  return self->flame_graph;
}

/* See vs-flame-pane.h. */
void
vs_flame_pane_set_hide_library (VsFlamePane *self, gboolean hide)
{
  g_return_if_fail (VS_IS_FLAME_PANE (self));
  gtk_toggle_button_set_active (self->hide_library_button, hide);
}
