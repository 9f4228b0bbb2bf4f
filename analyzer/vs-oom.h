/* SPDX-License-Identifier: MIT */
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

/* Why a request failed. */
typedef enum
{
  VS_OOM_CAUSE_UNKNOWN,
  VS_OOM_CAUSE_DEVICE_FULL,     /* the device had less free memory than the request */
  VS_OOM_CAUSE_ALLOCATOR_LIMIT, /* the device had room; the allocator's own limit refused */
  VS_OOM_CAUSE_FRAGMENTATION,   /* enough free inside reserved, no free block large enough */
} VsOomCause;

/* The cause's name as findings and reports print it: "oom-device-full",
 * "oom-allocator-limit", "oom-fragmentation" ("" for unknown). */
const char *vs_oom_cause_name (VsOomCause cause);

/* Classifies failure o (from vs_oom_list() of its device with allocator 0,
 * all_failures, which holds the device-level failures too):
 *   device full       CUDA reported less free memory than the request, or
 *                     a device-level cudaMalloc of the same process failed
 *                     at or just before it (PyTorch asked CUDA and CUDA had
 *                     no room), or reserved + request exceed the capacity;
 *   fragmentation     the allocator's free memory inside reserved is at
 *                     least the request and at least 10 % of reserved, yet
 *                     its largest free block is smaller than the request;
 *   allocator limit   otherwise, when the allocator's limit is known to be
 *                     exceeded (limit_bytes, e.g. PyTorch's per-process
 *                     fraction × capacity: reserved + request > limit), or
 *                     the device had room (CUDA reported enough free
 *                     memory, or device-level memory was observed and no
 *                     device-level allocation failed).
 * Writes one sentence of evidence with numbers to *evidence (may be NULL;
 * set to NULL when the cause is unknown), translated where a catalog is
 * bound.  Sizes in it are never negative.  Readers show a failure through
 * vs_oom_explain() (vs-oom-explain.h), which adds the frameworks' pools
 * and the words for an unknown cause. */
VsOomCause vs_oom_classify (VsTrace *trace, const VsOom *o, const GPtrArray *all_failures,
                            gint64 limit_bytes, char **evidence);

/* The capacity of o's device: the total CUDA reported at the failure,
 * otherwise the device's; VS_UNKNOWN when neither is known. */
gint64 vs_oom_capacity (VsTrace *trace, const VsOom *o);

/* bytes as PyTorch's own messages print a size (c10's format_size: "196.00
 * MiB", "1024.00 MiB" for 1 GiB - 1, "6.00 GiB"), so that a figure can be
 * matched against the message a user holds.  Newly allocated. */
char *vs_oom_torch_size (gint64 bytes);

G_END_DECLS
