/* SPDX-License-Identifier: MIT */
/* vs-nvtx-mem.h — the NVTX memory API (custom sub-allocators) in the trace.
 *
 * Application threads (vs-nvtx.c, the NVTX injection) turn each nvtxMem*
 * call into VsItems of the types below; the writer thread hands them to
 * vs_nvtx_mem_process_item(), which keeps each heap's live regions and
 * writes allocator rows of kind 'nvtx' and their alloc_event rows:
 *
 *   nvtxMemHeapRegister       segment_alloc  (the heap's registered size)
 *   nvtxMemRegionsRegister    alloc          (one per region)
 *   nvtxMemRegionsResize      free_completed + alloc at the new size
 *   nvtxMemRegionsUnregister  free_completed
 *   nvtxMemHeapReset          free_completed of every live region
 *   nvtxMemHeapUnregister     the same, then segment_free
 *
 * Plain C, no GLib.
 */
#pragma once

#include "vs-collector-private.h"

/* Item types of the NVTX memory API, numbered apart from VsItemType.
 * Fields used: ts, tid, range (innermost NVTX range); address (heap handle
 * for heap items, region address for region items); correlation (the
 * region's heap handle); bytes (heap or region size); device (CUDA ordinal
 * of a heap's memory, UINT32_MAX when not device memory); text (heap name,
 * empty when unnamed). */
enum
{
  VS_ITEM_NVTX_HEAP_REGISTER = 0x100,
  VS_ITEM_NVTX_HEAP_UNREGISTER,
  VS_ITEM_NVTX_HEAP_RESET,
  VS_ITEM_NVTX_REGION_REGISTER,
  VS_ITEM_NVTX_REGION_RESIZE,
  VS_ITEM_NVTX_REGION_UNREGISTER,
};

/* True for the item types above. */
static inline bool
vs_nvtx_mem_is_item (uint32_t type)
{
  return type >= VS_ITEM_NVTX_HEAP_REGISTER && type <= VS_ITEM_NVTX_REGION_UNREGISTER;
}

typedef struct VsNvtxMem VsNvtxMem;

/* State for the heaps of process process_id, written into w (not owned). */
VsNvtxMem *vs_nvtx_mem_new (VsWriter *w, int64_t process_id);
void vs_nvtx_mem_free (VsNvtxMem *m);

/* Writes the rows for one item.  Items for unknown heaps or regions, and
 * heaps outside device memory, are counted and skipped.  Returns 0, or -1
 * when the writer failed. */
int vs_nvtx_mem_process_item (VsNvtxMem *m, const VsItem *item);

/* Items skipped (unknown heap or region, heap not in device memory). */
uint64_t vs_nvtx_mem_skipped (const VsNvtxMem *m);
