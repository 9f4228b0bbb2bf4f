/* SPDX-License-Identifier: MIT */
/* vs-summary.h — peaks, finals and counts per device and allocator.
 *
 * Read straight from the derived `summary` table that vs_trace_finalize()
 * writes; nothing is recomputed.  One VsSummary per (device, allocator),
 * allocator_id 0 meaning everything on that device.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 device_id;
  gint64 allocator_id;   /* 0 = all */
  gint64 capacity_bytes; /* device total memory, VS_UNKNOWN if unknown */
  gint64 peak_reserved_bytes;
  gint64 peak_reserved_time_ns; /* since start; VS_UNKNOWN if unknown */
  gint64 peak_reserved_seq;     /* VS_UNKNOWN if unknown */
  gint64 peak_allocated_bytes;
  gint64 peak_allocated_time_ns;
  gint64 peak_allocated_seq;
  gint64 final_reserved_bytes;
  gint64 final_allocated_bytes;
  gint64 alloc_count;
  gint64 free_count;
  gint64 failed_alloc_count;
  gint64 peak_device_bytes;   /* all rows only, else VS_UNKNOWN */
  gint64 peak_device_time_ns; /* all rows only, else VS_UNKNOWN */
  gint64 static_bytes;        /* all rows only, else VS_UNKNOWN */
  gint64 peak_pinned_bytes;   /* all rows only, else VS_UNKNOWN */
  gint64 peak_managed_bytes;  /* all rows only, else VS_UNKNOWN */
  /* Blocks live before the trace began, recreated at its start (an
   * imported snapshot's history began with them live): not counted in
   * alloc_count.  VS_UNKNOWN for a trace of schema version 1. */
  gint64 before_trace_bytes;
  gint64 before_trace_count;
} VsSummary;

/* The summaries of every device (device_id 0) or of one device, ordered by
 * device idx, then "all" first, then allocator name.  When allocator_id is
 * not 0 only that allocator's row is returned.  A GArray of VsSummary, or
 * NULL with error set. */
GArray *vs_summary_list (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error);

/* Fills *out with the summary of (device_id, allocator_id).  Returns FALSE
 * with VS_TRACE_ERROR_INVALID_ARGUMENT when the trace has no such row. */
gboolean vs_summary_get (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsSummary *out,
                         GError **error);

G_END_DECLS
