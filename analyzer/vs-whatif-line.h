/* SPDX-License-Identifier: MIT */
/* vs-whatif-line.h — one device's reserved memory over time as a replay
 * under another allocator setting would have had it.
 *
 * The what-if replay (vs-whatif.h) of the device's PyTorch caching
 * allocator, turned into a step series on the trace's own time axis (ns
 * since its start, or event numbers for a trace whose meta time_axis is
 * "order", as every series of the trace), so that it lines up with the
 * recorded series: the viewer draws it next to the recorded reserved
 * line.  Replayed under the trace's own settings and limit, the line is
 * the recorded allocator series' reserved bytes, change for change.
 */
#pragma once

#include "vs-timeline.h"
#include "vs-whatif.h"

G_BEGIN_DECLS

/* Reserved bytes from time_ns on (until the next step). */
typedef struct
{
  gint64 time_ns;
  gint64 reserved_bytes;
} VsWhatifStep;

typedef struct
{
  gint64 device_id;
  gint64 allocator_id;
  VsWhatifResult own;    /* the trace's own settings replayed (whatif's first row) */
  VsWhatifResult result; /* under the setting asked for: peaks, failures, first failure */
  GArray *steps;         /* VsWhatifStep, one per change of reserved memory, by time */
} VsWhatifLine;

void vs_whatif_line_free (VsWhatifLine *line);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsWhatifLine, vs_whatif_line_free)

/* The PyTorch caching allocator of device_id that a line replays, or 0
 * with error set (VS_TRACE_ERROR_INVALID_ARGUMENT) when the device has
 * none, or more than one (one per process sharing the device: replay each
 * with vs_whatif_run). */
gint64 vs_whatif_line_allocator (VsTrace *trace, gint64 device_id, GError **error);

/* Replays the PyTorch allocator of device_id (vs_whatif_line_allocator)
 * under alloc_conf (PYTORCH_CUDA_ALLOC_CONF text; NULL: the trace's own
 * settings) and limit_bytes (bytes, or VS_UNKNOWN for the limit derived
 * from the trace), as `vramscope whatif FILE --alloc-conf CONF --limit
 * BYTES` does, and its own settings beside it.  progress (may be NULL) is
 * called from this thread and stops the replay when it returns FALSE
 * (VS_TRACE_ERROR_CANCELLED).  Returns a new line, or NULL with error set
 * (settings that cannot be parsed: G_OPTION_ERROR). */
VsWhatifLine *vs_whatif_line_new (VsTrace *trace, gint64 device_id, const char *alloc_conf,
                                  gint64 limit_bytes, VsWhatifProgressFunc progress,
                                  gpointer progress_data, GError **error);

/* Reserved bytes at time_ns: after the last step at or before it (0
 * before the first). */
gint64 vs_whatif_line_at (const VsWhatifLine *line, gint64 time_ns);

/* Reduces [from_ns, to_ns) to n_buckets equal buckets (the last absorbs
 * the remainder) as vs_timeline_query does for a recorded series: min,
 * max and last reserved bytes over each bucket, the value carried in
 * included; known is FALSE before the first step.  Allocated and device
 * fields are VS_UNKNOWN.  Requires from_ns < to_ns and n_buckets >= 1.
 * Returns a new GArray of VsTimelineBucket. */
GArray *vs_whatif_line_buckets (const VsWhatifLine *line, gint64 from_ns, gint64 to_ns,
                                guint n_buckets);

G_END_DECLS
