/* SPDX-License-Identifier: MIT */
/* vs-chunk-vtab.h — a compacted trace's chunked tables read under their
 * old names: the SQLite virtual-table module "vs_chunk".
 *
 * On a connection to a schema-5 trace, vs_chunk_attach() creates
 * temp.alloc_event, temp.mem_event, temp.kernel_exec, temp.series,
 * temp.series_level and temp.block as virtual tables over
 * main.<name>_chunk, with the columns of
 * schemas/trace.sql, and the view temp.kernel over kernel_exec and
 * kernel_config.  Unqualified names resolve to temp first, so every query
 * written for the plain tables reads them unchanged.  The module takes =,
 * <, <=, >, >=, IS NULL and IS NOT NULL on any column and skips the chunks
 * whose zone maps exclude them; SQLite still checks every condition on the
 * rows returned.  Rows come in the table's natural order (block's lifetime
 * classes merged back into it), and ORDER BY that order costs nothing.  block has a hidden column live_seq:
 * `live_seq = S` selects the blocks live after event S (alloc_seq <= S and
 * free_seq NULL or > S).
 *
 * Plain C: it is linked into the readers and into the loadable extension
 * vramscope-sqlite (vs-sqlite-ext.c), which calls SQLite through the
 * extension's routine table (VS_SQLITE_EXTENSION).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct sqlite3;

/* Registers the module "vs_chunk" on db, its tables caching decoded
 * chunks within one budget for the connection (64 MB, the least recently
 * read dropped first).  Returns an SQLite result code. */
int vs_chunk_register (struct sqlite3 *db);

/* vs_chunk_register() with a budget of cache_bytes (tests). */
int vs_chunk_register_with_budget (struct sqlite3 *db, size_t cache_bytes);

/* Whether main.name is a plain table with no main.name_chunk beside it:
 * series_level of the traces compacted before that table was chunked. */
bool vs_chunk_kept_plain (struct sqlite3 *db, const char *name);

/* When db's main database is a compacted trace (user_version 5):
 * registers the module and creates the temp virtual tables (but for a
 * table kept plain, vs_chunk_kept_plain) and the view temp.kernel
 * (nothing when they exist already).  Does nothing on other
 * databases.  Returns an SQLite result code; on failure *errmsg (when not
 * NULL) holds a message to sqlite3_free. */
int vs_chunk_attach (struct sqlite3 *db, char **errmsg);
