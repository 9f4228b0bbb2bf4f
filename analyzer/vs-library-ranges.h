/* SPDX-License-Identifier: MIT */
/* vs-library-ranges.h — NVTX ranges that libraries emit around their own
 * work (a launch, a collective, a library call), told apart from the
 * ranges a program puts around its own steps.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether the range (domain may be NULL: the default domain) is one a
 * library emits for each of its calls: NCCL's collectives, XLA's module
 * and thunk launches (domain TSL, names XlaModule:…, Thunk:…), CUB's and
 * Thrust's algorithms (domain CCCL), cuDNN's and cuBLAS's calls.  Such
 * ranges repeat as often as the library is called: they are never the
 * program's iterations. */
gboolean vs_range_is_library (const char *domain, const char *name);

G_END_DECLS
