/* vs-oom.h — failed allocations and the state at each.
 *
 * A failed allocation belongs to the allocator that failed (PyTorch's own
 * out-of-memory) or, with no allocator, to the device-level API.  For each
 * the state of its device at that instant is given: reserved and allocated
 * of the allocator that failed and of the whole device, free bytes inside
 * reserved, the largest free block, and the device's free/total memory as
 * CUDA reported them.
 */
#pragma once

#include "vs-trace.h"
#include "vs-fragmentation.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 id; /* failed_alloc.id */
  gint64 time_ns;
  gint64 device_id;    /* VS_UNKNOWN when the trace does not know */
  gint64 allocator_id; /* 0: a device-level API */
  gint64 process_id;
  char *api;
  gint64 requested_bytes;
  gint64 error;             /* VS_UNKNOWN if unknown */
  char *error_name;         /* NULL if unknown */
  gint64 device_free_bytes; /* as reported at the failure, VS_UNKNOWN if unknown */
  gint64 device_total_bytes;
  gint64 stack_id;
  gint64 seq;                /* state of the device taken after this step */
  VsFragmentation allocator; /* the allocator that failed (all for device-level) */
  VsFragmentation all;       /* everything on the device */
} VsOom;

/* Every failed allocation of device_id (0 = every device) and allocator_id
 * (0 = every allocator, device-level included), by time.  A GPtrArray of
 * VsOom (freed by the array), or NULL with error set. */
GPtrArray *vs_oom_list (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error);

G_END_DECLS
