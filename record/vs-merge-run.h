/* SPDX-License-Identifier: MIT */
/* vs-merge-run.h — what record knows about a recorded run as a whole
 * (VsMergeRun), handed to the merge (vs-merge.h) and written into the
 * merged trace's meta (vs-merge-meta.h).
 */
#pragma once

#include <stdint.h>

#include "vs-timings.h"

struct VsFinGiven;
struct VsRowSink;

/* What record knows about the run as a whole. */
typedef struct
{
  int64_t main_pid;         /* the program record started */
  int64_t exit_status;      /* its exit status (128+signal), VS_UNKNOWN if none */
  int64_t start_ns, end_ns; /* used when no process recorded anything */
  const char *command_line, *host, *tool_version;
  const char *cwd; /* the program's working directory, NULL if unknown */
  /* A raw trace of the run's that becomes the merged trace itself
   * (renamed, not copied; NULL: none): record's import of a PyTorch
   * allocator level, the largest input.  It is taken as merged first, its
   * rows keeping their ids; a collector process or GPU of the same pid or
   * uuid takes over its row.  It is gone from where it was once merged. */
  const char *adopt;
  /* The adopted trace's alloc_event rows as its import handed them to the
   * finalizer (vs-fin-given.h; NULL: none): the finalizer takes them
   * rather than reading them back, when adopt is renamed into place. */
  struct VsFinGiven *given;
  /* Where the finalizer of the merged trace puts its derived rows (NULL:
   * their tables): a VsRowChunker's sink when the trace is compacted next
   * (vs-trace-compact.h). */
  struct VsRowSink *sink;
  /* Where the merge's copy and the finalizer's passes are marked (NULL:
   * not timed): record --timings. */
  VsTimings *timings;
} VsMergeRun;
