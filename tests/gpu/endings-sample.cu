/* SPDX-License-Identifier: MIT */
// endings-sample.cu — a CUDA C program that ends the way it is told, for
// tests/gpu/run-endings.sh.
//
//   endings-sample HOW     (HOW as in endings-train.py: exit, sigkill,
//                           sigterm, abort, segv, exit3, wait)
//
// Makes 64 device allocations of distinct sizes with cudaMalloc, frees
// every other one, prints GROUND_TRUTH {"allocs", "frees", "live_bytes"}
// and READY, waits 1.2 s (past the SIGKILL loss bound) and ends as told.
#include <cuda_runtime.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  const char *how = argc > 1 ? argv[1] : "exit";
  void *p[64];
  long long live = 0;
  int frees = 0;
  for (int i = 0; i < 64; i++)
    {
      size_t size = (size_t)(i + 1) << 20;
      if (cudaMalloc (&p[i], size) != cudaSuccess)
        {
          fprintf (stderr, "cudaMalloc failed\n");
          return 2;
        }
      live += (long long)size;
    }
  for (int i = 0; i < 64; i += 2)
    {
      cudaFree (p[i]);
      live -= (long long)(i + 1) << 20;
      frees++;
    }
  cudaDeviceSynchronize ();
  printf ("GROUND_TRUTH {\"how\": \"%s\", \"pid\": %d, \"allocs\": 64, \"frees\": %d, "
          "\"live_bytes\": %lld}\n",
          how, (int)getpid (), frees, live);
  printf ("READY\n");
  fflush (stdout);
  usleep (1200000);
  if (strcmp (how, "sigkill") == 0 || strcmp (how, "sigterm") == 0)
    {
      /* The signal ends the process once the collector has flushed. */
      kill (getpid (), strcmp (how, "sigkill") == 0 ? SIGKILL : SIGTERM);
      for (;;)
        pause ();
    }
  else if (strcmp (how, "abort") == 0)
    abort ();
  else if (strcmp (how, "segv") == 0)
    {
      volatile int *zero = NULL;
      return *zero;
    }
  else if (strcmp (how, "exit3") == 0)
    _exit (3);
  else if (strcmp (how, "wait") == 0)
    for (;;)
      sleep (1);
  return 0;
}
