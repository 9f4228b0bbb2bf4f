/* SPDX-License-Identifier: MIT */
/* vs-collector-private.h — internals shared by the collector's files.
 *
 * The collector is split so that the part that turns CUPTI records and
 * callback data into trace rows (vs-sink.c, vs-callbacks.c) can be driven by
 * tests with hand-built buffers on a machine without a GPU, while the parts
 * that need a live driver (vs-collector.c: injection, threads, signals) stay
 * small.  Data flows one way:
 *
 *   application threads ── VsItem ──▶ VsQueue ─┐
 *   CUPTI worker ── completed buffers ─────────┼─▶ writer thread ─▶ VsSink ─▶ VsWriter
 *
 * Plain C11, no GLib: this code runs inside arbitrary host processes.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-writer.h"

/* Kinds of items application threads hand to the writer thread. */
typedef enum
{
  VS_ITEM_FAILED_ALLOC = 1, /* an allocation API returned an error */
  VS_ITEM_ALLOC_CALL,       /* a successful allocation: correlation → thread, range */
  VS_ITEM_VMM_MAP,          /* cuMemMap succeeded at address */
  VS_ITEM_VMM_UNMAP,        /* cuMemUnmap succeeded at address */
  VS_ITEM_RANGE_BEGIN,      /* an NVTX range opened */
  VS_ITEM_RANGE_END,        /* an NVTX range closed */
  VS_ITEM_STACK,            /* a stack seen for the first time: blob owns it */
  VS_ITEM_FREE_CALL,        /* a successful free: address → thread, stack */
} VsItemType;

#define VS_ITEM_TEXT 96

/* One fixed-size event from an application thread.  Strings are copied in
 * (truncated to VS_ITEM_TEXT - 1 bytes) so the item owns all its data. */
typedef struct
{
  uint32_t type;
  uint32_t device; /* CUPTI device id, UINT32_MAX when unknown */
  int64_t ts;      /* CLOCK_REALTIME ns */
  int64_t tid;
  uint64_t correlation;
  uint64_t address;
  int64_t bytes; /* requested bytes (failed alloc), mapped size (vmm) */
  int64_t error;
  int64_t free_bytes, total_bytes; /* device state at a failed alloc */
  uint64_t range;                  /* range key: the range opened/closed, or innermost range */
  uint64_t parent;                 /* enclosing range key of a RANGE_BEGIN, 0 at top */
  int64_t depth;
  uint64_t stack;          /* stack hash (vs-unwind.h), 0 when none */
  void *blob;              /* VS_ITEM_STACK: the VsStackBlob, freed by the writer */
  char api[40];            /* API name of a failed alloc */
  char domain[32];         /* NVTX domain, empty for the default domain */
  char text[VS_ITEM_TEXT]; /* NVTX range name */
} VsItem;

/* Bounded multi-producer queue of VsItem.  Producers hold the mutex only to
 * copy one item in; when the ring is full the item is dropped and counted
 * (the application is never blocked waiting for the writer). */
typedef struct
{
  pthread_mutex_t lock;
  pthread_cond_t wake;
  VsItem *ring;
  size_t cap, head, count;
  uint64_t next_range_key; /* range keys are handed out under lock, in queue order */
  atomic_uint_fast64_t dropped;
} VsQueue;

int vs_queue_init (VsQueue *q, size_t cap);
void vs_queue_destroy (VsQueue *q);
/* Copies *item in; returns false (and counts a drop) when full. */
bool vs_queue_push (VsQueue *q, const VsItem *item);
/* Like vs_queue_push for a RANGE_BEGIN: assigns item->range a new key
 * (1, 2, 3 … in queue order) and returns it, or 0 when dropped. */
uint64_t vs_queue_push_range (VsQueue *q, VsItem *item);
/* Moves up to max items into out; returns how many. */
size_t vs_queue_pop (VsQueue *q, VsItem *out, size_t max);
/* Re-initialises the locks in a fork child (the parent may have held them). */
void vs_queue_after_fork (VsQueue *q);

/* --- the sink: record and item processing into a VsWriter -------------- */

typedef struct VsSink VsSink;

/* Creates a sink writing into w for the trace process row process_id.
 * The sink does not own w. */
VsSink *vs_sink_new (VsWriter *w, int64_t process_id);
void vs_sink_free (VsSink *s);

/* Walks a buffer of CUPTI activity records (as delivered to
 * bufferCompleted) and writes a row for each record it understands.
 * Returns the number of records seen, or -1 when the writer failed. */
int64_t vs_sink_process_buffer (VsSink *s, uint8_t *buffer, size_t valid);

/* Handles one item from an application thread.  Returns 0, or -1 when the
 * writer failed. */
int vs_sink_process_item (VsSink *s, const VsItem *item);

/* The number of rows written so far (meta collector_events).  Ranges
 * still open when recording ends keep an unknown end. */
uint64_t vs_sink_rows (VsSink *s);

/* Formats a 16-byte uuid as nvidia-smi does: GPU-xxxxxxxx-xxxx-…  */
void vs_format_uuid (const unsigned char uuid[16], char out[41]);

/* --- callbacks ---------------------------------------------------------- */

/* Device-wide free/total query used at a failed allocation; returns 0 on
 * success.  The collector points it at cuMemGetInfo_v2; tests at a fake. */
typedef int (*VsMemInfoFunc) (size_t *free_bytes, size_t *total_bytes);
/* Current device of the calling thread (CUPTI device id) or -1. */
typedef int (*VsCurrentDeviceFunc) (void *context);

typedef struct
{
  VsQueue *queue;
  VsMemInfoFunc mem_info;
  VsCurrentDeviceFunc current_device;
  atomic_bool enabled;
  atomic_uint_fast64_t failed_seen;  /* out-of-memory failures recorded */
  atomic_uint_fast64_t failed_other; /* other errors: probes, bad arguments */
  void (*flush_request) (void);      /* context teardown / device reset: flush now */
} VsCallbackState;

/* The CUPTI callback (CUpti_CallbackFunc); userdata is a VsCallbackState. */
void vs_callback_handler (void *userdata, int domain, uint32_t cbid, const void *cbdata);

/* The (domain, cbid) pairs the handler needs; n is set to the count. */
typedef struct
{
  int domain;
  uint32_t cbid;
} VsCallbackId;
const VsCallbackId *vs_callback_ids (size_t *n);

/* --- NVTX --------------------------------------------------------------- */

/* The innermost open NVTX range of the calling thread (0 when none). */
uint64_t vs_nvtx_current_range (void);
/* Where NVTX ranges are queued; set once the collector runs.  Before that
 * the per-thread range stacks are kept but no rows are produced. */
void vs_nvtx_set_queue (VsQueue *q);

/* Thread id of the caller (gettid). */
int64_t vs_gettid (void);
/* CLOCK_REALTIME in ns. */
int64_t vs_now_ns (void);

/* Set while the collector itself calls into CUDA so its own calls are not
 * recorded. */
extern _Thread_local int vs_in_collector;

/* Fills d (idx, uuid, name, total bytes) from the already-loaded driver for
 * CUDA ordinal dev, with name and uuid pointing into the caller's buffers;
 * false when the driver is not loaded or does not know the device.  The
 * caller raises vs_in_collector around it. */
bool vs_describe_device_from_driver (uint32_t dev, VsDevice *d, char *name, size_t namelen,
                                     char uuid[41]);
