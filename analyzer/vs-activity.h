/* SPDX-License-Identifier: MIT */
/* vs-activity.h — kernels and NVTX ranges, with the memory around them.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

/* Kernels of one name on one device. */
typedef struct
{
  gint64 device_id; /* VS_UNKNOWN when the trace does not know */
  char *name;
  gint64 count;
  gint64 total_ns;
  gint64 avg_ns; /* total_ns / count, rounded down */
  gint64 min_ns;
  gint64 max_ns;
} VsKernelStats;

/* Kernels of device_id (0 = every device) grouped by device and name,
 * largest total time first.  A GPtrArray of VsKernelStats (freed by the
 * array), or NULL with error set. */
GPtrArray *vs_kernel_stats (VsTrace *trace, gint64 device_id, GError **error);

/* One NVTX range and the memory of one device around it. */
typedef struct
{
  gint64 id; /* nvtx_range.id */
  gint64 process_id;
  gint64 tid;   /* VS_UNKNOWN if unknown */
  char *domain; /* NULL for the default domain */
  char *name;
  gint64 depth;
  gint64 start_ns;
  gint64 end_ns; /* VS_UNKNOWN when the range was never closed */
  gint64 device_id;
  gint64 allocator_id;       /* the series the memory columns describe */
  gint64 allocated_at_start; /* VS_UNKNOWN before the series' first change */
  gint64 reserved_at_start;
  gint64 allocated_at_end; /* at end_ns, or the trace's end when never closed */
  gint64 reserved_at_end;
  gint64 peak_allocated; /* exact maximum inside [start, end] */
  gint64 peak_reserved;
} VsRangeMemory;

/* Every NVTX range (by start, then id) crossed with every device of
 * device_id (0 = all devices), with the memory of allocator_id (0 = all)
 * on that device.  A GPtrArray of VsRangeMemory (freed by the array). */
GPtrArray *vs_range_memory (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error);

/* Kernels in one time bucket [from_ns, to_ns). */
typedef struct
{
  gint64 from_ns, to_ns;
  gint64 count;   /* kernels starting in the bucket */
  gint64 busy_ns; /* kernel time inside the bucket: each kernel's interval
                    * clipped to the bucket, summed (concurrent kernels add
                    * up, so it may exceed the bucket's width) */
} VsKernelBucket;

/* Reduces the kernels of device_id (0 = every device) over
 * [from_ns, to_ns) to n_buckets equal buckets (the last one absorbs the
 * remainder).  Reads the range through the index on kernel(start_ns),
 * widened by the longest kernel so kernels that started earlier add their
 * busy time.  Requires from_ns < to_ns and 1 <= n_buckets <= 1000000.  A
 * GArray of VsKernelBucket, or NULL with error set. */
GArray *vs_kernel_density (VsTrace *trace, gint64 device_id, gint64 from_ns, gint64 to_ns,
                           guint n_buckets, GError **error);

/* One NVTX range, without memory figures. */
typedef struct
{
  gint64 id;         /* nvtx_range.id */
  gint64 process_id; /* VS_UNKNOWN if unknown */
  gint64 tid;        /* VS_UNKNOWN if unknown */
  char *domain;      /* NULL for the default domain */
  char *name;
  gint64 depth; /* 0 = outermost */
  gint64 start_ns;
  gint64 end_ns; /* VS_UNKNOWN when never closed */
} VsRangeInfo;

/* Every NVTX range, by start then id: one indexed read, no memory lookups
 * (vs_range_memory() adds those, per range and device).  A GPtrArray of
 * VsRangeInfo (freed by the array), or NULL with error set. */
GPtrArray *vs_range_list (VsTrace *trace, GError **error);

G_END_DECLS
