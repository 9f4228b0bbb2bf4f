/* sample-nvtx-pool.cu — a pool sub-allocator annotated with the NVTX memory API.
 *
 * A bump allocator hands out regions of one cudaMalloc'd heap and tells
 * tools about it with nvtxMemHeapRegister / nvtxMemRegionsRegister /
 * nvtxMemRegionsResize / nvtxMemRegionsUnregister / nvtxMemHeapReset /
 * nvtxMemHeapUnregister, the way a custom allocator (a KV cache, an arena
 * per iteration) would.  Phases run inside NVTX ranges, which must keep
 * working alongside the memory API.  The program keeps its own account of
 * every heap — reserved (registered size) and allocated (live regions),
 * peaks, finals, counts — and of both together, and prints it as
 * GROUND_TRUTH.  Heap "sample-pool" stays registered with regions live at
 * exit; a second, unnamed heap lives and dies in the middle.
 */
#include "vs-sample.h"

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <string.h>

/* One heap and the program's own account of it. */
typedef struct {
  nvtxMemHeapHandle_t handle;
  char *base;
  size_t size, used;
  long long reserved, allocated;
  long long reserved_peak, allocated_peak;
  long alloc_count, free_count;
  char *live[64];
  size_t live_size[64];
  int nlive;
  char name[64];
} Pool;

static nvtxDomainHandle_t domain;
static long long all_reserved, all_allocated, all_reserved_peak, all_allocated_peak;

static void
account(Pool *p, long long dr, long long da)
{
  p->reserved += dr;
  p->allocated += da;
  all_reserved += dr;
  all_allocated += da;
  if (p->reserved > p->reserved_peak) p->reserved_peak = p->reserved;
  if (p->allocated > p->allocated_peak) p->allocated_peak = p->allocated;
  if (all_reserved > all_reserved_peak) all_reserved_peak = all_reserved;
  if (all_allocated > all_allocated_peak) all_allocated_peak = all_allocated;
}

static void
pool_create(Pool *p, size_t size, const char *name)
{
  memset(p, 0, sizeof *p);
  CHECK(cudaMalloc((void **)&p->base, size));
  p->size = size;
  nvtxMemVirtualRangeDesc_t range = {size, p->base};
  nvtxMemHeapDesc_t desc = {};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof desc;
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof range;
  desc.typeSpecificDesc = &range;
  if (name != NULL) {
    desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
    desc.message.ascii = name;
    snprintf(p->name, sizeof p->name, "nvtx:%s", name);
  } else {
    snprintf(p->name, sizeof p->name, "nvtx:0x%llx", (unsigned long long)(uintptr_t)p->base);
  }
  p->handle = nvtxMemHeapRegister(domain, &desc);
  account(p, (long long)size, 0);
}

static char *
pool_alloc(Pool *p, size_t bytes)
{
  if (p->used + bytes > p->size || p->nlive == 64) {
    fprintf(stderr, "pool exhausted\n");
    exit(2);
  }
  char *ptr = p->base + p->used;
  p->used += bytes;
  nvtxMemVirtualRangeDesc_t r = {bytes, ptr};
  nvtxMemRegionsRegisterBatch_t b = {};
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.heap = p->handle;
  b.regionCount = 1;
  b.regionDescElementSize = sizeof r;
  b.regionDescElements = &r;
  nvtxMemRegionsRegister(domain, &b);
  p->live[p->nlive] = ptr;
  p->live_size[p->nlive++] = bytes;
  p->alloc_count++;
  account(p, 0, (long long)bytes);
  return ptr;
}

static int
find_live(Pool *p, char *ptr)
{
  for (int i = 0; i < p->nlive; i++)
    if (p->live[i] == ptr)
      return i;
  fprintf(stderr, "not a live region\n");
  exit(2);
}

static void
pool_free(Pool *p, char *ptr)
{
  int i = find_live(p, ptr);
  nvtxMemRegionRef_t ref;
  ref.pointer = ptr;
  nvtxMemRegionsUnregisterBatch_t b = {};
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  b.refCount = 1;
  b.refElementSize = sizeof ref;
  b.refElements = &ref;
  nvtxMemRegionsUnregister(domain, &b);
  account(p, 0, -(long long)p->live_size[i]);
  p->free_count++;
  p->live[i] = p->live[--p->nlive];
  p->live_size[i] = p->live_size[p->nlive];
}

/* Shrinks a region in place: tools see the old size released and the new
 * one allocated. */
static void
pool_resize(Pool *p, char *ptr, size_t bytes)
{
  int i = find_live(p, ptr);
  nvtxMemVirtualRangeDesc_t r = {bytes, ptr};
  nvtxMemRegionsResizeBatch_t b = {};
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.regionDescCount = 1;
  b.regionDescElementSize = sizeof r;
  b.regionDescElements = &r;
  nvtxMemRegionsResize(domain, &b);
  account(p, 0, (long long)bytes - (long long)p->live_size[i]);
  p->live_size[i] = bytes;
  p->free_count++;
  p->alloc_count++;
}

/* Forgets every region at once (an arena reset). */
static void
pool_reset(Pool *p)
{
  nvtxMemHeapReset(domain, p->handle);
  for (int i = 0; i < p->nlive; i++) {
    account(p, 0, -(long long)p->live_size[i]);
    p->free_count++;
  }
  p->nlive = 0;
  p->used = 0;
}

static void
pool_destroy(Pool *p)
{
  nvtxMemHeapUnregister(domain, p->handle);
  for (int i = 0; i < p->nlive; i++) {
    account(p, 0, -(long long)p->live_size[i]);
    p->free_count++;
  }
  p->nlive = 0;
  account(p, -(long long)p->size, 0);
  CHECK(cudaFree(p->base));
}

static void
print_pool(const Pool *p, const char *sep)
{
  printf("{\"name\":\"%s\",\"reserved_peak\":%lld,\"allocated_peak\":%lld,"
         "\"reserved_final\":%lld,\"allocated_final\":%lld,\"alloc_count\":%ld,"
         "\"free_count\":%ld}%s",
         p->name, p->reserved_peak, p->allocated_peak, p->reserved, p->allocated,
         p->alloc_count, p->free_count, sep);
}

int main(void)
{
  const size_t MiB = 1u << 20;
  CHECK(cudaFree(0));
  domain = nvtxDomainCreateA("sample-nvtx-pool");
  Pool a, b;

  nvtxRangePushA("fill");
  pool_create(&a, 64 * MiB, "sample-pool");
  char *r[10];
  for (int i = 0; i < 10; i++)
    r[i] = pool_alloc(&a, (size_t)(i + 1) * MiB);
  vs_touch<<<1, 256>>>(r[9], 256);
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();

  nvtxRangePushA("release");
  for (int i = 0; i < 10; i += 2)
    pool_free(&a, r[i]);
  pool_resize(&a, r[1], 1 * MiB);
  pool_reset(&a);
  nvtxRangePop();

  nvtxRangePushA("refill");
  for (int i = 0; i < 4; i++)
    pool_alloc(&a, 8 * MiB);
  pool_create(&b, 16 * MiB, NULL);
  pool_alloc(&b, 4 * MiB);
  pool_alloc(&b, 4 * MiB);
  pool_destroy(&b);
  nvtxRangePop();

  CHECK(cudaDeviceSynchronize());
  printf("GROUND_TRUTH {\"ranges\":3,\"nvtx\":[");
  print_pool(&a, ",");
  print_pool(&b, "");
  printf("],\"all\":{\"reserved_peak\":%lld,\"allocated_peak\":%lld,"
         "\"reserved_final\":%lld,\"allocated_final\":%lld}}\n",
         all_reserved_peak, all_allocated_peak, all_reserved, all_allocated);
  fflush(stdout);
  return 0;
}
/* SPDX-License-Identifier: MIT */
