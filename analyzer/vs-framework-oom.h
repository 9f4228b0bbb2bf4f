/* SPDX-License-Identifier: MIT */
/* vs-framework-oom.h — out-of-memory findings for the frameworks' pools
 * (vs-framework-pools.h): a failure inside XLA's BFC allocator or CuPy's
 * memory pool — recorded from the error the program raised, since no CUDA
 * call fails — or the pool's own cudaMalloc failing.
 */
#pragma once

#include "vs-diagnose.h"
#include "vs-oom.h"

G_BEGIN_DECLS

/* Appends to findings one finding per pool of device_id and cause
 * (oom-allocator-limit: the pool's limit, below the GPU's memory;
 * oom-fragmentation: room in the pool but no block large enough;
 * oom-device-full otherwise) for the failures among failures (vs_oom_list()
 * of the device) that vs_framework_pool_failure() recognises, counting
 * them; where the framework recorded its error, the pool's cudaMalloc
 * failures it retried are not counted again.  Evidence from the
 * framework's own figures at the failure, remedies for that framework.
 * FALSE with error set when a stack cannot be read. */
gboolean vs_framework_oom_findings (VsTrace *trace, gint64 device_id, const GPtrArray *failures,
                                    GPtrArray *findings, GError **error);

/* Whether failure o is one of a framework's pools
 * (vs_framework_pool_failure()); if so, sets *pool_id, *cause and
 * *evidence (newly allocated) as the finding vs_framework_oom_findings()
 * makes of it says them, so that `report oom` and the diagnosis name one
 * cause with one evidence. */
gboolean vs_framework_oom_classify (VsTrace *trace, const VsOom *o, gint64 *pool_id,
                                    VsOomCause *cause, char **evidence);

G_END_DECLS
