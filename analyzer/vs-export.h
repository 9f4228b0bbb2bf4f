/* SPDX-License-Identifier: MIT */
/* vs-export.h — a trace written in the formats other tools read.
 *
 *   perfetto  the Chrome / Perfetto JSON trace event format (ui.perfetto.dev,
 *             chrome://tracing): memory counters per device and allocator,
 *             kernels per stream, NVTX ranges per thread and failed
 *             allocations as instants;
 *   snapshot  a PyTorch memory snapshot pickle (what
 *             torch.cuda.memory._dump_snapshot() writes and memory_viz
 *             opens) of the PyTorch allocator level;
 *   folded    folded stacks (flamegraph.pl, speedscope, inferno): one line
 *             `frame;frame;… BYTES` per distinct stack of the bytes live at
 *             the peak or at the end.
 *
 * Each writer streams to a FILE the caller opened; the caller checks the
 * stream for write errors (ferror, fclose) and owns the file's name.
 */
#pragma once

#include <stdio.h>

#include "vs-trace.h"

G_BEGIN_DECLS

/* Writes trace as a JSON object {"traceEvents": […], …} to out.  Times are
 * microseconds since the trace's start with three decimals, so the
 * nanoseconds of the trace are kept exactly.  Returns FALSE with error set
 * when the trace cannot be read. */
gboolean vs_export_perfetto (VsTrace *trace, FILE *out, GError **error);

/* Writes the PyTorch allocator level of device_id (0 = every device that
 * has a PyTorch allocator) as a snapshot pickle (protocol 2) to out: its
 * events as `device_traces`, its segments and blocks live at the end as
 * `segments`.  Fails with VS_TRACE_ERROR_INVALID_ARGUMENT when no such
 * device has a PyTorch allocator. */
gboolean vs_export_snapshot (VsTrace *trace, gint64 device_id, FILE *out, GError **error);

typedef enum
{
  VS_FOLDED_AT_PEAK, /* live at the instant of peak allocated memory */
  VS_FOLDED_AT_EXIT, /* never freed */
} VsFoldedWhen;

/* Writes the allocated bytes of (device_id, allocator_id) live at when as
 * folded stacks to out: frames outermost first, joined by ';', a space and
 * the bytes; one line per distinct stack, in byte order of the line.  For a
 * trace of several devices (device_id 0) each line starts with a frame
 * naming the device.  The lines of a device add up to its
 * peak_allocated_bytes (at the peak) or final_allocated_bytes (at exit).
 * Returns FALSE with error set on failure. */
gboolean vs_export_folded (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsFoldedWhen when,
                           FILE *out, GError **error);

G_END_DECLS
