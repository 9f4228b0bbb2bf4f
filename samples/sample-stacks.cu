// sample-stacks.cu — a known call chain for stack attribution:
// main → train → layer → cudaMalloc.
//
// train() builds four "layers"; each layer() call allocates 64 MiB with
// cudaMalloc, and all four stay live until the end, so the peak's one
// stack is main → train → layer.  Built with -g (and stripped, for the
// module+offset case).  Prints the source lines of the calls as ground
// truth: STACK_TRUTH layer=<line> train=<line> main=<line>.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static volatile int keep;
static int line_layer, line_train, line_main;

__attribute__((noinline)) void *
layer(size_t bytes)
{
  void *p = nullptr;
  line_layer = __LINE__ + 1;
  cudaError_t rc = cudaMalloc(&p, bytes);
  keep++;
  if (rc != cudaSuccess) {
    fprintf(stderr, "cudaMalloc: %s\n", cudaGetErrorString(rc));
    exit(1);
  }
  return p;
}

__attribute__((noinline)) void
train(void **ptrs, int n)
{
  for (int i = 0; i < n; i++) {
    line_train = __LINE__ + 1;
    ptrs[i] = layer((size_t)64 << 20);
    keep++;
  }
}

int
main()
{
  void *ptrs[4];
  line_main = __LINE__ + 1;
  train(ptrs, 4);
  keep++;
  cudaDeviceSynchronize();
  for (int i = 0; i < 4; i++)
    cudaFree(ptrs[i]);
  printf("STACK_TRUTH layer=%d train=%d main=%d bytes=%zu\n", line_layer, line_train,
         line_main, (size_t)4 * (64 << 20));
  return 0;
}
/* SPDX-License-Identifier: MIT */
