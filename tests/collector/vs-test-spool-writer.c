/* SPDX-License-Identifier: MIT */
/* vs-test-spool-writer.c — a process trace written as the collector writes
 * one, for the tests of `vramscope recover`.
 *
 * Usage: vs-test-spool-writer DIR COMMITS ROWS TAIL
 *
 * Creates DIR/process-<pid>-<ns>.db (DIR "-" means $VRAMSCOPE_SPOOL_DIR,
 * as under `vramscope record`) through the trace writer in WAL mode, the
 * collector's mode, with a small page cache so that a large transaction
 * spills its pages into the WAL before it commits.  Writes COMMITS
 * batches of ROWS device allocations, committing each and printing
 * "committed N" (the total committed so far) and the WAL's size; then
 * writes TAIL more rows without committing, prints "mid-batch WAL_BYTES"
 * and waits to be killed.  A test kills it with SIGKILL there: what it
 * printed last is exactly what a recovery must find.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "vs-trace-writer.h"
#include "../vs-test-records.h"

static long long
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long
file_size (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (long long)st.st_size : -1;
}

int
main (int argc, char **argv)
{
  if (argc != 5)
    {
      fprintf (stderr, "usage: vs-test-spool-writer DIR COMMITS ROWS TAIL\n");
      return 2;
    }
  const char *dir = strcmp (argv[1], "-") == 0 ? getenv ("VRAMSCOPE_SPOOL_DIR") : argv[1];
  long commits = atol (argv[2]), rows = atol (argv[3]), tail = atol (argv[4]);
  if (dir == NULL)
    {
      fprintf (stderr, "vs-test-spool-writer: no spool directory\n");
      return 2;
    }
  char path[4096], wal[4200], err[512];
  snprintf (path, sizeof path, "%s/process-%ld-%lld.db", dir, (long)getpid (), now_ns ());
  snprintf (wal, sizeof wal, "%s-wal", path);
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  if (w == NULL)
    {
      fprintf (stderr, "vs-test-spool-writer: %s\n", err);
      return 1;
    }
  sqlite3_exec (vs_writer_db (w), "PRAGMA cache_size=64", NULL, NULL, NULL);
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  VsProcess p
      = vs_writer_process_started (getpid (), getppid (), host, "vs-test-spool-writer", now_ns ());
  int64_t pid_row = vs_writer_add_process (w, &p);
  VsDevice d = { .idx = 0,
                 .uuid = "GPU-00000000-0000-0000-0000-0000000000aa",
                 .name = "Test GPU",
                 .total_bytes = 1LL << 34 };
  int64_t dev_row = vs_writer_add_device (w, &d);
  if (pid_row <= 0 || dev_row <= 0 || vs_writer_set_meta (w, "source", "collector") != 0
      || vs_writer_set_meta_int (w, "start_ns", p.start_ns) != 0 || vs_writer_commit (w) != 0)
    {
      fprintf (stderr, "vs-test-spool-writer: %s\n", vs_writer_errmsg (w));
      return 1;
    }
  long long n = 0;
  for (long c = 0; c <= commits; c++)
    {
      long batch = c < commits ? rows : tail;
      for (long i = 0; i < batch; i++, n++)
        {
          VsMemEvent e
              = vs_test_mem_event (now_ns (), pid_row, getpid (), dev_row, VS_MEM_KIND_DEVICE,
                                   VS_MEM_OP_ALLOC, 0x7f0000000000LL + n * 4096, 4096);
          e.correlation = n + 1;
          if (vs_writer_mem_event (w, &e) != 0)
            {
              fprintf (stderr, "vs-test-spool-writer: %s\n", vs_writer_errmsg (w));
              return 1;
            }
        }
      if (c < commits)
        {
          if (vs_writer_commit (w) != 0)
            return 1;
          printf ("committed %lld %lld\n", n, file_size (wal));
        }
      else
        printf ("mid-batch %lld\n", file_size (wal));
      fflush (stdout);
    }
  for (;;)
    pause ();
}
