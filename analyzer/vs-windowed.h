/* SPDX-License-Identifier: MIT */
/* vs-windowed.h — what a windowed trace (`record --window`) keeps.
 *
 * A windowed trace holds every event only in its detail intervals (the
 * last DURATION of the run, around its peaks and its first and last
 * failures) and the whole run in slices: per device and allocator the
 * peak, lowest and final reserved and allocated memory of each slice, and
 * per allocation site the bytes each slice added (schemas/README.md).  A
 * complete trace (or one older than schema 4) has no detail intervals.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean windowed;       /* some events were dropped */
  gint64 window_ns;        /* record --window's DURATION; VS_UNKNOWN without it */
  gint64 detail_from_ns;   /* where the window's full detail begins (since start) */
  gint64 slice_ns;         /* fixed slices: their length; 0 when they follow iterations */
  gint64 slice_iterations; /* slices that follow iterations: iterations per slice, else 0 */
  guint n_intervals;       /* detail intervals over all devices */
} VsWindowedInfo;

/* One slice of a windowed trace's (device, allocator); times since
 * start. */
typedef struct
{
  gint64 start_ns, end_ns;
  gint64 peak_reserved_bytes, peak_allocated_bytes;
  gint64 min_reserved_bytes, min_allocated_bytes;
  gint64 final_reserved_bytes, final_allocated_bytes;
  gint64 alloc_count, free_count, failed_alloc_count;
} VsWindowedSlice;

/* Fills *out (all zero, window_ns VS_UNKNOWN, for a complete trace).
 * Returns FALSE with error set on failure. */
gboolean vs_windowed_info (VsTrace *trace, VsWindowedInfo *out, GError **error);

/* The slices of (device_id, allocator_id; 0 = all), by time: an empty
 * array for a complete trace, NULL with error set on failure. */
GArray *vs_windowed_slices (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error);

/* The sentence a text report prints once about a windowed trace: what it
 * keeps and from when its detail is complete; NULL for a complete one. */
char *vs_windowed_note (VsTrace *trace);

G_END_DECLS
