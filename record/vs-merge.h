/* SPDX-License-Identifier: MIT */
/* vs-merge.h — merging the per-process traces of one recorded run.
 *
 * Used by `vramscope record` once the program has exited; plain C, no GLib
 * (the record path runs on GPU servers that have none).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-merge-run.h"
#include "vs-trace-writer.h"

/* Creates the trace out (replacing a file there) from the process traces
 * inputs[0..n-1] (after run->adopt, when set): every row copied with ids
 * remapped, devices deduplicated
 * by uuid, collector costs summed into meta, then vs_trace_finalize().
 * Inputs that are not traces are skipped.  Returns 0, or -1 with err
 * filled. */
int vs_merge_traces (const char *out, const char *const *inputs, size_t n, const VsMergeRun *run,
                     VsProgressFunc progress, void *progress_data, char *err, size_t errlen);
