/* SPDX-License-Identifier: MIT */
/* vs-trace-format.h — the trace format's constants, codes and row types.
 *
 * What a reader of a trace needs of the format, without the writer: the
 * application id and schema versions, the codes stored in the integer
 * columns (names in the lookup tables of schemas/trace.sql), the row
 * types the writer takes, and the schema SQL itself.  Plain C.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define VS_UNKNOWN INT64_MIN
#define VS_TRACE_APPLICATION_ID 1448234323 /* 'VRMS' */
#define VS_TRACE_SCHEMA_VERSION 4
/* A finalized trace whose big tables are compacted into column chunks
 * (vs-trace-compact.h): the newest version readers accept. */
#define VS_TRACE_SCHEMA_COMPACTED 5
/* The deepest stack a trace holds, in frames: writers keep the innermost
 * this many (vs_writer_add_stack), readers take a longer parent chain for
 * a cycle. */
#define VS_TRACE_MAX_STACK_DEPTH 100000
  /* Codes stored in the integer columns; names are in the lookup tables. */
  typedef enum
  {
    VS_MEM_KIND_DEVICE = 1,
    VS_MEM_KIND_PINNED = 2,
    VS_MEM_KIND_MANAGED = 3,
    VS_MEM_KIND_STATIC = 4,
    VS_MEM_KIND_ASYNC = 5,
    VS_MEM_KIND_VMM = 6,
    VS_MEM_KIND_PAGEABLE = 7,
    VS_MEM_KIND_ARRAY = 8,
    VS_MEM_KIND_MANAGED_STATIC = 9,
  } VsMemKind;

  typedef enum
  {
    VS_MEM_OP_ALLOC = 1,
    VS_MEM_OP_FREE = 2
  } VsMemOp;

  typedef enum
  {
    VS_ALLOC_OP_ALLOC = 1,
    VS_ALLOC_OP_FREE_REQUESTED = 2,
    VS_ALLOC_OP_FREE_COMPLETED = 3,
    VS_ALLOC_OP_SEGMENT_ALLOC = 4,
    VS_ALLOC_OP_SEGMENT_FREE = 5,
    VS_ALLOC_OP_SEGMENT_MAP = 6,
    VS_ALLOC_OP_SEGMENT_UNMAP = 7,
  } VsAllocOp;

  typedef enum
  {
    VS_POOL_OP_CREATED = 1,
    VS_POOL_OP_DESTROYED = 2,
    VS_POOL_OP_TRIMMED = 3,
    VS_POOL_OP_SAMPLE = 4,
  } VsPoolOp;

  typedef enum
  {
    VS_FRAME_NATIVE = 1,
    VS_FRAME_PYTHON = 2,
    VS_FRAME_INLINE = 3,
    VS_FRAME_LABEL = 4,
  } VsFrameKind;

  typedef struct
  {
    int64_t pid, ppid;
    const char *host;
    int64_t rank, local_rank, world_size; /* VS_UNKNOWN when not set */
    const char *cuda_visible_devices;
    const char *command_line;
    int64_t start_ns, end_ns, exit_status;
  } VsProcess;

  typedef struct
  {
    int64_t idx;
    const char *uuid; /* devices are the same across processes iff uuids are */
    const char *name;
    int64_t total_bytes;
  } VsDevice;

  typedef struct
  {
    int64_t device_id, process_id;
    const char *kind; /* "pytorch", "pool" or "nvtx" */
    const char *name; /* "pytorch", "pool:0x…", "nvtx:<heap>" */
    int64_t handle;
    const char *settings;
  } VsAllocator;

  typedef struct
  {
    int64_t process_id;
    const char *path, *build_id;
    int64_t load_address, size;
  } VsModule;

  typedef struct
  {
    VsFrameKind kind;
    int64_t module_id, address; /* native */
    const char *function, *file;
    int64_t line;
  } VsFrame;

  typedef struct
  {
    int64_t ts, process_id, tid, device_id, context, stream;
    VsMemKind kind;
    VsMemOp op;
    int64_t address, bytes;
    int64_t pool_id, pool_size, pool_utilized;
    int64_t correlation, stack_id, range_id;
  } VsMemEvent;

  typedef struct
  {
    int64_t ts, process_id, device_id, pool_id;
    VsPoolOp op;
    int64_t size, utilized, release_threshold, min_bytes_to_keep;
    int64_t correlation, stack_id;
  } VsPoolEvent;

  typedef struct
  {
    int64_t ts, process_id, tid, device_id, allocator_id;
    VsAllocOp op;
    int64_t address, requested_bytes, block_bytes, segment_address, stream;
    int64_t stack_id, range_id;
    /* 1: not an event the trace saw but memory live before it began,
     * recreated at its start (an imported snapshot's history began with
     * it live); 0 otherwise */
    int64_t before_trace;
  } VsAllocEvent;

  typedef struct
  {
    int64_t ts, process_id, tid, device_id, allocator_id;
    const char *api;
    int64_t requested_bytes, error;
    const char *error_name;
    int64_t device_free_bytes, device_total_bytes;
    int64_t correlation, stack_id, range_id;
  } VsFailedAlloc;

  typedef struct
  {
    int64_t process_id, tid;
    const char *domain, *name;
    int64_t start_ns, end_ns; /* end_ns VS_UNKNOWN: never closed */
    int64_t parent_id, depth;
  } VsRange;

  typedef struct
  {
    int64_t start_ns, end_ns, process_id, device_id, context, stream, correlation;
    const char *name;
    int64_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int64_t static_shared, dynamic_shared, registers;
  } VsKernel;

  typedef struct
  {
    int64_t start_ns, end_ns, process_id, device_id, stream, correlation;
    const char *copy_kind, *src_kind, *dst_kind;
    int64_t bytes;
  } VsMemcpy;

  typedef struct
  {
    int64_t start_ns, end_ns, process_id, device_id, stream, correlation;
    int64_t bytes, value, mem_kind;
  } VsMemset;

  /* Progress of a long operation: done out of total units.  Return false to
 * cancel; the operation then fails with the message "cancelled". */
  typedef bool (*VsProgressFunc) (uint64_t done, uint64_t total, void *data);

  /* The schema SQL (schemas/trace.sql). */
  extern const char vs_trace_schema_sql[];

#ifdef __cplusplus
}
#endif
