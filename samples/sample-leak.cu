/* sample-leak.cu — memory that grows every iteration and is never freed.
 *
 * Ten iterations each allocate a 1 MiB scratch buffer (freed) and a 256 KiB
 * "history" buffer (kept, as a training loop that keeps its outputs would).
 * The program exits with the history still allocated.
 */
#include "vs-sample.h"

#include <nvtx3/nvToolsExt.h>

int main(void)
{
  const int iterations = 10;
  const size_t scratch = 1u << 20, kept = 256u << 10;
  void *history[10];
  CHECK(cudaFree(0));
  for (int i = 0; i < iterations; i++) {
    char name[32];
    snprintf(name, sizeof name, "iteration %d", i);
    nvtxRangePushA(name);
    void *tmp;
    CHECK(cudaMalloc(&tmp, scratch));
    CHECK(cudaMalloc(&history[i], kept));
    vs_touch<<<(kept + 255) / 256, 256>>>((char *)history[i], kept);
    CHECK(cudaFree(tmp));
    nvtxRangePop();
  }
  CHECK(cudaDeviceSynchronize());
  printf("GROUND_TRUTH {\"device\":{\"count\":%d,\"bytes\":%zu,\"free_count\":%d},"
         "\"leaked_bytes\":%zu,\"leaked_count\":%d,\"ranges\":%d}\n",
         2 * iterations, iterations * (scratch + kept), iterations,
         iterations * kept, iterations, iterations);
  return 0;
}
/* SPDX-License-Identifier: MIT */
