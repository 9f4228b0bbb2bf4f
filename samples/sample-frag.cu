/* sample-frag.cu — a fragmentation pattern in a stream-ordered pool.
 *
 * A custom pool that keeps its memory (release threshold: everything)
 * receives 16 blocks of 8 MiB, then every other block is freed: half the
 * reserved memory is free but in 8 MiB holes, so a 16 MiB request must grow
 * the pool although 64 MiB are free inside it.  The ground truth is the
 * pool's reserved and used high-water marks and the final state.
 */
#include "vs-sample.h"

#include <stdint.h>

int main(void)
{
  CHECK(cudaFree(0));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const size_t block = 8u << 20;
  void *b[16];
  for (int i = 0; i < 16; i++)
    CHECK(cudaMallocFromPoolAsync(&b[i], block, pool, s));
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < 16; i += 2)
    CHECK(cudaFreeAsync(b[i], s));
  CHECK(cudaStreamSynchronize(s));
  void *big;
  CHECK(cudaMallocFromPoolAsync(&big, 2 * block, pool, s));
  CHECK(cudaStreamSynchronize(s));
  unsigned long long res_high = 0, used_high = 0, res_now = 0, used_now = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &res_high));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used_high));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &res_now));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used_now));
  printf("GROUND_TRUTH {\"async\":{\"count\":17,\"bytes\":%zu,\"free_count\":8},"
         "\"pools\":[{\"reserved_high\":%llu,\"used_high\":%llu,"
         "\"reserved_final\":%llu,\"used_final\":%llu}]}\n",
         16 * block + 2 * block, res_high, used_high, res_now, used_now);
  fflush(stdout);
  /* Exit with the pool holding its memory, as a program that ends at its
   * peak would. */
  return 0;
}
/* SPDX-License-Identifier: MIT */
