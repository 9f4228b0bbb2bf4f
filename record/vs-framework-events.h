/* SPDX-License-Identifier: MIT */
/* vs-framework-events.h — the allocator levels the JAX/XLA and CuPy hook
 * (collector/python/vs_frameworks.py) wrote to vsfw-PID.events (CuPy's
 * memory pool) and vsfw-PID.xla-events (XLA's BFC allocator): every block
 * and segment with its Python stack.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "vs-trace-writer.h"

/* Writes the events of path into w as alloc_event rows of a `cupy` (or,
 * after a line "allocator xla", an `xla`) allocator per device (created
 * on its first event), on process
 * process_id; devices maps a CUDA device index + 1 (in a pointer) to the
 * trace's device id (in a pointer); events of a device it lacks are left
 * out.  A missing file is no allocator level (0); reading stops at a line
 * cut short.  Returns 0, or -1 when the writer failed. */
int vs_framework_events_import (VsWriter *w, const char *path, int64_t process_id,
                                GHashTable *devices);

/* The frames of one stack in a hook's spool file, innermost first, as its
 * lines give them. */
#define VS_FRAMEWORK_MAX_FRAMES 1024
typedef struct
{
  int64_t ids[VS_FRAMEWORK_MAX_FRAMES];
  size_t n;
} VsFrameworkFrames;

/* A line `frame LINE FILE<TAB>FUNCTION`: when take is true and f has room,
 * writes its Python frame through w and adds it to f; returns 0, or -1
 * when the writer failed.  Any other line: 1, nothing done. */
int vs_framework_frame_line (VsWriter *w, char *line, bool take, VsFrameworkFrames *f);

/* Writes f's stack through w, outermost frame first, and empties f;
 * returns its id, 0 when f has no frames, -1 when the writer failed. */
int64_t vs_framework_frames_stack (VsWriter *w, VsFrameworkFrames *f);
