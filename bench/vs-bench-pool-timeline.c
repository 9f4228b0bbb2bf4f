/* SPDX-License-Identifier: MIT */
/* vs-bench-pool-timeline.c — times vs_timeline_query() of a device's `all`
 * on a device holding a framework pool seen only from the device level.
 *
 * Writes a trace through the writer API: one device, N steps, each taking
 * a 1 MiB segment for XLA's BFC allocator (a cudaMalloc whose stack names
 * tsl::BFCAllocator::Extend, kept to the end) and allocating and freeing
 * 8 MiB of its own; so 3 N series rows and N pool changes.  Such a device's
 * `all` buckets are read from the raw rows, less what the pools held at
 * each row.  Prints the median of 5 queries of 1000 buckets over the
 * whole trace as "pool_timeline_steps_N median_ms".
 *
 * Usage: vs-bench-pool-timeline [-n STEPS] -o FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-timeline.h"
#include "vs-trace-writer.h"
#include "vs-trace.h"

#define U VS_UNKNOWN
#define MiB (1024LL * 1024)
#define T0 1700000000000000000LL

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
mem (VsWriter *w, int64_t proc, int64_t dev, int64_t ts, VsMemOp op, int64_t addr, int64_t bytes,
     int64_t stack)
{
  VsMemEvent e
      = { T0 + ts, proc, 7, dev, U, U, VS_MEM_KIND_DEVICE, op, addr, bytes, U, U, U, U, stack, U };

  vs_writer_mem_event (w, &e);
}

/* The trace of n steps; false with a message on failure. */
static bool
write_trace (const char *path, long n)
{
  char err[512] = "";
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  VsProcess p = { 4242, 1, "benchhost", U, U, U, NULL, "python bench.py", T0, U, 0 };
  VsDevice d = { 0, "GPU-bench-pool-0", "Bench GPU", 80 * 1024 * MiB };
  VsFrame pool = {
    VS_FRAME_NATIVE, U, U, "tsl::BFCAllocator::Extend(unsigned long, unsigned long)", NULL, U
  };
  VsFrame malloc_frame = { VS_FRAME_NATIVE, U, U, "cudaMalloc", NULL, U };
  int64_t proc, dev, f[2], stack;

  if (w == NULL)
    {
      fprintf (stderr, "vs-bench-pool-timeline: %s\n", err);
      return false;
    }
  vs_writer_set_meta_int (w, "start_ns", T0);
  vs_writer_set_meta (w, "clock", "CLOCK_REALTIME");
  proc = vs_writer_add_process (w, &p);
  dev = vs_writer_add_device (w, &d);
  f[0] = vs_writer_add_frame (w, &pool);
  f[1] = vs_writer_add_frame (w, &malloc_frame);
  stack = vs_writer_add_stack (w, f, 2);
  for (long i = 0; i < n; i++)
    {
      int64_t ts = 1000 * (i + 1);

      mem (w, proc, dev, ts, VS_MEM_OP_ALLOC, 0x100000000LL + i * MiB, MiB, stack);
      mem (w, proc, dev, ts + 100, VS_MEM_OP_ALLOC, 0x1000, 8 * MiB, U);
      mem (w, proc, dev, ts + 800, VS_MEM_OP_FREE, 0x1000, 8 * MiB, U);
    }
  if (vs_writer_close (w, true, NULL, NULL, err, sizeof err) != 0)
    {
      fprintf (stderr, "vs-bench-pool-timeline: %s\n", err);
      return false;
    }
  return true;
}

int
main (int argc, char **argv)
{
  const char *out = NULL;
  long n = 20000;
  double ms[5];

  for (int i = 1; i < argc; i++)
    {
      if (!strcmp (argv[i], "-n") && i + 1 < argc)
        n = atol (argv[++i]);
      else if (!strcmp (argv[i], "-o") && i + 1 < argc)
        out = argv[++i];
      else
        out = NULL, n = 0;
    }
  if (out == NULL || n <= 0)
    {
      fprintf (stderr, "usage: vs-bench-pool-timeline [-n STEPS] -o FILE\n");
      return 2;
    }
  if (!write_trace (out, n))
    return 1;
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (VsTrace) trace = vs_trace_open (out, &error);
    const VsDeviceInfo *d;

    if (trace == NULL)
      {
        fprintf (stderr, "vs-bench-pool-timeline: %s\n", error->message);
        return 1;
      }
    d = g_ptr_array_index (vs_trace_get_devices (trace), 0);
    for (int r = 0; r < 5; r++)
      {
        gint64 t = g_get_monotonic_time ();
        g_autoptr (GArray) b = vs_timeline_query (
            trace, d->id, 0, 0, vs_trace_get_duration_ns (trace) + 1, 1000, &error);

        if (b == NULL)
          {
            fprintf (stderr, "vs-bench-pool-timeline: %s\n", error->message);
            return 1;
          }
        ms[r] = (g_get_monotonic_time () - t) / 1000.0;
      }
  }
  qsort (ms, 5, sizeof ms[0], cmp_double);
  printf ("pool_timeline_steps_%ld %.2f\n", n, ms[2]);
  return 0;
}
