/* SPDX-License-Identifier: MIT */
/* vs-timeline.h — reserved, allocated and device bytes over time.
 *
 * The series of a (device, allocator) pair is a step function: each row of
 * `series` is the state after one event.  vs_timeline_query() reduces any
 * time range to N buckets with the min, max and last value in each, reading
 * the precomputed summary levels (`series_level`) when zoomed out and the
 * raw rows when zoomed in, so one screen-width query costs the same at any
 * zoom.  vs_series_extremes() gives exact extremes over an interval.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

/* The state of a series at one instant. */
typedef struct
{
  gint64 seq;     /* 0: no change yet (state before the trace) */
  gint64 time_ns; /* time of that change, VS_UNKNOWN if seq is 0 */
  gint64 reserved_bytes;
  gint64 allocated_bytes;
  gint64 device_bytes; /* VS_UNKNOWN unless known for this series */
  gint64 static_bytes;
  gint64 pinned_bytes;
  gint64 managed_bytes;
} VsSeriesPoint;

/* One bucket [from_ns, to_ns).  When known is FALSE the series had no
 * change before to_ns and every value is VS_UNKNOWN.  Values cover the
 * step function over the whole bucket: the value carried in from before it
 * and every change inside it.  At coarse zoom a change lying within one
 * summary-level bucket (at most 1/8 of a bucket wide) of a bucket edge may
 * be counted in the neighbouring bucket. */
typedef struct
{
  gint64 from_ns, to_ns;
  gboolean known;
  gint64 min_reserved, max_reserved, last_reserved;
  gint64 min_allocated, max_allocated, last_allocated;
  gint64 max_device; /* VS_UNKNOWN when the series has no device bytes */
  gint64 n_changes; /* changes inside the bucket; at summary levels, 0 or 1 per level bucket read */
} VsTimelineBucket;

/* The state of (device_id, allocator_id) at time_ns (since start): the
 * last change at or before it.  Returns FALSE with error on failure. */
gboolean vs_series_at_time (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 time_ns,
                            VsSeriesPoint *out, GError **error);

/* The state of (device_id, allocator_id) after replay step seq (the last
 * change with a seq <= seq). */
gboolean vs_series_at_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                           VsSeriesPoint *out, GError **error);

/* n_buckets empty buckets splitting [from_ns, to_ns) into equal parts (the
 * last one absorbs the remainder), with only their edges set; the edges
 * every timeline reduction uses.  Requires from_ns < to_ns with a span
 * that fits in 64 bits, and n_buckets >= 1. */
GArray *vs_timeline_buckets_new (gint64 from_ns, gint64 to_ns, guint n_buckets);

/* Reduces [from_ns, to_ns) of (device_id, allocator_id) to n_buckets equal
 * buckets (the last one absorbs the remainder).  device_id must name a
 * device; allocator_id 0 means all of that device.  Requires
 * from_ns < to_ns and 1 <= n_buckets <= 1000000.  Returns a GArray of
 * VsTimelineBucket, or NULL with error set. */
GArray *vs_timeline_query (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 from_ns,
                           gint64 to_ns, guint n_buckets, GError **error);

/* Exact extremes of the step function over [from_ns, to_ns] inclusive:
 * the value entering the interval and every change in it, using summary
 * levels for the whole level buckets inside and raw rows at the edges.
 * bucket->from_ns/to_ns are set to the interval; known is FALSE when the
 * series has no change up to to_ns. */
gboolean vs_series_extremes (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 from_ns,
                             gint64 to_ns, VsTimelineBucket *out, GError **error);

/* The instant of peak allocated memory of (device_id, allocator_id) inside
 * [from_ns, to_ns]: *out is the state right after the first change that
 * reaches the maximum (or, when the maximum is the state entering the
 * interval, that state, whose time_ns lies before from_ns).  Uses the
 * summary levels: a few dozen indexed reads at any interval length.  When
 * the series has no change up to to_ns, *out is that empty state (seq 0).
 * Returns FALSE with error set on failure. */
gboolean vs_series_peak_between (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                 gint64 from_ns, gint64 to_ns, VsSeriesPoint *out, GError **error);

/* Where the memory of (device_id, allocator_id; 0 = all) changes: the
 * relative time of the first and of the last change of its series, in
 * *from_ns and *to_ns (both VS_UNKNOWN when it never changes).  Returns
 * FALSE with error set on failure. */
gboolean vs_timeline_active_range (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                   gint64 *from_ns, gint64 *to_ns, GError **error);

G_END_DECLS
