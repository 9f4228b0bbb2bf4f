/* SPDX-License-Identifier: MIT */
/* vs-tree-item.c — attribution tree nodes as GObjects for list models,
 * pruned to the subtrees that match a search, and a node's stack as
 * text. */
#include "vs-tree-item.h"

#include <pango/pango.h>
#include <string.h>

struct _VsTreeItem
{
  GObject parent_instance;
  VsInstant *instant;
  const VsTreeNode *node;
  gint64 total;
  char *search; /* NULL: no search */
};

enum
{
  PROP_0,
  PROP_LABEL,
  PROP_TOTAL_BYTES,
  PROP_SELF_BYTES,
  PROP_TOTAL_COUNT,
  PROP_PERCENT,
  PROP_ATTRIBUTES,
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
    case PROP_ATTRIBUTES:
      if (self->node->user_code)
        {
          /* The user's own frames: bold, in the accent blue. */
          PangoAttrList *attrs = pango_attr_list_new ();

          pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
          pango_attr_list_insert (attrs, pango_attr_foreground_new (0x3535, 0x8484, 0xe4e4));
          g_value_take_boxed (value, attrs);
        }
      else
        g_value_set_boxed (value, NULL);
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
  g_free (self->search);
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
  /* How the frame's text is drawn: user frames stand out (NULL: plain). */
  props[PROP_ATTRIBUTES] = g_param_spec_boxed ("attributes", NULL, NULL, PANGO_TYPE_ATTR_LIST, ro);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
vs_tree_item_init (VsTreeItem *self)
{
}

/* See vs-tree-item.h. */
VsTreeItem *
vs_tree_item_new (VsInstant *instant, const VsTreeNode *node, gint64 total, const char *search)
{
  VsTreeItem *self;

  g_return_val_if_fail (instant != NULL && node != NULL, NULL);
  self = g_object_new (VS_TYPE_TREE_ITEM, NULL);
  self->instant = vs_instant_ref (instant);
  self->node = node;
  self->total = total;
  self->search = search != NULL && *search != '\0' ? g_strdup (search) : NULL;
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

/* See vs-tree-item.h. */
gboolean
vs_tree_node_matches (const VsTreeNode *node, const char *needle)
{
  size_t n;

  g_return_val_if_fail (node != NULL && needle != NULL, FALSE);
  if (node->parent == NULL || node->label == NULL)
    return FALSE;
  n = strlen (needle);
  for (const char *p = node->label; *p != '\0'; p++)
    if (g_ascii_strncasecmp (p, needle, n) == 0)
      return TRUE;
  return n == 0;
}

/* See vs-tree-item.h. */
guint
vs_tree_node_count_matches (const VsTreeNode *root, const char *needle)
{
  guint n = 0;

  g_return_val_if_fail (root != NULL && needle != NULL, 0);
  for (guint i = 0; root->children != NULL && i < root->children->len; i++)
    {
      const VsTreeNode *c = g_ptr_array_index (root->children, i);
      n += vs_tree_node_matches (c, needle) + vs_tree_node_count_matches (c, needle);
    }
  return n;
}

/* Whether node or a node under it matches needle. */
static gboolean
subtree_matches (const VsTreeNode *node, const char *needle)
{
  if (vs_tree_node_matches (node, needle))
    return TRUE;
  for (guint i = 0; node->children != NULL && i < node->children->len; i++)
    if (subtree_matches (g_ptr_array_index (node->children, i), needle))
      return TRUE;
  return FALSE;
}

/* See vs-tree-item.h. */
char *
vs_tree_node_stack_text (const VsTreeNode *node, gboolean bottom_up)
{
  g_autoptr (GPtrArray) path = g_ptr_array_new (); /* node first, up to the top level */
  GString *text = g_string_new (NULL);

  g_return_val_if_fail (node != NULL, NULL);
  for (const VsTreeNode *n = node; n != NULL && n->parent != NULL; n = n->parent)
    g_ptr_array_add (path, (gpointer)n);
  for (guint i = 0; i < path->len; i++)
    {
      const VsTreeNode *n = g_ptr_array_index (path, bottom_up ? path->len - 1 - i : i);
      g_string_append (text, n->label);
      g_string_append_c (text, '\n');
    }
  return g_string_free (text, FALSE);
}

static GListModel *
list_children (VsInstant *instant, const VsTreeNode *node, gint64 total, const char *search)
{
  GListStore *store;

  if (node->children == NULL || node->children->len == 0)
    return NULL;
  store = g_list_store_new (VS_TYPE_TREE_ITEM);
  for (guint i = 0; i < node->children->len; i++)
    {
      const VsTreeNode *c = g_ptr_array_index (node->children, i);
      g_autoptr (VsTreeItem) child = NULL;

      if (search != NULL && !subtree_matches (c, search))
        continue;
      child = vs_tree_item_new (instant, c, total, search);
      g_list_store_append (store, child);
    }
  if (g_list_model_get_n_items (G_LIST_MODEL (store)) == 0)
    g_clear_object (&store);
  return G_LIST_MODEL (store);
}

/* See vs-tree-item.h. */
GListModel *
vs_tree_item_create_children (gpointer item, gpointer user_data)
{
  VsTreeItem *self = item;
  return list_children (self->instant, self->node, self->total, self->search);
}

/* See vs-tree-item.h. */
GListModel *
vs_tree_item_list_roots (VsInstant *instant, const VsTreeNode *root, const char *search)
{
  GListModel *model;

  if (search != NULL && *search == '\0')
    search = NULL;
  model = list_children (instant, root, root->total_bytes, search);
  return model ? model : G_LIST_MODEL (g_list_store_new (VS_TYPE_TREE_ITEM));
}
