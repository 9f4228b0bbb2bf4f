/* SPDX-License-Identifier: MIT */
/* vs-test-inject.c — loads the collector as libcuda would and calls its
 * entry points, on a machine where CUPTI cannot start (no driver).
 *
 * Expected: InitializeInjection returns 1 (the program must run on) after
 * one line on stderr saying the program runs untraced; NVTX injection still
 * succeeds.  Exits 0 when both entry points behaved.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int
main (void)
{
  const char *path = getenv ("VRAMSCOPE_COLLECTOR");
  void *h = path ? dlopen (path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (h == NULL)
    {
      fprintf (stderr, "cannot load the collector: %s\n", dlerror ());
      return 2;
    }
  int (*init) (void) = (int (*) (void))dlsym (h, "InitializeInjection");
  if (init == NULL || dlsym (h, "InitializeInjectionNvtx2") == NULL)
    {
      fprintf (stderr, "entry points missing\n");
      return 2;
    }
  /* Private symbols must not leak into the host (SQLite above all). */
  if (dlsym (h, "sqlite3_open_v2") != NULL || dlsym (h, "vs_writer_create") != NULL)
    {
      fprintf (stderr, "the collector exports private symbols\n");
      return 2;
    }
  int rc = init ();
  printf ("InitializeInjection returned %d\n", rc);
  return rc == 1 ? 0 : 3;
}
