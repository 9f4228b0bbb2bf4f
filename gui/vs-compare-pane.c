/* SPDX-License-Identifier: MIT */
/* vs-compare-pane.c — the comparison pane (see vs-compare-pane.h).  The
 * columns are declared in the .ui; this file gives them the comparison's
 * items through a GtkSortListModel driven by the column view's sorter,
 * fills the banner, and binds the alignment toggle to the comparison.
 */
#include "vs-compare-pane.h"

#include <glib/gi18n.h>

#include "vs-analyzer.h"
#include "vs-cell-format.h"
#include "vs-compare-item.h"
#include "vs-sort-button.h"

struct _VsComparePane
{
  GtkWidget parent_instance;

  GtkRevealer *banner_revealer;
  GtkLabel *banner_label;
  GtkLabel *names_label;
  GtkToggleButton *start_button;
  GtkToggleButton *iteration_button;
  GtkWidget *copy_button;
  GtkColumnView *column_view;

  VsComparison *comparison;
  GtkSortListModel *sorted;
  GBinding *align_binding;
};

enum
{
  PROP_0,
  PROP_COMPARISON,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsComparePane, vs_compare_pane, GTK_TYPE_WIDGET)

/* "format_value": bytes or a count; empty when unknown. */
static char *
format_value (gpointer unused, gint64 v, gboolean is_bytes)
{
  if (v == VS_UNKNOWN)
    return NULL;
  return is_bytes ? vs_format_bytes (v) : g_strdup_printf ("%" G_GINT64_FORMAT, v);
}

/* "format_delta": signed ("+1.50 GiB", "−3"), "0" unchanged, empty when
 * unknown. */
static char *
format_delta (gpointer unused, gint64 d, gboolean is_bytes)
{
  g_autofree char *abs = NULL;

  if (d == VS_UNKNOWN)
    return NULL;
  if (d == 0)
    return g_strdup ("0");
  abs = is_bytes ? vs_format_bytes (d < 0 ? -d : d)
                 : g_strdup_printf ("%" G_GINT64_FORMAT, d < 0 ? -d : d);
  return g_strdup_printf ("%s%s", d < 0 ? "−" : "+", abs);
}

/* "format_change_percent": "+12.5 %", "new" where A held nothing. */
static char *
format_change_percent (gpointer unused, double p)
{
  if (p == VS_COMPARE_PERCENT_UNKNOWN)
    return NULL;
  if (p == VS_COMPARE_PERCENT_NEW)
    return g_strdup (_("new"));
  if (p == 0)
    return g_strdup ("0 %");
  return g_strdup_printf ("%s%.1f %%", p < 0 ? "−" : "+", p < 0 ? -p : p);
}

/* "delta_classes": more in B is red (error), less green (success). */
static char **
delta_classes (gpointer unused, gint64 d)
{
  const char *cls = d == VS_UNKNOWN || d == 0 ? "dim-label" : d > 0 ? "error" : "success";
  const char *v[] = { "numeric", cls, NULL };

  return g_strdupv ((char **)v);
}

static void
on_copy (VsComparePane *self)
{
  if (self->comparison == NULL || vs_comparison_get_text (self->comparison) == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)),
                          vs_comparison_get_text (self->comparison));
}

static void
show_banner (VsComparePane *self)
{
  GPtrArray *diffs = vs_comparison_get_differences (self->comparison);
  g_autoptr (GString) text = g_string_new (NULL);

  for (guint i = 0; diffs != NULL && i < diffs->len; i++)
    {
      const VsCompareDifference *d = g_ptr_array_index (diffs, i);
      const char *what = vs_compare_difference_title (d->kind);

      g_string_append_printf (text, "%s%s: %s", text->len > 0 ? "\n" : "", what, d->text);
    }
  gtk_label_set_text (self->banner_label, text->str);
  gtk_revealer_set_reveal_child (self->banner_revealer, text->len > 0);
}

/* The comparison computed (or not yet): table, banner, alignment. */
static void
on_computed (VsComparison *comparison, GParamSpec *pspec, VsComparePane *self)
{
  gboolean done = vs_comparison_is_computed (comparison);
  gboolean can = vs_comparison_can_align_by_iteration (comparison);

  gtk_sort_list_model_set_model (self->sorted, done ? vs_comparison_get_items (comparison) : NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->copy_button), done);
  if (done)
    show_banner (self);
  gtk_widget_set_sensitive (GTK_WIDGET (self->iteration_button), can);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->iteration_button),
                               can ? _("Shift B so that its first iteration starts where A’s does")
                               : done ? _("No iterations were found in both runs to align them by")
                                      : _("Comparing…"));
}

/* See vs-compare-pane.h. */
void
vs_compare_pane_set_comparison (VsComparePane *self, VsComparison *comparison)
{
  g_return_if_fail (VS_IS_COMPARE_PANE (self));
  g_return_if_fail (comparison == NULL || VS_IS_COMPARISON (comparison));
  if (self->comparison == comparison)
    return;
  g_clear_pointer (&self->align_binding, g_binding_unbind);
  if (self->comparison != NULL)
    g_signal_handlers_disconnect_by_data (self->comparison, self);
  g_set_object (&self->comparison, comparison);
  gtk_sort_list_model_set_model (self->sorted, NULL);
  gtk_revealer_set_reveal_child (self->banner_revealer, FALSE);
  if (comparison != NULL)
    {
      g_autofree char *names
          = g_strdup_printf (_("A: %s · B: %s"), vs_comparison_get_name_a (comparison),
                             vs_comparison_get_name_b (comparison));

      g_autofree char *full = g_strdup_printf (
          _("A, the trace shown: %s\nB, the trace compared: %s"),
          vs_comparison_get_name_a (comparison), vs_comparison_get_name_b (comparison));

      gtk_label_set_text (self->names_label, names);
      /* Cut in the middle when the pane is narrow: whole in the tooltip. */
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->names_label), full);
      gtk_toggle_button_set_active (self->start_button, TRUE);
      g_signal_connect (comparison, "notify::computed", G_CALLBACK (on_computed), self);
      on_computed (comparison, NULL, self);
      self->align_binding = g_object_bind_property (
          self->iteration_button, "active", comparison, "align-by-iteration",
          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
    }
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_COMPARISON]);
}

/* See vs-compare-pane.h. */
GListModel *
vs_compare_pane_get_rows (VsComparePane *self)
{
  g_return_val_if_fail (VS_IS_COMPARE_PANE (self), NULL);
  return G_LIST_MODEL (self->sorted);
}

/* See vs-compare-pane.h. */
const char *
vs_compare_pane_get_banner (VsComparePane *self)
{
  g_return_val_if_fail (VS_IS_COMPARE_PANE (self), NULL);
  return gtk_revealer_get_reveal_child (self->banner_revealer)
             ? gtk_label_get_text (self->banner_label)
             : NULL;
}

static void
vs_compare_pane_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  VsComparePane *self = VS_COMPARE_PANE (object);

  switch (id)
    {
    case PROP_COMPARISON:
      g_value_set_object (value, self->comparison);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_compare_pane_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  VsComparePane *self = VS_COMPARE_PANE (object);

  switch (id)
    {
    case PROP_COMPARISON:
      vs_compare_pane_set_comparison (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_compare_pane_dispose (GObject *object)
{
  VsComparePane *self = VS_COMPARE_PANE (object);
  GtkWidget *child;

  g_clear_pointer (&self->align_binding, g_binding_unbind);
  if (self->comparison != NULL)
    g_signal_handlers_disconnect_by_data (self->comparison, self);
  g_clear_object (&self->comparison);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_COMPARE_PANE);
  /* The children without an id are not the template's to dispose. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_clear_object (&self->sorted);
  G_OBJECT_CLASS (vs_compare_pane_parent_class)->dispose (object);
}

static void
vs_compare_pane_class_init (VsComparePaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = vs_compare_pane_get_property;
  object_class->set_property = vs_compare_pane_set_property;
  object_class->dispose = vs_compare_pane_dispose;
  props[PROP_COMPARISON]
      = g_param_spec_object ("comparison", NULL, NULL, VS_TYPE_COMPARISON,
                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  g_type_ensure (VS_TYPE_COMPARE_ITEM);
  g_type_ensure (VS_TYPE_SORT_BUTTON);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-compare-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, banner_revealer);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, banner_label);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, names_label);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, start_button);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, iteration_button);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, copy_button);
  gtk_widget_class_bind_template_child (widget_class, VsComparePane, column_view);
  gtk_widget_class_bind_template_callback (widget_class, on_copy);
  vs_cell_format_add_callbacks (widget_class);
  gtk_widget_class_bind_template_callback (widget_class, format_value);
  gtk_widget_class_bind_template_callback (widget_class, format_delta);
  gtk_widget_class_bind_template_callback (widget_class, format_change_percent);
  gtk_widget_class_bind_template_callback (widget_class, delta_classes);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "comparepane");
}

static void
vs_compare_pane_init (VsComparePane *self)
{
  g_autoptr (GtkSingleSelection) selection = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_orientable_set_orientation (
      GTK_ORIENTABLE (gtk_widget_get_layout_manager (GTK_WIDGET (self))), GTK_ORIENTATION_VERTICAL);
  self->sorted = gtk_sort_list_model_new (
      NULL, g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  selection = gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->sorted)));
  /* Nothing selected until the user picks a row. */
  gtk_single_selection_set_autoselect (selection, FALSE);
  gtk_single_selection_set_can_unselect (selection, TRUE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (selection));
}
