/* vs-sql-batch.c — multi-row INSERT statements for bulk writers (see
 * vs-sql-batch.h). */
#include "vs-sql-batch.h"

#include <stdlib.h>
#include <string.h>

/* Prepares `insert` followed by `rows` groups of ncols parameters. */
static int
prepare_rows (sqlite3 *db, const char *insert, int ncols, int rows,
              sqlite3_stmt **out)
{
  size_t group = 2 + 2 * (size_t) ncols; /* "(?,?)," */
  size_t len = strlen (insert);
  char *sql = malloc (len + 1 + group * (size_t) rows + 1);
  if (sql == NULL)
    return -1;
  char *p = sql;
  memcpy (p, insert, len);
  p += len;
  *p++ = ' ';
  for (int r = 0; r < rows; r++)
    {
      *p++ = r ? ',' : '(';
      if (r)
        *p++ = '(';
      for (int c = 0; c < ncols; c++)
        {
          *p++ = '?';
          *p++ = c + 1 < ncols ? ',' : ')';
        }
    }
  *p = '\0';
  int rc = sqlite3_prepare_v3 (db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
  free (sql);
  return rc == SQLITE_OK ? 0 : -1;
}

int
vs_sql_batch_init (VsSqlBatch *b, sqlite3 *db, const char *insert, int ncols)
{
  memset (b, 0, sizeof *b);
  if (ncols < 1 || ncols > VS_SQL_BATCH_MAX_COLS)
    return -1;
  b->db = db;
  b->ncols = ncols;
  b->nulls[0] = UINT32_MAX;
  if (prepare_rows (db, insert, ncols, VS_SQL_BATCH_ROWS, &b->many) < 0
      || prepare_rows (db, insert, ncols, 1, &b->one) < 0)
    {
      vs_sql_batch_clear (b);
      return -1;
    }
  return 0;
}

/* Binds row r of the gathered rows to parameters from base + 1 on. */
static void
bind_row (const VsSqlBatch *b, sqlite3_stmt *s, int r, int base)
{
  for (int c = 0; c < b->ncols; c++)
    if (b->nulls[r] & (1u << c))
      sqlite3_bind_null (s, base + c + 1);
    else
      sqlite3_bind_int64 (s, base + c + 1, b->val[r][c]);
}

static int
step (sqlite3_stmt *s)
{
  int rc = sqlite3_step (s);
  sqlite3_reset (s);
  return rc == SQLITE_DONE ? 0 : -1;
}

int
vs_sql_batch_row_full (VsSqlBatch *b)
{
  for (int r = 0; r < VS_SQL_BATCH_ROWS; r++)
    bind_row (b, b->many, r, r * b->ncols);
  b->pending = 0;
  b->nulls[0] = UINT32_MAX;
  return step (b->many);
}

int
vs_sql_batch_flush (VsSqlBatch *b)
{
  int rc = 0;
  for (int r = 0; r < b->pending && rc == 0; r++)
    {
      bind_row (b, b->one, r, 0);
      rc = step (b->one);
    }
  b->pending = 0;
  b->nulls[0] = UINT32_MAX;
  return rc;
}

void
vs_sql_batch_clear (VsSqlBatch *b)
{
  sqlite3_finalize (b->many);
  sqlite3_finalize (b->one);
  b->many = b->one = NULL;
  b->pending = 0;
}

int
vs_sql_batch_set_init (VsSqlBatchSet *set, sqlite3 *db, const char *insert,
                       int ncols, size_t n)
{
  set->db = db;
  set->insert = insert;
  set->ncols = ncols;
  set->n = n;
  set->batch = calloc (n, sizeof *set->batch);
  return set->batch != NULL ? 0 : -1;
}

VsSqlBatch *
vs_sql_batch_set_get (VsSqlBatchSet *set, size_t i)
{
  if (set->batch[i] == NULL)
    {
      VsSqlBatch *b = malloc (sizeof *b);
      if (b == NULL)
        return NULL;
      if (vs_sql_batch_init (b, set->db, set->insert, set->ncols) < 0)
        {
          free (b);
          return NULL;
        }
      set->batch[i] = b;
    }
  return set->batch[i];
}

int
vs_sql_batch_set_flush (VsSqlBatchSet *set)
{
  for (size_t i = 0; i < set->n; i++)
    if (set->batch[i] != NULL && vs_sql_batch_flush (set->batch[i]) < 0)
      return -1;
  return 0;
}

void
vs_sql_batch_set_clear (VsSqlBatchSet *set)
{
  for (size_t i = 0; set->batch != NULL && i < set->n; i++)
    if (set->batch[i] != NULL)
      {
        vs_sql_batch_clear (set->batch[i]);
        free (set->batch[i]);
      }
  free (set->batch);
  set->batch = NULL;
  set->n = 0;
}
