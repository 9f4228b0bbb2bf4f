/* vs-allocations-pane.c — the live allocations list.
 *
 * GListStore of VsBlockItem → GtkFilterListModel (size, kind, site) →
 * GtkSortListModel (the column view's sorter) → GtkColumnView, which only
 * creates widgets for the visible rows, so 10^5 live blocks scroll freely.
 */
#include "vs-allocations-pane.h"

#include <string.h>

#include "vs-block-item.h"
#include "vs-columns.h"
#include "vs-table.h"
#include "vs-time-format.h"

struct _VsAllocationsPane
{
  GtkBox parent_instance;

  GtkSearchEntry *site_entry;
  GtkDropDown *size_dropdown;
  GtkDropDown *kind_dropdown;
  GtkLabel *count_label;
  GtkColumnView *column_view;

  GtkStringList *kinds;
  GtkCustomFilter *filter;
  GtkFilterListModel *filtered;
  GtkColumnViewColumn *size_column;
  gboolean updating;
};

G_DEFINE_FINAL_TYPE (VsAllocationsPane, vs_allocations_pane, GTK_TYPE_BOX)

static const VsBlock *
block_of (gpointer item)
{
  return vs_block_item_get_block (VS_BLOCK_ITEM (item));
}

static char *
size_text (gpointer item)
{
  return vs_format_bytes (block_of (item)->bytes);
}

static char *
rounded_text (gpointer item)
{
  gint64 b = block_of (item)->block_bytes;
  return b == VS_UNKNOWN ? NULL : vs_format_bytes (b);
}

static char *
kind_text (gpointer item)
{
  return g_strdup (vs_block_item_get_kind (item));
}

static char *
time_text (gpointer item)
{
  gint64 t = block_of (item)->alloc_time_ns;
  return t == VS_UNKNOWN ? g_strdup ("before the trace") : vs_format_time (t);
}

static char *
address_text (gpointer item)
{
  return g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", (guint64)block_of (item)->address);
}

static char *
site_text (gpointer item)
{
  const char *s = vs_block_item_get_site (item);
  return g_strdup (s && *s ? s : "(no stack)");
}

#define CMP(a, b)                                                                                  \
  ((a) < (b) ? GTK_ORDERING_SMALLER : (a) > (b) ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL)

static int
cmp_size (gconstpointer a, gconstpointer b, gpointer d)
{
  return CMP (block_of ((gpointer)a)->bytes, block_of ((gpointer)b)->bytes);
}

static int
cmp_time (gconstpointer a, gconstpointer b, gpointer d)
{
  return CMP (block_of ((gpointer)a)->alloc_time_ns, block_of ((gpointer)b)->alloc_time_ns);
}

static int
cmp_address (gconstpointer a, gconstpointer b, gpointer d)
{
  return CMP ((guint64)block_of ((gpointer)a)->address, (guint64)block_of ((gpointer)b)->address);
}

static int
cmp_kind (gconstpointer a, gconstpointer b, gpointer d)
{
  return g_strcmp0 (vs_block_item_get_kind ((gpointer)a), vs_block_item_get_kind ((gpointer)b));
}

static int
cmp_site (gconstpointer a, gconstpointer b, gpointer d)
{
  return g_strcmp0 (vs_block_item_get_site ((gpointer)a), vs_block_item_get_site ((gpointer)b));
}

static gboolean
filter_block (gpointer item, gpointer data)
{
  VsAllocationsPane *self = data;
  static const gint64 min_sizes[] = { 0, 1 << 20, 16 << 20, 256 << 20, 1 << 30 };
  const VsBlock *b = block_of (item);
  guint size_i = gtk_drop_down_get_selected (self->size_dropdown);
  guint kind_i = gtk_drop_down_get_selected (self->kind_dropdown);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->site_entry));

  if (size_i < G_N_ELEMENTS (min_sizes) && b->bytes < min_sizes[size_i])
    return FALSE;
  if (kind_i != GTK_INVALID_LIST_POSITION && kind_i > 0
      && g_strcmp0 (gtk_string_list_get_string (self->kinds, kind_i), vs_block_item_get_kind (item))
             != 0)
    return FALSE;
  if (text != NULL && *text != '\0' && strstr (vs_block_item_get_site (item), text) == NULL
      && strstr (vs_block_item_get_stack (item), text) == NULL)
    return FALSE;
  return TRUE;
}

static void
update_count (VsAllocationsPane *self)
{
  guint n = self->filtered ? g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) : 0;
  g_autofree char *s = g_strdup_printf ("%u allocation%s", n, n == 1 ? "" : "s");
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

static void
vs_allocations_pane_dispose (GObject *object)
{
  VsAllocationsPane *self = VS_ALLOCATIONS_PANE (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_ALLOCATIONS_PANE);
  g_clear_object (&self->filter);
  G_OBJECT_CLASS (vs_allocations_pane_parent_class)->dispose (object);
}

static void
vs_allocations_pane_class_init (VsAllocationsPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_allocations_pane_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-allocations-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, site_entry);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, size_dropdown);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, kind_dropdown);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, count_label);
  gtk_widget_class_bind_template_child (widget_class, VsAllocationsPane, column_view);
  gtk_widget_class_bind_template_callback (widget_class, on_filter_changed);
}

static void
vs_allocations_pane_init (VsAllocationsPane *self)
{
  const char *all[] = { "All kinds", NULL };

  gtk_widget_init_template (GTK_WIDGET (self));
  self->filter = gtk_custom_filter_new (filter_block, self, NULL);
  self->kinds = gtk_string_list_new (all);
  gtk_drop_down_set_model (self->kind_dropdown, G_LIST_MODEL (self->kinds));
  g_object_unref (self->kinds);

  self->size_column
      = vs_columns_add (self->column_view, "Size", size_text, 1,
                        GTK_SORTER (gtk_custom_sorter_new (cmp_size, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Rounded", rounded_text, 1,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_size, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Kind", kind_text, 0,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_kind, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Allocated at", time_text, 1,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_time, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Address", address_text, 0,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_address, NULL, NULL)), FALSE, FALSE);
  vs_columns_add (self->column_view, "Site", site_text, 0,
                  GTK_SORTER (gtk_custom_sorter_new (cmp_site, NULL, NULL)), TRUE, FALSE);
  gtk_column_view_sort_by_column (self->column_view, self->size_column, GTK_SORT_DESCENDING);
}

/* See vs-allocations-pane.h. */
void
vs_allocations_pane_set_instant (VsAllocationsPane *self, VsInstant *instant)
{
  g_autoptr (GListModel) items = NULL;
  g_autoptr (GHashTable) seen = NULL;
  GtkSortListModel *sorted;
  const char *keep = NULL;
  guint selected;

  g_return_if_fail (VS_IS_ALLOCATIONS_PANE (self));

  if (instant == NULL)
    {
      gtk_column_view_set_model (self->column_view, NULL);
      self->filtered = NULL;
      update_count (self);
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
  update_count (self);
}

/* See vs-allocations-pane.h. */
guint
vs_allocations_pane_get_n_shown (VsAllocationsPane *self)
{
  g_return_val_if_fail (VS_IS_ALLOCATIONS_PANE (self), 0);
  return self->filtered ? g_list_model_get_n_items (G_LIST_MODEL (self->filtered)) : 0;
}
