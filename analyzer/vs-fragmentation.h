/* SPDX-License-Identifier: MIT */
/* vs-fragmentation.h — free memory inside reserved memory.
 *
 * Fragmentation at an instant is reserved − allocated.  For allocators
 * whose segments are known (level-3 blocks: PyTorch's caching allocator)
 * the free bytes are located: the gaps between live blocks inside each
 * live segment, whose largest is the biggest request that could have been
 * served without reserving more.  For memory with no known layout (a
 * stream-ordered pool) the largest free block is unknown.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 device_id;
  gint64 allocator_id; /* 0 = all */
  gint64 seq;          /* replay step the state is taken after */
  gint64 time_ns;      /* VS_UNKNOWN when seq is 0 */
  gint64 reserved_bytes;
  gint64 allocated_bytes;
  gint64 free_bytes;         /* reserved − allocated */
  gint64 segment_count;      /* live segments with a known layout */
  gint64 segment_free_bytes; /* free bytes inside those segments */
  gint64
      largest_free_bytes; /* largest gap; 0 when nothing is free; VS_UNKNOWN when free memory lies outside known segments */
} VsFragmentation;

/* A free gap inside a segment (for drawing segment maps). */
typedef struct
{
  gint64 segment_id; /* block.id of the segment */
  gint64 address;
  gint64 bytes;
} VsFreeGap;

/* Fills *out with the fragmentation of (device_id, allocator_id) after
 * step seq.  When gaps is not NULL, appends every VsFreeGap found to it. */
gboolean vs_fragmentation_at (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                              VsFragmentation *out, GArray *gaps, GError **error);

/* A live segment as vs_fragmentation_at() sees it: one extent of reserved
 * memory of one allocator (an expandable segment's touching mapped pieces
 * merged). */
typedef struct
{
  gint64 id; /* block.id of its first piece (= VsFreeGap.segment_id) */
  gint64 allocator_id;
  gint64 address;
  gint64 bytes;         /* the whole extent */
  gint64 pieces;        /* level-3 blocks merged into it */
  gint64 alloc_time_ns; /* of the first piece; VS_UNKNOWN before the trace */
} VsSegment;

/* The live segments (level-3 blocks) of (device_id, allocator_id; 0 = every
 * allocator of the device) after step seq, by allocator then address —
 * full and partly free ones alike.  Drawn with vs_fragmentation_at()'s gaps
 * they give each segment's allocated and free parts.  A GArray of
 * VsSegment (empty when no allocator of the device has known segments), or
 * NULL with error set. */
GArray *vs_fragmentation_segments (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                   gint64 seq, GError **error);

/* The instant of worst fragmentation of (device_id, allocator_id; 0 =
 * all): where free memory inside reserved memory hurt — the step just
 * before a request the free blocks could not serve, that is before a
 * segment was taken (the allocator had to grow) or at a failed request,
 * with the most reserved − allocated.  A cache that no request missed (an
 * empty cache after its blocks were freed, say) is never the worst.  Fills
 * *out as vs_fragmentation_at() does for that step; out->seq 0 and
 * everything 0 when no request ever missed free memory (no segment was
 * taken with memory free inside reserved, nothing failed).  Reads one
 * series row per segment and per failure.  Returns FALSE with error set
 * on failure. */
gboolean vs_fragmentation_worst (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                 VsFragmentation *out, GError **error);

G_END_DECLS
