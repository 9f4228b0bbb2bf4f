/* sample-kinds.cu — one allocation of every kind the collector records.
 *
 * cudaMalloc, cudaMallocPitch, cudaMalloc3D (device, at their padded
 * sizes), cudaMallocManaged, cudaMallocHost (pinned), cudaMallocAsync on the
 * default pool and cudaMallocFromPoolAsync on a custom pool, and a VMM
 * cuMemCreate + cuMemMap / cuMemUnmap.  Everything is freed.  The ground
 * truth gives count and bytes per kind and each pool's high-water marks
 * from cudaMemPoolGetAttribute.
 */
#include "vs-sample.h"

#include <stdint.h>

int main(void)
{
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));
  int dev = 0;

  /* device: plain, pitch, 3D */
  size_t plain = 3u << 20;
  void *a;
  CHECK(cudaMalloc(&a, plain));
  vs_touch<<<(plain + 255) / 256, 256>>>((char *)a, plain);
  void *pitched;
  size_t pitch = 0, width = 1000, height = 37;
  CHECK(cudaMallocPitch(&pitched, &pitch, width, height));
  cudaPitchedPtr p3;
  cudaExtent ext = make_cudaExtent(1000, 10, 7);
  CHECK(cudaMalloc3D(&p3, ext));
  unsigned long long device_bytes = plain + (unsigned long long)pitch * height +
                                    (unsigned long long)p3.pitch * ext.height * ext.depth;

  /* managed and pinned host */
  size_t managed = 5u << 20, pinned = 2u << 20;
  void *m, *h;
  CHECK(cudaMallocManaged(&m, managed));
  CHECK(cudaMallocHost(&h, pinned));

  /* async on the default pool */
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const size_t async_sizes[3] = {1u << 20, 3u << 20, 512u << 10};
  void *ap[3];
  unsigned long long async_bytes = 0;
  for (int i = 0; i < 3; i++) {
    CHECK(cudaMallocAsync(&ap[i], async_sizes[i], s));
    async_bytes += async_sizes[i];
  }
  CHECK(cudaStreamSynchronize(s));
  cudaMemPool_t defpool;
  CHECK(cudaDeviceGetDefaultMemPool(&defpool, dev));

  /* async on a custom pool */
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  const size_t pool_sizes[2] = {4u << 20, 6u << 20};
  void *pp[2];
  for (int i = 0; i < 2; i++) {
    CHECK(cudaMallocFromPoolAsync(&pp[i], pool_sizes[i], pool, s));
    async_bytes += pool_sizes[i];
  }
  CHECK(cudaStreamSynchronize(s));

  /* VMM: one physical chunk mapped, unmapped, released */
  CUmemAllocationProp vp = {};
  vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  vp.location.id = dev;
  size_t gran = 0;
  CHECK_CU(cuMemGetAllocationGranularity(&gran, &vp, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  size_t vmm = 2 * gran;
  CUmemGenericAllocationHandle handle;
  CUdeviceptr va;
  CHECK_CU(cuMemCreate(&handle, vmm, &vp, 0));
  CHECK_CU(cuMemAddressReserve(&va, vmm, 0, 0, 0));
  CHECK_CU(cuMemMap(va, vmm, 0, handle, 0));
  CUmemAccessDesc acc = {};
  acc.location = vp.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_CU(cuMemSetAccess(va, vmm, &acc, 1));
  vs_touch<<<(vmm + 255) / 256, 256>>>((char *)va, vmm);
  CHECK(cudaDeviceSynchronize());
  CHECK_CU(cuMemUnmap(va, vmm));
  CHECK_CU(cuMemAddressFree(va, vmm));
  CHECK_CU(cuMemRelease(handle));

  /* Pool high-water marks, the ground truth for reserved/used. */
  unsigned long long def_res = 0, def_used = 0, pool_res = 0, pool_used = 0;
  CHECK(cudaMemPoolGetAttribute(defpool, cudaMemPoolAttrReservedMemHigh, &def_res));
  CHECK(cudaMemPoolGetAttribute(defpool, cudaMemPoolAttrUsedMemHigh, &def_used));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &pool_res));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &pool_used));

  for (int i = 0; i < 3; i++)
    CHECK(cudaFreeAsync(ap[i], s));
  for (int i = 0; i < 2; i++)
    CHECK(cudaFreeAsync(pp[i], s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolDestroy(pool));
  CHECK(cudaFreeHost(h));
  CHECK(cudaFree(m));
  CHECK(cudaFree(p3.ptr));
  CHECK(cudaFree(pitched));
  CHECK(cudaFree(a));
  CHECK(cudaStreamDestroy(s));

  printf("GROUND_TRUTH {\"device\":{\"count\":3,\"bytes\":%llu},"
         "\"managed\":{\"count\":1,\"bytes\":%zu},\"pinned\":{\"count\":1,\"bytes\":%zu},"
         "\"async\":{\"count\":5,\"bytes\":%llu},\"vmm\":{\"count\":1,\"bytes\":%zu},"
         "\"pools\":[{\"reserved_high\":%llu,\"used_high\":%llu},"
         "{\"reserved_high\":%llu,\"used_high\":%llu}],\"leaked_bytes\":0}\n",
         device_bytes, managed, pinned, async_bytes, vmm, def_res, def_used,
         pool_res, pool_used);
  return 0;
}
/* SPDX-License-Identifier: MIT */
