/* SPDX-License-Identifier: MIT */
/* vs-trace-compact.h — compacting a finalized trace: its big tables into
 * column chunks (schema version 5, vs-chunk.h).
 *
 * The last step of writing a trace (`record`, `recover`, `import`): the
 * collector, the merge and the importer write plain tables and the
 * finalizer derives plain tables from them; this step then encodes
 * alloc_event, mem_event, kernel_exec, series, series_level and block into
 * <name>_chunk tables, drops the plain tables with their indexes and the
 * view `kernel` (readers create it again over the virtual tables,
 * vs-chunk-vtab.h), sets user_version 5 and vacuums.  Lossless: a value
 * that is not an integer or NULL leaves the trace as it was.
 *
 * Plain C, no GLib: it runs in `vramscope record` on GPU servers.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-chunk.h"
#include "vs-row-sink.h"

struct sqlite3;
struct sqlite3_stmt;
struct VsChunkCodec;
struct VsChunkCoder;

/* Compacts the finalized schema-4 trace open on db (read-write, no
 * transaction open).  Returns 0 when compacted, 1 when db was left as it
 * is (not a finalized schema-4 trace, or a chunked table holds a value
 * other than an integer or NULL), -1 on failure with err set (db is then
 * unchanged). */
int vs_trace_compact (struct sqlite3 *db, char *err, size_t errlen);

/* vs_trace_compact() on the trace file at path, through a connection of
 * its own (a caller that times it marks the phase itself:
 * vs_trace_build() marks "compacting"). */
int vs_trace_compact_file (const char *path, char *err, size_t errlen);

/* The reverse of vs_trace_compact(): the compacted trace open on db
 * (read-write, no transaction open) back to plain schema-4 tables with
 * the readers' indexes and the view `kernel`, then vacuumed.  Returns 0,
 * 1 when db is not a compacted trace (left as it is), -1 on failure with
 * err set. */
int vs_trace_expand (struct sqlite3 *db, char *err, size_t errlen);

/* Writes a copy of the trace at src to dst (a new or empty file) that any
 * SQLite client reads without this code: a compacted trace is expanded
 * (vs_trace_expand), another is copied as it is.  Returns 0, or -1 with
 * err set. */
int vs_trace_export_plain (const char *src, const char *dst, char *err, size_t errlen);

/* Makes main."<table>_chunk" exist and empty (inside the caller's
 * transaction on db).  Returns 0, or -1 with err set. */
int vs_chunk_table_reset (struct sqlite3 *db, const char *table, char *err, size_t errlen);

/* Appends one coded chunk (vs_chunk_encode's zone and data, nrows rows)
 * as row seq of main."<table>_chunk", through *ins: the statement,
 * prepared on db at the first call (NULL before it), which the caller
 * finalizes once done.  Returns 0, or -1 with err set. */
int vs_chunk_table_put (struct sqlite3 *db, struct sqlite3_stmt **ins, const char *table,
                        int64_t seq, int nrows, const uint8_t *zone, size_t zone_len,
                        const uint8_t *data, size_t data_len, char *err, size_t errlen);

/* A row sink (vs-row-sink.h) that codes the finalizer's series,
 * series_level and block rows into main.series_chunk,
 * main.series_level_chunk and main.block_chunk as they come, for a
 * trace compacted right after: the rows are neither inserted nor read
 * back, and vs_trace_compact() keeps those chunks.  Name &chunker.sink
 * in the options of the one finalization whose output is compacted next
 * (not one a window is applied to: the window reads the tables).
 *
 *   VsRowChunker c;
 *   vs_row_chunker_init (&c);
 *   VsFinalizeOptions o = { .sink = &c.sink };
 *   ... vs_trace_finalize_with (db, &o, err, errlen) ...
 *   vs_row_chunker_clear (&c);
 */
typedef struct
{
  VsRowSink sink;
  /* private */
  struct sqlite3 *db;
  const VsChunkTable *table; /* the table being written */
  int32_t ndev, nalloc;      /* series: its devices and allocators; block: 0 */
  struct VsChunkRows *rows;  /* per series (block: per device and lifetime class): the chunk
                                 being filled */
  int32_t nranked;           /* block: groups (device, class) that have written a chunk */
  int64_t block_devices[VS_CHUNK_BLOCK_DEVICES]; /* block: the device ids seen (-1: NULL),
                                                    in the order seen */
  int32_t nblock_devices, last_block_slot;
  VsRowSinkTable pass;        /* the table being written */
  struct VsChunkCoder *coder; /* the raw events' chunks, coded on its thread */
  struct sqlite3 *aside_db;   /* while finishing: where they go */
  struct VsFinGiven *given;   /* alloc_event's first chunks, coded already (vs-fin-given.h) */
  struct sqlite3_stmt *aside_insert[5]; /* per VsRowSinkTable */
} VsRowChunker;

void vs_row_chunker_init (VsRowChunker *chunker);
void vs_row_chunker_clear (VsRowChunker *chunker);
