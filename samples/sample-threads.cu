/* sample-threads.cu — several threads allocating at once.
 *
 * Eight threads each make 1000 cudaMalloc/cudaFree pairs of sizes that
 * depend on the thread and the iteration, inside an NVTX range named after
 * the thread.  Every allocation and free must be recorded, each stamped
 * with its thread's range.
 */
#include "vs-sample.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>

#define THREADS 8
#define PAIRS 1000

static unsigned long long bytes_of[THREADS];

static void *worker(void *arg)
{
  int t = (int)(long)arg;
  char name[32];
  snprintf(name, sizeof name, "worker %d", t);
  nvtxRangePushA(name);
  for (int i = 0; i < PAIRS; i++) {
    size_t n = 4096u * (size_t)(1 + (t * 7 + i) % 64);
    void *p;
    CHECK(cudaMalloc(&p, n));
    CHECK(cudaFree(p));
    bytes_of[t] += n;
  }
  nvtxRangePop();
  return NULL;
}

int main(void)
{
  CHECK(cudaFree(0));
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; t++)
    pthread_create(&th[t], NULL, worker, (void *)t);
  unsigned long long total = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    total += bytes_of[t];
  }
  printf("GROUND_TRUTH {\"device\":{\"count\":%d,\"bytes\":%llu,\"free_count\":%d},"
         "\"threads\":%d,\"ranges\":%d}\n",
         THREADS * PAIRS, total, THREADS * PAIRS, THREADS, THREADS);
  return 0;
}
/* SPDX-License-Identifier: MIT */
