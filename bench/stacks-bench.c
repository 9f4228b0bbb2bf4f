/* SPDX-License-Identifier: MIT */
/* stacks-bench.c — what a stack costs at an allocation.
 *
 * Measures, on this machine's CPU, the time per capture of a 30-frame
 * stack: libunwind's unw_backtrace alone, glibc's backtrace() alone, and
 * the collector's whole capture (vs_stack_capture: unwind, drop internal
 * frames, hash, look the hash up among stacks already sent — the path
 * every allocation with a known stack takes).  Then writes the stacks of
 * DEPTHS different depths into a trace and times their symbolization.
 *
 * Usage: stacks-bench [CAPTURES]   (default 1000000)
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "vs-collector-private.h"
#include "vs-symbolize.h"
#include "vs-unwind.h"
#include "../tests/vs-test-records.h"

#define DEPTH 30
#define DEPTHS 200

typedef enum
{
  CAPTURE,
  RAW,
  GLIBC
} Mode;

static VsQueue queue;
static volatile uint64_t sink_hole;

static int64_t
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Recurses to depth d, then runs the measured operation n times. */
__attribute__ ((noinline)) static void
recurse (int d, Mode mode, long n)
{
  if (d > 0)
    {
      recurse (d - 1, mode, n);
      sink_hole++;
      return;
    }
  uint64_t pcs[64];
  for (long i = 0; i < n; i++)
    {
      if (mode == CAPTURE)
        sink_hole += vs_stack_capture (&queue);
      else if (mode == RAW)
        sink_hole += (uint64_t)vs_unwind_raw (pcs, 64);
      else
        sink_hole += (uint64_t)backtrace ((void **)pcs, 64);
    }
}

static double
per_call (Mode mode, long n)
{
  recurse (DEPTH - 3, mode, 1000); /* warm up */
  int64_t t0 = now ();
  recurse (DEPTH - 3, mode, n);
  return (double)(now () - t0) / (double)n;
}

int
main (int argc, char **argv)
{
  long n = argc > 1 ? atol (argv[1]) : 1000000;
  if (vs_unwind_init () != VS_UNWIND_LIBUNWIND)
    {
      fprintf (stderr, "stacks-bench: libunwind.so.8 not found\n");
      return 1;
    }
  vs_queue_init (&queue, 1 << 16);
  uint64_t pcs[64];
  int frames = 0;
  /* How deep the measured stacks really are. */
  recurse (0, RAW, 0);
  frames = vs_unwind_raw (pcs, 64);
  (void)frames;
  double raw = per_call (RAW, n);
  double capture = per_call (CAPTURE, n);
  double glibc = per_call (GLIBC, n / 10);
  printf ("frames per stack      %d\n", DEPTH);
  printf ("unw_backtrace         %.0f ns\n", raw);
  printf ("glibc backtrace       %.0f ns\n", glibc);
  printf ("vs_stack_capture      %.0f ns (known stack: unwind, filter, hash, lookup)\n", capture);

  /* Symbolization: DEPTHS distinct stacks written through the sink. */
  char path[] = "/tmp/stacks-bench-XXXXXX";
  int fd = mkstemp (path);
  if (fd < 0)
    return 1;
  close (fd);
  char err[512];
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  VsProcess p = vs_writer_process_started (getpid (), VS_UNKNOWN, NULL, NULL, 1);
  int64_t pid = vs_writer_add_process (w, &p);
  VsSink *s = vs_sink_new (w, pid);
  VsItem items[256];
  size_t got;
  while ((got = vs_queue_pop (&queue, items, 256)) > 0) /* earlier captures */
    for (size_t i = 0; i < got; i++)
      vs_sink_process_item (s, &items[i]);
  for (int d = 0; d < DEPTHS; d++)
    {
      recurse (d, CAPTURE, 1);
      while ((got = vs_queue_pop (&queue, items, 256)) > 0)
        for (size_t i = 0; i < got; i++)
          {
            uint64_t h = items[i].stack;
            vs_sink_process_item (s, &items[i]);
            VsItem f = { .type = VS_ITEM_FAILED_ALLOC,
                         .ts = d,
                         .tid = 1,
                         .bytes = 1,
                         .error = 2,
                         .device = UINT32_MAX,
                         .free_bytes = VS_UNKNOWN,
                         .total_bytes = VS_UNKNOWN,
                         .stack = h,
                         .api = "cudaMalloc" };
            vs_sink_process_item (s, &f);
          }
    }
  vs_sink_free (s);
  vs_writer_close (w, false, NULL, NULL, err, sizeof err);
  VsSymbolizeStats st;
  if (vs_symbolize_file (path, &st, err, sizeof err) != 0)
    {
      fprintf (stderr, "stacks-bench: %s\n", err);
      return 1;
    }
  printf ("symbolize             %lld frames (%lld named, %lld with lines) in %.1f ms\n",
          (long long)st.frames, (long long)st.symbolized, (long long)st.with_line,
          (double)st.elapsed_ns / 1e6);
  unlink (path);
  return 0;
}
