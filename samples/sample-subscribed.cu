/* sample-subscribed.cu — a program that is already a CUPTI client.
 *
 * It subscribes to CUPTI itself before its first CUDA call, as a program
 * run under another profiler is.  CUPTI allows one subscriber per process,
 * so vramscope's collector must step aside with one line on stderr, and the
 * program must run on untouched and untraced.  Prints its ground truth:
 * whether its own subscription worked and what it allocated.
 *
 *   nvcc -o sample-subscribed sample-subscribed.cu -lcupti
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>

static void CUPTIAPI
on_callback (void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
             const void *info)
{
}

int
main (void)
{
  CUpti_SubscriberHandle handle;
  CUptiResult r = cuptiSubscribe (&handle, (CUpti_CallbackFunc) on_callback, NULL);
  void *p = NULL;
  if (cudaMalloc (&p, 1 << 20) != cudaSuccess)
    return 4;
  cudaFree (p);
  printf ("GROUND_TRUTH {\"own_subscription\":%s,\"device\":{\"count\":1,\"bytes\":1048576}}\n",
          r == CUPTI_SUCCESS ? "true" : "false");
  if (r == CUPTI_SUCCESS)
    cuptiUnsubscribe (handle);
  return 0;
}
/* SPDX-License-Identifier: MIT */
