/* vs-tree.c — blocks as a tree of their stack frames, top-down or
 * bottom-up: the Attribution pane's tree and the flame graph's data.
 */
#include "vs-tree.h"
#include "vs-trace-private.h"

#include <string.h>

typedef struct
{
  VsTreeNode node;
  GHashTable *index; /* frame id -> TreeNode*, while building */
} TreeNode;

static TreeNode *
tree_node_new (VsTreeNode *parent, const char *label, gint64 frame_id)
{
  TreeNode *n = g_new0 (TreeNode, 1);

  n->node.label = label;
  n->node.frame_id = frame_id;
  n->node.parent = parent;
  n->node.children = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_tree_node_free);
  return n;
}

void
vs_tree_node_free (VsTreeNode *node)
{
  TreeNode *n = (TreeNode *)node;

  if (n == NULL)
    return;
  g_clear_pointer (&n->index, g_hash_table_unref);
  g_ptr_array_unref (n->node.children);
  g_free (n);
}

static TreeNode *
tree_child (TreeNode *parent, const char *label, gint64 frame_id)
{
  TreeNode *child;

  if (parent->index == NULL)
    parent->index = g_hash_table_new (g_int64_hash, g_int64_equal);
  child = g_hash_table_lookup (parent->index, &frame_id);
  if (child == NULL)
    {
      child = tree_node_new (&parent->node, label, frame_id);
      g_ptr_array_add (parent->node.children, child);
      g_hash_table_insert (parent->index, &child->node.frame_id, child);
    }
  return child;
}

static gint
node_cmp (gconstpointer pa, gconstpointer pb)
{
  const VsTreeNode *a = *(VsTreeNode *const *)pa, *b = *(VsTreeNode *const *)pb;
  int c;

  if (a->total_bytes != b->total_bytes)
    return a->total_bytes > b->total_bytes ? -1 : 1;
  if ((c = g_strcmp0 (a->label, b->label)) != 0)
    return c;
  return a->frame_id < b->frame_id ? -1 : a->frame_id > b->frame_id;
}

static void
tree_finish (TreeNode *n)
{
  GPtrArray *stack = g_ptr_array_new ();

  /* Iterative: a deep stack must not overflow ours. */
  g_ptr_array_add (stack, n);
  while (stack->len > 0)
    {
      TreeNode *t = g_ptr_array_steal_index_fast (stack, stack->len - 1);

      g_clear_pointer (&t->index, g_hash_table_unref);
      g_ptr_array_sort (t->node.children, node_cmp);
      for (guint i = 0; i < t->node.children->len; i++)
        g_ptr_array_add (stack, g_ptr_array_index (t->node.children, i));
    }
  g_ptr_array_unref (stack);
}

VsTreeNode *
vs_tree_build (VsTrace *trace, GArray *blocks, VsTreeOrder order, GError **error)
{
  return vs_tree_build_filtered (trace, blocks, order, FALSE, error);
}

/* Whether stack s has a frame of the user's own code. */
static gboolean
has_user_frame (const VsStackInfo *s)
{
  for (guint j = 0; j < s->frames->len; j++)
    if (((const VsFrameInfo *)g_ptr_array_index (s->frames, j))->user_code)
      return TRUE;
  return FALSE;
}

VsTreeNode *
vs_tree_build_filtered (VsTrace *trace, GArray *blocks, VsTreeOrder order, gboolean user_only,
                        GError **error)
{
  TreeNode *root;

  g_return_val_if_fail (trace != NULL && blocks != NULL, NULL);
  root = tree_node_new (NULL, "all", 0);
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      const VsStackInfo *s = vs_stack_get (trace, b->stack_id, error);
      TreeNode *n = root;
      guint len;

      if (s == NULL)
        {
          vs_tree_node_free (&root->node);
          return NULL;
        }
      root->node.total_bytes += b->bytes;
      root->node.total_count++;
      len = s->frames->len;
      if (len == 0)
        {
          n = tree_child (root, "(no stack)", 0);
          n->node.total_bytes += b->bytes;
          n->node.total_count++;
        }
      if (user_only && len > 0 && !has_user_frame (s))
        {
          /* No user frame: its innermost frame stands for it. */
          const VsFrameInfo *f = g_ptr_array_index (s->frames, 0);

          n = tree_child (n, f->text, f->id);
          n->node.user_code = FALSE;
          n->node.total_bytes += b->bytes;
          n->node.total_count++;
          len = 0;
        }
      for (guint j = 0; j < len; j++)
        {
          const VsFrameInfo *f
              = g_ptr_array_index (s->frames, order == VS_TREE_TOP_DOWN ? len - 1 - j : j);

          if (user_only && !f->user_code)
            continue;
          n = tree_child (n, f->text, f->id);
          n->node.user_code = f->user_code;
          n->node.total_bytes += b->bytes;
          n->node.total_count++;
        }
      n->node.self_bytes += b->bytes;
      n->node.self_count++;
    }
  tree_finish (root);
  return &root->node;
}
