/* SPDX-License-Identifier: MIT */
/* vs-sql-batch.c — bulk inserts through a virtual table of gathered rows
 * (see vs-sql-batch.h).
 *
 * `vs_batch_rows(P)` is an eponymous table-valued function: P is a
 * VsSqlBatch bound with sqlite3_bind_pointer(), and its rows are the
 * batch's gathered rows as columns c0 … c31.  Each batch owns one
 * `INSERT OR FAIL INTO <target> SELECT c0, … FROM vs_batch_rows(?1)`.
 */
#include "vs-sql-batch.h"
#include "vs-sqlite-alloc.h"

#include <stdio.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_NAME "vs_batch_rows"
#define POINTER_TYPE "VsSqlBatch"
#define BATCH_COLUMN VS_SQL_BATCH_MAX_COLS /* the hidden argument */

typedef struct
{
  sqlite3_vtab base;
} RowsTable;

typedef struct
{
  sqlite3_vtab_cursor base;
  const VsSqlBatch *batch; /* NULL: no rows */
  int row;
} RowsCursor;

static int
rows_connect (sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
              char **err)
{
  char decl[400];
  int len = snprintf (decl, sizeof decl, "CREATE TABLE x(");
  for (int c = 0; c < VS_SQL_BATCH_MAX_COLS; c++)
    len += snprintf (decl + len, sizeof decl - (size_t)len, "c%d,", c);
  snprintf (decl + len, sizeof decl - (size_t)len, "batch HIDDEN)");
  int rc = sqlite3_declare_vtab (db, decl);
  if (rc != SQLITE_OK)
    return rc;
  /* Not for a trace's own views or triggers: a trace may be hostile. */
  sqlite3_vtab_config (db, SQLITE_VTAB_DIRECTONLY);
  RowsTable *t = vs_sqlite_zalloc (sizeof *t);
  if (t == NULL)
    return SQLITE_NOMEM;
  *out = &t->base;
  return SQLITE_OK;
}

static int
rows_disconnect (sqlite3_vtab *t)
{
  sqlite3_free (t);
  return SQLITE_OK;
}

/* The only plan: the batch argument given, passed to rows_filter. */
static int
rows_best_index (sqlite3_vtab *t, sqlite3_index_info *info)
{
  for (int i = 0; i < info->nConstraint; i++)
    {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      if (c->iColumn == BATCH_COLUMN && c->op == SQLITE_INDEX_CONSTRAINT_EQ && c->usable)
        {
          info->aConstraintUsage[i].argvIndex = 1;
          info->aConstraintUsage[i].omit = 1;
          info->idxNum = 1;
          info->estimatedCost = 1;
          info->estimatedRows = VS_SQL_BATCH_ROWS;
          return SQLITE_OK;
        }
    }
  info->idxNum = 0; /* no batch: no rows */
  info->estimatedCost = 1e99;
  return SQLITE_OK;
}

static int
rows_open (sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
  RowsCursor *cur = vs_sqlite_zalloc (sizeof *cur);
  if (cur == NULL)
    return SQLITE_NOMEM;
  *out = &cur->base;
  return SQLITE_OK;
}

static int
rows_close (sqlite3_vtab_cursor *cur)
{
  sqlite3_free (cur);
  return SQLITE_OK;
}

static int
rows_filter (sqlite3_vtab_cursor *base, int idx_num, const char *idx_str, int argc,
             sqlite3_value **argv)
{
  RowsCursor *cur = (RowsCursor *)base;
  cur->batch = idx_num == 1 && argc == 1 ? sqlite3_value_pointer (argv[0], POINTER_TYPE) : NULL;
  cur->row = 0;
  return SQLITE_OK;
}

static int
rows_next (sqlite3_vtab_cursor *base)
{
  ((RowsCursor *)base)->row++;
  return SQLITE_OK;
}

static int
rows_eof (sqlite3_vtab_cursor *base)
{
  const RowsCursor *cur = (const RowsCursor *)base;
  return cur->batch == NULL || cur->row >= cur->batch->pending;
}

static int
rows_column (sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col)
{
  const RowsCursor *cur = (const RowsCursor *)base;
  const VsSqlBatch *b = cur->batch;
  assert (b != NULL && cur->row < b->pending && col >= 0);
  if (col >= b->ncols || (b->nulls[cur->row] & (1u << col)))
    sqlite3_result_null (ctx);
  else
    sqlite3_result_int64 (ctx, b->val[cur->row * b->ncols + col]);
  return SQLITE_OK;
}

static int
rows_rowid (sqlite3_vtab_cursor *base, sqlite3_int64 *rowid)
{
  *rowid = ((const RowsCursor *)base)->row;
  return SQLITE_OK;
}

static const sqlite3_module rows_module = {
  .iVersion = 0,
  .xConnect = rows_connect, /* no xCreate: eponymous only */
  .xBestIndex = rows_best_index,
  .xDisconnect = rows_disconnect,
  .xOpen = rows_open,
  .xClose = rows_close,
  .xFilter = rows_filter,
  .xNext = rows_next,
  .xEof = rows_eof,
  .xColumn = rows_column,
  .xRowid = rows_rowid,
};

/* Prepares the batch's INSERT; registers the module on the connection the
 * first time (registering again would replace it under prepared
 * statements). */
static int
prepare_insert (VsSqlBatch *b, const char *target)
{
  char cols[VS_SQL_BATCH_MAX_COLS * 5];
  size_t len = 0;
  for (int c = 0; c < b->ncols; c++)
    len += (size_t)snprintf (cols + len, sizeof cols - len, "%sc%d", c ? "," : "", c);
  char *sql
      = sqlite3_mprintf ("INSERT OR FAIL INTO %s SELECT %s FROM " MODULE_NAME "(?1)", target, cols);
  if (sql == NULL)
    return -1;
  int rc = sqlite3_prepare_v3 (b->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &b->insert, NULL);
  if (rc != SQLITE_OK
      && sqlite3_create_module_v2 (b->db, MODULE_NAME, &rows_module, NULL, NULL) == SQLITE_OK)
    rc = sqlite3_prepare_v3 (b->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &b->insert, NULL);
  sqlite3_free (sql);
  return rc == SQLITE_OK ? 0 : -1;
}

int
vs_sql_batch_init (VsSqlBatch *b, sqlite3 *db, const char *target, int ncols)
{
  memset (b, 0, sizeof *b);
  if (ncols < 1 || ncols > VS_SQL_BATCH_MAX_COLS)
    return -1;
  b->db = db;
  b->ncols = ncols;
  b->nulls[0] = UINT32_MAX;
  b->val = malloc (sizeof *b->val * VS_SQL_BATCH_ROWS * (size_t)ncols);
  if (b->val == NULL || prepare_insert (b, target) < 0)
    {
      vs_sql_batch_clear (b);
      return -1;
    }
  return 0;
}

int
vs_sql_batch_flush (VsSqlBatch *b)
{
  if (b->pending == 0)
    return 0;
  sqlite3_bind_pointer (b->insert, 1, b, POINTER_TYPE, NULL);
  assert (b->insert != NULL && b->pending <= VS_SQL_BATCH_ROWS);
  int rc = sqlite3_step (b->insert);
  sqlite3_reset (b->insert);
  b->pending = 0;
  b->nulls[0] = UINT32_MAX;
  return rc == SQLITE_DONE ? 0 : -1;
}

void
vs_sql_batch_clear (VsSqlBatch *b)
{
  sqlite3_finalize (b->insert);
  b->insert = NULL;
  free (b->val);
  b->val = NULL;
  b->pending = 0;
}

int
vs_sql_batch_set_init (VsSqlBatchSet *set, sqlite3 *db, const char *target, int ncols, size_t n)
{
  set->db = db;
  set->target = target;
  set->ncols = ncols;
  set->n = n;
  set->batch = calloc (n, sizeof *set->batch);
  return set->batch != NULL ? 0 : -1;
}

VsSqlBatch *
vs_sql_batch_set_get (VsSqlBatchSet *set, size_t i)
{
  assert (set->batch != NULL && i < set->n);
  if (set->batch[i] == NULL)
    {
      VsSqlBatch *b = malloc (sizeof *b);
      if (b == NULL)
        return NULL;
      if (vs_sql_batch_init (b, set->db, set->target, set->ncols) < 0)
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
