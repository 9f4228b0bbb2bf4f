/* vs-block-item.c — live allocations as GObjects for the allocations list.
 *
 * An item is an index into its instant's block array; the instant stays
 * alive while any item does.
 */
#include "vs-block-item.h"

struct _VsBlockItem
{
  GObject parent_instance;
  VsInstant *instant;
  guint index;
};

G_DEFINE_FINAL_TYPE (VsBlockItem, vs_block_item, G_TYPE_OBJECT)

static void
vs_block_item_finalize (GObject *object)
{
  VsBlockItem *self = VS_BLOCK_ITEM (object);
  g_clear_pointer (&self->instant, vs_instant_unref);
  G_OBJECT_CLASS (vs_block_item_parent_class)->finalize (object);
}

static void
vs_block_item_class_init (VsBlockItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = vs_block_item_finalize;
}

static void
vs_block_item_init (VsBlockItem *self)
{
}

/* See vs-block-item.h. */
GListModel *
vs_block_item_list (VsInstant *instant)
{
  GListStore *store = g_list_store_new (VS_TYPE_BLOCK_ITEM);
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < instant->blocks->len; i++)
    {
      VsBlockItem *item = g_object_new (VS_TYPE_BLOCK_ITEM, NULL);
      item->instant = vs_instant_ref (instant);
      item->index = i;
      g_ptr_array_add (items, item);
    }
  /* One splice: one items-changed signal for the whole list. */
  g_list_store_splice (store, 0, 0, items->pdata, items->len);
  return G_LIST_MODEL (store);
}

/* See vs-block-item.h. */
const VsBlock *
vs_block_item_get_block (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), NULL);
  return &g_array_index (self->instant->blocks, VsBlock, self->index);
}

/* See vs-block-item.h. */
const char *
vs_block_item_get_site (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), "");
  return g_ptr_array_index (self->instant->sites, self->index);
}

/* See vs-block-item.h. */
const char *
vs_block_item_get_stack (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), "");
  return g_ptr_array_index (self->instant->stacks, self->index);
}

/* See vs-block-item.h. */
const char *
vs_block_item_get_kind (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), "");
  return g_ptr_array_index (self->instant->kinds, self->index);
}
