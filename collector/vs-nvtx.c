/* SPDX-License-Identifier: MIT */
/* vs-nvtx.c — the collector as the NVTX injection library.
 *
 * `vramscope record` points NVTX_INJECTION64_PATH at the collector, so the
 * first NVTX call of the program loads it and calls InitializeInjectionNvtx2,
 * where the collector fills NVTX's function tables with its own range
 * functions.  Push/pop ranges (default and named domains) keep a per-thread
 * stack whose innermost entry stamps memory events; start/end ranges are
 * recorded but stamp nothing (they are not tied to a thread).
 *
 * The NVTX memory API (nvtxMemHeapRegister, nvtxMemRegions*: custom
 * sub-allocators) reaches the collector through
 * InitializeInjectionNvtxExtension; each call becomes one item per heap or
 * region, turned into allocator rows by vs-nvtx-mem.c.
 *
 * NVTX may be used before CUDA is (or in a process that never uses CUDA):
 * until the collector runs, the stacks are kept but nothing is queued.
 * Runs on application threads; each call costs a clock read and, while
 * recording, one enqueue.
 */
#include "vs-collector-private.h"
#include "vs-clock.h"
#include "vs-nvtx-mem.h"

#include <cuda.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define VS_NVTX_STACK 128

typedef struct
{
  uint64_t key;
  const void *domain; /* NULL: the default domain */
} VsStackEntry;

static _Thread_local VsStackEntry stack[VS_NVTX_STACK];
static _Thread_local int stack_depth; /* may exceed VS_NVTX_STACK */
static _Thread_local int64_t cached_tid;
static _Atomic (VsQueue *) nvtx_queue;
static atomic_uint_fast64_t unqueued_key = 1ull << 62; /* start/end ranges before recording */

/* A registered domain: its name, copied. */
typedef struct
{
  char name[32];
} VsDomain;

int64_t
vs_gettid (void)
{
  if (cached_tid == 0)
    cached_tid = (int64_t)syscall (SYS_gettid);
  return cached_tid;
}

int64_t
vs_now_ns (void)
{
  return vs_clock_ns (CLOCK_REALTIME);
}

void
vs_nvtx_set_queue (VsQueue *q)
{
  atomic_store (&nvtx_queue, q);
}

/* In a fork child the thread that forked keeps its stack; the thread id
 * changes. */
static void
reset_tid (void)
{
  cached_tid = 0;
}

uint64_t
vs_nvtx_current_range (void)
{
  int d = stack_depth < VS_NVTX_STACK ? stack_depth : VS_NVTX_STACK;
  return d > 0 ? stack[d - 1].key : 0;
}

/* Copies an NVTX message (ASCII, wide or registered) into out. */
static void
copy_message (char *out, size_t len, int type, const void *msg)
{
  out[0] = '\0';
  if (msg == NULL)
    return;
  if (type == NVTX_MESSAGE_TYPE_UNICODE)
    {
      const wchar_t *w = msg;
      size_t i = 0;
      for (; i + 1 < len && w[i] != 0; i++)
        out[i] = (w[i] > 0 && w[i] < 128) ? (char)w[i] : '?';
      out[i] = '\0';
      return;
    }
  /* ASCII, and registered strings, whose handle is our own copy. */
  strncpy (out, msg, len - 1);
  out[len - 1] = '\0';
}

static void
attrib_message (char *out, size_t len, const nvtxEventAttributes_t *a)
{
  if (a == NULL)
    {
      out[0] = '\0';
      return;
    }
  copy_message (out, len, a->messageType, (const void *)a->message.ascii);
}

/* Queues a range begin; returns its key (0 when not recording). */
static uint64_t
begin_range (const VsDomain *domain, const char *name, uint64_t parent, int depth)
{
  VsQueue *q = atomic_load (&nvtx_queue);
  if (q == NULL)
    return 0;
  VsItem it = { 0 };
  it.type = VS_ITEM_RANGE_BEGIN;
  it.ts = vs_now_ns ();
  it.tid = vs_gettid ();
  it.parent = parent;
  it.depth = depth;
  if (domain != NULL)
    memcpy (it.domain, domain->name, sizeof it.domain);
  strncpy (it.text, name, sizeof it.text - 1);
  return vs_queue_push_range (q, &it);
}

static void
end_range (uint64_t key)
{
  VsQueue *q = atomic_load (&nvtx_queue);
  if (q == NULL || key == 0)
    return;
  VsItem it = { 0 };
  it.type = VS_ITEM_RANGE_END;
  it.ts = vs_now_ns ();
  it.tid = vs_gettid ();
  it.range = key;
  vs_queue_push (q, &it);
}

static int
push (const VsDomain *domain, const char *name)
{
  int depth = stack_depth;
  uint64_t key = begin_range (domain, name, vs_nvtx_current_range (), depth);
  if (depth < VS_NVTX_STACK)
    {
      stack[depth].key = key;
      stack[depth].domain = domain;
    }
  stack_depth++;
  return depth;
}

/* Pops the innermost range of domain on this thread (NVTX keeps one stack
 * per domain; ours interleaves them).  Returns the depth it had or -1. */
static int
pop (const VsDomain *domain)
{
  if (stack_depth == 0)
    return -1;
  if (stack_depth > VS_NVTX_STACK)
    {
      stack_depth--;
      return stack_depth;
    }
  for (int i = stack_depth - 1; i >= 0; i--)
    {
      if (stack[i].domain != domain)
        continue;
      end_range (stack[i].key);
      memmove (&stack[i], &stack[i + 1], (size_t)(stack_depth - 1 - i) * sizeof stack[0]);
      stack_depth--;
      return i;
    }
  return -1;
}

static uint64_t
start (const VsDomain *domain, const char *name)
{
  uint64_t key = begin_range (domain, name, 0, 0);
  return key ? key : atomic_fetch_add (&unqueued_key, 1);
}

/* --- the NVTX entry points ---------------------------------------------- */

/* The NVTX entry point range_<op>_<suffix>: a message of one encoding
 * (char_type, NVTX_MESSAGE_TYPE_<encoding>) made the text of a range op
 * (push or start, returning ret) on the default domain. */
#define VS_NVTX_MESSAGE_ENTRY(op, ret, suffix, char_type, encoding)                                \
  static ret NVTX_API range_##op##_##suffix (const char_type *message)                             \
  {                                                                                                \
    char buf[VS_ITEM_TEXT];                                                                        \
    copy_message (buf, sizeof buf, NVTX_MESSAGE_TYPE_##encoding, message);                         \
    return op (NULL, buf);                                                                         \
  }

/* The four NVTX entry points of one range operation, op (push or start,
 * returning ret): range_<op>_a and range_<op>_w (a message on the default
 * domain), domain_range_<op>_ex (event attributes on a registered domain)
 * and range_<op>_ex (the same on the default domain). */
#define VS_NVTX_RANGE_ENTRIES(op, ret)                                                             \
  VS_NVTX_MESSAGE_ENTRY (op, ret, a, char, ASCII)                                                  \
  VS_NVTX_MESSAGE_ENTRY (op, ret, w, wchar_t, UNICODE)                                             \
  static ret NVTX_API domain_range_##op##_ex (nvtxDomainHandle_t d,                                \
                                              const nvtxEventAttributes_t *a)                      \
  {                                                                                                \
    char buf[VS_ITEM_TEXT];                                                                        \
    attrib_message (buf, sizeof buf, a);                                                           \
    return op ((const VsDomain *)d, buf);                                                          \
  }                                                                                                \
  static ret NVTX_API range_##op##_ex (const nvtxEventAttributes_t *a)                             \
  {                                                                                                \
    return domain_range_##op##_ex (NULL, a);                                                       \
  }

VS_NVTX_RANGE_ENTRIES (push, int)
VS_NVTX_RANGE_ENTRIES (start, nvtxRangeId_t)

static int NVTX_API
range_pop (void)
{
  return pop (NULL);
}

static void NVTX_API
range_end (nvtxRangeId_t id)
{
  end_range (id);
}

static nvtxDomainHandle_t NVTX_API
domain_create_a (const char *name)
{
  VsDomain *d = calloc (1, sizeof *d);
  if (d != NULL && name != NULL)
    strncpy (d->name, name, sizeof d->name - 1);
  return (nvtxDomainHandle_t)d;
}

static nvtxDomainHandle_t NVTX_API
domain_create_w (const wchar_t *name)
{
  VsDomain *d = calloc (1, sizeof *d);
  if (d != NULL)
    copy_message (d->name, sizeof d->name, NVTX_MESSAGE_TYPE_UNICODE, name);
  return (nvtxDomainHandle_t)d;
}

/* Domains live until the process ends: ranges queued earlier may still
 * point at the name, and NVTX allows no use of a destroyed handle anyway. */
static void NVTX_API
domain_destroy (nvtxDomainHandle_t d)
{
  (void)d;
}

static nvtxStringHandle_t NVTX_API
domain_register_string_a (nvtxDomainHandle_t d, const char *s)
{
  (void)d;
  return (nvtxStringHandle_t)strdup (s ? s : "");
}

static nvtxStringHandle_t NVTX_API
domain_register_string_w (nvtxDomainHandle_t d, const wchar_t *s)
{
  (void)d;
  char buf[VS_ITEM_TEXT];
  copy_message (buf, sizeof buf, NVTX_MESSAGE_TYPE_UNICODE, s);
  return (nvtxStringHandle_t)strdup (buf);
}

static int NVTX_API
domain_range_pop (nvtxDomainHandle_t d)
{
  return pop ((const VsDomain *)d);
}

static void NVTX_API
domain_range_end (nvtxDomainHandle_t d, nvtxRangeId_t id)
{
  (void)d;
  end_range (id);
}

typedef struct
{
  unsigned int id;
  NvtxFunctionPointer fn;
} VsSlot;

/* Fills the slots of one NVTX module table we implement. */
static void
fill (const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const VsSlot *slots, size_t n)
{
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (cb->GetModuleFunctionTable (module, &table, &size) == 0 || table == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    if (slots[i].id < size && table[slots[i].id] != NULL)
      *table[slots[i].id] = slots[i].fn;
}

#define SLOT(id, f)                                                                                \
  {                                                                                                \
    id, (NvtxFunctionPointer)(f)                                                                   \
  }

__attribute__ ((visibility ("default"))) int
InitializeInjectionNvtx2 (NvtxGetExportTableFunc_t get_export_table);

/* Called by NVTX on its first use when NVTX_INJECTION64_PATH names the
 * collector.  Returns 1 (success) so NVTX keeps our functions. */
__attribute__ ((visibility ("default"))) int
InitializeInjectionNvtx2 (NvtxGetExportTableFunc_t get_export_table)
{
  pthread_atfork (NULL, NULL, reset_tid);
  const NvtxExportTableCallbacks *cb
      = (const NvtxExportTableCallbacks *)get_export_table (NVTX_ETID_CALLBACKS);
  if (cb == NULL || cb->struct_size < sizeof *cb)
    return 0;
  static const VsSlot core[] = {
    SLOT (NVTX_CBID_CORE_RangeStartEx, range_start_ex),
    SLOT (NVTX_CBID_CORE_RangeStartA, range_start_a),
    SLOT (NVTX_CBID_CORE_RangeStartW, range_start_w),
    SLOT (NVTX_CBID_CORE_RangeEnd, range_end),
    SLOT (NVTX_CBID_CORE_RangePushEx, range_push_ex),
    SLOT (NVTX_CBID_CORE_RangePushA, range_push_a),
    SLOT (NVTX_CBID_CORE_RangePushW, range_push_w),
    SLOT (NVTX_CBID_CORE_RangePop, range_pop),
  };
  static const VsSlot core2[] = {
    SLOT (NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex),
    SLOT (NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end),
    SLOT (NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex),
    SLOT (NVTX_CBID_CORE2_DomainRangePop, domain_range_pop),
    SLOT (NVTX_CBID_CORE2_DomainRegisterStringA, domain_register_string_a),
    SLOT (NVTX_CBID_CORE2_DomainRegisterStringW, domain_register_string_w),
    SLOT (NVTX_CBID_CORE2_DomainCreateA, domain_create_a),
    SLOT (NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
    SLOT (NVTX_CBID_CORE2_DomainDestroy, domain_destroy),
  };
  fill (cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]);
  fill (cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
  return 1;
}

/* --- the NVTX memory API (custom sub-allocators) ------------------------ */

/* CUDA ordinal of the device holding ptr, UINT32_MAX when it is not device
 * memory or the driver is not loaded. */
static uint32_t
pointer_device (const void *ptr)
{
  typedef int (*CuPointerGetAttributeFn) (void *, int, unsigned long long);
  static CuPointerGetAttributeFn get;
  if (get == NULL)
    {
      void *h = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
      if (h == NULL)
        return UINT32_MAX;
      get = (CuPointerGetAttributeFn)dlsym (h, "cuPointerGetAttribute");
      dlclose (h); /* the program keeps the driver loaded */
      if (get == NULL)
        return UINT32_MAX;
    }
  int ordinal = -1;
  vs_in_collector++;
  int rc = get (&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (unsigned long long)(uintptr_t)ptr);
  vs_in_collector--;
  return rc == 0 && ordinal >= 0 ? (uint32_t)ordinal : UINT32_MAX;
}

/* Queues one NVTX memory item stamped with time, thread and range. */
static void
mem_item (uint32_t type, uint64_t address, int64_t bytes, uint64_t heap, uint32_t device,
          const char *name)
{
  VsQueue *q = atomic_load (&nvtx_queue);
  if (q == NULL)
    return;
  VsItem it = { 0 };
  it.type = type;
  it.ts = vs_now_ns ();
  it.tid = vs_gettid ();
  it.range = vs_nvtx_current_range ();
  it.address = address;
  it.bytes = bytes;
  it.correlation = heap;
  it.device = device;
  if (name != NULL)
    strncpy (it.text, name, sizeof it.text - 1);
  vs_queue_push (q, &it);
}

/* The heap's handle is its address, as the NVTX memory API asks of tools
 * for heaps of process virtual memory. */
static nvtxMemHeapHandle_t NVTX_API
mem_heap_register (nvtxDomainHandle_t domain, const nvtxMemHeapDesc_t *desc)
{
  (void)domain;
  if (desc == NULL || desc->type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || desc->typeSpecificDesc == NULL
      || desc->typeSpecificDescSize < sizeof (nvtxMemVirtualRangeDesc_t))
    return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
  const nvtxMemVirtualRangeDesc_t *r = desc->typeSpecificDesc;
  char name[VS_ITEM_TEXT];
  copy_message (name, sizeof name, (int)desc->messageType,
                desc->messageType == NVTX_MESSAGE_TYPE_ASCII
                        || desc->messageType == NVTX_MESSAGE_TYPE_UNICODE
                        || desc->messageType == NVTX_MESSAGE_TYPE_REGISTERED
                    ? (const void *)desc->message.ascii
                    : NULL);
  mem_item (VS_ITEM_NVTX_HEAP_REGISTER, (uint64_t)(uintptr_t)r->ptr, (int64_t)r->size, 0,
            pointer_device (r->ptr), name);
  return (nvtxMemHeapHandle_t)(uintptr_t)r->ptr;
}

static void NVTX_API
mem_heap_unregister (nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
  (void)domain;
  mem_item (VS_ITEM_NVTX_HEAP_UNREGISTER, (uint64_t)(uintptr_t)heap, 0, 0, UINT32_MAX, NULL);
}

static void NVTX_API
mem_heap_reset (nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
  (void)domain;
  mem_item (VS_ITEM_NVTX_HEAP_RESET, (uint64_t)(uintptr_t)heap, 0, 0, UINT32_MAX, NULL);
}

/* Element i of an array of elements of size `size` (as large as the
 * caller's version of the struct). */
static const void *
element (const void *array, size_t size, size_t i)
{
  return (const char *)array + i * size;
}

static void NVTX_API
mem_regions_register (nvtxDomainHandle_t domain, const nvtxMemRegionsRegisterBatch_t *b)
{
  (void)domain;
  if (b == NULL || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS
      || b->regionDescElementSize < sizeof (nvtxMemVirtualRangeDesc_t)
      || b->regionDescElements == NULL)
    return;
  for (size_t i = 0; i < b->regionCount; i++)
    {
      const nvtxMemVirtualRangeDesc_t *r
          = element (b->regionDescElements, b->regionDescElementSize, i);
      mem_item (VS_ITEM_NVTX_REGION_REGISTER, (uint64_t)(uintptr_t)r->ptr, (int64_t)r->size,
                (uint64_t)(uintptr_t)b->heap, UINT32_MAX, NULL);
      if (b->regionHandleElementsOut != NULL)
        b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)r->ptr;
    }
}

static void NVTX_API
mem_regions_resize (nvtxDomainHandle_t domain, const nvtxMemRegionsResizeBatch_t *b)
{
  (void)domain;
  if (b == NULL || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS
      || b->regionDescElementSize < sizeof (nvtxMemVirtualRangeDesc_t)
      || b->regionDescElements == NULL)
    return;
  for (size_t i = 0; i < b->regionDescCount; i++)
    {
      const nvtxMemVirtualRangeDesc_t *r
          = element (b->regionDescElements, b->regionDescElementSize, i);
      mem_item (VS_ITEM_NVTX_REGION_RESIZE, (uint64_t)(uintptr_t)r->ptr, (int64_t)r->size, 0,
                UINT32_MAX, NULL);
    }
}

/* Region handles are the regions' addresses (see mem_regions_register), so
 * references by pointer and by handle are the same. */
static void NVTX_API
mem_regions_unregister (nvtxDomainHandle_t domain, const nvtxMemRegionsUnregisterBatch_t *b)
{
  (void)domain;
  if (b == NULL || b->refElements == NULL || b->refElementSize < sizeof (nvtxMemRegionRef_t)
      || (b->refType != NVTX_MEM_REGION_REF_TYPE_POINTER
          && b->refType != NVTX_MEM_REGION_REF_TYPE_HANDLE))
    return;
  for (size_t i = 0; i < b->refCount; i++)
    {
      const nvtxMemRegionRef_t *r = element (b->refElements, b->refElementSize, i);
      mem_item (VS_ITEM_NVTX_REGION_UNREGISTER, (uint64_t)(uintptr_t)r->pointer, 0, 0, UINT32_MAX,
                NULL);
    }
}

__attribute__ ((visibility ("default"))) int
InitializeInjectionNvtxExtension (nvtxExtModuleInfo_t *info);

/* Called by NVTX the first time the program uses an NVTX extension; fills
 * the memory module's slots (nvtxMemHeapRegister … nvtxMemRegionsUnregister).
 * Slots left empty (naming regions, permissions) and other modules become
 * no-ops.  Returns 1: a failure here would unload the library. */
__attribute__ ((visibility ("default"))) int
InitializeInjectionNvtxExtension (nvtxExtModuleInfo_t *info)
{
  if (info == NULL || info->moduleId != NVTX_EXT_MODULEID_MEM || info->segmentsCount < 1
      || info->segments == NULL || info->segments[0].functionSlots == NULL)
    return 1;
  static const struct
  {
    size_t id;
    intptr_t fn;
  } slots[] = {
    { NVTX3EXT_CBID_nvtxMemHeapRegister, (intptr_t)mem_heap_register },
    { NVTX3EXT_CBID_nvtxMemHeapUnregister, (intptr_t)mem_heap_unregister },
    { NVTX3EXT_CBID_nvtxMemHeapReset, (intptr_t)mem_heap_reset },
    { NVTX3EXT_CBID_nvtxMemRegionsRegister, (intptr_t)mem_regions_register },
    { NVTX3EXT_CBID_nvtxMemRegionsResize, (intptr_t)mem_regions_resize },
    { NVTX3EXT_CBID_nvtxMemRegionsUnregister, (intptr_t)mem_regions_unregister },
  };
  nvtxExtModuleSegment_t *seg = &info->segments[0];
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
    if (slots[i].id < seg->slotCount)
      seg->functionSlots[slots[i].id] = slots[i].fn;
  return 1;
}
