/* SPDX-License-Identifier: MIT */
/* vs-row-sink.h — where the finalizer puts the rows of `series`,
 * `series_level` and `block`, and a copy of those of `mem_event` and
 * `alloc_event`.
 *
 * By default the finalizer inserts the derived rows into the tables.  A
 * caller that compacts the trace right after (vs-trace-compact.h) can name
 * a sink instead (VsFinalizeOptions.sink, vs-trace-finalize.h): the
 * finalizer hands it each row as it derives it,
 * and the sink codes them into chunks, so the largest derived tables are
 * neither inserted (nor indexed) nor read back.  It also hands over every
 * mem_event and alloc_event row as it loads it (the rows stay in their
 * tables), so compaction need not read those back either.  Plain C, no
 * GLib, and the finalizer itself needs no compression library.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sqlite3;

/* The tables a sink takes. */
typedef enum
{
  VS_ROW_SINK_SERIES,
  VS_ROW_SINK_SERIES_LEVEL,
  VS_ROW_SINK_BLOCK,
  VS_ROW_SINK_MEM_EVENT,
  VS_ROW_SINK_ALLOC_EVENT,
} VsRowSinkTable;

typedef struct VsRowSink VsRowSink;
struct VsRowSink
{
  /* The pass writing table begins, inside the finalizer's transaction on
   * db; devices 1..ndev, allocators 0..nalloc (series; 0 for the
   * others).  Returns 0, or -1 with err. */
  int (*begin) (VsRowSink *sink, VsRowSinkTable table, struct sqlite3 *db, int32_t ndev,
                int32_t nalloc);
  /* One row: v[] the table's columns in the order of schemas/trace.sql;
   * bit c of nulls: column c is NULL.  Rows come in key order (those of
   * `series` in key order per device and allocator).  Returns 0, or -1
   * with err.  Passes do not overlap: the finalizer gathers the
   * series_level rows it derives during the series pass and hands them
   * over, sorted, after it. */
  int (*row) (VsRowSink *sink, const int64_t *v, uint32_t nulls);
  /* The pass is over: with keep, whatever is gathered is written; either
   * way the sink lets go of db (its statements finalized).  Called once
   * after every begin that succeeded.  Returns 0, or -1 with err. */
  int (*end) (VsRowSink *sink, int keep);
  /* Every pass is over and the finalizer is about to commit on db: the
   * sink writes what it still holds (chunks coded on a thread of their
   * own).  NULL: nothing to do.  Returns 0, or -1 with err. */
  int (*finish) (VsRowSink *sink, struct sqlite3 *db);
  char err[256];
  /* Set by the finalizer before the first pass: the hand-over whose rows
   * it took (VsFinalizeOptions.given; NULL: none), whose coded chunks are
   * then alloc_event's first. */
  struct VsFinGiven *given;
};

/* Work done beside the finalizer whose output is compacted next (the
 * merge's kernels, coded on a thread of their own): called by the
 * finalizer on the calling thread once the sink has finished, inside its
 * transaction on db, before it writes the trace's end and commits.
 * Returns 0, or -1 with err filled (the finalization then fails). */
typedef int (*VsRowSinkBeside) (struct sqlite3 *db, void *data, char *err, size_t errlen);
