/* SPDX-License-Identifier: MIT */
/* vs-compare.h — what a comparison of two traces needs beside the diff
 * (vs-diff.h): whether the two runs are comparable (the GPUs, the
 * allocator settings and the program they ran) and how to lay one over
 * the other in time (by their starts, or by their first iterations as
 * vs_iterations_find() detects them).
 *
 * Devices are matched by index, as vs_diff() matches them.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef enum
{
  VS_COMPARE_DIFFERS_GPU,      /* a device's name or capacity, or the number of devices */
  VS_COMPARE_DIFFERS_SETTINGS, /* an allocator setting (expandable segments, fraction, conf) */
  VS_COMPARE_DIFFERS_PROGRAM,  /* the command line the run recorded */
} VsCompareDifferenceKind;

typedef struct
{
  VsCompareDifferenceKind kind;
  char *text; /* one sentence for people naming both values, e.g. "GPU 0: NVIDIA H200
               * in A, NVIDIA H100 80GB HBM3 in B" */
} VsCompareDifference;

/* What differs between the runs of a and b, in the order GPU, settings,
 * program: a GPtrArray of VsCompareDifference (freed with the array),
 * empty when nothing known differs.  A fact one trace does not record is
 * not a difference.  Never fails. */
GPtrArray *vs_compare_differences (VsTrace *a, VsTrace *b);

/* What a difference of kind is, as a heading: "The GPUs differ", "The
 * allocator settings differ", "The programs differ"; static. */
const char *vs_compare_difference_title (VsCompareDifferenceKind kind);

/* Appends the differences for people, nothing when there are none:
 * "The runs are not alike:" and one item per difference ("- The GPUs
 * differ: …"), words wrapped to width columns (0: unwrapped). */
void vs_compare_write_differences (GPtrArray *differences, guint width, GString *out);

/* The shift that lays b over a by iteration: b's time t is drawn at
 * t − *offset_ns in a's time, so that b's first iteration starts where
 * a's does.  Iterations are those of the device with index device_idx
 * (allocator "all") in each trace.  Returns FALSE without error when
 * either trace has no iterations there (or no such device), FALSE with
 * error set when a query fails. */
gboolean vs_compare_iteration_offset (VsTrace *a, VsTrace *b, gint64 device_idx, gint64 *offset_ns,
                                      GError **error);

G_END_DECLS
