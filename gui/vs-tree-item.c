/* vs-tree-item.c — attribution tree nodes as GObjects for list models. */
#include "vs-tree-item.h"

struct _VsTreeItem
{
  GObject parent_instance;
  VsInstant *instant;
  const VsTreeNode *node;
  gint64 total;
};

G_DEFINE_FINAL_TYPE (VsTreeItem, vs_tree_item, G_TYPE_OBJECT)

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
  G_OBJECT_CLASS (klass)->finalize = vs_tree_item_finalize;
}

static void
vs_tree_item_init (VsTreeItem *self)
{
}

/* See vs-tree-item.h. */
VsTreeItem *
vs_tree_item_new (VsInstant *instant, const VsTreeNode *node, gint64 total)
{
  VsTreeItem *self = g_object_new (VS_TYPE_TREE_ITEM, NULL);
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
