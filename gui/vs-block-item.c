/* SPDX-License-Identifier: MIT */
/* vs-block-item.c — live allocations as GObjects for the allocations list.
 *
 * An item is an index into its instant's block array; the instant stays
 * alive while any item does.  Its read-only properties are what the
 * columns' expressions and sorters read.
 */
#include "vs-block-item.h"
#include "vs-stack.h"

struct _VsBlockItem
{
  GObject parent_instance;
  VsInstant *instant;
  guint index;
};

enum
{
  PROP_0,
  PROP_BYTES,
  PROP_BLOCK_BYTES,
  PROP_KIND,
  PROP_ALLOC_TIME,
  PROP_ADDRESS,
  PROP_SITE,
  PROP_STACK,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsBlockItem, vs_block_item, G_TYPE_OBJECT)

static void
vs_block_item_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsBlockItem *self = VS_BLOCK_ITEM (object);
  const VsBlock *b = vs_block_item_get_block (self);

  switch (prop_id)
    {
    case PROP_BYTES:
      g_value_set_int64 (value, b->bytes);
      break;
    case PROP_BLOCK_BYTES:
      g_value_set_int64 (value, b->block_bytes);
      break;
    case PROP_KIND:
      g_value_set_string (value, vs_block_item_get_kind (self));
      break;
    case PROP_ALLOC_TIME:
      g_value_set_int64 (value, b->alloc_time_ns);
      break;
    case PROP_ADDRESS:
      g_value_set_uint64 (value, (guint64)b->address);
      break;
    case PROP_SITE:
      g_value_set_string (value, vs_block_item_get_site (self));
      break;
    case PROP_STACK:
      g_value_take_string (value, vs_block_item_dup_stack (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

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
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = vs_block_item_finalize;
  object_class->get_property = vs_block_item_get_property;

  /* The requested size. */
  props[PROP_BYTES] = g_param_spec_int64 ("bytes", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  /* The allocator's rounded size (VS_UNKNOWN when not known). */
  props[PROP_BLOCK_BYTES]
      = g_param_spec_int64 ("block-bytes", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  /* The allocator's name, or the memory kind of a device-level block. */
  props[PROP_KIND] = g_param_spec_string ("kind", NULL, NULL, NULL, ro);
  /* When it was allocated, ns (VS_UNKNOWN: before the trace). */
  props[PROP_ALLOC_TIME]
      = g_param_spec_int64 ("alloc-time", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  props[PROP_ADDRESS] = g_param_spec_uint64 ("address", NULL, NULL, 0, G_MAXUINT64, 0, ro);
  /* The allocating frame, "" without a stack; and the whole stack. */
  props[PROP_SITE] = g_param_spec_string ("site", NULL, NULL, NULL, ro);
  props[PROP_STACK] = g_param_spec_string ("stack", NULL, NULL, NULL, ro);
  g_object_class_install_properties (object_class, N_PROPS, props);
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
const VsStackInfo *
vs_block_item_get_stack_info (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), NULL);
  return g_ptr_array_index (self->instant->stacks, self->index);
}

/* See vs-block-item.h. */
char *
vs_block_item_dup_stack (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), NULL);
  return vs_stack_dup_text (g_ptr_array_index (self->instant->stacks, self->index));
}

/* See vs-block-item.h. */
const char *
vs_block_item_get_kind (VsBlockItem *self)
{
  g_return_val_if_fail (VS_IS_BLOCK_ITEM (self), "");
  return g_ptr_array_index (self->instant->kinds, self->index);
}
