/* SPDX-License-Identifier: MIT */
/* vs-torch-stream-private.h — the PyTorch allocator stream's file layout,
 * shared by its import (vs-torch-stream.c) and the spool's handling of it
 * (vs-torch-spool.c).  The writer's side: collector/python/vs_torch_stream.cpp.
 */
#pragma once

#include <stdint.h>

#include <glib.h>

#include "vs-trace-format.h"
#include "vs-torch-oom.h"

#define STREAM_MAGIC "VSTORCH1"
#define STREAM_HEADER 4096
#define MAX_DEVICES 256
/* The header's u64 at this offset: how many records from the first the
 * reader has imported into its kept import (vs_stream_import_keep) and
 * whose space it gave back to the disk (a hole punched, read as zeros);
 * 0: none.  Only `record --window` punches (vs-window-live.c). */
#define STREAM_PUNCHED_AT 40

/* One record, as the tracker stores it (its action word last). */
typedef struct
{
  int64_t ts_ns;
  uint64_t addr, size, stream;
  int32_t device, tid;
  uint32_t reserved;
  uint32_t action;
} VsStreamRecord;

G_STATIC_ASSERT (sizeof (VsStreamRecord) == 48);

/* Actions past the trace schema's alloc_event.op (1 to 7). */
enum
{
  STREAM_OOM = 8,
  STREAM_SNAPSHOT = 9
};

/* The allocator event of record r (an action of alloc_event.op, or the
 * request refused by STREAM_OOM: see vs_torch_oom_row()) of the process,
 * device and allocator given; its segment unknown, its stack and range 0
 * (unset). */
static inline VsAllocEvent
vs_stream_event_row (const VsStreamRecord *r, int64_t process_id, int64_t device_id,
                     int64_t allocator_id)
{
  VsAllocEvent e = { .ts = r->ts_ns,
                     .process_id = process_id,
                     .tid = r->tid,
                     .device_id = device_id,
                     .allocator_id = allocator_id,
                     .op = (VsAllocOp)r->action,
                     .address = (int64_t)r->addr,
                     .requested_bytes = (int64_t)r->size,
                     .block_bytes = VS_UNKNOWN,
                     .segment_address = VS_UNKNOWN,
                     .stream = (int64_t)r->stream };
  return e;
}
