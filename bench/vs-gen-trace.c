/* SPDX-License-Identifier: MIT */
/* vs-gen-trace.c — writes a synthetic N-event trace through the writer API.
 *
 * The shape imitates a training loop under PyTorch's caching allocator:
 * every iteration allocates activations (forward) and frees them in reverse
 * (backward), the allocator grows its reserved segments now and then (each
 * segment is a device-level cudaMalloc seen by CUPTI too), and one tensor per
 * iteration is kept forever (a leak, so memory grows).  Allocations carry
 * Python stacks drawn from a small set of call sites.  The trace is labelled
 * meta source = 'synthetic'.
 *
 * With -k KERNELS, that many kernel executions follow the memory events:
 * 120 kernels of long templated names (as CUPTI reports a training loop's,
 * about 280 characters), each launched with one configuration, one after
 * the other on a stream, 2 to 50 µs each.
 *
 * Usage: vs-gen-trace [-n EVENTS] [-k KERNELS] [-s SEED] [-t START_NS] [--no-finalize] -o FILE
 * (-t: the first event's time, CLOCK_REALTIME ns; 1.7e18 by default)
 * Prints the write rate (events per second on one core; kernels apart) and
 * the finalization time, as "key value" lines, for
 * bench/run-analyzer-bench.sh.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vs-trace-writer.h"

#define U VS_UNKNOWN
#define MiB (1024LL * 1024)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: deterministic for a given seed. */
static uint64_t
rnd (void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool
progress (uint64_t done, uint64_t total, void *data)
{
  if (*(bool *)data)
    fprintf (stderr, "\rfinalizing: %3d%%", total ? (int)(done * 100 / total) : 0);
  return true;
}

static void
die (VsWriter *w, const char *what)
{
  fprintf (stderr, "vs-gen-trace: %s: %s\n", what, vs_writer_errmsg (w));
  exit (1);
}

int
main (int argc, char **argv)
{
  long long n = 1000000, n_kernels = 0;
  int64_t t0 = 1700000000000000000LL;
  const char *out = NULL;
  bool finalize = true;
  for (int i = 1; i < argc; i++)
    {
      if (!strcmp (argv[i], "-n") && i + 1 < argc)
        n = atoll (argv[++i]);
      else if (!strcmp (argv[i], "-k") && i + 1 < argc)
        n_kernels = atoll (argv[++i]);
      else if (!strcmp (argv[i], "-t") && i + 1 < argc)
        t0 = atoll (argv[++i]);
      else if (!strcmp (argv[i], "-s") && i + 1 < argc)
        rng_state ^= (uint64_t)atoll (argv[++i]) * 0x2545F4914F6CDD1Dull;
      else if (!strcmp (argv[i], "-o") && i + 1 < argc)
        out = argv[++i];
      else if (!strcmp (argv[i], "--no-finalize"))
        finalize = false;
      else
        {
          fprintf (stderr, "usage: vs-gen-trace [-n EVENTS] [-k KERNELS] [-s SEED] [-t START_NS] "
                           "[--no-finalize] "
                           "-o FILE\n");
          return 2;
        }
    }
  if (out == NULL || n <= 0 || n_kernels < 0)
    {
      fprintf (
          stderr,
          "usage: vs-gen-trace [-n EVENTS] [-k KERNELS] [-s SEED] [-t START_NS] [--no-finalize] "
          "-o FILE\n");
      return 2;
    }

  char err[512];
  VsWriter *w = vs_writer_create (out, err, sizeof err);
  if (w == NULL)
    {
      fprintf (stderr, "vs-gen-trace: %s\n", err);
      return 1;
    }
  vs_writer_set_meta (w, "source", "synthetic");
  vs_writer_set_meta (w, "tool_version", "vs-gen-trace");
  vs_writer_set_meta (w, "clock", "CLOCK_REALTIME");
  vs_writer_set_meta_int (w, "start_ns", t0);
  vs_writer_set_meta (w, "command_line", "python train.py (synthetic)");
  VsProcess p = { 4242, 1, "gpu-node", 0, 0, 1, "0", "python train.py", t0, U, 0 };
  int64_t proc = vs_writer_add_process (w, &p);
  VsDevice d = { 0, "GPU-synthetic-0", "Synthetic H200", 143771 * MiB };
  int64_t dev = vs_writer_add_device (w, &d);
  VsAllocator a = { dev, proc, "pytorch", "pytorch", U, "expandable_segments:False" };
  int64_t pt = vs_writer_add_allocator (w, &a);
  if (proc < 0 || dev < 0 || pt < 0)
    die (w, "cannot write header rows");

  /* Call sites: a few model layers, each a short Python stack. */
  static const char *const layers[]
      = { "attention", "mlp", "layernorm", "embedding", "logits", "optimizer_step" };
  enum
  {
    N_SITES = 6
  };
  int64_t site_stack[N_SITES];
  VsFrame top = { VS_FRAME_PYTHON, 0, U, "<module>", "train.py", 88 };
  VsFrame loop = { VS_FRAME_PYTHON, 0, U, "train", "train.py", 61 };
  int64_t f_top = vs_writer_add_frame (w, &top);
  int64_t f_loop = vs_writer_add_frame (w, &loop);
  for (int s = 0; s < N_SITES; s++)
    {
      VsFrame fr = { VS_FRAME_PYTHON, 0, U, layers[s], "model.py", 20 + 7 * s };
      int64_t frames[3] = { f_top, f_loop, vs_writer_add_frame (w, &fr) };
      site_stack[s] = vs_writer_add_stack (w, frames, 3);
      if (site_stack[s] < 0)
        die (w, "cannot write stacks");
    }

  /* Activations live within one iteration and are freed in reverse; the
   * caching allocator hands the same addresses out again next iteration, so
   * its segments grow only while the largest iteration so far needs more.
   * One small tensor per iteration is kept (the leak), in its own
   * segments. */
  enum
  {
    PER_ITER = 200,
    MAX_SEGS = 4096
  };
  const int64_t seg_size = 256 * MiB;
  int64_t live_addr[PER_ITER], live_size[PER_ITER];
  int64_t arena[MAX_SEGS];
  int n_arena = 0;
  int64_t leak_seg = 0, leak_left = 0;
  int64_t ts = t0 + 1000000;
  int64_t next_addr = 0x7f0000000000LL;
  long long events = 0;
  double start = now_s ();

#define NEW_SEGMENT(addr_out, bytes)                                                               \
  do                                                                                               \
    {                                                                                              \
      (addr_out) = next_addr;                                                                      \
      next_addr += (bytes);                                                                        \
      VsMemEvent me                                                                                \
          = { ts, proc, 1, dev, U, U, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, (addr_out), (bytes),    \
              0,  U,    U, U,   0, 0 };                                                            \
      VsAllocEvent se                                                                              \
          = { ts,      proc,       1, dev, pt, VS_ALLOC_OP_SEGMENT_ALLOC, (addr_out), (bytes),     \
              (bytes), (addr_out), 7, 0,   0 };                                                    \
      if (vs_writer_mem_event (w, &me) < 0 || vs_writer_alloc_event (w, &se) < 0)                  \
        die (w, "cannot write events");                                                            \
      events += 2;                                                                                 \
    }                                                                                              \
  while (0)

  while (events < n)
    {
      int seg_i = 0;
      int64_t offset = 0;
      int k = 0;
      for (; k < PER_ITER && events < n; k++)
        {
          int64_t size = (int64_t)((rnd () % 64) + 1) * 65536 + (int64_t)(rnd () % 4096);
          int64_t rounded = (size + 511) & ~511LL;
          if (offset + rounded > seg_size)
            seg_i++, offset = 0;
          if (seg_i == n_arena && n_arena < MAX_SEGS)
            {
              NEW_SEGMENT (arena[n_arena], seg_size);
              n_arena++;
            }
          int64_t addr = arena[seg_i] + offset;
          offset += rounded;
          ts += 1000 + (int64_t)(rnd () % 20000);
          int site = (int)(rnd () % (N_SITES - 1));
          VsAllocEvent ae = { ts,   proc, 1,       dev,          pt, VS_ALLOC_OP_ALLOC,
                              addr, size, rounded, arena[seg_i], 7,  site_stack[site],
                              0 };
          if (vs_writer_alloc_event (w, &ae) < 0)
            die (w, "cannot write events");
          events++;
          live_addr[k] = addr;
          live_size[k] = size;
        }
      for (int j = k - 1; j >= 0 && events < n; j--)
        {
          ts += 1000 + (int64_t)(rnd () % 20000);
          VsAllocEvent fe
              = { ts, proc, 1, dev, pt, VS_ALLOC_OP_FREE_COMPLETED, live_addr[j], live_size[j],
                  U,  U,    7, 0,   0 };
          if (vs_writer_alloc_event (w, &fe) < 0)
            die (w, "cannot write events");
          events++;
        }
      if (events >= n)
        break;
      /* The leak: a small tensor kept by the optimizer step every time. */
      int64_t size = 4096 + (int64_t)(rnd () % 60000);
      int64_t rounded = (size + 511) & ~511LL;
      if (leak_left < rounded)
        {
          NEW_SEGMENT (leak_seg, 64 * MiB);
          leak_left = 64 * MiB;
        }
      ts += 1000;
      VsAllocEvent le = { ts,
                          proc,
                          1,
                          dev,
                          pt,
                          VS_ALLOC_OP_ALLOC,
                          leak_seg + 64 * MiB - leak_left,
                          size,
                          rounded,
                          leak_seg,
                          7,
                          site_stack[N_SITES - 1],
                          0 };
      leak_left -= rounded;
      if (vs_writer_alloc_event (w, &le) < 0)
        die (w, "cannot write events");
      events++;
    }
  if (vs_writer_commit (w) < 0)
    die (w, "cannot commit");
  double write_s = now_s () - start;

  start = now_s ();
  char names[120][320];
  for (int i = 0; i < 120; i++)
    snprintf (names[i], sizeof names[i],
              "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float,"
              " float, float, at::native::binary_internal::MulFunctor<float> >,"
              " at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float,"
              " at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)"
              " #%03d",
              i);
  for (long long i = 0; i < n_kernels; i++)
    {
      int which = (int)(rnd () % 120);
      int64_t length = 2000 + (int64_t)(rnd () % 48000);
      VsKernel k
          = { ts, ts + length, proc, dev, 1, 7,          100000 + i, names[which], 64 + which, 1,
              1,  128,         1,    1,   0, which * 16, 32 };
      if (vs_writer_kernel (w, &k) < 0)
        die (w, "cannot write kernels");
      ts += length + 500;
    }
  if (vs_writer_commit (w) < 0)
    die (w, "cannot commit");
  double kernel_s = now_s () - start;

  bool tty = isatty (2);
  start = now_s ();
  if (vs_writer_close (w, finalize, progress, &tty, err, sizeof err) < 0)
    {
      fprintf (stderr, "\nvs-gen-trace: %s\n", err);
      return 1;
    }
  double fin_s = now_s () - start;
  if (tty && finalize)
    fputc ('\n', stderr);
  printf ("events %lld\n", events);
  printf ("write_seconds %.3f\n", write_s);
  printf ("write_events_per_second %.0f\n", events / write_s);
  if (n_kernels > 0)
    printf ("kernels %lld\nkernels_per_second %.0f\n", n_kernels, n_kernels / kernel_s);
  printf ("finalize_seconds %.3f\n", finalize ? fin_s : 0.0);
  /* Without finalizing, closing is what a process's exit costs the
   * collector's writer: the last commit and the WAL checkpointed into the
   * file. */
  if (!finalize)
    printf ("close_seconds %.3f\n", fin_s);
  return 0;
}
