/* sample-oom.cu — allocations that fail.
 *
 * After a successful 1 GiB cudaMalloc, a 1 TiB cudaMalloc fails with
 * cudaErrorMemoryAllocation, and so does a driver-level 2 TiB cuMemAlloc.
 * Each failed request must appear exactly once, with its size.
 */
#include "vs-sample.h"

int main(void)
{
  CHECK(cudaFree(0));
  void *ok;
  const size_t held = 1ull << 30;
  CHECK(cudaMalloc(&ok, held));
  void *fail = NULL;
  const unsigned long long rt_req = 1ull << 40, drv_req = 2ull << 40;
  cudaError_t e = cudaMalloc(&fail, rt_req);
  cudaGetLastError();
  CUdeviceptr dfail;
  CUresult r = cuMemAlloc(&dfail, drv_req);
  printf("runtime rc %d, driver rc %d\n", (int)e, (int)r);
  CHECK(cudaFree(ok));
  printf("GROUND_TRUTH {\"device\":{\"count\":1,\"bytes\":%zu,\"free_count\":1},"
         "\"failed\":[{\"api\":\"cudaMalloc\",\"bytes\":%llu,\"error\":%d},"
         "{\"api\":\"cuMemAlloc_v2\",\"bytes\":%llu,\"error\":%d}]}\n",
         held, rt_req, (int)e, drv_req, (int)r);
  return e == cudaErrorMemoryAllocation && r == CUDA_ERROR_OUT_OF_MEMORY ? 0 : 3;
}
/* SPDX-License-Identifier: MIT */
