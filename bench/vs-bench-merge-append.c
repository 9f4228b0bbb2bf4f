/* SPDX-License-Identifier: MIT */
/* vs-bench-merge-append.c — time of the rounds that append a process
 * trace's new rows to the merged trace while the program runs
 * (record/vs-merge-append.h), and of releasing them from the input.
 *
 * Usage: vs-bench-merge-append DIR [ROWS] [ROUNDS]
 * Writes an import-like process trace of ROWS allocator events (default
 * 1,000,000) in DIR through the writer, as record's import does, then per
 * round: appends it to DIR/live.db (the copy and its commit), ends the
 * round (the finalizer over everything the merged trace holds), releases
 * the rows from the input; then writes ROWS more for the next round.
 * Prints one line per step with its wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "vs-merge-append.h"
#include "vs-trace-writer.h"
#include "../tests/vs-test-records.h"

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Writes rows allocator events, alloc and free pairs from ts0, into the
 * raw trace at path (created when first). */
static int
write_rows (const char *path, long rows, long first, char *err, size_t errlen)
{
  VsWriter *w
      = first == 0 ? vs_writer_create (path, err, errlen) : vs_writer_open (path, err, errlen);
  if (w == NULL)
    return -1;
  if (first == 0)
    {
      VsProcess p = vs_writer_process_started (100, VS_UNKNOWN, "h", NULL, VS_UNKNOWN);
      VsDevice d = { .idx = 0, .uuid = "GPU-bench", .name = "bench", .total_bytes = 1LL << 36 };
      vs_writer_set_meta (w, "source", "import");
      int64_t pid = vs_writer_add_process (w, &p), dev = vs_writer_add_device (w, &d);
      VsAllocator a = { .device_id = dev,
                        .process_id = pid,
                        .kind = "pytorch",
                        .name = "pytorch",
                        .handle = VS_UNKNOWN };
      vs_writer_add_allocator (w, &a);
    }
  for (long i = first; i < first + rows; i++)
    {
      VsAllocEvent e = vs_test_alloc_event (
          1000000 + 10 * i, 1, 1, 1, 1, i % 2 == 0 ? VS_ALLOC_OP_ALLOC : VS_ALLOC_OP_FREE_COMPLETED,
          0x10000000 + 0x1000 * ((i / 2) % 4096), 1000, 1024);
      if (vs_writer_alloc_event (w, &e) != 0)
        {
          snprintf (err, errlen, "%s", vs_writer_errmsg (w));
          vs_writer_close (w, false, NULL, NULL, NULL, 0);
          return -1;
        }
    }
  return vs_writer_close (w, false, NULL, NULL, err, errlen);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: vs-bench-merge-append DIR [ROWS] [ROUNDS]\n");
      return 2;
    }
  long rows = argc > 2 ? atol (argv[2]) : 1000000;
  int rounds = argc > 3 ? atoi (argv[3]) : 2;
  char input[4096], live[4096], err[512] = "";
  snprintf (input, sizeof input, "%s/torch-100.db", argv[1]);
  snprintf (live, sizeof live, "%s/live.db", argv[1]);
  unlink (live);
  for (int r = 0; r < rounds; r++)
    {
      double t0 = now ();
      if (write_rows (input, rows, (long)r * rows, err, sizeof err) != 0)
        goto fail;
      double t1 = now ();
      VsMergeAppend *a = vs_merge_append_open (live, err, sizeof err);
      if (a == NULL || vs_merge_append_begin (a, NULL, NULL, err, sizeof err) != 0
          || vs_merge_append_input (a, input, 0, INT64_MAX, NULL, err, sizeof err) != 0)
        goto fail;
      double t2 = now ();
      if (vs_merge_append_end (a, NULL, NULL, NULL, err, sizeof err) != 0)
        goto fail;
      double t3 = now ();
      if (vs_merge_append_release (a, input, err, sizeof err) != 0)
        goto fail;
      double t4 = now ();
      vs_merge_append_free (a);
      printf ("round %d: %ld rows written %.2f s, appended %.2f s, finalized (%ld rows in all)"
              " %.2f s, released %.2f s\n",
              r + 1, rows, t1 - t0, t2 - t1, (long)(r + 1) * rows, t3 - t2, t4 - t3);
    }
  return 0;
fail:
  fprintf (stderr, "vs-bench-merge-append: %s\n", err);
  return 1;
}
