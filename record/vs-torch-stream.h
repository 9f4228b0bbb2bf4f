/* vs-torch-stream.h — reading the PyTorch allocator stream a process left.
 *
 * The PyTorch hook streams every caching-allocator event of a process to
 * spool/torch-PID.stream (format: collector/python/vs_torch_stream.cpp),
 * with spool/torch-PID.stream.info beside it (pid and GPUs, as a
 * snapshot's .info).  Unlike the snapshot dumped when Python exits, the
 * stream survives every way the process ends; it has no stacks.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the raw (unfinalized) trace out from the stream file at path: a
 * process row (the stream's pid), per device a `pytorch` allocator and its
 * events, an `oom` as a failed allocation; meta source 'import', so the
 * merge puts it on the collector's process row of the same pid.  With
 * until_snapshot, each device's records after its last snapshot marker are
 * left out (the process took its final snapshot at exit).  Stops at
 * the first record not completely written.  *events (may be NULL) gets
 * the number of records read, *stopped (may be NULL) whether the stream
 * stopped at its size limit before its process ended.  Returns 0, or -1
 * with err filled. */
int vs_torch_stream_import (const char *path, const char *out, bool until_snapshot, int64_t *events,
                            bool *stopped, char *err, size_t errlen);

/* For each process that left a stream in spool and no final snapshot
 * (which has Python stacks, and is preferred) — or, with every, for each
 * process that left a stream — imports the stream into spool/torch-PID.db
 * tied to its process and GPUs.  Returns how many were imported; a stream
 * that cannot be is reported and *keep set. */
int vs_torch_stream_import_spool (const char *spool, const char *host, bool every, bool *keep);

/* For each process whose final snapshot, taken at a termination signal,
 * was imported (spool/torch-PID.db) and that left a stream too, adds to
 * that trace the stream's events that came after the snapshot (the
 * program ran on while it was taken): per device, those after the
 * stream's last snapshot marker.  A snapshot taken at a normal exit gets
 * none: what Python frees as it shuts down would hide what was live at
 * exit.  Returns how many traces were extended; a failure is reported
 * and *keep set. */
int vs_torch_stream_append_tails (const char *spool, bool *keep);
