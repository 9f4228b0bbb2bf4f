/* SPDX-License-Identifier: MIT */
/* vs-block-bands.h — allocations over time, stacked as bands.
 *
 * Each allocated block (vs-blocks.h: PyTorch's blocks, device-level
 * allocations that belong to no allocator, a pool's own allocations) is a
 * band from its allocation to its free, stacked as PyTorch's memory_viz
 * stacks its Active Memory Timeline: the blocks live at a time lie one on
 * top of the other in the order they were allocated, so a freed block's
 * band ends and those above it move down.
 *
 * Level of detail: for a time range drawn over N columns, only the largest
 * blocks (at most max_bands) among those that live long enough to be seen
 * at that zoom (every block while the range spans at most 65536 replay
 * steps; else those living longer than about four columns' worth of
 * steps) are bands; the rest of the allocated memory is one "other" band on top of
 * them (memory_viz's "summarized" entry), which separates into bands as
 * the range narrows.  The bands' sizes, the other band and the total are
 * exact at each column's centre; the total is the largest allocated
 * memory in the column (vs_timeline_query), so that the stack's top is the
 * main chart's allocated memory.  The blocks are found through the
 * finalizer's interval bins from the shortest lifetime drawn up (or, on a
 * compacted trace, the chunks' allocation ranges), so a zoomed-out query
 * reads the long-lived blocks only, not every block of the trace.
 */
#pragma once

#include "vs-blocks.h"

G_BEGIN_DECLS

/* One band: a block drawn over a run of columns. */
typedef struct
{
  VsBlock block;
  const VsStackInfo *stack; /* the trace's stack cache; never NULL */
  guint first_column;       /* the first column it is live in (at its centre) */
  guint n_columns;          /* columns it is live in; 0: between two centres */
  guint offset;             /* index of its first bottom in VsBlockBands.bottoms */
} VsBand;

typedef struct
{
  gint64 device_id;
  gint64 from_ns, to_ns; /* the range, [from_ns, to_ns) */
  guint n_columns;
  GArray *bands;       /* VsBand, in stacking order (by allocation) */
  GArray *bottoms;     /* gint64: band i's bottom in column first_column + k is
                          * bottoms[bands[i].offset + k] bytes */
  GArray *banded;      /* gint64 per column: bytes of the bands live at its centre */
  GArray *total;       /* gint64 per column: largest allocated memory in it */
  gint64 max_total;    /* the largest total */
  gint64 min_lifetime; /* replay steps a block must span to be a band (0: every block) */
  gint64 candidates;   /* blocks that qualified (more than max_bands: the largest kept) */
} VsBlockBands;

/* The bands of device_id's allocated blocks over [from_ns, to_ns) (since
 * the trace's start) in n_columns equal columns, at most max_bands of
 * them.  Requires from_ns < to_ns, 1 <= n_columns <= 100000 and
 * max_bands >= 1.  Returns a new VsBlockBands (free with
 * vs_block_bands_free), or NULL with error set. */
VsBlockBands *vs_block_bands_query (VsTrace *trace, gint64 device_id, gint64 from_ns, gint64 to_ns,
                                    guint n_columns, guint max_bands, GError **error);

void vs_block_bands_free (VsBlockBands *bands);

/* The bytes of the other band in column (total − banded, never below 0). */
gint64 vs_block_bands_other (const VsBlockBands *bands, guint column);

/* The band drawn at column and height bytes (from the bottom), or -1 when
 * none is there (the other band, or above the stack).  */
int vs_block_bands_find (const VsBlockBands *bands, guint column, gint64 bytes);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsBlockBands, vs_block_bands_free)

G_END_DECLS
