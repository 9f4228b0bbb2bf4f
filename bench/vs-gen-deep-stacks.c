/* SPDX-License-Identifier: MIT */
/* vs-gen-deep-stacks.c — writes a trace of the deepest stacks a trace may
 * hold, through the writer API: LEAVES stacks of VS_TRACE_MAX_STACK_DEPTH
 * frames that share one chain of VS_TRACE_MAX_STACK_DEPTH - 1 frames (the
 * outermost first), each with a leaf frame of its own, and a 1 MiB block
 * allocated under each leaf and never freed.  Python frames in the
 * program's own files, so each leaf is its own site.
 *
 * Usage: vs-gen-deep-stacks [-l LEAVES] -o FILE      (LEAVES: 100)
 * For bench/deep-stacks-bench.sh and the test "deep stacks".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-trace-writer.h"

#define U VS_UNKNOWN
#define T0 INT64_C (1700000000000000000)
#define MiB INT64_C (1048576)

/* Prints the writer's error and exits with status 1 when rc < 0. */
static int64_t
check (VsWriter *w, int64_t rc)
{
  if (rc < 0)
    {
      fprintf (stderr, "vs-gen-deep-stacks: %s\n", vs_writer_errmsg (w));
      exit (1);
    }
  return rc;
}

int
main (int argc, char **argv)
{
  const char *out = NULL;
  long leaves = 100;
  char err[512] = "";
  VsProcess p = { 4242, 1, "testhost", U, U, U, NULL, "python deep.py", T0, U, U };
  VsDevice d = { 0, "GPU-deep-0", "Test GPU", 1024 * MiB };
  const int64_t depth = VS_TRACE_MAX_STACK_DEPTH;
  int64_t *frames;
  int64_t proc, dev, chain;
  VsWriter *w;

  for (int i = 1; i < argc; i++)
    {
      if (!strcmp (argv[i], "-l") && i + 1 < argc)
        leaves = atol (argv[++i]);
      else if (!strcmp (argv[i], "-o") && i + 1 < argc)
        out = argv[++i];
      else
        out = NULL, i = argc;
    }
  if (out == NULL || leaves < 1 || leaves > 1000000)
    {
      fprintf (stderr, "usage: vs-gen-deep-stacks [-l LEAVES] -o FILE\n");
      return 2;
    }
  w = vs_writer_create (out, err, sizeof err);
  if (w == NULL)
    {
      fprintf (stderr, "vs-gen-deep-stacks: %s\n", err);
      return 1;
    }
  check (w, vs_writer_set_meta_int (w, "start_ns", T0));
  check (w, vs_writer_set_meta (w, "clock", "CLOCK_REALTIME"));
  proc = check (w, vs_writer_add_process (w, &p));
  dev = check (w, vs_writer_add_device (w, &d));
  frames = calloc ((size_t)depth, sizeof *frames);
  if (frames == NULL)
    return 1;
  for (int64_t i = 0; i < depth - 1; i++)
    {
      VsFrame f = { VS_FRAME_PYTHON, U, U, "f", "/home/user/proj/deep.py", i + 1 };

      frames[i] = check (w, vs_writer_add_frame (w, &f));
    }
  chain = check (w, vs_writer_add_stack (w, frames, (size_t)(depth - 1)));
  for (int64_t k = 0; k < leaves; k++)
    {
      VsFrame f = { VS_FRAME_PYTHON, U, U, "leaf", "/home/user/proj/leaf.py", k + 1 };
      int64_t stack
          = check (w, vs_writer_add_stack_node (w, chain, check (w, vs_writer_add_frame (w, &f))));
      VsMemEvent e = { T0 + 100 * (k + 1),
                       proc,
                       7,
                       dev,
                       U,
                       U,
                       VS_MEM_KIND_DEVICE,
                       VS_MEM_OP_ALLOC,
                       0x100000 * (k + 1),
                       MiB,
                       U,
                       U,
                       U,
                       U,
                       stack,
                       U };

      check (w, vs_writer_mem_event (w, &e));
    }
  free (frames);
  if (vs_writer_close (w, true, NULL, NULL, err, sizeof err) != 0)
    {
      fprintf (stderr, "vs-gen-deep-stacks: %s\n", err);
      return 1;
    }
  return 0;
}
