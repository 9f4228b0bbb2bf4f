/* SPDX-License-Identifier: MIT */
/* vs-test-pool-fixtures.h — small hand-built traces of a framework's pool
 * (CuPy's memory pool, XLA's BFC allocator), seen from the device level
 * (its cudaMallocs, told apart by a pool frame in their stacks) or with
 * the allocator level `record` keeps (an allocator of the framework's
 * kind, its segments and blocks).  Written through the writer API and
 * finalized, at fixed times from VS_FIXTURE_T0; the expected figures are
 * worked out in vs-test-pool-fixtures.c next to the events.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "vs-test-fixtures.h"

/* A loop of `steps` NVTX ranges "step N" on one device (80 GiB) holding a
 * pool of framework ("cupy" or "xla"): a first segment of 64 MiB before
 * the loop, then one new segment of `grow` bytes (0: none) in every step.
 * Seen from below (backed false), each step also allocates and frees
 * 8 MiB of its own with cudaMalloc.  With the allocator level (backed
 * true), each step allocates a block filling its new segment and frees
 * it at the step's end unless `keep`. */
bool vs_fixture_pool_steps (const char *path, const char *framework, bool backed, int steps,
                            int64_t grow, bool keep, char *err, size_t errlen);

/* A CuPy pool that gives segments back mid-run (free_all_blocks), on two
 * devices: device 0 sees it from below, device 1 with the allocator
 * level (see the .c for the events and every expected figure). */
bool vs_fixture_pool_release (const char *path, char *err, size_t errlen);
