/* SPDX-License-Identifier: MIT */
/* vs-merge-append.h — the merged trace of a run appended to while the
 * program runs.
 *
 * `record --window` keeps the spool bounded however long the program runs:
 * every few seconds the rows the process traces (the inputs) gained since
 * the last round are appended to ONE merged trace (live.db in the spool),
 * which is finalized; the rows taken are then deleted from the inputs
 * (vs_merge_append_release), so they stay small.  Ids in the merged trace
 * stay stable across rounds: rows are appended, never merged again.  At
 * the end the rest of each input is appended and the merged trace, with
 * the run's meta, is the trace vs_merge_traces() of the whole inputs gives,
 * ids aside.  Between rounds another connection may DELETE event and range
 * rows from the merged trace (never small-table rows): nothing here relies
 * on them staying, and no id is given twice.
 *
 * What each round took (per input and table the largest id, the id maps,
 * the ranges taken while open, the import rows a collector's may claim,
 * each input's meta) is kept in the merged trace itself, committed with
 * the rows of each input: a record killed at any point is continued by
 * vs_merge_append_open() on the same file.  Plain C, no GLib.
 *
 * A round:  vs_merge_append_begin; vs_merge_append_input for every input
 * (sorted by name, as record lists the spool); vs_merge_append_end; then
 * vs_merge_append_release for every input.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-merge.h"

typedef struct VsMergeAppend VsMergeAppend;

/* Opens the merged trace at path, creating it (a raw trace) when absent,
 * and loads the append state kept in it.  NULL with err filled when path
 * is not a trace being appended to (a finished one included) or on
 * failure. */
VsMergeAppend *vs_merge_append_open (const char *path, char *err, size_t errlen);

/* Begins a round: opens the writer on the merged trace.  progress (may be
 * NULL) is called while rows are copied in this round's
 * vs_merge_append_input() calls; returning false cancels the input being
 * appended ("cancelled").  0 or -1 with err filled. */
int vs_merge_append_begin (VsMergeAppend *a, VsProgressFunc progress, void *progress_data,
                           char *err, size_t errlen);

/* Appends what the process trace at input holds beyond what earlier rounds
 * took: the rows of every table with ids above the largest taken from it
 * (all of them when the input is new), and the end its input has since
 * written to every range taken while open.  The rows and the state commit
 * in one transaction.  An input that does not exist (yet) is skipped (0).
 * *late (may be NULL) is increased by the event rows appended (alloc_event,
 * mem_event, pool_event, failed_alloc) whose ts < before_ns.  Of an
 * import (meta source 'import'), only the allocator events and failures
 * before until_ns are taken (up to the first that is not: its rows come in
 * time order; INT64_MAX: all), the rest left for a later round.  0, or -1
 * with err filled and the merged trace as it was before the call (the
 * round goes on with the next input). */
int vs_merge_append_input (VsMergeAppend *a, const char *input, int64_t before_ns, int64_t until_ns,
                           int64_t *late, char *err, size_t errlen);

/* Ends the round: gathers the run's meta so far, finalizes the merged
 * trace (vs_trace_finalize through the writer's close) and closes the
 * writer; the merged trace is then in WAL mode.  With run != NULL (the
 * program has ended: the last round) it first does what vs_merge_traces()
 * does at its end (every process's end, the run's meta) and drops the
 * append state: the file is then a finished trace, in rollback-journal
 * mode, that no later open continues.  progress reports the finalizer's.
 * 0 or -1 with err filled. */
int vs_merge_append_end (VsMergeAppend *a, const VsMergeRun *run, VsProgressFunc progress,
                         void *progress_data, char *err, size_t errlen);

/* Deletes from the process trace at input the event rows appended so far
 * and the ranges appended whose end is appended too; never small-table
 * rows, and never a table's largest row (so that the ids its writer gives
 * next stay above the ones taken).  In short transactions that wait for a
 * writer of the same file (a running collector) rather than fail.  An
 * input not appended yet, or missing, is left alone.  0 or -1 with err
 * filled. */
int vs_merge_append_release (VsMergeAppend *a, const char *input, char *err, size_t errlen);

/* Frees a (NULL: nothing); a round not ended is left as its inputs'
 * commits made it (vs_merge_append_open continues it). */
void vs_merge_append_free (VsMergeAppend *a);
