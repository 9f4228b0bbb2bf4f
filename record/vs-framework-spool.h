/* SPDX-License-Identifier: MIT */
/* vs-framework-spool.h — what the JAX/XLA and CuPy hook
 * (collector/python/vs_frameworks.py) left in a run's spool, made into
 * process traces that the merge takes like any other.
 */
#pragma once

#include <stdbool.h>

/* For each vsfw-PID.info in spool writes vsfw-PID.db, a raw trace of
 * that process (pid, host): its GPUs by uuid, the "meta" lines (the
 * framework's settings and statistics), and each failed request inside a
 * framework's pool as a failed_alloc row (api "xla" or "cupy", allocator
 * NULL, the request as the error gave it, the error's text as error_name)
 * with the traceback's Python stack; and CuPy's allocator level from
 * vsfw-PID.events (vs-framework-events.h).  A file that cannot be read or
 * written costs one line on stderr and sets *keep (the spool is then
 * kept).  Returns how many traces were written. */
int vs_framework_spool_import (const char *spool, const char *host, bool *keep);
