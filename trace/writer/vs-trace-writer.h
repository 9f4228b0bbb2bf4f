/* SPDX-License-Identifier: MIT */
/* vs-trace-writer.h — the one way to create and fill a vramscope trace.
 *
 * Plain C11 and SQLite, no GLib: the collector links it into profiled
 * processes and the importer and benchmark generator use it too.  A writer
 * owns one sqlite3 connection; it is not thread-safe (the collector gives it
 * to a single writer thread).  Rows are batched into transactions; a commit
 * happens every VS_WRITER_BATCH_ROWS rows, on vs_writer_commit() and on
 * vs_writer_close().  The database is in WAL mode with synchronous=NORMAL, so
 * every committed row survives a crash of the writing process.
 *
 * Integer fields that the source does not know are set to VS_UNKNOWN and
 * stored as NULL; string fields that are NULL are stored as NULL.
 *
 * Errors: functions returning int return 0 on success and -1 on failure;
 * functions returning an id return it (> 0) or -1.  vs_writer_errmsg() then
 * holds one sentence saying what failed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-format.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define VS_WRITER_BATCH_ROWS 65536
/* How long a writer's commit waits while another connection (another
 * process deleting merged rows from the same file) holds the write lock. */
#define VS_WRITER_BUSY_MS 10000

  typedef struct VsWriter VsWriter;

  /* Creates a new trace at path (an existing file is replaced) with the
 * schema applied.  Returns NULL and fills err (if errlen > 0) on failure. */
  VsWriter *vs_writer_create (const char *path, char *err, size_t errlen);

  /* Opens the raw (unfinalized) trace at path that a writer created and
 * closed, to add rows to it: what it holds stays as it is, and the rows
 * added are deduplicated against it as against rows of this writer's own
 * (devices by uuid, frames and stack nodes by content, kernel
 * configurations).  Returns NULL and fills err (if errlen > 0) when path
 * is no such trace. */
  VsWriter *vs_writer_open (const char *path, char *err, size_t errlen);

  /* Switches w to bulk mode for a trace written in one go to a file that the
 * caller deletes if anything fails (an import, the merge at the end of a
 * recording): no journal and no syncs, so nothing is written twice.  A crash
 * in bulk mode leaves a corrupt file.  The writer also keeps
 * every event it writes (alloc, mem and pool events) for
 * vs_writer_close() to finalize from, so in bulk mode events must be
 * written through the writer only, never with SQL of the caller's own.
 * Until vs_writer_close() succeeds the file carries schema version 0, so
 * that no reader accepts what a killed process left.  Call before the
 * first row.  Defined by the finalizer's library (trace/finalize), which
 * it hands the events to. */
  int vs_writer_set_bulk (VsWriter *w);

  /* The message of the last failure on w. */
  const char *vs_writer_errmsg (VsWriter *w);

  /* The underlying connection, for vs_trace_finalize() and tests. */
  struct sqlite3 *vs_writer_db (VsWriter *w);

  int vs_writer_set_meta (VsWriter *w, const char *key, const char *value);
  int vs_writer_set_meta_int (VsWriter *w, const char *key, int64_t value);

  /* The row of process pid with parent ppid on host (NULL: not known),
   * running command_line (NULL: not known), started at start_ns and not
   * ended: its ranks, end and exit status unknown. */
  VsProcess vs_writer_process_started (int64_t pid, int64_t ppid, const char *host,
                                       const char *command_line, int64_t start_ns);
  int64_t vs_writer_add_process (VsWriter *w, const VsProcess *p);

  /* The tables whose rows vs_writer_read_row() reads into their structs. */
  typedef enum
  {
    VS_WRITER_ROW_PROCESS,   /* VsProcess */
    VS_WRITER_ROW_DEVICE,    /* VsDevice */
    VS_WRITER_ROW_ALLOCATOR, /* VsAllocator */
    VS_WRITER_ROW_MODULE,    /* VsModule */
    VS_WRITER_ROW_FRAME,     /* VsFrame */
    VS_WRITER_ROW_RANGE,     /* VsRange, all but its depth */
  } VsWriterRow;

  /* Fills row, the struct of kind, from the columns of s's current row
   * from first on, in the order the writer inserts them (the table's own
   * order, its id left out): the fields the writer would store, read back
   * as it stores them (NULL integers VS_UNKNOWN; texts s's own, valid until
   * s steps again).  For copying rows of one trace into another. */
  struct sqlite3_stmt;
  void vs_writer_read_row (VsWriterRow kind, struct sqlite3_stmt *s, int first, void *row);
  /* Adds the row of a process of which an import knows only the pid, the
   * host (NULL: unknown) and the start (VS_UNKNOWN: unknown); every other
   * column unknown.  Its id, or -1. */
  int64_t vs_writer_add_imported_process (VsWriter *w, int64_t pid, const char *host,
                                          int64_t start_ns);
  /* Returns the id of the device with this uuid, adding it when new. */
  int64_t vs_writer_add_device (VsWriter *w, const VsDevice *d);
  int64_t vs_writer_add_allocator (VsWriter *w, const VsAllocator *a);
  int64_t vs_writer_add_module (VsWriter *w, const VsModule *m);
  /* Deduplicated: the same frame always gets the same id. */
  int64_t vs_writer_add_frame (VsWriter *w, const VsFrame *f);
  /* Deduplicated trie node (parent 0 = root).  A stack of frames
 * f[0] (outermost) … f[n-1] (innermost) is built by chaining calls; the
 * innermost node's id is the stack id. */
  int64_t vs_writer_add_stack_node (VsWriter *w, int64_t parent_id, int64_t frame_id);
  /* A stack of more than VS_TRACE_MAX_STACK_DEPTH frames keeps its
 * innermost VS_TRACE_MAX_STACK_DEPTH. */
  int64_t vs_writer_add_stack (VsWriter *w, const int64_t *frame_ids, size_t n);

  int vs_writer_mem_event (VsWriter *w, const VsMemEvent *e);
  int vs_writer_pool_event (VsWriter *w, const VsPoolEvent *e);
  /* Alloc events are inserted many rows per statement, in the order
 * written (the same ids as one insert each): they reach the database at the
 * latest on vs_writer_commit() or vs_writer_close(), so read them through
 * vs_writer_db() only after a commit.  A row the table refuses fails the
 * call that inserts its batch. */
  int vs_writer_alloc_event (VsWriter *w, const VsAllocEvent *e);
  /* The alloc_event row vs_writer_alloc_event() stores for e with id id:
   * v[0..VS_ALLOC_EVENT_COLUMNS-1] the table's columns in the order of
   * schemas/trace.sql, bit c of *nulls set where column c is NULL (its
   * v[c] 0). */
#define VS_ALLOC_EVENT_COLUMNS 15
  void vs_writer_alloc_event_row (const VsAllocEvent *e, int64_t id, int64_t *v, uint32_t *nulls);
  int vs_writer_failed_alloc (VsWriter *w, const VsFailedAlloc *e);
  int64_t vs_writer_add_range (VsWriter *w, const VsRange *r);
  int vs_writer_end_range (VsWriter *w, int64_t range_id, int64_t end_ns);
  /* A kernel execution; its name and configuration are stored once per
 * trace (kernel_config), shared by every execution that has them.
 * Executions are inserted many rows per statement, as alloc events are
 * (see vs_writer_alloc_event). */
  int vs_writer_kernel (VsWriter *w, const VsKernel *k);
  /* The kernel_config id of k's name and configuration (its times and ids
 * are ignored), adding the row when new; -1 on failure. */
  int64_t vs_writer_add_kernel_config (VsWriter *w, const VsKernel *k);
  /* Takes the id of a kernel execution inserted by SQL of the caller's own
 * (the merge): ids follow the order they are taken in, shared with
 * vs_writer_kernel. */
  int64_t vs_writer_next_kernel_id (VsWriter *w);
  /* The last kernel execution id taken so far (0: none). */
  int64_t vs_writer_last_kernel_id (VsWriter *w);
  /* Ids taken from now on come after id (never again one at or below it,
   * even where the rows that had them were deleted). */
  void vs_writer_kernel_ids_after (VsWriter *w, int64_t id);
  int vs_writer_memcpy (VsWriter *w, const VsMemcpy *m);
  int vs_writer_memset (VsWriter *w, const VsMemset *m);

  /* Commits the open transaction, if any. */
  int vs_writer_commit (VsWriter *w);

  /* With hold, commits what is open and begins one transaction that every
 * later commit (a full batch, vs_writer_commit) only flushes rows into,
 * so that rows and SQL of the caller's own commit together.  Without
 * hold, ends it: committed with keep, else rolled back (the writer's
 * caches then no longer match the file: close it).  0 or -1. */
  int vs_writer_hold (VsWriter *w, bool hold, bool keep);

  /* Commits and closes, without finalizing: all the collector does.
 * Always frees w.  Returns -1 (with err filled) if anything failed. */
  int vs_writer_finish (VsWriter *w, char *err, size_t errlen);

  /* Commits and closes.  With finalize, runs vs_trace_finalize() first.
 * Always frees w.  Returns -1 (with err filled) if anything failed.
 * Defined by the finalizer's library (trace/finalize); a program that
 * links the writer alone calls vs_writer_finish(). */
  int vs_writer_close (VsWriter *w, bool finalize, VsProgressFunc progress, void *progress_data,
                       char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
