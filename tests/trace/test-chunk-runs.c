/* SPDX-License-Identifier: MIT */
/* test-chunk-runs.c — block chunked by device and lifetime class
 * (vs-trace-compact.h, vs-chunk-vtab.h): 40,000 blocks of short, medium
 * and endless lives, their devices taking turns, are coded through the row
 * chunker, then read through the virtual table.  The chunks must form one
 * run per device and class (past VS_CHUNK_BLOCK_DEVICES devices, the rest
 * share the last one's), and every answer must be the one the rows give: the whole table in key order with and without ORDER BY,
 * either way; lookups by id; "live after step S" at many steps; ORDER BY
 * alloc_seq LIMIT served in order without a sort; each device's blocks
 * and those live on it; two tables joined row against row.  All of it
 * with the readers' cache budget and with one of about a chunk, which the
 * two tables share, for two devices; for forty with the readers' budget.
 */
#include "vs-chunk-vtab.h"
#include "vs-chunk.h"
#include "vs-trace-compact.h"

#include <glib.h>
#include <sqlite3.h>

#define N_BLOCKS 40000
#define N_COLS 20

/* The devices the blocks take turns on. */
static int64_t n_devices = 2;

/* Block i (ids from 1): allocated at step 2 i on device 1 + i mod
 * n_devices; every 97th is never freed, every 13th lives 5000 steps, the
 * others 3. */
static void
block_row (int64_t i, int64_t *v, uint32_t *nulls)
{
  memset (v, 0, N_COLS * sizeof *v);
  *nulls = 0;
  v[0] = i;                   /* id */
  v[1] = 2;                   /* level */
  v[2] = 1 + (i % n_devices); /* device_id */
  v[6] = 4096 * i;            /* address */
  v[7] = 512 + i % 7;         /* bytes */
  v[9] = 2 * i;               /* alloc_seq */
  if (i % 97 == 0)
    *nulls |= 1u << 10; /* free_seq: never */
  else
    v[10] = 2 * i + (i % 13 == 0 ? 5000 : 3);
  v[19] = 0; /* span_bin */
}

static gboolean
live_at (int64_t i, int64_t s)
{
  int64_t v[N_COLS];
  uint32_t nulls;

  block_row (i, v, &nulls);
  return v[9] <= s && ((nulls >> 10) & 1 || v[10] > s);
}

/* An in-memory database of the blocks, their chunks read through the
 * module with a cache of cache_bytes. */
static sqlite3 *
chunked_db (size_t cache_bytes)
{
  sqlite3 *db = NULL;
  VsRowChunker c;
  char *msg = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  vs_row_chunker_init (&c);
  g_assert_cmpint (c.sink.begin (&c.sink, VS_ROW_SINK_BLOCK, db, 0, 0), ==, 0);
  for (int64_t i = 1; i <= N_BLOCKS; i++)
    {
      int64_t v[N_COLS];
      uint32_t nulls;
      block_row (i, v, &nulls);
      g_assert_cmpint (c.sink.row (&c.sink, v, nulls), ==, 0);
    }
  g_assert_cmpint (c.sink.end (&c.sink, 1), ==, 0);
  vs_row_chunker_clear (&c);
  g_assert_cmpint (vs_chunk_register_with_budget (db, cache_bytes), ==, SQLITE_OK);
  g_assert_cmpint (
      sqlite3_exec (db, "CREATE VIRTUAL TABLE temp.block USING vs_chunk(block)", NULL, NULL, &msg),
      ==, SQLITE_OK);
  /* A second table on the same budget: block again, under another name. */
  g_assert_cmpint (
      sqlite3_exec (db, "CREATE VIRTUAL TABLE temp.block2 USING vs_chunk(block)", NULL, NULL, &msg),
      ==, SQLITE_OK);
  return db;
}

static int64_t
query_int (sqlite3 *db, const char *sql, int64_t arg)
{
  sqlite3_stmt *s = NULL;
  int64_t v = -1;

  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (s, 1, arg);
  if (sqlite3_step (s) == SQLITE_ROW)
    v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

/* The ids sql gives, checked to be first, first + step, ... (n of them). */
static void
check_ids (sqlite3 *db, const char *sql, int64_t first, int64_t step, int64_t n)
{
  sqlite3_stmt *s = NULL;
  int64_t k = 0;

  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      g_assert_cmpint (sqlite3_column_int64 (s, 0), ==, first + k * step);
      k++;
    }
  g_assert_cmpint (k, ==, n);
  sqlite3_finalize (s);
}

static void
check_runs (size_t cache_bytes)
{
  sqlite3 *db = chunked_db (cache_bytes);

  /* Three lifetime classes (3 steps, 5000 steps, never freed), each in
   * chunks of its own per device. */
  int64_t groups = 3 * MIN (n_devices, VS_CHUNK_BLOCK_DEVICES);
  g_assert_cmpint (query_int (db, "SELECT count(DISTINCT seq >> 32) FROM block_chunk", 0), ==,
                   groups);
  g_assert_cmpint (query_int (db, "SELECT min(seq) FROM block_chunk", 0), ==, 0);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM block", 0), ==, N_BLOCKS);

  /* Key order, asked for or not, either way. */
  check_ids (db, "SELECT id FROM block", 1, 1, N_BLOCKS);
  check_ids (db, "SELECT id FROM block ORDER BY id", 1, 1, N_BLOCKS);
  check_ids (db, "SELECT id FROM block ORDER BY id DESC", N_BLOCKS, -1, N_BLOCKS);
  check_ids (db, "SELECT id FROM block WHERE id >= 1000 AND id < 1100", 1000, 1, 100);
  check_ids (db, "SELECT id FROM block WHERE alloc_seq > 200 ORDER BY alloc_seq LIMIT 50", 101, 1,
             50);
  check_ids (db, "SELECT id FROM block ORDER BY alloc_seq DESC LIMIT 10", N_BLOCKS, -1, 10);

  /* Lookups by id, in each class. */
  for (int64_t id = 1; id <= N_BLOCKS; id += 1111)
    g_assert_cmpint (query_int (db, "SELECT alloc_seq FROM block WHERE id = ?1", id), ==, 2 * id);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM block WHERE id = ?1", 97 * 5), ==, 1);

  /* ORDER BY alloc_seq LIMIT is read in order, not sorted. */
  sqlite3_stmt *s = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "EXPLAIN QUERY PLAN SELECT id FROM block"
                                       " ORDER BY alloc_seq LIMIT 5",
                                       -1, &s, NULL),
                   ==, SQLITE_OK);
  while (sqlite3_step (s) == SQLITE_ROW)
    g_assert_null (strstr ((const char *)sqlite3_column_text (s, 3), "TEMP B-TREE"));
  sqlite3_finalize (s);

  /* Live after step S, against the rows. */
  for (int64_t step = -1; step <= 2 * N_BLOCKS + 6000; step += 997)
    {
      int64_t count = 0, sum = 0;
      for (int64_t i = 1; i <= N_BLOCKS; i++)
        if (live_at (i, step))
          {
            count++;
            sum += i;
          }
      g_assert_cmpint (query_int (db, "SELECT count(*) FROM block WHERE live_seq = ?1", step), ==,
                       count);
      g_assert_cmpint (
          query_int (db, "SELECT ifnull(sum(id), 0) FROM block WHERE live_seq = ?1", step), ==,
          sum);
    }

  /* Each device's blocks, and those live on it after a step. */
  for (int64_t d = 1; d <= n_devices; d++)
    {
      int64_t count = 0, live = 0, step = N_BLOCKS + 1;
      for (int64_t i = 1; i <= N_BLOCKS; i++)
        if (1 + i % n_devices == d)
          {
            count++;
            live += live_at (i, step);
          }
      g_assert_cmpint (query_int (db, "SELECT count(*) FROM block WHERE device_id = ?1", d), ==,
                       count);
      char sql[128];
      g_snprintf (sql, sizeof sql,
                  "SELECT count(*) FROM block WHERE live_seq = %lld AND device_id = ?1",
                  (long long)step);
      g_assert_cmpint (query_int (db, sql, d), ==, live);
    }

  /* Both tables read side by side, row against row: every row with the
   * readers' budget; with about one chunk's, where each row of one table
   * may drop the chunk the other reads next (a chunk decoded per row),
   * every 15th row (on both devices): thousands of chunks decoded, not
   * tens of thousands. */
  int64_t every = cache_bytes < (1u << 20) ? 15 : 1;
  g_assert_cmpint (query_int (db,
                              "SELECT count(*) FROM block a JOIN block2 b ON b.id = a.id"
                              " WHERE a.id % ?1 = 0"
                              " AND a.alloc_seq = b.alloc_seq AND a.free_seq IS b.free_seq",
                              every),
                   ==, N_BLOCKS / every);
  sqlite3_close (db);
}

/* With the readers' budget, and with one that holds about one chunk: the
 * tables take turns dropping each other's least recently read chunks. */
static void
test_runs (void)
{
  n_devices = 2;
  check_runs (64u << 20);
  check_runs (200000);
}

/* More devices than get chunks of their own. */
static void
test_many_devices (void)
{
  n_devices = 40;
  check_runs (64u << 20);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/chunk/runs", test_runs);
  g_test_add_func ("/chunk/runs-many-devices", test_many_devices);
  return g_test_run ();
}
