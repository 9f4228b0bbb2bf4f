/* SPDX-License-Identifier: MIT */
/* vs-growth.h — iterations of a program and the memory it keeps from one
 * to the next.
 *
 * Iterations come from annotations when the trace has them: a family of
 * NVTX ranges (or imported record_function / torch.compile annotations)
 * that repeats — "step 0", "step 1", … or one name over and over —, the
 * outermost such family with the most members.  Without annotations they
 * are detected from the repeating allocation pattern: the allocation
 * (stack and size) that recurs at the same distance, counted in
 * allocations, most often (the most common distance covers 60 % of its
 * gaps, none exceeding it by more than half) and is freed before it
 * recurs; each of its occurrences starts an iteration.
 * Detection reads the first VS_GROWTH_PATTERN_WINDOW allocations.
 * A windowed trace (`record --window`) holds every event only near its
 * end, its peaks and failures: its iterations are the slices that cover
 * the whole run, each counted at its lowest allocated memory (what the
 * slice keeps whatever it does in between).
 *
 * An iteration's allocated bytes are the allocated memory at its start
 * (the state after the last change at or before it); its growth is that
 * minus the previous iteration's.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

#define VS_GROWTH_PATTERN_WINDOW 200000

typedef enum
{
  VS_ITERATIONS_NONE,    /* no iterations found */
  VS_ITERATIONS_RANGES,  /* from annotations (nvtx_range) */
  VS_ITERATIONS_PATTERN, /* from the repeating allocation pattern */
  VS_ITERATIONS_SLICES,  /* a windowed trace's slices of the whole run */
} VsIterationSource;

typedef struct
{
  gint64 index;   /* 0-based */
  gint64 seq;     /* replay step of the state at its start */
  gint64 time_ns; /* its start */
  gint64 allocated_bytes;
  gint64 growth_bytes; /* VS_UNKNOWN for the first */
} VsIteration;

typedef struct
{
  gint64 device_id;
  gint64 allocator_id;
  VsIterationSource source;
  char *what; /* "NVTX ranges 'step #'" or "allocation pattern"; NULL with none */
  /* What one of them is, for "per …": "iteration", or "slice" when they
   * are a windowed trace's slices (of time, or of several iterations). */
  const char *unit;
  GArray *iterations; /* VsIteration, by time */
} VsIterations;

/* The iterations of (device_id, allocator_id; 0 = all).  Always returns a
 * VsIterations (source VS_ITERATIONS_NONE and no rows when none are
 * found), or NULL with error set on failure. */
VsIterations *vs_iterations_find (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                  GError **error);

void vs_iterations_free (VsIterations *iterations);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsIterations, vs_iterations_free)

/* Growth that repeats: memory kept from every iteration to the next. */
typedef struct
{
  gint64 device_id;
  gint64 allocator_id;
  gint64 bytes_per_iteration; /* the median growth (stepped: the mean); 0 when none */
  gint64 iterations;          /* iterations judged (after the first two) */
  gint64 growing;             /* of which grew (stepped: the rises) */
  gboolean stepped;           /* it grows in steps, not at every iteration */
  gint64 first_seq, last_seq; /* the iterations compared */
  gint64 first_time_ns;       /* start of the first growing iteration */
  const char *site;           /* the user site whose live bytes grew most, or NULL */
  gint64 site_stack_id;       /* its largest stack */
  gint64 site_bytes;          /* its growth from first_seq to last_seq */
} VsGrowth;

/* Judges iterations: memory grows per iteration when, from the third
 * iteration on (the first two allocate the model, optimizer state and
 * caches), at least three iterations are judged, at least 80 % of them
 * grew, and the median growth is at least 64 KiB.  Else it grows in steps
 * (a tensor kept every so many iterations) when at least eight are
 * judged and the lowest allocated memory from each iteration on (the
 * last tenth, eight at least, taken as one) rose at least four times,
 * over at least half of them, by 1 MiB or more in all:
 * bytes_per_iteration is then the mean.  Fills *out (with
 * bytes_per_iteration 0 when it does not grow).  The site names come from
 * the trace's stack cache.  Returns FALSE with error set on failure. */
gboolean vs_growth_judge (VsTrace *trace, const VsIterations *iterations, VsGrowth *out,
                          GError **error);

/* The same rules on the bytes of each iteration alone (allocated_bytes
 * and growth_bytes of iterations, which may hold any figure taken at
 * each iteration's start, e.g. a pool's reserved memory): fills *out
 * without a site and returns whether it grows. */
gboolean vs_growth_judge_values (const VsIterations *iterations, VsGrowth *out);

G_END_DECLS
