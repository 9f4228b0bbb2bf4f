/* sample-multigpu.cu — allocations on every visible GPU.
 *
 * Device d receives (d + 1) allocations of 8 MiB, freed at the end.  On a
 * one-GPU machine this is one device with one allocation.
 */
#include "vs-sample.h"

int main(void)
{
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  void *p[16][16];
  unsigned long long bytes = 0;
  int count = 0;
  for (int d = 0; d < n && d < 16; d++) {
    CHECK(cudaSetDevice(d));
    for (int i = 0; i <= d; i++) {
      CHECK(cudaMalloc(&p[d][i], 8u << 20));
      bytes += 8u << 20;
      count++;
    }
  }
  for (int d = 0; d < n && d < 16; d++) {
    CHECK(cudaSetDevice(d));
    for (int i = 0; i <= d; i++)
      CHECK(cudaFree(p[d][i]));
  }
  printf("GROUND_TRUTH {\"devices\":%d,\"device\":{\"count\":%d,\"bytes\":%llu,"
         "\"free_count\":%d}}\n", n, count, bytes, count);
  return 0;
}
/* SPDX-License-Identifier: MIT */
