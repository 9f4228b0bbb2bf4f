/* SPDX-License-Identifier: MIT */
/* vs-blocks-private.h — reading block rows, shared by the block queries
 * (vs-blocks.c) and the bands over time (vs-block-bands.c); not part of
 * the library's interface. */
#pragma once

#include <sqlite3.h>

#include "vs-blocks.h"

G_BEGIN_DECLS

/* The columns of a block row as vs_block_read() takes them, of the table
 * or view named b. */
#define VS_BLOCK_COLUMNS_SQL                                                                       \
  "b.id, b.level, b.device_id, ifnull(b.allocator_id, 0), b.process_id,"                           \
  " b.kind, b.address, b.bytes, b.block_bytes, b.alloc_seq, b.free_seq,"                           \
  " b.alloc_ts, b.free_ts, ifnull(b.stack_id, 0), b.owner_id"

/* Fills *b from the current row of stmt, which selects
 * VS_BLOCK_COLUMNS_SQL: times relative to the trace's start, an
 * allocation from before the trace with alloc_seq VS_UNKNOWN. */
void vs_block_read (VsTrace *trace, sqlite3_stmt *stmt, VsBlock *b);

/* The cached statement of sql (vs_trace_statement()) on the blocks live
 * after a replay step, with ?1 bound to device_id, ?2 to allocator_id
 * (0: every allocator) and ?3 to the step seq; NULL with error set when
 * it cannot be prepared. */
sqlite3_stmt *vs_blocks_live_statement (VsTrace *trace, const char *sql, gint64 device_id,
                                        gint64 allocator_id, gint64 seq, GError **error);

G_END_DECLS
