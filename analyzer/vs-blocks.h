/* SPDX-License-Identifier: MIT */
/* vs-blocks.h — allocations live at an instant, leaked at the end, and
 * grouped by stack or site (vs-tree.h builds trees of them).
 *
 * Blocks come from the derived `block` table.  A block is live after
 * replay step P iff alloc_seq <= P and (free_seq IS NULL or free_seq > P);
 * a block allocated before the trace began has alloc_seq NULL and counts
 * as live from the start.  "Allocated" blocks are the ones whose bytes
 * make up the allocated series: the blocks handed out by an allocator
 * (level 2, and a pool's own allocations) and device-level allocations
 * that belong to no allocator.  Their bytes at the peak seq sum to the
 * summary's peak_allocated_bytes.
 */
#pragma once

#include "vs-trace.h"
#include "vs-stack.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 id; /* block.id */
  int level; /* 1 device-level, 2 allocator block, 3 allocator segment */
  gint64 device_id;
  gint64 allocator_id; /* 0 when the block belongs to no allocator */
  gint64 process_id;   /* VS_UNKNOWN if unknown */
  int kind;            /* VsMemKind */
  gint64 address;
  gint64 bytes;         /* requested size */
  gint64 block_bytes;   /* rounded size when known, else VS_UNKNOWN */
  gint64 alloc_seq;     /* VS_UNKNOWN: allocated before the trace began */
  gint64 free_seq;      /* VS_UNKNOWN: never freed */
  gint64 alloc_time_ns; /* since start, VS_UNKNOWN when before the trace */
  gint64 free_time_ns;
  gint64 stack_id; /* 0 when none */
  gint64 owner_id; /* block.id of the segment, VS_UNKNOWN if none */
} VsBlock;

/* The allocated blocks of (device_id, allocator_id) live after step seq,
 * largest first.  allocator_id 0 = every allocated block of the device.
 * A GArray of VsBlock, or NULL with error set. */
GArray *vs_live_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                        GError **error);

/* The allocated blocks of (device_id, allocator_id) never freed, oldest
 * first.  device_id 0 = every device. */
GArray *vs_leaked_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error);

typedef enum
{
  VS_GROUP_BY_STACK, /* one group per distinct full stack */
  VS_GROUP_BY_SITE,  /* one group per site (innermost user frame) */
} VsGroupBy;

typedef struct
{
  gint64 device_id;
  gint64 stack_id;  /* by stack: the stack; by site: its largest stack */
  const char *site; /* owned by the trace's stack cache */
  const char *top_frame;
  const VsStackInfo *stack; /* the trace's; by site: its largest stack */
  gint64 bytes;
  gint64 count;
  gint64 first_alloc_time_ns; /* VS_UNKNOWN if one was allocated before the trace */
  gint64 last_alloc_time_ns;  /* VS_UNKNOWN if all were allocated before the trace */
} VsGroup;

/* Groups blocks (a GArray of VsBlock) per device and by stack or site,
 * largest bytes first (ties: site, then stack text, then stack id).  A
 * GArray of VsGroup, or NULL with error set. */
GArray *vs_group_blocks (VsTrace *trace, GArray *blocks, VsGroupBy by, GError **error);

G_END_DECLS
