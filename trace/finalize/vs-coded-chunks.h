/* SPDX-License-Identifier: MIT */
/* vs-coded-chunks.h — chunks coded ahead of the trace they go into.
 *
 * Two kinds of chunks are coded before the finalizer's transaction on the
 * trace is open: an import's alloc_event rows while the program runs
 * (vs-fin-given.h) and a process trace's kernel executions beside the
 * finalizer (record/vs-merge-kernels.c).  Each keeps them in order here,
 * as vs_chunk_encode() made them, until they are written into the trace
 * (vs_chunk_table_put(), vs-trace-compact.h).  Plain C, no codec (vstrace).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One coded chunk: nrows rows, its zone map and its data. */
typedef struct
{
  int nrows;
  uint8_t *zone, *data;
  size_t zone_len, data_len;
} VsCodedChunk;

/* Chunks in order; zero-initialised is empty. */
typedef struct
{
  VsCodedChunk *chunk;
  size_t n, cap;
  int64_t rows; /* the rows they hold */
  size_t bytes; /* their zones' and data's bytes */
} VsCodedChunks;

/* Appends a chunk, taking zone and data (malloc'd; freed with the list).
 * 0, or -1 when out of memory (zone and data are then freed). */
int vs_coded_chunks_take (VsCodedChunks *l, int nrows, uint8_t *zone, size_t zone_len,
                          uint8_t *data, size_t data_len);

/* Keeps only the first n chunks. */
void vs_coded_chunks_truncate (VsCodedChunks *l, size_t n);

/* Frees every chunk and the list's array; l is empty after. */
void vs_coded_chunks_clear (VsCodedChunks *l);
