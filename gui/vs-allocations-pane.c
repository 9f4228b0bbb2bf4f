/* SPDX-License-Identifier: MIT */
/* vs-allocations-pane.c — the live allocations list.
 *
 * GListStore of VsBlockItem → GtkFilterListModel (size, kind, site) →
 * GtkSortListModel (the column view's sorter) → GtkColumnView, which only
 * creates widgets for the visible rows, so 10^5 live blocks scroll freely.
 * The columns and their sorters are declared in vs-allocations-pane.ui;
 * the instant comes from the session through a binding there.  Beside the
 * list, the stack panel shows where the selected allocation was made; the
 * copy actions (VsPane) copy the selected rows, or the first one's site or
 * stack.  Ctrl+F goes to the site filter.
 */
#include "vs-allocations-pane.h"

#include <string.h>

#include <glib/gi18n.h>

#include "vs-block-item.h"
#include "vs-cell-format.h"

struct _VsAllocationsPane
{
  VsPane parent_instance;

  GtkSearchEntry *site_entry;
  GtkDropDown *size_dropdown;
  GtkDropDown *kind_dropdown;
  GtkLabel *count_label;
  GtkColumnView *column_view;
  GtkLabel *stack_title;
  GtkLabel *stack_label;

  GtkStringList *kinds;
  GtkCustomFilter *filter;
  GtkFilterListModel *filtered;
  GtkColumnViewColumn *size_column;
  gboolean updating;
  /* Whether a stack's text holds the filter's text: stacks are shared by
   * many blocks, and their texts are built only when needed. */
  GHashTable *stack_matches; /* const VsStackInfo* -> 1 + matched */
  char *matched_text;        /* the text stack_matches was made for */
};

G_DEFINE_FINAL_TYPE (VsAllocationsPane, vs_allocations_pane, VS_TYPE_PANE)

static gboolean
filter_block (gpointer item, gpointer data)
{
  VsAllocationsPane *self = data;
  static const gint64 min_sizes[] = { 0, 1 << 20, 16 << 20, 256 << 20, 1 << 30 };
  const VsBlock *b = vs_block_item_get_block (item);
  guint size_i = gtk_drop_down_get_selected (self->size_dropdown);
  guint kind_i = gtk_drop_down_get_selected (self->kind_dropdown);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->site_entry));

  if (size_i < G_N_ELEMENTS (min_sizes) && b->bytes < min_sizes[size_i])
    return FALSE;
  if (kind_i != GTK_INVALID_LIST_POSITION && kind_i > 0
      && g_strcmp0 (gtk_string_list_get_string (self->kinds, kind_i), vs_block_item_get_kind (item))
             != 0)
    return FALSE;
  if (text != NULL && *text != '\0' && strstr (vs_block_item_get_site (item), text) == NULL)
    {
      const VsStackInfo *st = vs_block_item_get_stack_info (item);
      gpointer known;

      if (g_strcmp0 (self->matched_text, text) != 0)
        {
          g_hash_table_remove_all (self->stack_matches);
          g_free (self->matched_text);
          self->matched_text = g_strdup (text);
        }
      known = g_hash_table_lookup (self->stack_matches, st);
      if (known == NULL)
        {
          g_autofree char *stack = vs_stack_dup_text (st);

          known = GINT_TO_POINTER (1 + (strstr (stack, text) != NULL));
          g_hash_table_insert (self->stack_matches, (gpointer)st, known);
        }
      return GPOINTER_TO_INT (known) == 2;
    }
  return TRUE;
}

/* The selected items, in the order shown. */
static GPtrArray *
selected_items (VsAllocationsPane *self)
{
  GtkSelectionModel *model = gtk_column_view_get_model (self->column_view);
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GtkBitset) set = NULL;
  GtkBitsetIter iter;
  guint pos;

  if (model == NULL)
    return items;
  set = gtk_selection_model_get_selection (model);
  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &pos); ok;
       ok = gtk_bitset_iter_next (&iter, &pos))
    g_ptr_array_add (items, g_list_model_get_item (G_LIST_MODEL (model), pos));
  return items;
}

/* A stack's frames, one a line, innermost first. */
static char *
stack_lines (const char *stack)
{
  g_auto (GStrv) frames = g_strsplit (stack, VS_STACK_SEPARATOR, -1);
  g_autofree char *text = g_strjoinv ("\n", frames);
  return g_strconcat (text, "\n", NULL);
}

/* The stack panel: the first selected allocation's stack. */
static void
update_stack_panel (VsAllocationsPane *self)
{
  g_autoptr (GPtrArray) items = selected_items (self);
  VsBlockItem *item;
  g_autofree char *stack = NULL;

  if (items->len == 0)
    {
      gtk_label_set_text (self->stack_title, _("Stack"));
      gtk_label_set_text (self->stack_label, _("Select an allocation to see where it was made."));
      return;
    }
  item = g_ptr_array_index (items, 0);
  stack = vs_block_item_dup_stack (item);
  {
    g_autofree char *b = vs_cell_format_bytes (NULL, vs_block_item_get_block (item)->bytes);
    g_autofree char *title = g_strdup_printf (_("Stack of the %s allocation"), b);
    gtk_label_set_text (self->stack_title, title);
  }
  if (*stack == '\0')
    gtk_label_set_text (self->stack_label, _("The trace has no stack for this allocation."));
  else
    {
      g_autofree char *lines = stack_lines (stack);
      gtk_label_set_text (self->stack_label, lines);
    }
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n, VsAllocationsPane *self)
{
  update_stack_panel (self);
}

static void
on_context_click (GtkGestureClick *gesture, int n_press, double x, double y,
                  VsAllocationsPane *self)
{
  vs_pane_popup_menu_on_row (VS_PANE (self), GTK_WIDGET (self->column_view), x, y);
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

/* VsPane's copy: the selected rows' cells (one line each), or the first
 * selected allocation's site or stack. */
static char *
copy_text (VsPane *pane, VsPaneCopy what)
{
  VsAllocationsPane *self = VS_ALLOCATIONS_PANE (pane);
  g_autoptr (GPtrArray) items = selected_items (self);
  GString *text;

  if (items->len == 0)
    return NULL;
  if (what == VS_PANE_COPY_FRAME)
    return g_strdup (vs_block_item_get_site (g_ptr_array_index (items, 0)));
  if (what == VS_PANE_COPY_STACK)
    {
      g_autofree char *stack = vs_block_item_dup_stack (g_ptr_array_index (items, 0));

      return stack_lines (stack);
    }
  text = g_string_new (NULL);
  for (guint i = 0; i < items->len; i++)
    {
      VsBlockItem *item = g_ptr_array_index (items, i);
      const VsBlock *b = vs_block_item_get_block (item);
      g_autofree char *size = vs_cell_format_bytes (NULL, b->bytes);
      g_autofree char *rounded = vs_cell_format_known_bytes (NULL, b->block_bytes);
      g_autofree char *t = vs_cell_format_time (NULL, b->alloc_time_ns);
      g_autofree char *addr = vs_cell_format_address (NULL, b->address);
      g_autofree char *site = vs_cell_format_site (NULL, vs_block_item_get_site (item));

      g_string_append_printf (text, "%s\t%s\t%s\t%s\t%s\t%s\n", size, rounded ? rounded : "",
                              vs_block_item_get_kind (item), t, addr, site);
    }
  return g_string_free (text, FALSE);
}

/* VsPane's start_search: the site filter. */
static void
start_search (VsPane *pane)
{
  gtk_widget_grab_focus (GTK_WIDGET (VS_ALLOCATIONS_PANE (pane)->site_entry));
}

static void
update_count (VsAllocationsPane *self)
{
  guint n = self->filtered ? g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) : 0;
  g_autofree char *s = g_strdup_printf (ngettext ("%u allocation", "%u allocations", n), n);
  gtk_label_set_text (self->count_label, s);
}

static void
on_filter_changed (VsAllocationsPane *self)
{
  if (self->updating)
    return;
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

/* Lists the pane's instant's blocks (VsPane's instant_changed). */
static void
show_instant (VsPane *pane)
{
  VsAllocationsPane *self = VS_ALLOCATIONS_PANE (pane);
  VsInstant *instant = vs_pane_get_instant (pane);
  g_autoptr (GListModel) items = NULL;
  g_autoptr (GHashTable) seen = NULL;
  GtkSortListModel *sorted;
  const char *keep = NULL;
  guint selected;

  g_assert (self->column_view != NULL); /* the template is built */
  /* Another instant's stacks may be another trace's. */
  if (self->stack_matches != NULL)
    g_hash_table_remove_all (self->stack_matches);
  if (instant == NULL)
    {
      gtk_column_view_set_model (self->column_view, NULL);
      self->filtered = NULL;
      update_count (self);
      update_stack_panel (self);
      return;
    }

  /* The kind choices are the kinds present; keep the user's choice. */
  self->updating = TRUE;
  selected = gtk_drop_down_get_selected (self->kind_dropdown);
  if (selected != GTK_INVALID_LIST_POSITION && selected > 0)
    keep = g_intern_string (gtk_string_list_get_string (self->kinds, selected));
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  gtk_string_list_splice (self->kinds, 1, g_list_model_get_n_items (G_LIST_MODEL (self->kinds)) - 1,
                          NULL);
  for (guint i = 0; i < instant->blocks->len; i++)
    {
      const char *k = g_ptr_array_index (instant->kinds, i);
      if (g_hash_table_add (seen, (gpointer)k))
        gtk_string_list_append (self->kinds, k);
    }
  gtk_drop_down_set_selected (self->kind_dropdown, 0);
  for (guint i = 1; keep && i < g_list_model_get_n_items (G_LIST_MODEL (self->kinds)); i++)
    if (g_strcmp0 (gtk_string_list_get_string (self->kinds, i), keep) == 0)
      gtk_drop_down_set_selected (self->kind_dropdown, i);
  self->updating = FALSE;

  items = vs_block_item_list (instant);
  self->filtered
      = gtk_filter_list_model_new (g_object_ref (items), g_object_ref (GTK_FILTER (self->filter)));
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (self->filtered),
                                    g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  gtk_column_view_set_model (self->column_view,
                             GTK_SELECTION_MODEL (gtk_multi_selection_new (G_LIST_MODEL (sorted))));
  g_object_unref (gtk_column_view_get_model (self->column_view));
  g_signal_connect (gtk_column_view_get_model (self->column_view), "selection-changed",
                    G_CALLBACK (on_selection_changed), self);
  update_count (self);
  update_stack_panel (self);
}

static void
vs_allocations_pane_dispose (GObject *object)
{
  VsAllocationsPane *self = VS_ALLOCATIONS_PANE (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_ALLOCATIONS_PANE);
  g_clear_object (&self->filter);
  g_clear_pointer (&self->stack_matches, g_hash_table_unref);
  g_clear_pointer (&self->matched_text, g_free);
  G_OBJECT_CLASS (vs_allocations_pane_parent_class)->dispose (object);
}

static void
vs_allocations_pane_class_init (VsAllocationsPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_allocations_pane_dispose;
  VS_PANE_CLASS (klass)->instant_changed = show_instant;
  VS_PANE_CLASS (klass)->copy = copy_text;
  VS_PANE_CLASS (klass)->start_search = start_search;
  g_type_ensure (VS_TYPE_BLOCK_ITEM);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-allocations-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, site_entry);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, size_dropdown);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, kind_dropdown);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, count_label);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, column_view);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, size_column);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, stack_title);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, stack_label);
  gtk_widget_class_bind_template_callback (widget_class, on_context_click);
  gtk_widget_class_bind_template_callback (widget_class, on_filter_changed);
  vs_cell_format_add_callbacks (widget_class);
}

static void
vs_allocations_pane_init (VsAllocationsPane *self)
{
  const char *all[] = { _("All kinds"), NULL };

  gtk_widget_init_template (GTK_WIDGET (self));
  self->filter = gtk_custom_filter_new (filter_block, self, NULL);
  self->stack_matches = g_hash_table_new (NULL, NULL);
  self->kinds = gtk_string_list_new (all);
  gtk_drop_down_set_model (self->kind_dropdown, G_LIST_MODEL (self->kinds));
  g_object_unref (self->kinds);

  gtk_column_view_sort_by_column (self->column_view, self->size_column, GTK_SORT_DESCENDING);
}

/* See vs-allocations-pane.h. */
void
vs_allocations_pane_set_instant (VsAllocationsPane *self, VsInstant *instant)
{
  g_return_if_fail (VS_IS_ALLOCATIONS_PANE (self));
  vs_pane_set_instant (VS_PANE (self), instant);
}

/* See vs-allocations-pane.h. */
guint
vs_allocations_pane_get_n_shown (VsAllocationsPane *self)
{
  g_return_val_if_fail (VS_IS_ALLOCATIONS_PANE (self), 0);
  return self->filtered ? g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) : 0;
}
