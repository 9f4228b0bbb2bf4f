/* SPDX-License-Identifier: MIT */
/* vs-oom-text.h — a failed allocation in words, for the failed
 * allocations pane and the timeline's tooltip over a failure marker.
 */
#pragma once

#include "vs-document.h"
#include "vs-oom-explain.h"

G_BEGIN_DECLS

/* "cudaMalloc of 48.00 MiB failed" (newly allocated). */
char *vs_oom_title (const VsOom *oom);

/* "at 1.234 s on GPU 0 · cudaErrorMemoryAllocation": when and where, from
 * doc's devices (the GPU is left out when the trace does not know it). */
char *vs_oom_when (VsDocument *doc, const VsOom *oom);

/* One line on reserved, allocated, free inside reserved and the largest
 * free block of f ("unknown" for what the trace does not know). */
char *vs_oom_state_text (const VsFragmentation *f);

G_END_DECLS
