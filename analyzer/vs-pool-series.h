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

G_END_DECLS
