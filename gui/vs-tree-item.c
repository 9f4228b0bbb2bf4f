/* vs-tree-item.c — attribution tree nodes as GObjects for list models. */
#include "vs-tree-item.h"

struct _VsTreeItem
{
  GObject parent_instance;
  VsInstant *instant;
  const VsTreeNode *node;
  gint64 total;
};

enum
{
  PROP_0,
  PROP_LABEL,
  PROP_TOTAL_BYTES,
  PROP_SELF_BYTES,
  PROP_TOTAL_COUNT,
  PROP_PERCENT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsTreeItem, vs_tree_item, G_TYPE_OBJECT)

static void
vs_tree_item_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsTreeItem *self = VS_TREE_ITEM (object);

  switch (prop_id)
    {
    case PROP_LABEL:
      g_value_set_string (value, self->node->label);
      break;
    case PROP_TOTAL_BYTES:
      g_value_set_int64 (value, self->node->total_bytes);
      break;
    case PROP_SELF_BYTES:
      g_value_set_int64 (value, self->node->self_bytes);
      break;
    case PROP_TOTAL_COUNT:
      g_value_set_int64 (value, self->node->total_count);
      break;
    case PROP_PERCENT:
      g_value_set_double (value, vs_tree_item_get_percent (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_tree_item_finalize (GObject *object)
{
  VsTreeItem *self = VS_TREE_ITEM (object);
  g_clear_pointer (&self->instant, vs_instant_unref);
  G_OBJECT_CLASS (vs_tree_item_parent_class)->finalize (object);
}

static void
vs_tree_item_class_init (VsTreeItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = vs_tree_item_finalize;
  object_class->get_property = vs_tree_item_get_property;

  /* The frame's text. */
  props[PROP_LABEL] = g_param_spec_string ("label", NULL, NULL, NULL, ro);
  /* Bytes and allocations under the node, and bytes allocated by it. */
  props[PROP_TOTAL_BYTES]
      = g_param_spec_int64 ("total-bytes", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  props[PROP_SELF_BYTES]
      = g_param_spec_int64 ("self-bytes", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  props[PROP_TOTAL_COUNT]
      = g_param_spec_int64 ("total-count", NULL, NULL, G_MININT64, G_MAXINT64, 0, ro);
  /* Share of the root's bytes, 0..100. */
  props[PROP_PERCENT] = g_param_spec_double ("percent", NULL, NULL, 0, 100, 0, ro);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
vs_tree_item_init (VsTreeItem *self)
{
}

/* See vs-tree-item.h. */
VsTreeItem *
vs_tree_item_new (VsInstant *instant, const VsTreeNode *node, gint64 total)
{
  VsTreeItem *self;

  g_return_val_if_fail (instant != NULL && node != NULL, NULL);
  self = g_object_new (VS_TYPE_TREE_ITEM, NULL);
  self->instant = vs_instant_ref (instant);
  self->node = node;
  self->total = total;
  return self;
}

/* See vs-tree-item.h. */
const VsTreeNode *
vs_tree_item_get_node (VsTreeItem *self)
{
  g_return_val_if_fail (VS_IS_TREE_ITEM (self), NULL);
  return self->node;
}

/* See vs-tree-item.h. */
double
vs_tree_item_get_percent (VsTreeItem *self)
{
  g_return_val_if_fail (VS_IS_TREE_ITEM (self), 0);
  return self->total > 0 ? 100.0 * self->node->total_bytes / self->total : 0;
}

static GListModel *
list_children (VsInstant *instant, const VsTreeNode *node, gint64 total)
{
  GListStore *store;

  if (node->children == NULL || node->children->len == 0)
    return NULL;
  store = g_list_store_new (VS_TYPE_TREE_ITEM);
  for (guint i = 0; i < node->children->len; i++)
    {
      g_autoptr (VsTreeItem) child
          = vs_tree_item_new (instant, g_ptr_array_index (node->children, i), total);
      g_list_store_append (store, child);
    }
  return G_LIST_MODEL (store);
}

/* See vs-tree-item.h. */
GListModel *
vs_tree_item_create_children (gpointer item, gpointer user_data)
{
  VsTreeItem *self = item;
  return list_children (self->instant, self->node, self->total);
}

/* See vs-tree-item.h. */
GListModel *
vs_tree_item_list_roots (VsInstant *instant, const VsTreeNode *root)
{
  GListModel *model = list_children (instant, root, root->total_bytes);
  return model ? model : G_LIST_MODEL (g_list_store_new (VS_TYPE_TREE_ITEM));
}
