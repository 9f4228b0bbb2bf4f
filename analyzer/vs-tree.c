/* SPDX-License-Identifier: MIT */
/* vs-tree.c — blocks as a tree of their stack frames, top-down or
 * bottom-up: the Attribution pane's tree and the flame graph's data.
 *
 * Blocks add their bytes where their path ends; totals are summed up the
 * tree once it is built.  A top-down path is the stack's path in the
 * trace's stack trie (or, with the user's frames only, its user frames),
 * so each trie node is placed once and stacks sharing a deep chain share
 * its tree nodes: the tree takes time and memory proportional to the trie
 * nodes the blocks reach.  A bottom-up path starts at each stack's
 * innermost frame, so it is walked once per distinct stack, and the tree
 * has one node per frame of those stacks that no other stack shares from
 * the innermost end.
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

/* Sums the totals up the tree (a node's total is its self plus its
 * children's totals) and sorts each node's children. */
static void
tree_finish (TreeNode *root)
{
  g_autoptr (GPtrArray) order = g_ptr_array_new ();

  /* Iterative, parents before children: a deep stack must not overflow
   * ours. */
  g_ptr_array_add (order, root);
  for (guint i = 0; i < order->len; i++)
    {
      TreeNode *t = g_ptr_array_index (order, i);

      g_clear_pointer (&t->index, g_hash_table_unref);
      t->node.total_bytes = t->node.self_bytes;
      t->node.total_count = t->node.self_count;
      for (guint k = 0; k < t->node.children->len; k++)
        g_ptr_array_add (order, g_ptr_array_index (t->node.children, k));
    }
  for (guint i = order->len; i-- > 1;)
    {
      VsTreeNode *n = g_ptr_array_index (order, i);

      n->parent->total_bytes += n->total_bytes;
      n->parent->total_count += n->total_count;
    }
  for (guint i = 0; i < order->len; i++)
    g_ptr_array_sort (((TreeNode *)g_ptr_array_index (order, i))->node.children, node_cmp);
}

VsTreeNode *
vs_tree_build (VsTrace *trace, GArray *blocks, VsTreeOrder order, GError **error)
{
  return vs_tree_build_filtered (trace, blocks, order, FALSE, error);
}

/* A child of n for frame f. */
static TreeNode *
frame_child (TreeNode *n, const VsFrameInfo *f)
{
  TreeNode *child = tree_child (n, f->text, f->id);

  child->node.user_code = f->user_code;
  return child;
}

/* The top-down node of stack s: its parent's node, and below it its own
 * frame's (with user_only, only when the frame is the user's own); the
 * nodes found are kept in placed (stack -> TreeNode*). */
static TreeNode *
place_top_down (TreeNode *root, const VsStackInfo *s, gboolean user_only, GHashTable *placed)
{
  g_autoptr (GPtrArray) walk = g_ptr_array_new ();
  TreeNode *n = root;

  for (const VsStackInfo *t = s; t != NULL && t->frame != NULL; t = t->parent)
    {
      TreeNode *found = g_hash_table_lookup (placed, t);

      if (found != NULL)
        {
          n = found;
          break;
        }
      g_ptr_array_add (walk, (gpointer)t);
    }
  for (guint i = walk->len; i-- > 0;)
    {
      const VsStackInfo *t = g_ptr_array_index (walk, i);

      if (!user_only || t->frame->user_code)
        n = frame_child (n, t->frame);
      g_hash_table_insert (placed, (gpointer)t, n);
    }
  return n;
}

/* The bottom-up node of stack s: its frames from the innermost (with
 * user_only, only the user's own). */
static TreeNode *
place_bottom_up (TreeNode *root, const VsStackInfo *s, gboolean user_only)
{
  TreeNode *n = root;

  for (const VsStackInfo *t = s; t != NULL && t->frame != NULL; t = t->parent)
    if (!user_only || t->frame->user_code)
      n = frame_child (n, t->frame);
  return n;
}

VsTreeNode *
vs_tree_build_filtered (VsTrace *trace, GArray *blocks, VsTreeOrder order, gboolean user_only,
                        GError **error)
{
  g_autoptr (GHashTable) placed = g_hash_table_new (NULL, NULL); /* trie node -> TreeNode* */
  g_autoptr (GHashTable) ends = g_hash_table_new (NULL, NULL);   /* stack -> its path's end */
  TreeNode *root;

  g_return_val_if_fail (trace != NULL && blocks != NULL, NULL);
  root = tree_node_new (NULL, "all", 0);
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      const VsStackInfo *s = vs_stack_get (trace, b->stack_id, error);
      TreeNode *n;

      if (s == NULL)
        {
          vs_tree_node_free (&root->node);
          return NULL;
        }
      n = g_hash_table_lookup (ends, s);
      if (n == NULL)
        {
          if (s->depth == 0)
            n = tree_child (root, "(no stack)", 0);
          else if (user_only && !s->user_code)
            {
              /* No user frame: its innermost frame stands for it. */
              n = tree_child (root, s->frame->text, s->frame->id);
              n->node.user_code = FALSE;
            }
          else if (order == VS_TREE_TOP_DOWN)
            n = place_top_down (root, s, user_only, placed);
          else
            n = place_bottom_up (root, s, user_only);
          g_hash_table_insert (ends, (gpointer)s, n);
        }
      n->node.self_bytes += b->bytes;
      n->node.self_count++;
    }
  tree_finish (root);
  return &root->node;
}
