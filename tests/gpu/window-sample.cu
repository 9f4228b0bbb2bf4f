/* SPDX-License-Identifier: MIT */
/* window-sample.cu — a long CUDA C loop for the flight recorder
 * (record --window): each step allocates 8 buffers and frees them; every
 * 100 steps one 256 KiB buffer is kept (a leak); 3 s in, one 1 GiB buffer
 * is held for a moment (the peak); 6 s in, a 1 TiB request fails.  Runs
 * for the seconds given, then prints
 *   GROUND_TRUTH {json}
 * with its own account: allocations and frees, the most it held at once,
 * the bytes it leaks, the failed requests.
 *
 * Usage: window-sample SECONDS
 */
#include "vs-sample.h"

#include <time.h>
#include <unistd.h>

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
  double seconds = argc > 1 ? atof (argv[1]) : 10;
  long long allocs = 0, frees = 0, failed = 0, steps = 0;
  size_t held = 0, peak = 0, leaked = 0;
  void *leaks[100000];
  int nleaks = 0;
  int peak_done = 0, oom_done = 0;
  CHECK (cudaFree (0));
  double t0 = now_s ();
  while (now_s () - t0 < seconds)
    {
      void *buf[8];
      for (int k = 0; k < 8; k++)
        {
          size_t size = (size_t)(1 + (steps + k) % 4) << 20;
          CHECK (cudaMalloc (&buf[k], size));
          allocs++;
          held += size;
          if (held > peak)
            peak = held;
          vs_touch<<<64, 256>>> ((char *)buf[k], size < 16384 ? size : 16384);
        }
      if (steps % 100 == 0 && nleaks < 100000)
        {
          CHECK (cudaMalloc (&leaks[nleaks++], 256 << 10));
          allocs++;
          held += 256 << 10;
          leaked += 256 << 10;
          if (held > peak)
            peak = held;
        }
      double t = now_s () - t0;
      if (!peak_done && t > 3)
        {
          void *big;
          CHECK (cudaMalloc (&big, (size_t)1 << 30));
          allocs++;
          held += (size_t)1 << 30;
          if (held > peak)
            peak = held;
          CHECK (cudaDeviceSynchronize ());
          usleep (50000);
          CHECK (cudaFree (big));
          frees++;
          held -= (size_t)1 << 30;
          peak_done = 1;
        }
      if (!oom_done && t > 6)
        {
          void *huge;
          if (cudaMalloc (&huge, (size_t)1 << 40) != cudaSuccess)
            failed++;
          cudaGetLastError ();
          oom_done = 1;
        }
      for (int k = 7; k >= 0; k--)
        {
          size_t size = (size_t)(1 + (steps + k) % 4) << 20;
          CHECK (cudaFree (buf[k]));
          frees++;
          held -= size;
        }
      CHECK (cudaDeviceSynchronize ());
      steps++;
      usleep (2000);
    }
  printf ("GROUND_TRUTH {\"steps\":%lld,\"allocs\":%lld,\"frees\":%lld,\"peak_bytes\":%zu,"
          "\"leaked_bytes\":%zu,\"leaked_count\":%d,\"failed\":%lld}\n",
          steps, allocs, frees, peak, leaked, nleaks, failed);
  return 0;
}
