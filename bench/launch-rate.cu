/* SPDX-License-Identifier: MIT */
/* launch-rate.cu — the host-side cost of one kernel launch.
 *
 * Launches N (default 300,000) empty kernels on one stream in batches of
 * 256, synchronizing after each batch so the launch queue never fills, and
 * prints the launch time per kernel (the host's time inside the launch
 * calls) and the wall time per kernel.  bench/collector-floor.sh runs it
 * plain, under a bare CUPTI tracer and under `vramscope record`.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void empty(int *p)
{
  if (p != NULL && threadIdx.x == 1024)
    *p = 1;
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 300000;
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess) {
    fprintf(stderr, "launch-rate: no CUDA device\n");
    return 1;
  }
  empty<<<1, 32, 0, s>>>(NULL);
  cudaStreamSynchronize(s);
  double launch = 0, t0 = now();
  for (long i = 0; i < n; i += 256) {
    double a = now();
    for (int j = 0; j < 256; j++)
      empty<<<1, 32, 0, s>>>(NULL);
    launch += now() - a;
    cudaStreamSynchronize(s);
  }
  double all = now() - t0;
  printf("launches %ld launch_ns %.1f wall_ns %.1f\n", n, launch / n * 1e9, all / n * 1e9);
  return 0;
}
