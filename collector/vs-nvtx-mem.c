/* SPDX-License-Identifier: MIT */
/* vs-nvtx-mem.c — NVTX memory-API items into allocator rows (writer side).
 *
 * Runs on the writer thread only (or in a test).  A heap registered with
 * nvtxMemHeapRegister becomes an allocator of kind 'nvtx' named
 * 'nvtx:<heap name>' (or 'nvtx:0x<handle>' when unnamed) on the device that
 * holds its memory; its registered size is the allocator's reserved memory
 * (a segment) and its live regions are what it has allocated.  The finalizer
 * marks the device-level cudaMalloc under the heap as the heap's, so it is
 * not counted twice.  See vs-nvtx-mem.h for the row each call becomes.
 *
 * Workload: a sub-allocator may register and unregister millions of
 * regions, so regions live in an open-addressing table keyed by address;
 * heaps are few and kept in an array.
 */
#include "vs-nvtx-mem.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  uint64_t handle; /* 0: slot free (heap unregistered) */
  int64_t allocator_id, device_id;
  int64_t size;
} VsHeap;

typedef struct
{
  uint64_t address; /* 0: empty slot */
  int64_t size;
  uint32_t heap; /* index into heaps */
} VsRegion;

#define VS_HT_TYPE VsRegionTable
#define VS_HT_FN(n) vs_region_table_##n
#define VS_HT_ENTRY VsRegion
#define VS_HT_KEY_TYPE uint64_t
#define VS_HT_KEY(e) ((e)->address)
#define VS_HT_SET_KEY(e, k) ((e)->address = (k))
#define VS_HT_HASH(k) vs_hash_mix64 (k)
#define VS_HT_EQUAL(a, b) ((a) == (b))
#define VS_HT_IS_EMPTY(e) ((e)->address == 0)
#include "vs-hash-table.h"

struct VsNvtxMem
{
  VsWriter *w;
  int64_t process_id;
  VsHeap *heaps;
  size_t nheaps, capheaps;
  VsRegionTable regions; /* address → region */
  uint64_t skipped;
};

VsNvtxMem *
vs_nvtx_mem_new (VsWriter *w, int64_t process_id)
{
  VsNvtxMem *m = calloc (1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->w = w;
  m->process_id = process_id;
  return m;
}

void
vs_nvtx_mem_free (VsNvtxMem *m)
{
  if (m == NULL)
    return;
  free (m->heaps);
  vs_region_table_clear (&m->regions);
  free (m);
}

uint64_t
vs_nvtx_mem_skipped (const VsNvtxMem *m)
{
  return m->skipped;
}

/* --- regions ------------------------------------------------------------ */

static VsRegion *
region_find (VsNvtxMem *m, uint64_t address)
{
  return address != 0 ? vs_region_table_find (&m->regions, address) : NULL;
}

/* Adds a region (address not present); false when out of memory. */
static bool
region_add (VsNvtxMem *m, uint64_t address, int64_t size, uint32_t heap)
{
  bool added;
  VsRegion *r = vs_region_table_insert (&m->regions, address, &added);
  if (r == NULL)
    return false;
  assert (added);
  r->size = size;
  r->heap = heap;
  return true;
}

static void
region_remove (VsNvtxMem *m, VsRegion *r)
{
  vs_region_table_remove (&m->regions, r);
}

/* --- heaps and devices -------------------------------------------------- */

static VsHeap *
heap_find (VsNvtxMem *m, uint64_t handle, uint32_t *index)
{
  for (size_t i = 0; i < m->nheaps; i++)
    if (m->heaps[i].handle == handle && handle != 0)
      {
        if (index)
          *index = (uint32_t)i;
        return &m->heaps[i];
      }
  return NULL;
}

/* The trace device of CUDA ordinal dev: described by the already-loaded
 * driver (uuid, name, memory: the writer merges it with the row CUPTI's
 * records add), else the row already written for that index, else a new
 * row with the index alone.  Returns the id, or -1 on writer failure. */
static int64_t
device_id (VsNvtxMem *m, uint32_t dev)
{
  static const char *by_idx = "SELECT id FROM device WHERE idx = ?1 ORDER BY id LIMIT 1";
  char name[256] = "", uuid[41];
  VsDevice d = { .idx = dev, .uuid = NULL, .name = NULL, .total_bytes = VS_UNKNOWN };
  vs_in_collector++;
  vs_describe_device_from_driver (dev, &d, name, sizeof name, uuid);
  vs_in_collector--;
  if (d.uuid == NULL)
    {
      sqlite3_stmt *s = NULL;
      int64_t id = 0;
      if (sqlite3_prepare_v2 (vs_writer_db (m->w), by_idx, -1, &s, NULL) == SQLITE_OK)
        {
          sqlite3_bind_int64 (s, 1, dev);
          if (sqlite3_step (s) == SQLITE_ROW)
            id = sqlite3_column_int64 (s, 0);
        }
      sqlite3_finalize (s);
      if (id > 0)
        return id;
    }
  return vs_writer_add_device (m->w, &d);
}

/* --- rows --------------------------------------------------------------- */

static int
write_event (VsNvtxMem *m, const VsItem *it, const VsHeap *heap, VsAllocOp op, uint64_t address,
             int64_t bytes)
{
  VsAllocEvent e = {
    .ts = it->ts,
    .process_id = m->process_id,
    .tid = it->tid,
    .device_id = heap->device_id,
    .allocator_id = heap->allocator_id,
    .op = op,
    .address = (int64_t)address,
    .requested_bytes = bytes,
    .block_bytes = bytes,
    .segment_address = (int64_t)heap->handle,
    .stream = VS_UNKNOWN,
    .stack_id = VS_UNKNOWN,
    .range_id = VS_UNKNOWN,
  };
  return vs_writer_alloc_event (m->w, &e);
}

/* Releases every live region of heap index h at the item's time.  The
 * table is walked first and changed afterwards: a removal moves entries. */
static int
free_regions (VsNvtxMem *m, const VsItem *it, uint32_t h)
{
  size_t n = 0;
  uint64_t *gone = NULL;
  for (size_t i = 0; i < m->regions.cap; i++)
    {
      VsRegion *r = &m->regions.entries[i];
      if (r->address == 0 || r->heap != h)
        continue;
      if (write_event (m, it, &m->heaps[h], VS_ALLOC_OP_FREE_COMPLETED, r->address, r->size) != 0)
        {
          free (gone);
          return -1;
        }
      if (gone == NULL && (gone = malloc (m->regions.count * sizeof *gone)) == NULL)
        return -1;
      gone[n++] = r->address;
    }
  for (size_t k = 0; k < n; k++)
    region_remove (m, region_find (m, gone[k]));
  free (gone);
  return 0;
}

/* Ends heap index h at the item's time: its live regions are freed, then
 * its segment, and the heap is marked unregistered.  Returns 0, or -1 when
 * a row could not be written. */
static int
heap_end (VsNvtxMem *m, const VsItem *it, uint32_t h)
{
  if (free_regions (m, it, h) != 0
      || write_event (m, it, &m->heaps[h], VS_ALLOC_OP_SEGMENT_FREE, it->address, m->heaps[h].size)
             != 0)
    return -1;
  m->heaps[h].handle = 0;
  return 0;
}

static int
heap_register (VsNvtxMem *m, const VsItem *it)
{
  uint32_t h;
  if (heap_find (m, it->address, &h) != NULL)
    {
      /* Registered again without unregistering: the old one ends here. */
      if (heap_end (m, it, h) != 0)
        return -1;
    }
  if (it->device == UINT32_MAX || it->address == 0)
    {
      m->skipped++;
      return 0;
    }
  int64_t dev = device_id (m, it->device);
  if (dev < 0)
    return -1;
  char name[VS_ITEM_TEXT + 8];
  if (it->text[0] != '\0')
    snprintf (name, sizeof name, "nvtx:%s", it->text);
  else
    snprintf (name, sizeof name, "nvtx:0x%llx", (unsigned long long)it->address);
  VsAllocator a = { .device_id = dev,
                    .process_id = m->process_id,
                    .kind = "nvtx",
                    .name = name,
                    .handle = (int64_t)it->address,
                    .settings = NULL };
  int64_t id = vs_writer_add_allocator (m->w, &a);
  if (id < 0)
    return -1;
  if (m->nheaps == m->capheaps)
    {
      size_t cap = m->capheaps ? 2 * m->capheaps : 16;
      VsHeap *heaps = realloc (m->heaps, cap * sizeof *heaps);
      if (heaps == NULL)
        {
          m->skipped++;
          return 0;
        }
      m->heaps = heaps;
      m->capheaps = cap;
    }
  VsHeap *heap = &m->heaps[m->nheaps++];
  *heap
      = (VsHeap){ .handle = it->address, .allocator_id = id, .device_id = dev, .size = it->bytes };
  return write_event (m, it, heap, VS_ALLOC_OP_SEGMENT_ALLOC, it->address, it->bytes);
}

/* Handles one NVTX memory-API item (see vs-nvtx-mem.h). */
int
vs_nvtx_mem_process_item (VsNvtxMem *m, const VsItem *it)
{
  uint32_t h = 0;
  if (m == NULL)
    return 0; /* could not be allocated at start: the API goes unrecorded */
  switch (it->type)
    {
    case VS_ITEM_NVTX_HEAP_REGISTER:
      return heap_register (m, it);
    case VS_ITEM_NVTX_HEAP_RESET:
      if (it->address == 0)
        { /* NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE: every heap */
          for (uint32_t k = 0; k < m->nheaps; k++)
            if (m->heaps[k].handle != 0 && free_regions (m, it, k) != 0)
              return -1;
          return 0;
        }
      if (heap_find (m, it->address, &h) == NULL)
        {
          m->skipped++;
          return 0;
        }
      return free_regions (m, it, h);
    case VS_ITEM_NVTX_HEAP_UNREGISTER:
      if (heap_find (m, it->address, &h) == NULL)
        {
          m->skipped++;
          return 0;
        }
      return heap_end (m, it, h);
    case VS_ITEM_NVTX_REGION_REGISTER:
      {
        VsHeap *heap = heap_find (m, it->correlation, &h);
        if (heap == NULL || it->address == 0)
          {
            m->skipped++;
            return 0;
          }
        VsRegion *old = region_find (m, it->address);
        if (old != NULL)
          { /* registered twice: the first one ends here */
            if (write_event (m, it, &m->heaps[old->heap], VS_ALLOC_OP_FREE_COMPLETED, old->address,
                             old->size)
                != 0)
              return -1;
            region_remove (m, old);
          }
        if (!region_add (m, it->address, it->bytes, h))
          {
            m->skipped++;
            return 0;
          }
        return write_event (m, it, heap, VS_ALLOC_OP_ALLOC, it->address, it->bytes);
      }
    case VS_ITEM_NVTX_REGION_RESIZE:
    case VS_ITEM_NVTX_REGION_UNREGISTER:
      {
        VsRegion *r = region_find (m, it->address);
        if (r == NULL)
          {
            m->skipped++;
            return 0;
          }
        VsHeap *heap = &m->heaps[r->heap];
        if (write_event (m, it, heap, VS_ALLOC_OP_FREE_COMPLETED, r->address, r->size) != 0)
          return -1;
        if (it->type == VS_ITEM_NVTX_REGION_UNREGISTER)
          {
            region_remove (m, r);
            return 0;
          }
        r->size = it->bytes;
        return write_event (m, it, heap, VS_ALLOC_OP_ALLOC, r->address, r->size);
      }
    default:
      return 0;
    }
}
