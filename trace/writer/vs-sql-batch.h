/* SPDX-License-Identifier: MIT */
/* vs-sql-batch.h — inserting many rows of integers with few statements.
 *
 * SQLite spends longer running an INSERT statement than storing its row,
 * so bulk writers gather rows here and insert up to VS_SQL_BATCH_ROWS of
 * them with one `INSERT … SELECT` whose rows come from a virtual table
 * reading the gathered values (the `carray` idea: one statement run per
 * batch, no parameter binding per value).  On 4.3 M rows that was 28 %
 * faster than 32-row `INSERT … VALUES` statements, which were twice as
 * fast per row as one INSERT each.  Rows hold 64-bit integers or NULL.
 *
 * The statement is `INSERT OR FAIL`: a statement that inserts many rows
 * and may abort makes SQLite keep a statement journal (a copy of every
 * page it touches, to undo it half-done), which costs more than batching
 * saves in a rollback or WAL journal mode.  Bulk writers roll the whole
 * transaction back on failure, so what a failed statement leaves does not
 * matter.
 *
 * A batch holds VS_SQL_BATCH_ROWS rows (8 bytes per column each): 256 rows
 * ran within 2 % of 1024 while keeping a set of many batches (a series
 * per allocator and shift) small.
 *
 *   VsSqlBatch b;
 *   vs_sql_batch_init (&b, db, "t (a, b)", 2);
 *   vs_sql_batch_int (&b, 0, 1); vs_sql_batch_null (&b, 1);
 *   vs_sql_batch_row (&b);       // may insert the gathered rows
 *   ...
 *   vs_sql_batch_flush (&b);     // inserts what is left
 *   vs_sql_batch_clear (&b);
 *
 * Every function that touches the database returns 0 or -1 with the error
 * in sqlite3_errmsg (db).  Not thread-safe: one batch per thread.
 */
#pragma once

#include <stddef.h>
#include <assert.h>
#include <stdint.h>

#include <sqlite3.h>

#define VS_SQL_BATCH_ROWS 256
#define VS_SQL_BATCH_MAX_COLS 32

typedef struct
{
  sqlite3 *db;
  sqlite3_stmt *insert;
  int ncols;
  int pending;                       /* rows gathered, not yet inserted */
  int64_t *val;                      /* [VS_SQL_BATCH_ROWS][ncols] */
  uint32_t nulls[VS_SQL_BATCH_ROWS]; /* bit c: column c is NULL */
} VsSqlBatch;

/* Prepares `INSERT OR FAIL INTO <target> SELECT …` for target, a table
 * name and its column list ("t (a, b)"), with ncols
 * (1..VS_SQL_BATCH_MAX_COLS) columns.  On failure nothing needs clearing. */
int vs_sql_batch_init (VsSqlBatch *b, sqlite3 *db, const char *target, int ncols);

/* Sets column col (0-based) of the row being built. */
static inline void
vs_sql_batch_int (VsSqlBatch *b, int col, int64_t v)
{
  assert (b->val != NULL && col >= 0 && col < b->ncols && b->pending < VS_SQL_BATCH_ROWS);
  b->val[b->pending * b->ncols + col] = v;
  b->nulls[b->pending] &= ~(1u << col);
}

static inline void
vs_sql_batch_null (VsSqlBatch *b, int col)
{
  assert (col >= 0 && col < b->ncols && b->pending < VS_SQL_BATCH_ROWS);
  b->nulls[b->pending] |= 1u << col;
}

/* Inserts the rows gathered so far. */
int vs_sql_batch_flush (VsSqlBatch *b);

/* Ends the row being built (columns not set are NULL); inserts the gathered
 * rows when the batch is full. */
static inline int
vs_sql_batch_row (VsSqlBatch *b)
{
  assert (b->pending < VS_SQL_BATCH_ROWS);
  if (++b->pending < VS_SQL_BATCH_ROWS)
    {
      b->nulls[b->pending] = UINT32_MAX;
      return 0;
    }
  return vs_sql_batch_flush (b);
}

/* Finalizes the statement and frees the rows.  Rows not flushed are
 * dropped. */
void vs_sql_batch_clear (VsSqlBatch *b);

/* A set of batches for one target, one per key range the caller names by
 * an index: rows bound for different parts of a b-tree (a series per
 * allocator, a summary level per shift) go to different batches, so the
 * rows of one statement land next to each other.  Batches are prepared on
 * first use. */
typedef struct
{
  sqlite3 *db;
  const char *target;
  int ncols;
  size_t n;
  VsSqlBatch **batch; /* [n], NULL until used */
} VsSqlBatchSet;

/* Sets up n (>= 1) batches for target with ncols columns; -1 when out of
 * memory. */
int vs_sql_batch_set_init (VsSqlBatchSet *set, sqlite3 *db, const char *target, int ncols,
                           size_t n);

/* Batch i (< n), prepared now if it was not; NULL when that fails. */
VsSqlBatch *vs_sql_batch_set_get (VsSqlBatchSet *set, size_t i);

/* Flushes every batch. */
int vs_sql_batch_set_flush (VsSqlBatchSet *set);

/* Clears every batch and frees the set's memory. */
void vs_sql_batch_set_clear (VsSqlBatchSet *set);
