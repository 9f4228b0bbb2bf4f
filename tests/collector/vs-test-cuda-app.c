/* SPDX-License-Identifier: MIT */
/* vs-test-cuda-app.c — a program that would use CUDA, for `record` tests.
 *
 * It loads the CUDA driver at run time.  Without a driver (CI) it says so
 * and exits 5; with one it initialises CUDA (so the collector is injected)
 * and exits 5 too, so `record` must return 5 either way.
 */
#include <dlfcn.h>
#include <stdio.h>

int
main (void)
{
  void *h = dlopen ("libcuda.so.1", RTLD_NOW);
  if (h == NULL)
    {
      printf ("no CUDA driver\n");
      return 5;
    }
  int (*cu_init) (unsigned) = (int (*) (unsigned))dlsym (h, "cuInit");
  printf ("cuInit returned %d\n", cu_init ? cu_init (0) : -1);
  return 5;
}
