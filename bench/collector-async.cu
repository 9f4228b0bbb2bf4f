/* SPDX-License-Identifier: MIT */
/* collector-async.cu — the collector's worst case: memory events at full rate.
 *
 * N (default 1,000,000) cudaMallocAsync/cudaFreeAsync pairs of 4 KiB..256 KiB
 * on one stream, each with a small kernel touching the block.  Prints the
 * wall time; bench/collector-bench.sh runs it with and without the
 * collector and prints the ratio and the dropped-record count.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void touch(char *p, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 1;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  cudaStream_t s;
  cudaStreamCreate(&s);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++) {
    size_t bytes = 4096u << (i % 7);
    void *p;
    if (cudaMallocAsync(&p, bytes, s) != cudaSuccess) {
      fprintf(stderr, "cudaMallocAsync failed at %ld\n", i);
      return 2;
    }
    touch<<<1, 128, 0, s>>>((char *)p, 128);
    cudaFreeAsync(p, s);
  }
  cudaStreamSynchronize(s);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("pairs %ld seconds %.3f events_per_second %.0f\n", n, dt, 2 * n / dt);
  return 0;
}
