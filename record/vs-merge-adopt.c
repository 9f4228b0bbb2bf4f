/* SPDX-License-Identifier: MIT */
/* vs-merge-adopt.c — the merged trace written into one of its inputs (see
 * vs-merge.c): the largest allocator level `record` imported itself,
 * renamed to the output and taken as merged first, its rows keeping their
 * ids; the collector's rows of its processes and GPUs take its rows over.
 */
#include "vs-merge-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-merge-meta.h"

/* Takes id out of c; true when it was there. */
bool
vs_merge_claim (VsClaims *c, int64_t id)
{
  for (size_t k = 0; k < c->n; k++)
    if (c->ids[k] == id)
      {
        c->ids[k] = c->ids[--c->n];
        return true;
      }
  return false;
}

int
vs_merge_claims_add (VsClaims *c, int64_t id)
{
  int64_t *ids = realloc (c->ids, (c->n + 1) * sizeof *ids);
  if (ids == NULL)
    return -1;
  c->ids = ids;
  c->ids[c->n++] = id;
  return 0;
}

/* Sets the merged row id of table (process or device) to the input row
 * s's columns 1..n (in the UPDATE's order).  0 or -1. */
int
vs_merge_take_over (VsMerge *m, const char *sql, sqlite3_stmt *s, int n, int64_t id)
{
  sqlite3_stmt *u = NULL;
  bool ok = sqlite3_prepare_v2 (vs_writer_db (m->w), sql, -1, &u, NULL) == SQLITE_OK;
  for (int k = 1; ok && k <= n; k++)
    ok = sqlite3_bind_value (u, k, sqlite3_column_value (s, k)) == SQLITE_OK;
  ok = ok && sqlite3_bind_int64 (u, n + 1, id) == SQLITE_OK && sqlite3_step (u) == SQLITE_DONE;
  sqlite3_finalize (u);
  return ok ? 0 : -1;
}

/* The ids of sql's rows (on the output) into map, each as itself, and
 * into claims when not NULL.  0 or -1. */
static int
own_ids (VsMerge *m, const char *sql, VsIdMap *map, VsClaims *claims)
{
  sqlite3_stmt *s = NULL;
  int rc = sqlite3_prepare_v2 (vs_writer_db (m->w), sql, -1, &s, NULL) == SQLITE_OK ? 0 : -1;
  while (rc == 0 && sqlite3_step (s) == SQLITE_ROW)
    {
      int64_t id = sqlite3_column_int64 (s, 0);
      rc = vs_merge_idmap_set (map, id, id);
      if (rc == 0 && claims != NULL)
        rc = vs_merge_claims_add (claims, id);
    }
  sqlite3_finalize (s);
  return rc;
}

/* The adopted trace (the output itself) taken as merged first: every row
 * keeps its id, its processes and GPUs wait for the collector's rows of
 * the same (row_process, row_device), and its meta is set aside
 * (temp.adopted_meta, for adopted_meta()) and replaced by the run's.  Its
 * processes' end is set once every input is merged (*procs), as when it
 * was merged after them.  0 or -1 with the error set. */
int
vs_merge_adopt_rows (VsMerge *m, VsClaims *procs)
{
  static const char *save_meta_sql
      = "CREATE TEMP TABLE adopted_meta AS SELECT key, value FROM main.meta;"
        " DELETE FROM main.meta WHERE key NOT IN ('format', 'finalized')";
  sqlite3 *db = vs_writer_db (m->w);
  if (own_ids (m, "SELECT id FROM process", &m->process, &m->claim_process) != 0
      || own_ids (m, "SELECT id FROM device", &m->device, &m->claim_device) != 0
      || own_ids (m, "SELECT id FROM allocator", &m->allocator, NULL) != 0
      || own_ids (m, "SELECT id FROM module", &m->module, NULL) != 0
      || own_ids (m, "SELECT id FROM frame", &m->frame, NULL) != 0
      || own_ids (m, "SELECT id FROM stack", &m->stack, NULL) != 0
      || own_ids (m, "SELECT id FROM nvtx_range", &m->range, NULL) != 0
      || own_ids (m, "SELECT id FROM kernel_config", &m->kernel_config, NULL) != 0
      || vs_writer_commit (m->w) != 0
      || sqlite3_exec (db, save_meta_sql, NULL, NULL, NULL) != SQLITE_OK)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  procs->ids = malloc ((m->claim_process.n + 1) * sizeof *procs->ids);
  if (procs->ids == NULL)
    return vs_merge_fail (m, "merge", "out of memory");
  procs->n = m->claim_process.n;
  memcpy (procs->ids, m->claim_process.ids, procs->n * sizeof *procs->ids);
  vs_merge_free_maps (m);
  return 0;
}

/* The adopted trace's meta, set aside by vs_merge_adopt_rows(), read as an
 * input's: called where the adopted trace comes in the inputs' order, so
 * that the keys kept from the first input that has them are the ones a
 * copy keeps.  *pend gets its end (VS_UNKNOWN: none).  0 or -1 with the
 * error set. */
int
vs_merge_adopted_meta (VsMerge *m, VsMergeMeta *rm, int64_t *pend)
{
  static const char *adopted_meta_sql = "SELECT key, value FROM temp.adopted_meta";
  static const char *overflow_sql = "SELECT count(*) FROM temp.adopted_meta"
                                    " WHERE key = 'history_overflow' AND CAST(value AS TEXT) = '1'";
  sqlite3 *db = vs_writer_db (m->w);
  if (vs_merge_count_is_positive (db, overflow_sql))
    vs_writer_set_meta_int (m->w, "history_overflow", 1);
  *pend = vs_merge_meta (m->w, db, adopted_meta_sql, rm);
  if (vs_writer_commit (m->w) != 0
      || sqlite3_exec (db, "DROP TABLE temp.adopted_meta", NULL, NULL, NULL) != SQLITE_OK)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  return 0;
}
