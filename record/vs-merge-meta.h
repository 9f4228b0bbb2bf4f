/* SPDX-License-Identifier: MIT */
/* vs-merge-meta.h — the run-wide meta of a merged trace (vs-merge.c):
 * earliest start and latest end over the process traces, the collector's
 * costs summed, the allocator settings and job identity carried as they
 * are, the run's own (command line, host, exit status), and the end of
 * each process.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vs-merge-run.h"
#include "vs-trace-writer.h"

/* Column i of the row at s: an integer (VS_UNKNOWN for NULL), text. */
static inline int64_t
vs_merge_col_i64 (sqlite3_stmt *s, int i)
{
  return sqlite3_column_type (s, i) == SQLITE_NULL ? VS_UNKNOWN : sqlite3_column_int64 (s, i);
}

static inline const char *
vs_merge_col_text (sqlite3_stmt *s, int i)
{
  return (const char *)sqlite3_column_text (s, i);
}

typedef struct
{
  char key[64];
  int64_t value;
} VsSum;

/* What the inputs' meta said so far; start_ns and end_ns VS_UNKNOWN
 * until one says. */
typedef struct
{
  VsSum sums[32];
  size_t nsums;
  int64_t start_ns, end_ns;
} VsMergeMeta;

/* Reads one input's meta (sql, run on db, gives key and value) into rm:
 * earliest start, latest end, summed collector costs; the keys carried as
 * they are (pytorch.*, time_axis, job_id, job_id_source: the first
 * input's) and the collector's settings go to w.  Returns the input's own
 * end (VS_UNKNOWN: none). */
int64_t vs_merge_meta (VsWriter *w, sqlite3 *db, const char *sql, VsMergeMeta *rm);

/* vs_merge_meta() over the rows of the statement s, prepared and bound by
 * the caller (who resets or finalizes it). */
int64_t vs_merge_meta_rows (VsWriter *w, sqlite3_stmt *s, VsMergeMeta *rm);

/* Deletes from w's meta the keys vs_merge_meta() carries from the first
 * input that has them, to gather them again.  0 or -1. */
int vs_merge_meta_forget_carried (VsWriter *w);

/* Sets on process row id of w its end (pend, where it has none yet) and,
 * for the program record started (run->main_pid), its exit status. */
void vs_merge_end_process (VsWriter *w, int64_t id, int64_t pend, const VsMergeRun *run);

/* Writes the run's meta into w: rm's sums, start and end (run's where no
 * input said), the count of inputs merged and what run knows. */
void vs_merge_run_meta (VsWriter *w, const VsMergeMeta *rm, size_t merged, const VsMergeRun *run);
