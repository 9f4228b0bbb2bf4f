/* SPDX-License-Identifier: MIT */
/* vs-fin-given.h — allocator events handed to the finalizer as they are
 * written, so that it need not read them back.
 *
 * `record` imports a PyTorch allocator stream while the program runs
 * (record/vs-torch-stream.c), into the file that later becomes the run's
 * trace, its alloc_event rows keeping their ids (1, 2, ... in writing
 * order).  The import keeps here what the finalizer makes of each row (its
 * event record, as vs_trace_finalize() would load it) and the rows coded
 * into alloc_event chunks, VS_CHUNK_ROWS at a time (vs-trace-compact.h's
 * VsGivenCoder).  Named in the options of that trace's finalization
 * (VsFinalizeOptions.given), the
 * finalizer takes the events from here and loads from the tables only the
 * rows it was not handed (the process traces' rows, copied in after the
 * import's); the row sink (VsRowChunker) keeps the coded chunks and codes
 * only the rows after them.  The trace is the one the finalizer gives
 * when it loads every row.
 *
 * Memory: one 72-byte event record per row, plus the coded chunks (a few
 * bytes a row): what the finalizer would hold at its end anyway, held
 * from the row's import on.  Plain C, no GLib (vstrace).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-coded-chunks.h"
#include "vs-trace-writer.h"

typedef struct VsFinGiven VsFinGiven;

/* A new, empty hand-over; NULL when out of memory. */
VsFinGiven *vs_fin_given_new (void);

/* Frees g (NULL: nothing). */
void vs_fin_given_free (VsFinGiven *g);

/* Keeps the event of alloc_event row id, written from e.  Rows must come
 * in id order from 1 without gaps; one that does not, or no memory, gives
 * g up (it then holds nothing and is not used).  0, or -1 when g is given
 * up. */
int vs_fin_given_add_alloc (VsFinGiven *g, int64_t id, const VsAllocEvent *e);

/* Keeps one coded chunk of alloc_event rows (the next VS_CHUNK_ROWS rows
 * in id order, nrows of them), taking zone and data (malloc'd; freed
 * either way).  0, or -1 when g is given up. */
int vs_fin_given_add_chunk (VsFinGiven *g, int nrows, uint8_t *zone, size_t zone_len, uint8_t *data,
                            size_t data_len);

/* Lets go of the rows after row rows (the import cut them): their events
 * and every chunk that holds one of them. */
void vs_fin_given_cut (VsFinGiven *g, int64_t rows);

/* Gives g up: what it holds is freed and the finalizer loads every row. */
void vs_fin_given_drop (VsFinGiven *g);

/* The rows g holds the events of (ids 1..that), -1 once given up. */
int64_t vs_fin_given_rows (const VsFinGiven *g);

/* The rows its chunks hold (ids 1..that). */
int64_t vs_fin_given_coded_rows (const VsFinGiven *g);

/* The bytes g holds. */
size_t vs_fin_given_bytes (const VsFinGiven *g);

/* Whether a finalizer took g's events (its chunks are then the first of
 * alloc_event's, for the row sink to keep). */
bool vs_fin_given_taken (const VsFinGiven *g);

/* g's coded chunks, in order (none once given up). */
const VsCodedChunks *vs_fin_given_chunks (const VsFinGiven *g);
