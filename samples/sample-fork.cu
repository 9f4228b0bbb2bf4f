/* sample-fork.cu — one run, several CUDA processes.
 *
 * The parent forks before touching CUDA; the child allocates 3 × 1 MiB.
 * Then the parent allocates 2 × 1 MiB and runs itself again through exec
 * (argument "child"), which allocates 4 × 1 MiB.  One trace must hold
 * all three processes with their own allocations.
 */
#include "vs-sample.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void allocate(int n)
{
  void *p[8];
  for (int i = 0; i < n; i++)
    CHECK(cudaMalloc(&p[i], 1u << 20));
  for (int i = 0; i < n; i++)
    CHECK(cudaFree(p[i]));
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    allocate(4);
    return 0;
  }
  pid_t c = fork();
  if (c == 0) {
    allocate(3);
    exit(0);
  }
  int st;
  waitpid(c, &st, 0);
  allocate(2);
  pid_t e = fork();
  if (e == 0) {
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    _exit(127);
  }
  waitpid(e, &st, 0);
  printf("GROUND_TRUTH {\"processes\":3,\"device\":{\"count\":9,\"bytes\":%u,"
         "\"free_count\":9},\"per_process_counts\":[2,3,4]}\n", 9u << 20);
  return 0;
}
/* SPDX-License-Identifier: MIT */
