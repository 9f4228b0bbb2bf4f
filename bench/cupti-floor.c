/* SPDX-License-Identifier: MIT */
/* cupti-floor.c — the least a CUPTI kernel tracer can do, as a yardstick
 * for the collector's own cost.
 *
 * An injection library (loaded through CUDA_INJECTION64_PATH, as the
 * collector is) that enables the activity kinds `record` enables for
 * kernels (concurrent kernels, memcpy, memset) and only counts the records
 * of each completed buffer: no callbacks, no stacks, no writing.  With
 * FLOOR_NONE=1 it enables nothing: the cost of being injected at all.
 * Prints the record count on stderr at exit.  Built and run by
 * bench/collector-floor.sh.
 */
#include <cupti.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define FLOOR_BUFFER_BYTES (8u << 20)

static atomic_long floor_records;

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = malloc (FLOOR_BUFFER_BYTES);
  *size = *buffer ? FLOOR_BUFFER_BYTES : 0;
  *max_records = 0;
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  (void)ctx;
  (void)stream;
  (void)size;
  CUpti_Activity *record = NULL;
  long n = 0;
  while (cuptiActivityGetNextRecord (buffer, valid, &record) == CUPTI_SUCCESS)
    n++;
  atomic_fetch_add (&floor_records, n);
  free (buffer);
}

static void
floor_exit (void)
{
  cuptiActivityFlushAll (1);
  fprintf (stderr, "cupti-floor: %ld records\n", (long)atomic_load (&floor_records));
}

int
InitializeInjection (void)
{
  cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  if (getenv ("FLOOR_NONE") == NULL)
    {
      cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMCPY);
      cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMSET);
    }
  atexit (floor_exit);
  return 1;
}
