/* SPDX-License-Identifier: MIT */
/* vs-torch-oom.h — a PyTorch out-of-memory error as the trace's
 * failed_alloc row, for both places that read PyTorch's allocator: the
 * snapshot import (vs-import-replay.c) and the allocator stream's import
 * (../record/vs-torch-stream-private.h).  Header only.
 */
#pragma once

#include <stdint.h>

#include "vs-trace-format.h"

/* The failed request of the allocator event e that PyTorch refused (its
 * time, process, thread, device, allocator, requested bytes, stack and
 * range), device_free_bytes free on the device then: the API "pytorch",
 * the error OutOfMemoryError, its code, the device's total and the
 * correlation unknown. */
static inline VsFailedAlloc
vs_torch_oom_row (const VsAllocEvent *e, int64_t device_free_bytes)
{
  VsFailedAlloc f = { .ts = e->ts,
                      .process_id = e->process_id,
                      .tid = e->tid,
                      .device_id = e->device_id,
                      .allocator_id = e->allocator_id,
                      .api = "pytorch",
                      .requested_bytes = e->requested_bytes,
                      .error = VS_UNKNOWN,
                      .error_name = "OutOfMemoryError",
                      .device_free_bytes = device_free_bytes,
                      .device_total_bytes = VS_UNKNOWN,
                      .correlation = VS_UNKNOWN,
                      .stack_id = e->stack_id,
                      .range_id = e->range_id };
  return f;
}
