/* SPDX-License-Identifier: MIT */
/* vs-torch-follow.h — the PyTorch allocator streams of a run, imported
 * while the program runs.
 *
 * `vramscope record` waits for its program; meanwhile a thread of its own
 * follows each stream the program's processes write into the spool
 * (spool/torch-PID.stream, vs-torch-stream.h) and imports its complete
 * records, a batch at a time, into spool/torch-PID.db, so that once the
 * program exits only each stream's tail is left to import.  What the
 * streams say is kept in the streams themselves: a follower that is
 * stopped, killed or gives up loses nothing (vs_torch_stream_import_spool
 * and `vramscope recover` import from the stream again).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "vs-torch-stream.h"

/* What the imports of a follower do beyond importing. */
typedef enum
{
  VS_TORCH_FOLLOW_PLAIN,
  /* Each import also hands its alloc_event rows to the finalizer as it
   * writes them (vs_stream_import_gather), for the run's trace when it is
   * written into that import. */
  VS_TORCH_FOLLOW_GATHER,
  /* `record --window`: each import is kept, and the records it imported
   * give their space in the stream back to the disk as it goes
   * (vs-window-live.h), so that the streams stay small however long the
   * program runs. */
  VS_TORCH_FOLLOW_WINDOW,
} VsTorchFollowMode;

/* Starts following the streams of spool every interval_ms milliseconds
 * (at least 1), in a thread that takes none of record's forwarded
 * signals (the caller blocks them around this call).  NULL when the
 * thread cannot start: then nothing is followed. */
VsTorchFollow *vs_torch_follow_start (const char *spool, int interval_ms, VsTorchFollowMode mode);

/* Stops following: waits for the pass under way, if any, and ends the
 * thread.  The imports are kept for vs_torch_follow_take(), which reads
 * what the streams hold past them. */
void vs_torch_follow_stop (VsTorchFollow *f);

/* The import of process pid's stream, handed over to the caller (who
 * steps, closes or aborts it), once f is stopped; NULL when f has none (a
 * stream it could not read is left to the caller to read and report). */
VsStreamImport *vs_torch_follow_take (VsTorchFollow *f, long long pid);

/* Keeps given, the rows process pid's import handed to the finalizer
 * (vs_stream_import_close), until vs_torch_follow_take_given(); freed
 * when f has no stream of pid, or with f. */
struct VsFinGiven;
void vs_torch_follow_keep_given (VsTorchFollow *f, long long pid, struct VsFinGiven *given);

/* The rows kept for the import trace (spool/torch-PID.db, as the spool
 * functions write it), handed over to the caller; NULL when none. */
struct VsFinGiven *vs_torch_follow_take_given (VsTorchFollow *f, const char *trace);

/* Stops f if needed and gives up the imports not taken (their files
 * removed), as vs_torch_follow_free() does, keeping what
 * vs_torch_follow_take_given() hands over. */
void vs_torch_follow_drop_imports (VsTorchFollow *f);

/* The records imported while the program ran, over every stream. */
int64_t vs_torch_follow_records (const VsTorchFollow *f);

/* Stops f if needed and frees it; the imports not taken are given up
 * (their files removed, unless kept: windowed). */
void vs_torch_follow_free (VsTorchFollow *f);
