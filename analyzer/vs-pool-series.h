/* SPDX-License-Identifier: MIT */
/* vs-pool-series.h — the state of a framework pool seen only from the
 * device level (vs-framework-pools.h) at one instant, for the readers of
 * vs-timeline.h: such a pool has no series rows of its own, its reserved
 * memory over time is its segments replayed (taken and given back), its
 * allocated memory unknown.
 */
#pragma once

#include "vs-timeline.h"

G_BEGIN_DECLS

/* Fills *out with the state of pool pool_id (a synthetic id,
 * vs_framework_pool_is()) after replay step seq, or, when seq is
 * VS_UNKNOWN, at time_ns (since the trace's start; changes at time_ns
 * included): reserved the segments held then (0 before its first
 * change, out->seq 0), allocated and device-level bytes VS_UNKNOWN.  A
 * pool whose segments the trace does not show has its reserved memory
 * VS_UNKNOWN too. */
void vs_pool_series_at (VsTrace *trace, gint64 pool_id, gint64 seq, gint64 time_ns,
                        VsSeriesPoint *out);

/* What the framework pools seen from the device level held on one
 * device, for a reader walking its series rows in replay order: their
 * changes merged once, then read with a cursor, so each row costs no
 * more than the changes it passes. */
typedef struct
{
  GArray *deltas; /* (seq, bytes) pairs of gint64, by seq */
  guint next;     /* the first change not yet passed */
  gint64 held;    /* the pools' bytes after the changes passed */
} VsPoolHeld;

/* Starts h on the pools of device_id (none: it holds 0 throughout). */
void vs_pool_held_init (VsPoolHeld *h, VsTrace *trace, gint64 device_id);

/* The bytes the pools held after replay step seq, which must not be below
 * the seq of the previous call on h (vs_framework_pools_reserved_at(),
 * in constant time per change passed). */
gint64 vs_pool_held_after (VsPoolHeld *h, gint64 seq);

void vs_pool_held_clear (VsPoolHeld *h);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsPoolHeld, vs_pool_held_clear)

G_END_DECLS
