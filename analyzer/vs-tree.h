/* SPDX-License-Identifier: MIT */
/* vs-tree.h — blocks (see vs-blocks.h) as a tree of their stack frames.
 */
#pragma once

#include "vs-blocks.h"

G_BEGIN_DECLS

typedef enum
{
  VS_TREE_TOP_DOWN,  /* root's children are outermost frames (callers first) */
  VS_TREE_BOTTOM_UP, /* root's children are innermost frames (allocating code first) */
} VsTreeOrder;

typedef struct _VsTreeNode VsTreeNode;
struct _VsTreeNode
{
  const char
      *label;      /* frame text (owned by the stack cache); root: "all", no stack: "(no stack)" */
  gint64 frame_id; /* 0 for the root and the no-stack node */
  gint64 total_bytes; /* bytes of blocks whose path passes here */
  gint64 total_count;
  gint64 self_bytes; /* bytes of blocks whose path ends here */
  gint64 self_count;
  gboolean user_code;  /* the frame is the user's own code (vs_frame_is_user) */
  VsTreeNode *parent;  /* NULL for the root */
  GPtrArray *children; /* VsTreeNode*, largest total_bytes first */
};

/* A tree of blocks by their stack frames (a frame repeated in a stack,
 * e.g. recursion, appears once per occurrence on its path).  Free with
 * vs_tree_node_free().  NULL with error set on failure. */
VsTreeNode *vs_tree_build (VsTrace *trace, GArray *blocks, VsTreeOrder order, GError **error);

/* As vs_tree_build(), with only the user's own frames when user_only
 * (VsFrameInfo.user_code: library, standard-library, profiler and
 * allocator frames folded away); a stack with no user frame keeps its
 * innermost frame, as the user text of a stack does. */
VsTreeNode *vs_tree_build_filtered (VsTrace *trace, GArray *blocks, VsTreeOrder order,
                                    gboolean user_only, GError **error);

/* Frees node and its subtree.  NULL is allowed. */
void vs_tree_node_free (VsTreeNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTreeNode, vs_tree_node_free)

G_END_DECLS
