/* SPDX-License-Identifier: MIT */
/* vs-test-records.h — the records the tests and the benchmarks write
 * through the trace writer (kernels, allocator events, memory events),
 * with the fields they all leave alike filled in one place (a process's:
 * vs_writer_process_started()).  Header only; include it as
 * "../vs-test-records.h" from tests/AREA/ (or "../tests/…" from bench/).
 */
#pragma once

#include "vs-trace-format.h"

/* A launch of kernel name by process_id on device_id (context 1, stream
 * 7) from start_ns to end_ns, with correlation id correlation: grid_x
 * blocks of 128 threads, 32 registers, no static shared memory and
 * dynamic_shared bytes of dynamic shared memory (VS_UNKNOWN: not known). */
static inline VsKernel
vs_test_kernel (int64_t process_id, int64_t device_id, const char *name, int64_t start_ns,
                int64_t end_ns, int64_t correlation, int64_t grid_x, int64_t dynamic_shared)
{
  VsKernel k = { .start_ns = start_ns,
                 .end_ns = end_ns,
                 .process_id = process_id,
                 .device_id = device_id,
                 .context = 1,
                 .stream = 7,
                 .correlation = correlation,
                 .name = name,
                 .grid_x = grid_x,
                 .grid_y = 1,
                 .grid_z = 1,
                 .block_x = 128,
                 .block_y = 1,
                 .block_z = 1,
                 .static_shared = 0,
                 .dynamic_shared = dynamic_shared,
                 .registers = 32 };
  return k;
}

/* An allocator event of allocator_id (op, of block_bytes at address, for
 * requested_bytes) by process_id's thread tid on device_id at ts, on
 * stream 7, in no known segment, with no stack and no range, recorded
 * while the program ran. */
static inline VsAllocEvent
vs_test_alloc_event (int64_t ts, int64_t process_id, int64_t tid, int64_t device_id,
                     int64_t allocator_id, VsAllocOp op, int64_t address, int64_t requested_bytes,
                     int64_t block_bytes)
{
  VsAllocEvent e = { .ts = ts,
                     .process_id = process_id,
                     .tid = tid,
                     .device_id = device_id,
                     .allocator_id = allocator_id,
                     .op = op,
                     .address = address,
                     .requested_bytes = requested_bytes,
                     .block_bytes = block_bytes,
                     .segment_address = VS_UNKNOWN,
                     .stream = 7,
                     .stack_id = VS_UNKNOWN,
                     .range_id = VS_UNKNOWN,
                     .before_trace = 0 };
  return e;
}

/* A memory event (kind, op, of bytes at address) by process_id's thread
 * tid on device_id at ts, in context 1: its stream, pool, correlation,
 * stack and range unknown (a caller sets those it knows). */
static inline VsMemEvent
vs_test_mem_event (int64_t ts, int64_t process_id, int64_t tid, int64_t device_id, VsMemKind kind,
                   VsMemOp op, int64_t address, int64_t bytes)
{
  VsMemEvent e = { .ts = ts,
                   .process_id = process_id,
                   .tid = tid,
                   .device_id = device_id,
                   .context = 1,
                   .stream = VS_UNKNOWN,
                   .kind = kind,
                   .op = op,
                   .address = address,
                   .bytes = bytes,
                   .pool_id = VS_UNKNOWN,
                   .pool_size = VS_UNKNOWN,
                   .pool_utilized = VS_UNKNOWN,
                   .correlation = VS_UNKNOWN,
                   .stack_id = VS_UNKNOWN,
                   .range_id = VS_UNKNOWN };
  return e;
}
