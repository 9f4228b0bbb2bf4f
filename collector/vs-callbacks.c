/* SPDX-License-Identifier: MIT */
/* vs-callbacks.c — the few CUPTI API callbacks the collector enables.
 *
 * A failed allocation produces no MEMORY2 record, so the allocation APIs are
 * watched at exit for an error; successful ones hand their correlation id,
 * thread and innermost NVTX range to the writer so the later MEMORY2 record
 * can be stamped with them.  cuMemMap/cuMemUnmap leave a marker so their
 * DEVICE records are labelled vmm.  Context teardown and cudaDeviceReset ask
 * for a flush.  Only these callback ids are enabled, never whole domains.
 *
 * Every allocation, free, failed allocation, VMM map/unmap and pool trim
 * also captures the calling thread's stack (vs-unwind.c) and passes its
 * hash along: frees are watched only for that, keyed by the address freed.
 *
 * Runs on application threads: it only fills a VsItem and enqueues it.
 * A runtime allocation call runs on top of a driver one (cudaMalloc →
 * cuMemAlloc_v2); a thread-local depth set at the runtime API's entry makes
 * the nested driver callback stay silent so each request counts once, under
 * the name the program called.
 */
#include "vs-collector-private.h"
#include "vs-unwind.h"

#include <cupti.h>
#include <string.h>

_Thread_local int vs_in_collector;
static _Thread_local int runtime_depth;

#define RT(x)                                                                                      \
  {                                                                                                \
    CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x                                      \
  }
#define DRV(x)                                                                                     \
  {                                                                                                \
    CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x                                        \
  }

static const VsCallbackId callback_ids[] = {
  RT (cudaMalloc_v3020),
  RT (cudaMallocPitch_v3020),
  RT (cudaMalloc3D_v3020),
  RT (cudaMallocManaged_v6000),
  RT (cudaMallocHost_v3020),
  RT (cudaHostAlloc_v3020),
  RT (cudaMallocAsync_v11020),
  RT (cudaMallocAsync_ptsz_v11020),
  RT (cudaMallocFromPoolAsync_v11020),
  RT (cudaMallocFromPoolAsync_ptsz_v11020),
  RT (cudaDeviceReset_v3020),
  DRV (cuMemAlloc_v2),
  DRV (cuMemAllocPitch_v2),
  DRV (cuMemAllocManaged),
  DRV (cuMemHostAlloc),
  DRV (cuMemAllocHost_v2),
  DRV (cuMemAllocAsync),
  DRV (cuMemAllocAsync_ptsz),
  DRV (cuMemAllocFromPoolAsync),
  DRV (cuMemAllocFromPoolAsync_ptsz),
  DRV (cuMemCreate),
  DRV (cuMemMap),
  DRV (cuMemUnmap),
  RT (cudaFree_v3020),
  RT (cudaFreeHost_v3020),
  RT (cudaFreeAsync_v11020),
  RT (cudaFreeAsync_ptsz_v11020),
  RT (cudaMemPoolTrimTo_v11020),
  DRV (cuMemFree_v2),
  DRV (cuMemFreeHost),
  DRV (cuMemFreeAsync),
  DRV (cuMemFreeAsync_ptsz),
  DRV (cuMemPoolTrimTo),
  { CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING },
};

/* The callback ids to enable. */
const VsCallbackId *
vs_callback_ids (size_t *n)
{
  *n = sizeof callback_ids / sizeof callback_ids[0];
  return callback_ids;
}

/* Requested bytes of a runtime allocation call; -1 when cbid is not one. */
static int64_t
runtime_request (uint32_t cbid, const void *params)
{
  switch (cbid)
    {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
      return (int64_t)((const cudaMalloc_v3020_params *)params)->size;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020:
      {
        const cudaMallocPitch_v3020_params *p = params;
        return (int64_t)(p->width * p->height);
      }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020:
      {
        const cudaMalloc3D_v3020_params *p = params;
        return (int64_t)(p->extent.width * p->extent.height * p->extent.depth);
      }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
      return (int64_t)((const cudaMallocManaged_v6000_params *)params)->size;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
      return (int64_t)((const cudaMallocHost_v3020_params *)params)->size;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
      return (int64_t)((const cudaHostAlloc_v3020_params *)params)->size;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
      return (int64_t)((const cudaMallocAsync_v11020_params *)params)->size;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020:
      return (int64_t)((const cudaMallocFromPoolAsync_v11020_params *)params)->size;
    default:
      return -1;
    }
}

/* Requested bytes of a driver allocation call; -1 when cbid is not one. */
static int64_t
driver_request (uint32_t cbid, const void *params)
{
  switch (cbid)
    {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
      return (int64_t)((const cuMemAlloc_v2_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2:
      {
        const cuMemAllocPitch_v2_params *p = params;
        return (int64_t)(p->WidthInBytes * p->Height);
      }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
      return (int64_t)((const cuMemAllocManaged_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
      return (int64_t)((const cuMemHostAlloc_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
      return (int64_t)((const cuMemAllocHost_v2_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
      return (int64_t)((const cuMemAllocAsync_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
      return (int64_t)((const cuMemAllocFromPoolAsync_params *)params)->bytesize;
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
      return (int64_t)((const cuMemCreate_params *)params)->size;
    default:
      return -1;
    }
}

/* The address a free call releases; false when cbid is not a free. */
static bool
freed_address (bool runtime, uint32_t cbid, const void *params, uint64_t *address)
{
  if (runtime)
    {
      switch (cbid)
        {
        case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
          *address = (uint64_t)(uintptr_t)((const cudaFree_v3020_params *)params)->devPtr;
          return true;
        case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020:
          *address = (uint64_t)(uintptr_t)((const cudaFreeHost_v3020_params *)params)->ptr;
          return true;
        case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
          *address = (uint64_t)(uintptr_t)((const cudaFreeAsync_v11020_params *)params)->devPtr;
          return true;
        default:
          return false;
        }
    }
  switch (cbid)
    {
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
      *address = ((const cuMemFree_v2_params *)params)->dptr;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:
      *address = (uint64_t)(uintptr_t)((const cuMemFreeHost_params *)params)->p;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
      *address = ((const cuMemFreeAsync_params *)params)->dptr;
      return true;
    default:
      return false;
    }
}

static bool
is_pool_trim (bool runtime, uint32_t cbid)
{
  return runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020
                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo;
}

/* The documented name of a common allocation error, or NULL. */
static const char *
error_name (bool runtime, int64_t rc)
{
  switch (rc)
    {
    case 1:
      return runtime ? "cudaErrorInvalidValue" : "CUDA_ERROR_INVALID_VALUE";
    case 2:
      return runtime ? "cudaErrorMemoryAllocation" : "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
      return runtime ? "cudaErrorInitializationError" : "CUDA_ERROR_NOT_INITIALIZED";
    case 801:
      return runtime ? "cudaErrorNotSupported" : "CUDA_ERROR_NOT_SUPPORTED";
    case 999:
      return runtime ? "cudaErrorUnknown" : "CUDA_ERROR_UNKNOWN";
    default:
      return NULL;
    }
}

/* Copies an API name without CUPTI's version suffix ("cudaMalloc_v3020"
 * → "cudaMalloc"); driver names keep theirs ("cuMemAlloc_v2" is the
 * symbol the program linked). */
static void
copy_api_name (char *out, size_t len, const char *name, bool runtime)
{
  if (name == NULL)
    name = "(unknown)";
  size_t n = strlen (name);
  if (runtime)
    {
      const char *v = strstr (name, "_v");
      const char *p = strstr (name, "_ptsz");
      if (p != NULL && (v == NULL || p < v))
        v = p;
      if (v != NULL)
        n = (size_t)(v - name);
    }
  if (n >= len)
    n = len - 1;
  memcpy (out, name, n);
  out[n] = '\0';
}

static void
vmm_marker (VsCallbackState *st, const CUpti_CallbackData *ci, bool map)
{
  if (*(const CUresult *)ci->functionReturnValue != CUDA_SUCCESS)
    return;
  VsItem it = { 0 };
  it.type = map ? VS_ITEM_VMM_MAP : VS_ITEM_VMM_UNMAP;
  it.address = map ? ((const cuMemMap_params *)ci->functionParams)->ptr
                   : ((const cuMemUnmap_params *)ci->functionParams)->ptr;
  it.bytes = (int64_t)(map ? ((const cuMemMap_params *)ci->functionParams)->size
                           : ((const cuMemUnmap_params *)ci->functionParams)->size);
  it.tid = vs_gettid ();
  it.stack = vs_stack_capture (st->queue);
  vs_queue_push (st->queue, &it);
}

/* The CUPTI callback.  See the file comment. */
void
vs_callback_handler (void *userdata, int domain, uint32_t cbid, const void *cbdata)
{
  VsCallbackState *st = userdata;
  if (st == NULL || !atomic_load_explicit (&st->enabled, memory_order_relaxed) || vs_in_collector)
    return;

  if (domain == CUPTI_CB_DOMAIN_RESOURCE)
    {
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && st->flush_request)
        st->flush_request ();
      return;
    }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;

  const CUpti_CallbackData *ci = cbdata;
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;

  if (runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
    {
      if (ci->callbackSite == CUPTI_API_ENTER && st->flush_request)
        st->flush_request ();
      return;
    }
  if (runtime && ci->callbackSite == CUPTI_API_ENTER)
    {
      runtime_depth++;
      return;
    }
  if (ci->callbackSite != CUPTI_API_EXIT)
    return;
  if (runtime && runtime_depth > 0)
    runtime_depth--;

  if (!runtime
      && (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemMap || cbid == CUPTI_DRIVER_TRACE_CBID_cuMemUnmap))
    {
      vmm_marker (st, ci, cbid == CUPTI_DRIVER_TRACE_CBID_cuMemMap);
      return;
    }
  /* A driver call made by a runtime call: the runtime's exit reports it. */
  if (!runtime && runtime_depth > 0)
    return;

  uint64_t freed = 0;
  if (freed_address (runtime, cbid, ci->functionParams, &freed))
    {
      int64_t frc = runtime ? (int64_t) * (const int *)ci->functionReturnValue
                            : (int64_t) * (const CUresult *)ci->functionReturnValue;
      if (frc != 0 || freed == 0)
        return;
      VsItem it = { 0 };
      it.type = VS_ITEM_FREE_CALL;
      it.tid = vs_gettid ();
      it.address = freed;
      it.correlation = ci->correlationId;
      it.stack = vs_stack_capture (st->queue);
      vs_queue_push (st->queue, &it);
      return;
    }
  if (is_pool_trim (runtime, cbid))
    {
      /* The TRIMMED pool record carries this call's correlation id. */
      VsItem it = { 0 };
      it.type = VS_ITEM_ALLOC_CALL;
      it.tid = vs_gettid ();
      it.correlation = ci->correlationId;
      it.range = vs_nvtx_current_range ();
      it.stack = vs_stack_capture (st->queue);
      vs_queue_push (st->queue, &it);
      return;
    }

  int64_t requested = runtime ? runtime_request (cbid, ci->functionParams)
                              : driver_request (cbid, ci->functionParams);
  if (requested < 0)
    return;
  int64_t rc = runtime ? (int64_t) * (const int *)ci->functionReturnValue
                       : (int64_t) * (const CUresult *)ci->functionReturnValue;

  VsItem it = { 0 };
  it.tid = vs_gettid ();
  it.correlation = ci->correlationId;
  it.range = vs_nvtx_current_range ();
  if (rc == 0)
    {
      /* cuMemCreate's success leaves no record of its own: its memory is
     * counted where it is mapped. */
      if (!runtime && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate)
        return;
      it.type = VS_ITEM_ALLOC_CALL;
      it.stack = vs_stack_capture (st->queue);
      vs_queue_push (st->queue, &it);
      return;
    }

  /* Only running out of memory is a failed allocation in the trace's
   * sense.  Other errors are capability probes (PyTorch asks cuMemCreate
   * for handle types the system may not support) or bad arguments:
   * counted, not recorded. */
  if (rc != 2)
    {
      atomic_fetch_add (&st->failed_other, 1);
      return;
    }
  it.type = VS_ITEM_FAILED_ALLOC;
  it.ts = vs_now_ns ();
  it.stack = vs_stack_capture (st->queue);
  it.bytes = requested;
  it.error = rc;
  it.device = UINT32_MAX;
  it.free_bytes = VS_UNKNOWN;
  it.total_bytes = VS_UNKNOWN;
  copy_api_name (it.api, sizeof it.api, ci->functionName, runtime);
  const char *en = error_name (runtime, rc);
  if (en != NULL)
    strncpy (it.text, en, sizeof it.text - 1);
  vs_in_collector++;
  if (!runtime && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate)
    {
      const cuMemCreate_params *p = ci->functionParams;
      if (p->prop != NULL && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        it.device = (uint32_t)p->prop->location.id;
    }
  if (it.device == UINT32_MAX && st->current_device)
    {
      int dev = st->current_device (ci->context);
      if (dev >= 0)
        it.device = (uint32_t)dev;
    }
  size_t free_b = 0, total_b = 0;
  if (st->mem_info && st->mem_info (&free_b, &total_b) == 0)
    {
      it.free_bytes = (int64_t)free_b;
      it.total_bytes = (int64_t)total_b;
    }
  vs_in_collector--;
  atomic_fetch_add (&st->failed_seen, 1);
  vs_queue_push (st->queue, &it);
}
