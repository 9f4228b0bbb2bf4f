/* SPDX-License-Identifier: MIT */
/* vs-trace-writer-private.h — what the finalizer's library (trace/finalize)
 * needs of a writer beyond vs-trace-writer.h: the event rows a bulk
 * writer hands over as it writes them, and closing in two halves around
 * a finalization.  The writer itself knows nothing of the finalizer: the
 * collector links the writer alone.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-writer.h"

/* Where a bulk writer hands each event row it writes, with its id.  A
 * hook returning -1 stops the gathering: drop is then called on the data
 * and no hook is called again. */
typedef struct
{
  int (*mem) (void *data, int64_t id, const VsMemEvent *e);
  int (*alloc) (void *data, int64_t id, const VsAllocEvent *e);
  int (*pool) (void *data, int64_t id, const VsPoolEvent *e);
  void (*drop) (void *data);
} VsWriterGather;

/* Switches w to bulk mode (see vs_writer_set_bulk); *empty says whether
 * the trace held no event row yet, so that every event row will pass
 * through w.  0, or -1 with the message in vs_writer_errmsg(). */
int vs_writer_begin_bulk (VsWriter *w, bool *empty);

/* From now on every event row w writes is handed to g with data (g NULL:
 * none).  At most once per writer. */
void vs_writer_set_gather (VsWriter *w, const VsWriterGather *g, void *data);

/* The data of the gathering, or NULL when none or it was dropped; w
 * forgets it (the caller owns it). */
void *vs_writer_take_gathered (VsWriter *w);

/* Commits what is open and lets go of every statement and batch; the
 * connection (vs_writer_db) stays open, for a finalization.  0 or -1. */
int vs_writer_end_rows (VsWriter *w);

/* After vs_writer_end_rows: with ret 0, stamps the schema version a bulk
 * writer withheld; closes the connection and frees w.  With ret -1, err
 * (if errlen > 0) gets why, or w's own message when why is NULL.  Returns
 * ret, or -1 when the stamp or the close failed. */
int vs_writer_release (VsWriter *w, int ret, const char *why, char *err, size_t errlen);
