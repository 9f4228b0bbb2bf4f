/* SPDX-License-Identifier: MIT */
/* vs-test-fixtures.h — small hand-built traces shared by the analyzer
 * tests and the golden CSV tests.
 *
 * Every fixture is written through the writer API and finalized, at fixed
 * times from VS_FIXTURE_T0, so its numbers are the same on every run.  The
 * expected values are worked out in vs-test-fixtures.c next to the events.
 */
#pragma once

#include <stdbool.h>

#include "vs-trace-writer.h"

#define VS_FIXTURE_T0 INT64_C (1700000000000000000)

/* One device, plain cudaMalloc: address reuse, a release stored before its
 * allocation, memory live before the trace began. */
bool vs_fixture_basic (const char *path, bool finalize, char *err, size_t errlen);

/* Two devices: PyTorch segments and blocks, a plain cudaMalloc, a
 * stream-ordered pool, static memory, failed allocations (PyTorch's and a
 * device-level one), NVTX ranges, kernels, VMM, every kind of frame. */
bool vs_fixture_full (const char *path, char *err, size_t errlen);

/* PyTorch expandable segments: adjacent segment_map chunks backed by VMM
 * device records, then an unmap. */
bool vs_fixture_expandable (const char *path, char *err, size_t errlen);

/* n pseudo-random plain allocations and frees over about n µs, so the
 * finalizer builds summary levels; deterministic for a given seed. */
bool vs_fixture_random (const char *path, int n, unsigned seed, char *err, size_t errlen);

/* n pseudo-random PyTorch block allocations and frees in 20 MiB segments on
 * one device, nothing else: the allocator's series equals the device's
 * `all` series and is stored once.  with_pinned adds a pinned host buffer
 * over the whole trace, which leaves both series' bytes unchanged but makes
 * the finalizer store the allocator's series on its own. */
bool vs_fixture_allocator_random (const char *path, int n, unsigned seed, bool with_pinned,
                                  char *err, size_t errlen);

/* A training loop of `steps` NVTX ranges "step N" on one device (plain
 * cudaMalloc): each step allocates and frees 8 MiB; every `every` steps
 * (0: never) it keeps `kept` bytes to the end, and `jump` bytes (0: none)
 * are allocated once, halfway, and kept. */
bool vs_fixture_steps (const char *path, int steps, int every, int64_t kept, int64_t jump,
                       char *err, size_t errlen);
