/* SPDX-License-Identifier: MIT */
/* vs-block-item.h — one live allocation of a VsInstant, as a list item.
 *
 * Read-only properties for the columns' expressions and sorters: "bytes",
 * "block-bytes", "alloc-time" (gint64), "address" (guint64), "kind",
 * "site", "stack" (strings; see the getters below).
 */
#pragma once

#include <gio/gio.h>

#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_BLOCK_ITEM (vs_block_item_get_type ())
G_DECLARE_FINAL_TYPE (VsBlockItem, vs_block_item, VS, BLOCK_ITEM, GObject)

/* A list of one item per block of instant, in the instant's order. */
GListModel *vs_block_item_list (VsInstant *instant);

const VsBlock *vs_block_item_get_block (VsBlockItem *self);
/* The block's site ("" when it has no stack). */
const char *vs_block_item_get_site (VsBlockItem *self);
/* The block's full stack text ("" when it has no stack), built on each
 * call (the stack cache keeps frames, not texts); free with g_free(). */
char *vs_block_item_dup_stack (VsBlockItem *self);
/* The block's stack (the empty stack when it has none), the trace's. */
const VsStackInfo *vs_block_item_get_stack_info (VsBlockItem *self);
/* "pytorch", "pool:0x…", "nvtx:<heap>" for an allocator's block, the
 * memory kind ("device", "async", …) for a device-level allocation. */
const char *vs_block_item_get_kind (VsBlockItem *self);

G_END_DECLS
