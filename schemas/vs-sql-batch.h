/* vs-sql-batch.h — inserting many rows of integers with few statements.
 *
 * SQLite spends about as long running an INSERT statement as it does
 * storing the row, so bulk writers gather rows and insert them with one
 * multi-row `INSERT … VALUES (…),(…),…` statement (VS_SQL_BATCH_ROWS rows
 * at a time, about twice as fast per row).  Rows hold 64-bit integers or
 * NULL; the rows left over at the end go through a one-row statement.
 *
 * Write `INSERT OR FAIL`: a plain INSERT of many rows makes SQLite keep a
 * statement journal (a copy of every page the statement touches, to undo
 * a half-done statement), which costs more than batching saves in a
 * rollback or WAL journal mode.  Bulk writers roll the whole transaction
 * back on failure, so the rows a failed statement leaves do not matter.
 *
 *   VsSqlBatch b;
 *   vs_sql_batch_init (&b, db, "INSERT OR FAIL INTO t (a, b) VALUES", 2);
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
#include <stdint.h>

#include <sqlite3.h>

#define VS_SQL_BATCH_ROWS 32
#define VS_SQL_BATCH_MAX_COLS 32

typedef struct {
  sqlite3 *db;
  sqlite3_stmt *many; /* VS_SQL_BATCH_ROWS rows */
  sqlite3_stmt *one;  /* one row */
  int ncols;
  int pending;        /* rows gathered, not yet inserted */
  int64_t val[VS_SQL_BATCH_ROWS][VS_SQL_BATCH_MAX_COLS];
  uint32_t nulls[VS_SQL_BATCH_ROWS]; /* bit c: column c is NULL */
} VsSqlBatch;

/* Prepares the statements for `insert` (an INSERT up to and including
 * VALUES) with ncols (1..VS_SQL_BATCH_MAX_COLS) parameters per row.  On
 * failure nothing needs clearing. */
int vs_sql_batch_init (VsSqlBatch *b, sqlite3 *db, const char *insert,
                       int ncols);

/* Sets column col (0-based) of the row being built. */
static inline void
vs_sql_batch_int (VsSqlBatch *b, int col, int64_t v)
{
  b->val[b->pending][col] = v;
  b->nulls[b->pending] &= ~(1u << col);
}

static inline void
vs_sql_batch_null (VsSqlBatch *b, int col)
{
  b->nulls[b->pending] |= 1u << col;
}

/* Ends the row being built (columns not set are NULL); inserts the gathered
 * rows when the batch is full. */
int vs_sql_batch_row_full (VsSqlBatch *b);

static inline int
vs_sql_batch_row (VsSqlBatch *b)
{
  if (++b->pending < VS_SQL_BATCH_ROWS)
    {
      b->nulls[b->pending] = UINT32_MAX;
      return 0;
    }
  return vs_sql_batch_row_full (b);
}

/* Inserts the rows gathered so far. */
int vs_sql_batch_flush (VsSqlBatch *b);

/* Finalizes the statements.  Rows not flushed are dropped. */
void vs_sql_batch_clear (VsSqlBatch *b);

/* A set of batches for one INSERT, one per key range the caller names by
 * an index: rows bound for different parts of a b-tree (a series per
 * allocator, a summary level per shift) go to different batches, so the
 * rows of one statement land next to each other.  Batches are prepared on
 * first use. */
typedef struct {
  sqlite3 *db;
  const char *insert;
  int ncols;
  size_t n;
  VsSqlBatch **batch; /* [n], NULL until used */
} VsSqlBatchSet;

/* Sets up n (>= 1) batches of `insert` with ncols columns; -1 when out of
 * memory. */
int vs_sql_batch_set_init (VsSqlBatchSet *set, sqlite3 *db, const char *insert,
                           int ncols, size_t n);

/* Batch i (< n), prepared now if it was not; NULL when that fails. */
VsSqlBatch *vs_sql_batch_set_get (VsSqlBatchSet *set, size_t i);

/* Flushes every batch. */
int vs_sql_batch_set_flush (VsSqlBatchSet *set);

/* Clears every batch and frees the set's memory. */
void vs_sql_batch_set_clear (VsSqlBatchSet *set);
