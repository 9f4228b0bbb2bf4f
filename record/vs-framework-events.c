/* SPDX-License-Identifier: MIT */
/* vs-framework-events.c — the allocator level of CuPy's memory pool and
 * of XLA's BFC allocator, as the JAX/XLA and CuPy hook
 * (collector/python/vs_frameworks.py, vs_xla_events.py) wrote it to
 * vsfw-PID.events and vsfw-PID.xla-events, into the process trace of
 * vsfw-PID.info (see vs-framework-events.h).
 *
 * One event a line: "stack ID" followed by its "frame LINE
 * FILE<TAB>FUNCTION" lines (innermost first), "a TS DEV PTR BYTES SIZE
 * STACK" (a block), "f TS DEV PTR BYTES" (its free), "S TS DEV PTR BYTES"
 * and "F TS DEV PTR BYTES" (a segment the pool took from CUDA and gave
 * back).  A line "allocator NAME" (`cupy` or `xla`; `cupy` until one
 * says otherwise) names the allocator of the lines after it.  Each event
 * becomes one alloc_event of the device's allocator of that name, as the
 * PyTorch stream's records do for `pytorch`: blocks at the size the pool
 * counts them (CuPy's used_bytes(), XLA's bytes_in_use), so the replayed
 * allocated memory is the pool's own figure.  A line cut short (a
 * process killed while writing) ends the reading.
 *
 * Within a stack, "label NAME" is a frame that is a name only.
 *
 * Workload: one line per allocation and free of the program, read once.
 */
#include "vs-framework-events.h"

#include <stdio.h>
#include <string.h>

typedef struct
{
  VsWriter *w;
  int64_t process_id;
  GHashTable *devices;    /* device index + 1 → trace device id */
  const char *kind;       /* the allocator the lines are of: "cupy" or "xla" */
  GHashTable *allocators; /* device index + 1 → the device's allocator of that kind */
  GHashTable *stacks;     /* the file's stack id → trace stack id */
  /* The stack being read. */
  long long stack;
  VsFrameworkFrames frames;
} Events;

/* Writes the stack being read, if any; 0 or -1. */
static int
flush_stack (Events *ev)
{
  if (ev->stack <= 0)
    return 0;
  int64_t id = vs_framework_frames_stack (ev->w, &ev->frames);
  if (id < 0)
    return -1;
  g_hash_table_insert (ev->stacks, GSIZE_TO_POINTER ((gsize)ev->stack),
                       GSIZE_TO_POINTER ((gsize)id));
  ev->stack = 0;
  return 0;
}

/* The allocator (ev->kind) of device index idx: created on first use; 0 when
 * the device is not described, -1 when the writer failed. */
static int64_t
allocator_of (Events *ev, long long idx)
{
  gpointer key = GSIZE_TO_POINTER ((gsize)idx + 1), v;
  if (idx < 0)
    return 0;
  if (g_hash_table_lookup_extended (ev->allocators, key, NULL, &v))
    return (int64_t)GPOINTER_TO_SIZE (v);
  if (!g_hash_table_lookup_extended (ev->devices, key, NULL, &v))
    return 0;
  VsAllocator al = { .device_id = (int64_t)GPOINTER_TO_SIZE (v),
                     .process_id = ev->process_id,
                     .kind = ev->kind,
                     .name = ev->kind,
                     .handle = VS_UNKNOWN };
  int64_t id = vs_writer_add_allocator (ev->w, &al);
  if (id > 0)
    g_hash_table_insert (ev->allocators, key, GSIZE_TO_POINTER ((gsize)id));
  return id;
}

/* One event line; 0, 1 at a line it cannot read (the end of what was
 * written), -1 when the writer failed. */
static int
read_event (Events *ev, char *line)
{
  long long ts, idx, ptr, nbytes, size = 0, stack = 0;
  char op;

  int rc = vs_framework_frame_line (ev->w, line, ev->stack > 0, &ev->frames);
  if (rc <= 0)
    return rc;
  if (strncmp (line, "label ", 6) == 0)
    {
      /* A frame that is a name only (the XLA executable a block was
       * allocated in). */
      if (ev->stack <= 0 || ev->frames.n == VS_FRAMEWORK_MAX_FRAMES)
        return 0;
      VsFrame f = { .kind = VS_FRAME_LABEL,
                    .module_id = VS_UNKNOWN,
                    .address = VS_UNKNOWN,
                    .function = line + 6,
                    .line = VS_UNKNOWN };
      int64_t id = vs_writer_add_frame (ev->w, &f);
      if (id < 0)
        return -1;
      ev->frames.ids[ev->frames.n++] = id;
      return 0;
    }
  if (flush_stack (ev) < 0)
    return -1;
  if (sscanf (line, "stack %lld", &stack) == 1)
    {
      ev->stack = stack;
      return 0;
    }
  if (strncmp (line, "allocator ", 10) == 0)
    {
      const char *name = line + 10;
      if (strcmp (name, "cupy") != 0 && strcmp (name, "xla") != 0)
        return 1; /* not one this reader knows: what follows is not read */
      if (strcmp (name, ev->kind) != 0)
        g_hash_table_remove_all (ev->allocators);
      ev->kind = strcmp (name, "xla") == 0 ? "xla" : "cupy";
      return 0;
    }
  int n = sscanf (line, "%c %lld %lld %lld %lld %lld %lld", &op, &ts, &idx, &ptr, &nbytes, &size,
                  &stack);
  if (n < 5 || (op == 'a' && n != 7) || strchr ("afSF", op) == NULL || nbytes < 0)
    return 1;
  int64_t allocator = allocator_of (ev, idx);
  if (allocator <= 0)
    return (int)allocator;
  VsAllocEvent ae = { .ts = ts,
                      .process_id = ev->process_id,
                      .tid = VS_UNKNOWN,
                      .device_id = (int64_t)GPOINTER_TO_SIZE (
                          g_hash_table_lookup (ev->devices, GSIZE_TO_POINTER ((gsize)idx + 1))),
                      .allocator_id = allocator,
                      .address = ptr,
                      .requested_bytes = nbytes,
                      .block_bytes = nbytes,
                      .segment_address = VS_UNKNOWN,
                      .stream = VS_UNKNOWN,
                      .stack_id = VS_UNKNOWN,
                      .range_id = VS_UNKNOWN };
  switch (op)
    {
    case 'a':
      ae.op = VS_ALLOC_OP_ALLOC;
      ae.stack_id = (int64_t)GPOINTER_TO_SIZE (
          g_hash_table_lookup (ev->stacks, GSIZE_TO_POINTER ((gsize)stack)));
      if (ae.stack_id == 0)
        ae.stack_id = VS_UNKNOWN;
      break;
    case 'f':
      ae.op = VS_ALLOC_OP_FREE_COMPLETED;
      break;
    case 'S':
      ae.op = VS_ALLOC_OP_SEGMENT_ALLOC;
      ae.segment_address = ptr;
      break;
    default:
      ae.op = VS_ALLOC_OP_SEGMENT_FREE;
      ae.segment_address = ptr;
      break;
    }
  return vs_writer_alloc_event (ev->w, &ae);
}

int
vs_framework_events_import (VsWriter *w, const char *path, int64_t process_id, GHashTable *devices)
{
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return 0; /* no allocator level: the hook did not write one */
  Events ev = { .w = w, .process_id = process_id, .devices = devices, .kind = "cupy" };
  ev.allocators = g_hash_table_new (NULL, NULL);
  ev.stacks = g_hash_table_new (NULL, NULL);
  char line[8192];
  int rc = 0;
  while (rc == 0 && fgets (line, sizeof line, f) != NULL)
    {
      size_t len = strcspn (line, "\n");
      if (line[len] != '\n')
        break; /* cut short */
      line[len] = '\0';
      rc = read_event (&ev, line);
    }
  if (rc == 0)
    rc = flush_stack (&ev);
  fclose (f);
  g_hash_table_unref (ev.allocators);
  g_hash_table_unref (ev.stacks);
  return rc < 0 ? -1 : 0;
}

/* See vs-framework-events.h. */
int
vs_framework_frame_line (VsWriter *w, char *line, bool take, VsFrameworkFrames *f)
{
  long long lineno;
  int used = 0;

  if (sscanf (line, "frame %lld %n", &lineno, &used) != 1 || used == 0)
    return 1;
  char *tab = strchr (line + used, '\t');
  if (!take || tab == NULL || f->n == VS_FRAMEWORK_MAX_FRAMES)
    return 0;
  *tab = '\0';
  VsFrame fr = { .kind = VS_FRAME_PYTHON,
                 .module_id = VS_UNKNOWN,
                 .address = VS_UNKNOWN,
                 .function = tab + 1,
                 .file = line + used,
                 .line = lineno };
  int64_t id = vs_writer_add_frame (w, &fr);
  if (id < 0)
    return -1;
  f->ids[f->n++] = id;
  return 0;
}

/* See vs-framework-events.h. */
int64_t
vs_framework_frames_stack (VsWriter *w, VsFrameworkFrames *f)
{
  int64_t outer_first[VS_FRAMEWORK_MAX_FRAMES];
  for (size_t i = 0; i < f->n; i++)
    outer_first[i] = f->ids[f->n - 1 - i];
  int64_t id = f->n > 0 ? vs_writer_add_stack (w, outer_first, f->n) : 0;
  f->n = 0;
  return id;
}
