/* vs-activity.h — kernels and NVTX ranges, with the memory around them.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

/* Kernels of one name on one device. */
typedef struct {
  gint64 device_id;   /* VS_UNKNOWN when the trace does not know */
  char *name;
  gint64 count;
  gint64 total_ns;
  gint64 avg_ns;      /* total_ns / count, rounded down */
  gint64 min_ns;
  gint64 max_ns;
} VsKernelStats;

/* Kernels of device_id (0 = every device) grouped by device and name,
 * largest total time first.  A GPtrArray of VsKernelStats (freed by the
 * array), or NULL with error set. */
GPtrArray *vs_kernel_stats (VsTrace *trace, gint64 device_id, GError **error);

/* One NVTX range and the memory of one device around it. */
typedef struct {
  gint64 id;                 /* nvtx_range.id */
  gint64 process_id;
  gint64 tid;                /* VS_UNKNOWN if unknown */
  char *domain;              /* NULL for the default domain */
  char *name;
  gint64 depth;
  gint64 start_ns;
  gint64 end_ns;             /* VS_UNKNOWN when the range was never closed */
  gint64 device_id;
  gint64 allocator_id;       /* the series the memory columns describe */
  gint64 allocated_at_start; /* VS_UNKNOWN before the series' first change */
  gint64 reserved_at_start;
  gint64 allocated_at_end;   /* at end_ns, or the trace's end when never closed */
  gint64 reserved_at_end;
  gint64 peak_allocated;     /* exact maximum inside [start, end] */
  gint64 peak_reserved;
} VsRangeMemory;

/* Every NVTX range (by start, then id) crossed with every device of
 * device_id (0 = all devices), with the memory of allocator_id (0 = all)
 * on that device.  A GPtrArray of VsRangeMemory (freed by the array). */
GPtrArray *vs_range_memory (VsTrace *trace, gint64 device_id,
                            gint64 allocator_id, GError **error);

G_END_DECLS
