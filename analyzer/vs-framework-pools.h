/* SPDX-License-Identifier: MIT */
/* vs-framework-pools.h — pooling allocators recognised from the device
 * level alone: XLA's BFC allocator (JAX; TensorFlow's is the same code),
 * CuPy's memory pool, RAPIDS RMM's pools.
 *
 * A device-level allocation whose stack names a known pool
 * (tsl::BFCAllocator::Extend, SingleDeviceMemoryPool, rmm::mr::
 * pool_memory_resource …) is that pool's reserved memory, not memory the
 * program was handed: each such pool is an allocator of its own
 * (`xla`, `tensorflow`, `cupy`, `rmm`) with a synthetic id below 0, listed
 * among the trace's allocators.  Its allocated memory is the framework's
 * own figure where the trace has it (meta written by the JAX/CuPy hook,
 * collector/python/vs_frameworks.py) and unknown otherwise — never the
 * pool's size; what it holds at exit is never a leak.  Everything is
 * derived when the trace is read, so traces recorded before this existed
 * get it too.
 */
#pragma once

#include "vs-oom.h"
#include "vs-summary.h"
#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct _VsFrameworkPools VsFrameworkPools;

/* The SQL condition on a `block` row that may be a framework pool's
 * segment seen from below: a device-level allocation (plain or VMM) of
 * no allocator, with a stack (which tells the pool). */
#define VS_FRAMEWORK_POOL_SEGMENT_SQL                                                              \
  "(level = 1 AND allocator_id IS NULL AND kind IN (1, 6) AND stack_id > 0)"

/* Finds the trace's framework pools and adds an allocator per pool and
 * device to trace->allocators; the result is kept on the trace.  Cheap
 * when the trace's frames name no pool (one scan of the frame table). */
gboolean vs_framework_pools_load (VsTrace *trace, GError **error);

/* Frees what vs_framework_pools_load() kept (NULL is fine). */
void vs_framework_pools_free (VsFrameworkPools *pools);

/* Whether allocator_id is a framework pool's synthetic id. */
gboolean vs_framework_pool_is (VsTrace *trace, gint64 allocator_id);

/* The framework pool whose segments stack_id allocated, as its synthetic
 * allocator id on device_id (0: none). */
gint64 vs_framework_pool_of_stack (VsTrace *trace, gint64 device_id, gint64 stack_id);

/* Bytes the framework pools of device_id held at replay step seq. */
gint64 vs_framework_pools_reserved_at (VsTrace *trace, gint64 device_id, gint64 seq);

/* Bytes the framework pools of device_id held before trace time ts (an
 * absolute ts, as the series rows hold it): their segments taken, less
 * those given back, at a ts below it. */
gint64 vs_framework_pools_reserved_before (VsTrace *trace, gint64 device_id, gint64 ts);

/* Whether a framework pool of device_id took or gave back a segment at an
 * absolute ts in [from_ts, to_ts): where none did, the pools' reserved
 * memory is the same all through, vs_framework_pools_reserved_before()
 * from_ts. */
gboolean vs_framework_pools_change_within (VsTrace *trace, gint64 device_id, gint64 from_ts,
                                           gint64 to_ts);

/* Bytes the segments of the framework pool allocator_id (a synthetic id,
 * vs_framework_pool_is()) held after replay step seq; VS_UNKNOWN for
 * another allocator, or a pool whose segments the trace does not show. */
gint64 vs_framework_pool_reserved_at (VsTrace *trace, gint64 allocator_id, gint64 seq);

/* One change of a framework pool's reserved memory: its segments' bytes
 * after replay step seq, at absolute time ts (VS_UNKNOWN for segments
 * live before the trace began). */
typedef struct
{
  gint64 seq, ts, held;
} VsPoolStep;

/* The changes of framework pool allocator_id (a synthetic id,
 * vs_framework_pool_is()) in replay order, a new GArray of VsPoolStep;
 * NULL for another allocator, or a pool whose segments the trace does not
 * show (its reserved memory over time is unknown). */
GArray *vs_framework_pool_steps (VsTrace *trace, gint64 allocator_id);

/* Whether device_id's `all` series counts segments of a framework pool
 * seen only from the device level (the finalizer's series holds them as
 * allocated: vs-timeline.c's readers take them out with
 * vs_framework_pools_reserved_at(), and every other reader goes through
 * them). */
gboolean vs_framework_pools_hold_segments (VsTrace *trace, gint64 device_id);

/* Completes the summary rows of vs_summary_list() (rows of VsSummary,
 * filtered by device_id and allocator_id, 0 = any): a device's `all` row
 * no longer counts its pools' segments as allocated, and each pool gets
 * its row after its device's rows. */
gboolean vs_framework_pools_adjust_summary (VsTrace *trace, GArray *rows, gint64 device_id,
                                            gint64 allocator_id, GError **error);

/* Drops from blocks (VsBlock, as vs_live_blocks() and vs_leaked_blocks()
 * give them) the framework pools' segments: reserved, never handed out. */
void vs_framework_pools_filter_blocks (VsTrace *trace, GArray *blocks);

/* Whether failure o is one of a framework's pools (the hook's record of
 * an out-of-memory error, or the pool's own cudaMalloc failing), and if
 * so, the pool's synthetic allocator id in *pool_id. */
gboolean vs_framework_pool_failure (VsTrace *trace, const VsOom *o, gint64 *pool_id);

G_END_DECLS
