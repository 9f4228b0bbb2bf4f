/* SPDX-License-Identifier: MIT */
/* vs-merge-append-state.c — what the rounds of vs-merge-append.c took,
 * kept in the merged trace itself: per input its number, per input and
 * table the largest id taken, the id maps of its small tables, the ranges
 * taken while open; the process and device rows an import added that a
 * collector's rows may take over; each input's meta; per table of the
 * merged trace the largest id ever given.  Written in the transaction of
 * each input's rows, read back when a killed record is continued, dropped
 * at the last round (schemas/README.md names the tables).
 */
#include "vs-merge-append-private.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *state_sql
    = "CREATE TABLE IF NOT EXISTS merge_append_input (no INTEGER PRIMARY KEY,"
      " name TEXT NOT NULL UNIQUE);"
      "CREATE TABLE IF NOT EXISTS merge_append_mark (input INTEGER NOT NULL,"
      " tbl INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (input, tbl)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS merge_append_map (input INTEGER NOT NULL,"
      " kind INTEGER NOT NULL, old INTEGER NOT NULL, new INTEGER NOT NULL,"
      " PRIMARY KEY (input, kind, old)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS merge_append_open (input INTEGER NOT NULL,"
      " old INTEGER NOT NULL, PRIMARY KEY (input, old)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS merge_append_claim (kind INTEGER NOT NULL,"
      " id INTEGER NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS merge_append_meta (input INTEGER NOT NULL, key TEXT NOT NULL,"
      " value, PRIMARY KEY (input, key)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS merge_append_live (tbl INTEGER PRIMARY KEY,"
      " id INTEGER NOT NULL);";

static const char *drop_state_sql = "DROP TABLE merge_append_input; DROP TABLE merge_append_mark;"
                                    " DROP TABLE merge_append_map; DROP TABLE merge_append_open;"
                                    " DROP TABLE merge_append_claim; DROP TABLE merge_append_meta;"
                                    " DROP TABLE merge_append_live;";

static void
free_input (VsAppendInput *in)
{
  free (in->name);
  for (int t = 0; t < N_MAPS; t++)
    vs_merge_idmap_clear (&in->maps[t]);
  free (in->open.ids);
}

/* Empties the state kept in memory. */
void
vs_merge_append_free_state (VsMergeAppend *a)
{
  for (size_t i = 0; i < a->n; i++)
    free_input (&a->in[i]);
  free (a->in);
  a->in = NULL;
  a->n = 0;
  free (a->claim_process.ids);
  free (a->claim_device.ids);
  a->claim_process = (VsClaims){ 0 };
  a->claim_device = (VsClaims){ 0 };
  memset (a->live_hi, 0, sizeof a->live_hi);
}

/* The input named name, or NULL. */
VsAppendInput *
vs_merge_append_find_input (VsMergeAppend *a, const char *name)
{
  for (size_t i = 0; i < a->n; i++)
    if (strcmp (a->in[i].name, name) == 0)
      return &a->in[i];
  return NULL;
}

/* Adds an input numbered no; NULL when out of memory. */
VsAppendInput *
vs_merge_append_add_input (VsMergeAppend *a, const char *name, int64_t no)
{
  VsAppendInput *in = realloc (a->in, (a->n + 1) * sizeof *in);
  if (in == NULL)
    return NULL;
  a->in = in;
  in = &a->in[a->n];
  *in = (VsAppendInput){ .name = strdup (name), .no = no };
  if (in->name == NULL)
    return NULL;
  a->n++;
  return in;
}

/* The input numbered no, or NULL. */
static VsAppendInput *
input_no (VsMergeAppend *a, int64_t no)
{
  for (size_t i = 0; i < a->n; i++)
    if (a->in[i].no == no)
      return &a->in[i];
  return NULL;
}

/* The seal: a digest of the state that decides which rows a round takes
 * (each input's name, number and marks, the ranges taken while open, the
 * claims, the largest ids given), kept with it as merge_append_live's row
 * SEAL_ROW.  A state edited by anything but these functions no longer
 * matches it, and is refused rather than continued into duplicate or
 * missing events.  A sum of one hash per element: the order the rows
 * come back in does not matter.  It tells an edit, not a forgery. */
#define SEAL_ROW (-1)

static uint64_t
mix (uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t
element (uint64_t kind, int64_t a, int64_t b, int64_t c)
{
  return mix (mix (mix (mix (kind) ^ (uint64_t)a) ^ (uint64_t)b) ^ (uint64_t)c);
}

static int64_t
name_hash (const char *name)
{
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 0x100000001b3ULL;
  return (int64_t)h;
}

/* The seal of the state in memory. */
static int64_t
seal (const VsMergeAppend *a)
{
  uint64_t h = 0;
  for (size_t i = 0; i < a->n; i++)
    {
      const VsAppendInput *in = &a->in[i];
      h += element (1, in->no, name_hash (in->name), 0);
      for (int t = 0; t < VS_MERGE_N_TABLES; t++)
        h += element (2, in->no, t, in->mark[t]);
      for (size_t k = 0; k < in->open.n; k++)
        h += element (3, in->no, in->open.ids[k], 0);
    }
  for (size_t k = 0; k < a->claim_process.n; k++)
    h += element (4, VS_MERGE_PROCESS, a->claim_process.ids[k], 0);
  for (size_t k = 0; k < a->claim_device.n; k++)
    h += element (4, VS_MERGE_DEVICE, a->claim_device.ids[k], 0);
  for (int t = 0; t < VS_MERGE_N_TABLES; t++)
    h += element (5, t, a->live_hi[t], 0);
  return (int64_t)h;
}

/* Whether the state in memory is that of a merged trace no round took
 * anything into yet (it has no seal to match). */
static bool
state_empty (const VsMergeAppend *a)
{
  bool empty = a->n == 0 && a->claim_process.n == 0 && a->claim_device.n == 0;
  for (int t = 0; t < VS_MERGE_N_TABLES && empty; t++)
    empty = a->live_hi[t] == 0;
  return empty;
}

int
vs_merge_append_load_state (VsMergeAppend *a, sqlite3 *db)
{
  bool sealed = false;
  int64_t kept_seal = 0;
  if (sqlite3_exec (db, state_sql, NULL, NULL, NULL) != SQLITE_OK)
    return -1;
  static const char *inputs_sql = "SELECT no, name FROM merge_append_input ORDER BY no";
  static const char *marks_sql = "SELECT input, tbl, id FROM merge_append_mark";
  static const char *maps_sql = "SELECT input, kind, old, new FROM merge_append_map";
  static const char *open_sql = "SELECT input, old FROM merge_append_open ORDER BY input, old";
  static const char *claims_sql = "SELECT kind, id FROM merge_append_claim ORDER BY kind, id";
  static const char *live_sql = "SELECT tbl, id FROM merge_append_live";
  const char *sqls[] = { inputs_sql, marks_sql, maps_sql, open_sql, claims_sql, live_sql };
  int rc = 0;
  for (size_t q = 0; q < sizeof sqls / sizeof sqls[0] && rc == 0; q++)
    {
      sqlite3_stmt *s = NULL;
      if (sqlite3_prepare_v2 (db, sqls[q], -1, &s, NULL) != SQLITE_OK)
        return -1;
      int step;
      while (rc == 0 && (step = sqlite3_step (s)) == SQLITE_ROW)
        {
          int64_t c0 = sqlite3_column_int64 (s, 0), c1 = sqlite3_column_int64 (s, 1);
          VsAppendInput *in = q == 0 || q >= 4 ? NULL : input_no (a, c0);
          if (q == 0)
            rc = vs_merge_append_add_input (a, (const char *)sqlite3_column_text (s, 1), c0) ? 0
                                                                                             : -1;
          else if (q >= 1 && q <= 3 && in == NULL)
            rc = -2; /* a row of an input the state does not have */
          else if (q == 1 && c1 >= 0 && c1 < VS_MERGE_N_TABLES)
            in->mark[c1] = sqlite3_column_int64 (s, 2);
          else if (q == 2 && c1 >= 0 && c1 < N_MAPS)
            rc = vs_merge_idmap_set (&in->maps[c1], sqlite3_column_int64 (s, 2),
                                     sqlite3_column_int64 (s, 3));
          else if (q == 3)
            rc = vs_merge_claims_add (&in->open, c1);
          else if (q == 4)
            rc = vs_merge_claims_add (c0 == VS_MERGE_PROCESS ? &a->claim_process : &a->claim_device,
                                      c1);
          else if (q == 5 && c0 >= 0 && c0 < VS_MERGE_N_TABLES)
            a->live_hi[c0] = c1;
          else if (q == 5 && c0 == SEAL_ROW)
            {
              sealed = true;
              kept_seal = c1;
            }
        }
      sqlite3_finalize (s);
      if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    }
  if (rc == 0 && (sealed ? kept_seal != seal (a) : !state_empty (a)))
    rc = -2;
  return rc;
}

/* Runs sql on db with the integers v[0..n-1] bound; 0 or -1. */
int
vs_merge_exec_ints (sqlite3 *db, const char *sql, const int64_t *v, int n)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  for (int i = 0; i < n; i++)
    sqlite3_bind_int64 (s, i + 1, v[i]);
  int rc = sqlite3_step (s);
  sqlite3_finalize (s);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* An input's map entry on its way into merge_append_map. */
typedef struct
{
  sqlite3 *db;
  int64_t no;
  int t;
} SaveMap;

static int
save_map_entry (int64_t old, int64_t new_id, void *data)
{
  static const char *map_sql = "INSERT OR REPLACE INTO merge_append_map VALUES (?1, ?2, ?3, ?4)";
  const SaveMap *save = data;
  int64_t v[4] = { save->no, save->t, old, new_id };
  return vs_merge_exec_ints (save->db, map_sql, v, 4);
}

/* Writes the state of input in (its rows (lo, hi] newly mapped), the
 * claims and the merged trace's largest ids, on the writer's connection
 * inside the round's transaction.  0 or -1. */
int
vs_merge_append_save_state (VsMergeAppend *a, VsAppendInput *in, const int64_t *lo,
                            const int64_t *hi)
{
  static const char *input_sql = "INSERT OR IGNORE INTO merge_append_input (no, name)"
                                 " VALUES (?1, ?2)";
  static const char *mark_sql = "INSERT OR REPLACE INTO merge_append_mark VALUES (?1, ?2, ?3)";
  static const char *open_del_sql = "DELETE FROM merge_append_open WHERE input = ?1";
  static const char *open_sql = "INSERT INTO merge_append_open VALUES (?1, ?2)";
  static const char *claim_del_sql = "DELETE FROM merge_append_claim";
  static const char *claim_sql = "INSERT INTO merge_append_claim VALUES (?1, ?2)";
  static const char *live_sql = "INSERT OR REPLACE INTO merge_append_live VALUES (?1, ?2)";
  static const char *meta_del_sql = "DELETE FROM merge_append_meta WHERE input = ?1";
  static const char *meta_sql = "INSERT INTO merge_append_meta (input, key, value)"
                                " SELECT ?1, key, value FROM src.meta";
  sqlite3 *db = vs_writer_db (a->m.w);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, input_sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64 (s, 1, in->no);
  sqlite3_bind_text (s, 2, in->name, -1, SQLITE_STATIC);
  int rc = sqlite3_step (s) == SQLITE_DONE ? 0 : -1;
  sqlite3_finalize (s);
  for (int t = 0; t < VS_MERGE_N_TABLES && rc == 0; t++)
    {
      int64_t v[3] = { in->no, t, in->mark[t] };
      rc = vs_merge_exec_ints (db, mark_sql, v, 3);
    }
  for (int t = 0; t < N_MAPS && rc == 0; t++)
    {
      SaveMap save = { db, in->no, t };
      rc = vs_merge_idmap_foreach (&in->maps[t], lo[t], hi[t], save_map_entry, &save);
    }
  if (rc == 0)
    rc = vs_merge_exec_ints (db, open_del_sql, &in->no, 1);
  for (size_t k = 0; k < in->open.n && rc == 0; k++)
    {
      int64_t v[2] = { in->no, in->open.ids[k] };
      rc = vs_merge_exec_ints (db, open_sql, v, 2);
    }
  if (rc == 0)
    rc = vs_merge_exec_ints (db, claim_del_sql, NULL, 0);
  const VsClaims *claims[] = { &a->claim_process, &a->claim_device };
  for (int c = 0; c < 2; c++)
    for (size_t k = 0; k < claims[c]->n && rc == 0; k++)
      {
        int64_t v[2] = { c == 0 ? VS_MERGE_PROCESS : VS_MERGE_DEVICE, claims[c]->ids[k] };
        rc = vs_merge_exec_ints (db, claim_sql, v, 2);
      }
  for (int t = 0; t < VS_MERGE_N_TABLES && rc == 0; t++)
    {
      int64_t v[2] = { t, a->live_hi[t] };
      rc = vs_merge_exec_ints (db, live_sql, v, 2);
    }
  if (rc == 0)
    {
      int64_t v[2] = { SEAL_ROW, seal (a) };
      rc = vs_merge_exec_ints (db, live_sql, v, 2);
    }
  if (rc == 0)
    rc = vs_merge_exec_ints (db, meta_del_sql, &in->no, 1);
  if (rc == 0)
    rc = vs_merge_exec_ints (db, meta_sql, &in->no, 1);
  return rc;
}

int
vs_merge_append_drop_state (sqlite3 *db)
{
  return sqlite3_exec (db, drop_state_sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}
