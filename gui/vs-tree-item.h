/* SPDX-License-Identifier: MIT */
/* vs-tree-item.h — one node of an attribution tree, as a list-model item.
 *
 * Wraps a VsTreeNode of a VsInstant's top-down or bottom-up tree (the
 * instant is kept alive by the item) for GtkTreeListModel and the
 * GtkColumnView cells.  Read-only properties for the columns' expressions
 * and sorters: "label", "total-bytes", "self-bytes", "total-count",
 * "percent".
 */
#pragma once

#include <gio/gio.h>

#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_TREE_ITEM (vs_tree_item_get_type ())
G_DECLARE_FINAL_TYPE (VsTreeItem, vs_tree_item, VS, TREE_ITEM, GObject)

/* A new item for node, a node of a tree owned by instant; total is the
 * root's bytes (for percentages); its children are those whose subtree
 * has a frame matching search (NULL or "": every child). */
VsTreeItem *vs_tree_item_new (VsInstant *instant, const VsTreeNode *node, gint64 total,
                              const char *search);

const VsTreeNode *vs_tree_item_get_node (VsTreeItem *self);
/* Share of the root's bytes, 0..100. */
double vs_tree_item_get_percent (VsTreeItem *self);

/* A list of items for the children of item's node (NULL when it has none),
 * as GtkTreeListModelCreateModelFunc wants. */
GListModel *vs_tree_item_create_children (gpointer item, gpointer user_data);

/* A list of the root's children (the top level of the tree), only those
 * whose subtree has a frame matching search (NULL or "": all). */
GListModel *vs_tree_item_list_roots (VsInstant *instant, const VsTreeNode *root,
                                     const char *search);

/* Whether node's frame contains needle, ignoring ASCII case (the root,
 * which has no frame, never matches; "" matches every other node). */
gboolean vs_tree_node_matches (const VsTreeNode *node, const char *needle);

/* How many nodes under root (root excluded) match needle. */
guint vs_tree_node_count_matches (const VsTreeNode *root, const char *needle);

/* node's call stack, one frame a line, innermost (allocating) frame
 * first: in a bottom-up tree (callers below their callee) that is the
 * path from the top level down to node, in a top-down tree the path from
 * node up. */
char *vs_tree_node_stack_text (const VsTreeNode *node, gboolean bottom_up);

G_END_DECLS
