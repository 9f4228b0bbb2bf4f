/* vs-sample.h — helpers shared by the CUDA samples.
 *
 * Each sample reproduces one memory pattern and prints, as its last line,
 *   GROUND_TRUTH {json}
 * with the exact numbers a trace of it must show (bytes, counts), so the GPU
 * test suite can check a recording against the program's own account.
 */
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
  do                                                                                               \
    {                                                                                              \
      cudaError_t e_ = (call);                                                                     \
      if (e_ != cudaSuccess)                                                                       \
        {                                                                                          \
          fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString (e_));                                                       \
          exit (2);                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

#define CHECK_CU(call)                                                                             \
  do                                                                                               \
    {                                                                                              \
      CUresult r_ = (call);                                                                        \
      if (r_ != CUDA_SUCCESS)                                                                      \
        {                                                                                          \
          const char *s_ = "?";                                                                    \
          cuGetErrorName (r_, &s_);                                                                \
          fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_);               \
          exit (2);                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* A tiny kernel so traces hold kernel records too. */
__global__ void
vs_touch (char *p, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = (char)i;
}
/* SPDX-License-Identifier: MIT */
