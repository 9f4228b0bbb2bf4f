/* SPDX-License-Identifier: MIT */
/* vs-chart-data.h — what one device's timeline chart draws.
 *
 * Plain data, already reduced by the analyzer: reserved and allocated bytes
 * as one min/max/last triple per time bucket over [t0, t1), the device's
 * capacity, peak and failed-allocation markers, NVTX ranges and a kernel
 * count per bucket.  The chart never sees raw events; a VsChartData is
 * immutable once built and shared by reference (g_atomic_rc_box), so the
 * loader thread can build one and hand it to the main loop.
 *
 * Times are nanoseconds since the trace's start (meta 'start_ns').
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* One time bucket.  A bucket in which nothing changed carries the previous
 * value in all three fields; has_data is FALSE before the first event and
 * after the trace's end. */
typedef struct
{
  gint64 min_reserved, max_reserved, last_reserved;
  gint64 min_allocated, max_allocated, last_allocated;
  guint32 kernels; /* kernels starting in this bucket */
  gboolean has_data;
  /* Reserved bytes replayed under another allocator setting (the data's
   * whatif_label); has_whatif is FALSE without one or before its first
   * change. */
  gint64 min_whatif, max_whatif, last_whatif;
  gboolean has_whatif;
} VsChartBucket;

typedef enum
{
  VS_CHART_MARKER_PEAK_ALLOCATED,
  VS_CHART_MARKER_PEAK_RESERVED,
  VS_CHART_MARKER_FAILED,
} VsChartMarkerKind;

typedef struct
{
  VsChartMarkerKind kind;
  gint64 ts;
  gint64 bytes; /* the peak's value, or the failed request's size */
} VsChartMarker;

typedef struct
{
  gint64 start_ns, end_ns; /* end_ns < 0: never closed (drawn to t1) */
  guint depth;
  char *name;
} VsChartRange;

/* An instant where free memory inside reserved memory hurt: a request
 * it could not serve made the allocator grow or fail (the analyzer's
 * worst fragmentation, vs_fragmentation_worst, and each failure it
 * classified as fragmentation).  Drawn as a bracket over the cached, free
 * gap between allocated and reserved. */
typedef struct
{
  gint64 ts;
  gint64 allocated_bytes;
  gint64 reserved_bytes;
} VsChartFragmentation;

typedef struct _VsChartData
{
  char *title;           /* e.g. "GPU 0 · NVIDIA H200" */
  gint64 trace_start_ns; /* 0 */
  gint64 trace_end_ns;   /* duration of the trace */
  gint64 capacity_bytes; /* 0 when unknown */
  gint64 limit_bytes;    /* the allocator's limit (a cap or PyTorch's per-process
                          * memory fraction × capacity); 0 when unknown */
  char *limit_label;     /* the limit line's label, e.g. "limit 6.00 GiB (memory
                          * fraction 0.043)"; NULL without a limit */
  GArray *fragmentation; /* VsChartFragmentation, by ts; where it hurt (the
                          * legend says "fragmentation" only when any) */
  gint64 peak_bytes;     /* max reserved over the whole trace: sets y scale */
  gint64 t0, t1;         /* span the buckets cover */
  guint n_buckets;
  VsChartBucket *buckets;
  GArray *markers; /* VsChartMarker, by ts */
  GArray *ranges;  /* VsChartRange, by start_ns */
  guint max_range_depth;
  gboolean has_kernels;
  char *whatif_label; /* legend of the replayed reserved line, e.g. "reserved with
                       * expandable_segments:True"; NULL: none drawn */
  /* A second trace compared with this one (vs-comparison.h): its buckets
   * on this grid, its times already shifted into this trace's; drawn as
   * lines in another colour, legend naming both files.  NULL: none. */
  struct _VsChartData *compare;
  char *label;         /* this trace's legend name when compared ("A: run.db") */
  char *compare_label; /* the compared trace's ("B: other.db") */
} VsChartData;

#define VS_TYPE_CHART_DATA (vs_chart_data_get_type ())
GType vs_chart_data_get_type (void) G_GNUC_CONST;

/* A new empty data set covering [t0, t1) with n_buckets zeroed buckets
 * (has_data FALSE), no markers and no ranges.  Requires t1 > t0 and
 * n_buckets > 0.  Free with vs_chart_data_unref(). */
VsChartData *vs_chart_data_new (gint64 t0, gint64 t1, guint n_buckets);
VsChartData *vs_chart_data_ref (VsChartData *data);
void vs_chart_data_unref (VsChartData *data);

/* Appends a marker / a range (the name is copied). */
void vs_chart_data_add_marker (VsChartData *data, VsChartMarkerKind kind, gint64 ts, gint64 bytes);
void vs_chart_data_add_range (VsChartData *data, gint64 start_ns, gint64 end_ns, guint depth,
                              const char *name);

/* Appends an instant where fragmentation hurt (see VsChartFragmentation). */
void vs_chart_data_add_fragmentation (VsChartData *data, gint64 ts, gint64 allocated_bytes,
                                      gint64 reserved_bytes);

/* The bucket index holding time t, or -1 when t is outside [t0, t1). */
gint vs_chart_data_bucket_at (const VsChartData *data, gint64 t);

/* Combines the buckets overlapping [a, b) into out (min of mins, max of
 * maxes, last of the last bucket, sum of kernels; the replayed line's
 * likewise over the buckets that have it).  Returns FALSE and leaves
 * out untouched when none of them has data. */
gboolean vs_chart_data_span (const VsChartData *data, gint64 a, gint64 b, VsChartBucket *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsChartData, vs_chart_data_unref)

G_END_DECLS
