/* SPDX-License-Identifier: MIT */
/* vs-pool-growth.h — a framework's pool (XLA's BFC allocator, CuPy's
 * memory pool, RMM's pools, TensorFlow's BFC allocator) whose reserved
 * memory grows from one iteration to the next while what it hands out
 * does not.
 *
 * A pool takes memory from CUDA when no free block of its own fits the
 * request and, unless told to, keeps it to the end: requests whose sizes
 * change every step make it take more every step although the program
 * holds no more.  Such a pool's reserved memory at the start of each of
 * the device's iterations (vs_iterations_find()) is judged by the rules of
 * growth per iteration (vs_growth_judge_values()).  Its allocated memory
 * is judged the same way where the trace knows it over time (the
 * allocator level `record` keeps of CuPy and XLA); a pool whose allocated
 * memory grows too holds what the program keeps, which growth of
 * allocated memory describes: it is not reported here.  A pool seen only
 * from the device level has reserved memory over time (its segments) and
 * no allocated memory over time: its reserved memory alone is judged.
 */
#pragma once

#include "vs-growth.h"
#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 allocator_id;          /* the pool's (synthetic below 0 for one seen from below) */
  const char *framework;        /* its kind: "xla", "cupy", "rmm", "tensorflow" */
  VsGrowth growth;              /* of its reserved memory per iteration; the site is the stack
                                 * that took most of the segments between first_seq and
                                 * last_seq (site_bytes: those segments' bytes) */
  gint64 first_reserved_bytes;  /* reserved at the first iteration compared */
  gint64 last_reserved_bytes;   /* and at the last */
  gint64 segment_count;         /* segments taken in between */
  gboolean allocated_known;     /* its allocated memory over time is known (and does not grow) */
  gint64 first_allocated_bytes; /* allocated at those two iterations, VS_UNKNOWN when unknown */
  gint64 last_allocated_bytes;
} VsPoolGrowth;

/* The pools of iterations->device_id whose reserved memory grows per
 * iteration (see above), as a new GArray of VsPoolGrowth (empty when
 * none, or without iterations); NULL with error set when the trace
 * cannot be read. */
GArray *vs_pool_growth_find (VsTrace *trace, const VsIterations *iterations, GError **error);

G_END_DECLS
