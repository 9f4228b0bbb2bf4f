/* SPDX-License-Identifier: MIT */
/* test-finalize.c — the writer and the finalizer on hand-built traces.
 *
 * Each test writes a few raw events through the writer API, finalizes, and
 * checks the derived tables (summary, block, series) against numbers worked
 * out by hand in the comments.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-trace-finalize.h"
#include "vs-trace-writer.h"
#include "../vs-test-trace-file.h"

#define MiB (1024 * 1024)
#define U VS_UNKNOWN

typedef struct
{
  char *dir, *path;
  VsWriter *w;
  int64_t proc, dev, dev2;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->w = vs_test_trace_file_create ("vs-finalize-XXXXXX", "t.db", &f->dir, &f->path);
  VsProcess p = { 100, 1, "host", U, U, U, NULL, "prog", U, U, U };
  f->proc = vs_writer_add_process (f->w, &p);
  VsDevice d = { 0, "GPU-aaaa", "Test GPU", 80LL * 1024 * MiB };
  VsDevice d2 = { 1, "GPU-bbbb", "Test GPU", 40LL * 1024 * MiB };
  f->dev = vs_writer_add_device (f->w, &d);
  f->dev2 = vs_writer_add_device (f->w, &d2);
  g_assert_cmpint (vs_writer_set_meta_int (f->w, "start_ns", 0), ==, 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  vs_test_trace_file_remove (f->dir, f->path);
}

static void
mem (Fixture *f, int64_t dev, int64_t ts, VsMemKind kind, VsMemOp op, int64_t addr, int64_t bytes)
{
  VsMemEvent e = { ts, f->proc, 1, dev, U, U, kind, op, addr, bytes, 0, U, U, U, 0, 0 };
  g_assert_cmpint (vs_writer_mem_event (f->w, &e), ==, 0);
}

static void
alloc_ev (Fixture *f, int64_t allocator, int64_t ts, VsAllocOp op, int64_t addr, int64_t bytes)
{
  VsAllocEvent e = { ts, f->proc, 1, f->dev, allocator, op, addr, bytes, U, U, U, 0, 0 };
  g_assert_cmpint (vs_writer_alloc_event (f->w, &e), ==, 0);
}

/* Closes the writer with finalization and reopens the trace read-only. */
static sqlite3 *
finish (Fixture *f)
{
  char err[256];
  int rc = vs_writer_close (f->w, true, NULL, NULL, err, sizeof err);
  if (rc != 0)
    g_error ("finalize: %s", err);
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (f->path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  return db;
}

static int64_t
q (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  int64_t v = -999;
  if (sqlite3_step (s) == SQLITE_ROW)
    v = sqlite3_column_type (s, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

static int64_t
summary (sqlite3 *db, int64_t dev, int64_t alloc, const char *col)
{
  g_autofree char *sql
      = g_strdup_printf ("SELECT %s FROM summary WHERE device_id = %" G_GINT64_FORMAT
                         " AND allocator_id = %" G_GINT64_FORMAT,
                         col, dev, alloc);
  return q (db, sql);
}

/* The schema is applied and tagged; lookups and dedup work. */
/* Blocks recreated as live before the trace (an imported snapshot's) are
 * not allocations the trace saw: alloc_count leaves them out and
 * before_trace_bytes / before_trace_count hold them, on the allocator's
 * row and on `all`. */
static void
test_before_trace (Fixture *f, gconstpointer data)
{
  VsAllocator al = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &al);
  VsAllocEvent seg
      = { 0, f->proc, U, f->dev, pt, VS_ALLOC_OP_SEGMENT_ALLOC, 0x1000, 8 * MiB, U, U, U, 0, 0, 1 };
  VsAllocEvent pre
      = { 0, f->proc, U, f->dev, pt, VS_ALLOC_OP_ALLOC, 0x1000, 3 * MiB, U, U, U, 0, 0, 1 };
  g_assert_cmpint (vs_writer_alloc_event (f->w, &seg), ==, 0);
  g_assert_cmpint (vs_writer_alloc_event (f->w, &pre), ==, 0);
  alloc_ev (f, pt, 10, VS_ALLOC_OP_ALLOC, 0x1000 + 4 * MiB, 1 * MiB);
  alloc_ev (f, pt, 20, VS_ALLOC_OP_FREE_COMPLETED, 0x1000, 3 * MiB);
  sqlite3 *db = finish (f);
  for (int k = 0; k < 2; k++)
    {
      g_autofree char *where
          = g_strdup_printf (" FROM summary WHERE allocator_id = %d", k ? (int)pt : 0);
      g_autofree char *ac = g_strconcat ("SELECT alloc_count", where, NULL);
      g_autofree char *fc = g_strconcat ("SELECT free_count", where, NULL);
      g_autofree char *bb = g_strconcat ("SELECT before_trace_bytes", where, NULL);
      g_autofree char *bc = g_strconcat ("SELECT before_trace_count", where, NULL);
      g_autofree char *pk = g_strconcat ("SELECT peak_allocated_bytes", where, NULL);
      g_assert_cmpint (q (db, ac), ==, 1);
      g_assert_cmpint (q (db, fc), ==, 1);
      g_assert_cmpint (q (db, bb), ==, 3 * MiB);
      g_assert_cmpint (q (db, bc), ==, 1);
      g_assert_cmpint (q (db, pk), ==, 4 * MiB);
    }
  g_assert_cmpint (q (db, "SELECT count(*) FROM alloc_event WHERE before_trace = 1"), ==, 2);
  sqlite3_close (db);
}

/* A trace of schema version 1 (no before_trace columns) is brought to the
 * current version when it is finalized. */
static void
test_version_1_upgraded (Fixture *f, gconstpointer data)
{
  VsAllocator al = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &al);
  alloc_ev (f, pt, 10, VS_ALLOC_OP_SEGMENT_ALLOC, 0x1000, 2 * MiB);
  alloc_ev (f, pt, 11, VS_ALLOC_OP_ALLOC, 0x1000, 1 * MiB);
  char err[256];
  g_assert_cmpint (vs_writer_close (f->w, false, NULL, NULL, err, sizeof err), ==, 0);
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "ALTER TABLE alloc_event DROP COLUMN before_trace;"
                                 "ALTER TABLE summary DROP COLUMN before_trace_bytes;"
                                 "ALTER TABLE summary DROP COLUMN before_trace_count;"
                                 "PRAGMA user_version = 1;",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (vs_trace_finalize (db, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (q (db, "PRAGMA user_version"), ==, VS_TRACE_SCHEMA_VERSION);
  g_assert_cmpint (q (db, "SELECT alloc_count FROM summary WHERE allocator_id != 0"), ==, 1);
  g_assert_cmpint (q (db, "SELECT before_trace_count FROM summary WHERE allocator_id != 0"), ==, 0);
  g_assert_cmpint (q (db, "SELECT count(before_trace) FROM alloc_event"), ==, 0);
  sqlite3_close (db);
}

/* Every column of every kernel row, in id order, as one text. */
static const char *kernel_rows_sql
    = "SELECT group_concat (quote (id) || '|' || quote (start_ns) || '|' || quote (end_ns)"
      " || '|' || quote (process_id) || '|' || quote (device_id) || '|' || quote (context)"
      " || '|' || quote (stream) || '|' || quote (correlation) || '|' || quote (name)"
      " || '|' || quote (grid_x) || '|' || quote (grid_y) || '|' || quote (grid_z)"
      " || '|' || quote (block_x) || '|' || quote (block_y) || '|' || quote (block_z)"
      " || '|' || quote (static_shared) || '|' || quote (dynamic_shared)"
      " || '|' || quote (registers), ';') FROM (SELECT * FROM kernel ORDER BY id)";

static char *
q_text (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  char *v = NULL;
  if (sqlite3_step (s) == SQLITE_ROW)
    v = g_strdup ((const char *)sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return v;
}

/* Four kernels of three names and configurations: each configuration is
 * stored once, and the view gives back every row as written. */
static void
write_kernels (Fixture *f)
{
  VsKernel ks[] = {
    { 10, 20, f->proc, f->dev, 1, 7, 1, "gemm", 1, 1, 1, 128, 1, 1, 0, 0, 32 },
    { 30, 45, f->proc, f->dev, 1, 7, 2, "gemm", 2, 1, 1, 128, 1, 1, 0, 0, 32 },
    { 50, 51, f->proc, f->dev2, 1, 8, 3, "gemm", 1, 1, 1, 128, 1, 1, 0, 0, 32 },
    { 60, 90, f->proc, f->dev, U, 7, 4, NULL, U, U, U, U, U, U, U, U, U },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (ks); i++)
    g_assert_cmpint (vs_writer_kernel (f->w, &ks[i]), ==, 0);
}

static const char *written_kernels
    = "1|10|20|1|1|1|7|1|'gemm'|1|1|1|128|1|1|0|0|32;"
      "2|30|45|1|1|1|7|2|'gemm'|2|1|1|128|1|1|0|0|32;"
      "3|50|51|1|2|1|8|3|'gemm'|1|1|1|128|1|1|0|0|32;"
      "4|60|90|1|1|NULL|7|4|''|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL";

static void
test_kernel_configs (Fixture *f, gconstpointer data)
{
  write_kernels (f);
  sqlite3 *db = finish (f);
  g_assert_cmpint (q (db, "SELECT count(*) FROM kernel_config"), ==, 3);
  g_assert_cmpint (q (db, "SELECT count(*) FROM kernel_exec"), ==, 4);
  g_autofree char *rows = q_text (db, kernel_rows_sql);
  g_assert_cmpstr (rows, ==, written_kernels);
  sqlite3_close (db);
}

/* A trace of schema version 2 keeps its kernels whole in a table `kernel`;
 * finalizing it stores them as version 3 does, every row the same. */
static void
test_version_2_upgraded (Fixture *f, gconstpointer data)
{
  write_kernels (f);
  char err[256];
  g_assert_cmpint (vs_writer_close (f->w, false, NULL, NULL, err, sizeof err), ==, 0);
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "CREATE TABLE kernel_v2 AS SELECT * FROM kernel;"
                                 "DROP VIEW kernel; DROP TABLE kernel_exec;"
                                 "DROP TABLE kernel_config;"
                                 "ALTER TABLE kernel_v2 RENAME TO kernel;"
                                 "PRAGMA user_version = 2;",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  g_autofree char *before = q_text (db, kernel_rows_sql);
  g_assert_cmpstr (before, ==, written_kernels);
  g_assert_cmpint (vs_trace_finalize (db, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (q (db, "PRAGMA user_version"), ==, VS_TRACE_SCHEMA_VERSION);
  g_assert_cmpint (q (db, "SELECT count(*) FROM sqlite_master WHERE name = 'kernel'"
                          " AND type = 'view'"),
                   ==, 1);
  g_assert_cmpint (q (db, "SELECT count(*) FROM kernel_config"), ==, 3);
  g_autofree char *after = q_text (db, kernel_rows_sql);
  g_assert_cmpstr (after, ==, written_kernels);
  sqlite3_close (db);
}

static void
test_schema_round_trip (Fixture *f, gconstpointer data)
{
  VsFrame fr = { VS_FRAME_PYTHON, 0, U, "forward", "model.py", 42 };
  int64_t a = vs_writer_add_frame (f->w, &fr);
  int64_t b = vs_writer_add_frame (f->w, &fr);
  g_assert_cmpint (a, >, 0);
  g_assert_cmpint (a, ==, b);
  VsFrame fr2 = { VS_FRAME_PYTHON, 0, U, "forward", "model.py", 43 };
  int64_t c = vs_writer_add_frame (f->w, &fr2);
  g_assert_cmpint (c, !=, a);
  int64_t frames[] = { a, c };
  int64_t s1 = vs_writer_add_stack (f->w, frames, 2);
  int64_t s2 = vs_writer_add_stack (f->w, frames, 2);
  g_assert_cmpint (s1, ==, s2);
  int64_t s3 = vs_writer_add_stack (f->w, frames, 1);
  g_assert_cmpint (s3, !=, s1);
  VsDevice again = { 5, "GPU-aaaa", "Test GPU", 1 };
  g_assert_cmpint (vs_writer_add_device (f->w, &again), ==, f->dev);
  VsKernel k = { 10, 20, f->proc, f->dev, U, 7, 1, "gemm", 1, 1, 1, 128, 1, 1, U, U, U };
  g_assert_cmpint (vs_writer_kernel (f->w, &k), ==, 0);
  VsRange r = { f->proc, 1, NULL, "epoch", 5, U, 0, 0 };
  int64_t rid = vs_writer_add_range (f->w, &r);
  g_assert_cmpint (vs_writer_end_range (f->w, rid, 50), ==, 0);

  sqlite3 *db = finish (f);
  g_assert_cmpint (q (db, "PRAGMA application_id"), ==, VS_TRACE_APPLICATION_ID);
  g_assert_cmpint (q (db, "PRAGMA user_version"), ==, VS_TRACE_SCHEMA_VERSION);
  g_assert_cmpint (q (db, "SELECT value = 'vramscope-trace' FROM meta WHERE key = 'format'"), ==,
                   1);
  g_assert_cmpint (q (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (q (db, "SELECT count(*) FROM device"), ==, 2);
  g_assert_cmpint (q (db, "SELECT count(*) FROM frame"), ==, 2);
  g_assert_cmpint (q (db, "SELECT count(*) FROM stack"), ==, 2);
  g_assert_cmpint (q (db, "SELECT end_ns FROM nvtx_range"), ==, 50);
  g_assert_cmpint (q (db, "SELECT grid_y FROM kernel"), ==, 1);
  g_assert_cmpint (q (db, "SELECT context IS NULL FROM kernel"), ==, 1);
  /* A finished trace is a single file (no WAL left behind). */
  sqlite3_close (db);
  g_autofree char *wal = g_strconcat (f->path, "-wal", NULL);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
}

/* Address reuse, stored out of order: the free of the second allocation is
 * written first.  Timeline: 100 B live 10..20, 200 B live 30..40. */
static void
test_address_reuse_out_of_order (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 40, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000, 200);
  mem (f, f->dev, 30, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 200);
  mem (f, f->dev, 20, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000, 100);
  mem (f, f->dev, 10, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 100);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_bytes"), ==, 200);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_ts"), ==, 30);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_reserved_bytes"), ==, 200);
  g_assert_cmpint (summary (db, f->dev, 0, "final_allocated_bytes"), ==, 0);
  g_assert_cmpint (summary (db, f->dev, 0, "alloc_count"), ==, 2);
  g_assert_cmpint (summary (db, f->dev, 0, "free_count"), ==, 2);
  g_assert_cmpint (q (db, "SELECT count(*) FROM block"), ==, 2);
  g_assert_cmpint (q (db, "SELECT free_ts FROM block WHERE bytes = 100"), ==, 20);
  g_assert_cmpint (q (db, "SELECT free_ts FROM block WHERE bytes = 200"), ==, 40);
  /* Series: 100, 0, 200, 0 in time order. */
  g_assert_cmpint (q (db, "SELECT group_concat(allocated_bytes) = '100,0,200,0' FROM"
                          " (SELECT allocated_bytes FROM series WHERE allocator_id = 0"
                          "  ORDER BY seq)"),
                   ==, 1);
  /* Live at the peak (by sequence) is exactly the 200 B block. */
  g_assert_cmpint (q (db, "SELECT sum(b.bytes) FROM block b, summary s WHERE"
                          " s.allocator_id = 0 AND s.device_id = b.device_id AND"
                          " b.alloc_seq <= s.peak_allocated_seq AND"
                          " (b.free_seq IS NULL OR b.free_seq > s.peak_allocated_seq)"),
                   ==, 200);
  sqlite3_close (db);
}

/* A release with no allocation: memory live before the trace began.  500 B
 * live from the start until ts 50; 100 B allocated at ts 10 and kept. */
static void
test_live_before_trace (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 50, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x2000, 500);
  mem (f, f->dev, 10, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x3000, 100);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_bytes"), ==, 600);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_ts"), ==, 10);
  g_assert_cmpint (summary (db, f->dev, 0, "final_allocated_bytes"), ==, 100);
  g_assert_cmpint (summary (db, f->dev, 0, "alloc_count"), ==, 1);
  g_assert_cmpint (q (db, "SELECT alloc_ts IS NULL AND alloc_seq = 0 FROM block WHERE bytes = 500"),
                   ==, 1);
  g_assert_cmpint (q (db, "SELECT free_seq IS NULL FROM block WHERE bytes = 100"), ==, 1);
  sqlite3_close (db);
}

/* Two devices are accounted separately; static, pinned and managed memory
 * are recorded but never added to reserved. */
static void
test_devices_and_kinds (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 1, VS_MEM_KIND_STATIC, VS_MEM_OP_ALLOC, 0x100, 64);
  mem (f, f->dev, 2, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 1000);
  mem (f, f->dev2, 3, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 3000);
  mem (f, f->dev, 4, VS_MEM_KIND_PINNED, VS_MEM_OP_ALLOC, 0x7000, 4096);
  mem (f, f->dev, 5, VS_MEM_KIND_MANAGED, VS_MEM_OP_ALLOC, 0x9000, 8192);
  mem (f, f->dev2, 6, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000, 3000);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_reserved_bytes"), ==, 1000);
  g_assert_cmpint (summary (db, f->dev, 0, "static_bytes"), ==, 64);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_pinned_bytes"), ==, 4096);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_managed_bytes"), ==, 8192);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_device_bytes"), ==, 1000);
  g_assert_cmpint (summary (db, f->dev2, 0, "peak_reserved_bytes"), ==, 3000);
  g_assert_cmpint (summary (db, f->dev2, 0, "final_reserved_bytes"), ==, 0);
  g_assert_cmpint (summary (db, f->dev2, 0, "peak_allocated_ts"), ==, 3);
  sqlite3_close (db);
}

/* A stream-ordered pool: reserved is the pool's size, allocated the live
 * async allocations; device memory counts the pool once. */
static void
test_pool (Fixture *f, gconstpointer data)
{
  VsAllocator a = { f->dev, f->proc, "pool", "pool:0x5000", 0x5000, NULL };
  int64_t pool = vs_writer_add_allocator (f->w, &a);
  VsPoolEvent pc = { 1, f->proc, f->dev, pool, VS_POOL_OP_CREATED, 0, 0, U, U, U, 0 };
  vs_writer_pool_event (f->w, &pc);
  VsMemEvent e1 = {
    10,   f->proc,  1,       f->dev, U, 7, VS_MEM_KIND_ASYNC, VS_MEM_OP_ALLOC, 0xA000, 3 * MiB,
    pool, 32 * MiB, 3 * MiB, U,      0, 0
  };
  vs_writer_mem_event (f->w, &e1);
  VsMemEvent e2 = e1;
  e2.ts = 20;
  e2.address = 0xB000;
  e2.bytes = 5 * MiB;
  e2.pool_utilized = 8 * MiB;
  vs_writer_mem_event (f->w, &e2);
  VsMemEvent e3 = e1;
  e3.ts = 30;
  e3.op = VS_MEM_OP_FREE;
  e3.pool_utilized = 5 * MiB;
  vs_writer_mem_event (f->w, &e3);
  VsPoolEvent pt = { 40, f->proc, f->dev, pool, VS_POOL_OP_TRIMMED, 6 * MiB, 5 * MiB, U, U, U, 0 };
  vs_writer_pool_event (f->w, &pt);
  /* A plain cudaMalloc beside the pool. */
  mem (f, f->dev, 15, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x100000, MiB);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, pool, "peak_reserved_bytes"), ==, 32 * MiB);
  g_assert_cmpint (summary (db, f->dev, pool, "peak_allocated_bytes"), ==, 8 * MiB);
  g_assert_cmpint (summary (db, f->dev, pool, "final_reserved_bytes"), ==, 6 * MiB);
  g_assert_cmpint (summary (db, f->dev, pool, "final_allocated_bytes"), ==, 5 * MiB);
  g_assert_cmpint (summary (db, f->dev, pool, "alloc_count"), ==, 2);
  g_assert_cmpint (summary (db, f->dev, pool, "free_count"), ==, 1);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_reserved_bytes"), ==, 33 * MiB);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_bytes"), ==, 9 * MiB);
  g_assert_cmpint (summary (db, f->dev, 0, "final_reserved_bytes"), ==, 7 * MiB);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_device_bytes"), ==, 33 * MiB);
  g_assert_cmpint (summary (db, f->dev, 0, "alloc_count"), ==, 3);
  sqlite3_close (db);
}

/* PyTorch on top of CUPTI: the segment's cudaMalloc is seen at both levels
 * and must be counted once; blocks count at their requested size and stop
 * counting at free_completed, not free_requested. */
static void
test_allocator_segments (Fixture *f, gconstpointer data)
{
  VsAllocator a = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &a);
  mem (f, f->dev, 10, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x200000, 2 * MiB);
  alloc_ev (f, pt, 11, VS_ALLOC_OP_SEGMENT_ALLOC, 0x200000, 2 * MiB);
  alloc_ev (f, pt, 12, VS_ALLOC_OP_ALLOC, 0x200000, 1000);
  alloc_ev (f, pt, 13, VS_ALLOC_OP_ALLOC, 0x200400, 3000);
  alloc_ev (f, pt, 14, VS_ALLOC_OP_FREE_REQUESTED, 0x200000, 1000);
  alloc_ev (f, pt, 15, VS_ALLOC_OP_FREE_COMPLETED, 0x200000, 1000);
  /* A library's own cudaMalloc outside PyTorch. */
  mem (f, f->dev, 16, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x900000, 4096);
  VsFailedAlloc fa
      = { 17, f->proc, 1, f->dev, pt, "pytorch", 10 * MiB, 2, "out of memory", 100, 200, U, 0, 0 };
  vs_writer_failed_alloc (f->w, &fa);
  /* PyTorch's underlying cudaMalloc failure: not an OOM of its own. */
  VsFailedAlloc fd
      = { 17,  f->proc, 1, f->dev, 0, "cudaMalloc", 10 * MiB, 2, "cudaErrorMemoryAllocation",
          100, 200,     U, 0,      0 };
  vs_writer_failed_alloc (f->w, &fd);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, pt, "peak_reserved_bytes"), ==, 2 * MiB);
  g_assert_cmpint (summary (db, f->dev, pt, "peak_allocated_bytes"), ==, 4000);
  g_assert_cmpint (summary (db, f->dev, pt, "peak_allocated_ts"), ==, 13);
  g_assert_cmpint (summary (db, f->dev, pt, "final_allocated_bytes"), ==, 3000);
  g_assert_cmpint (summary (db, f->dev, pt, "alloc_count"), ==, 2);
  g_assert_cmpint (summary (db, f->dev, pt, "free_count"), ==, 1);
  g_assert_cmpint (summary (db, f->dev, pt, "failed_alloc_count"), ==, 1);
  g_assert_cmpint (summary (db, f->dev, 0, "failed_alloc_count"), ==, 1);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_reserved_bytes"), ==, 2 * MiB + 4096);
  g_assert_cmpint (summary (db, f->dev, 0, "final_allocated_bytes"), ==, 3000 + 4096);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_device_bytes"), ==, 2 * MiB + 4096);
  g_assert_cmpint (
      q (db, "SELECT owner_id IS NOT NULL FROM block WHERE level = 1 AND address = 2097152"), ==,
      1);
  g_assert_cmpint (
      q (db, "SELECT owner_id IS NULL FROM block WHERE level = 1 AND address = 9437184"), ==, 1);
  sqlite3_close (db);
}

/* A segment address reused later: each device-level cudaMalloc belongs to
 * the segment allocated at (nearly) the same time, not to whichever segment
 * at that address comes first. */
static void
test_owner_by_time (Fixture *f, gconstpointer data)
{
  VsAllocator a = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &a);
  mem (f, f->dev, 1000, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x400000, 2 * MiB);
  alloc_ev (f, pt, 1001, VS_ALLOC_OP_SEGMENT_ALLOC, 0x400000, 2 * MiB);
  alloc_ev (f, pt, 2000, VS_ALLOC_OP_SEGMENT_FREE, 0x400000, 2 * MiB);
  mem (f, f->dev, 2001, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x400000, 2 * MiB);
  mem (f, f->dev, 3000, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x400000, 2 * MiB);
  alloc_ev (f, pt, 3002, VS_ALLOC_OP_SEGMENT_ALLOC, 0x400000, 2 * MiB);
  sqlite3 *db = finish (f);
  g_assert_cmpint (
      q (db, "SELECT count(*) FROM block s WHERE s.level = 3 AND"
             " (SELECT count(*) FROM block d WHERE d.level = 1 AND d.owner_id = s.id) = 1"),
      ==, 2);
  g_assert_cmpint (q (db, "SELECT count(*) FROM block d JOIN block s ON d.owner_id = s.id"
                          " WHERE d.level = 1 AND abs(d.alloc_ts - s.alloc_ts) > 10"),
                   ==, 0);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_reserved_bytes"), ==, 2 * MiB);
  sqlite3_close (db);
}

/* VMM: each cuMemMap of physical memory is a device-level allocation at the
 * mapped address; expandable segments map and unmap pieces of a segment. */
static void
test_vmm_and_partial_unmap (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 10, VS_MEM_KIND_VMM, VS_MEM_OP_ALLOC, 0x40000000, 2 * MiB);
  mem (f, f->dev, 11, VS_MEM_KIND_VMM, VS_MEM_OP_ALLOC, 0x40200000, 2 * MiB);
  mem (f, f->dev, 12, VS_MEM_KIND_VMM, VS_MEM_OP_FREE, 0x40000000, 2 * MiB);
  VsAllocator a = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &a);
  alloc_ev (f, pt, 20, VS_ALLOC_OP_SEGMENT_MAP, 0x80000000, 8 * MiB);
  alloc_ev (f, pt, 21, VS_ALLOC_OP_SEGMENT_UNMAP, 0x80200000, 2 * MiB);
  alloc_ev (f, pt, 22, VS_ALLOC_OP_SEGMENT_UNMAP, 0x80000000, 2 * MiB);
  sqlite3 *db = finish (f);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_device_bytes"), ==, 4 * MiB);
  g_assert_cmpint (summary (db, f->dev, pt, "peak_reserved_bytes"), ==, 8 * MiB);
  g_assert_cmpint (summary (db, f->dev, pt, "final_reserved_bytes"), ==, 4 * MiB);
  /* The 8 MiB mapping was split: what stays mapped is one 4 MiB piece. */
  g_assert_cmpint (q (db, "SELECT sum(bytes) FROM block WHERE level = 3 AND free_seq IS NULL"), ==,
                   4 * MiB);
  g_assert_cmpint (summary (db, f->dev, 0, "final_reserved_bytes"), ==, 6 * MiB);
  sqlite3_close (db);
}

/* Expandable segments: an unmap may cut a piece that an earlier unmap
 * left, or span two mappings.  8 MiB mapped at 0 and 2 MiB at 8 MiB; unmap
 * [2, 4) leaves [0, 2) and [4, 8); unmap [1, 5) then cuts both pieces;
 * unmap [7, 9) spans the end of one mapping and the start of the next. */
static void
test_nested_partial_unmaps (Fixture *f, gconstpointer data)
{
  VsAllocator a = { f->dev, f->proc, "pytorch", "pytorch", U, NULL };
  int64_t pt = vs_writer_add_allocator (f->w, &a);
  const int64_t base = 0x80000000;
  alloc_ev (f, pt, 10, VS_ALLOC_OP_SEGMENT_MAP, base, 8 * MiB);
  alloc_ev (f, pt, 11, VS_ALLOC_OP_SEGMENT_MAP, base + 8 * MiB, 2 * MiB);
  alloc_ev (f, pt, 20, VS_ALLOC_OP_SEGMENT_UNMAP, base + 2 * MiB, 2 * MiB);
  alloc_ev (f, pt, 30, VS_ALLOC_OP_SEGMENT_UNMAP, base + 1 * MiB, 4 * MiB);
  alloc_ev (f, pt, 40, VS_ALLOC_OP_SEGMENT_UNMAP, base + 7 * MiB, 2 * MiB);
  sqlite3 *db = finish (f);
  /* 10 MiB mapped; -2 → 8; [1,2) and [4,5) go → 6; [7,8) and [8,9) go → 4. */
  g_assert_cmpint (summary (db, f->dev, pt, "peak_reserved_bytes"), ==, 10 * MiB);
  g_assert_cmpint (summary (db, f->dev, pt, "final_reserved_bytes"), ==, 4 * MiB);
  /* What stays mapped, as blocks: [0,1), [5,7), [9,10). */
  g_assert_cmpint (q (db, "SELECT sum(bytes) FROM block WHERE level = 3 AND free_seq IS NULL"), ==,
                   4 * MiB);
  g_assert_cmpint (q (db, "SELECT count(*) FROM block WHERE level = 3 AND free_seq IS NULL"), ==,
                   3);
  g_assert_cmpint (q (db, "SELECT count(*) FROM block WHERE level = 3 AND alloc_seq = 0"), ==, 0);
  sqlite3_close (db);
}

/* Summary levels: every level's max over all buckets is the series max, and
 * the coarsest level has one bucket. */
static void
test_series_levels (Fixture *f, gconstpointer data)
{
  int64_t ts = 0;
  for (int i = 0; i < 5000; i++)
    {
      ts += 1000 + (i % 7) * 333;
      mem (f, f->dev, ts, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000 + i * 0x100, 64 + i % 50);
      if (i % 3 != 0)
        mem (f, f->dev, ts + 500, VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000 + i * 0x100,
             64 + i % 50);
    }
  sqlite3 *db = finish (f);
  int64_t peak = summary (db, f->dev, 0, "peak_allocated_bytes");
  g_assert_cmpint (peak, >, 0);
  g_assert_cmpint (q (db, "SELECT count(DISTINCT shift) FROM series_level"), >=, 3);
  g_assert_cmpint (q (db, "SELECT count(*) FROM (SELECT shift, max(max_allocated) m"
                          " FROM series_level WHERE allocator_id = 0 GROUP BY shift)"
                          " WHERE m != (SELECT peak_allocated_bytes FROM summary"
                          " WHERE allocator_id = 0 AND device_id = 1)"),
                   ==, 0);
  g_assert_cmpint (q (db, "SELECT last_allocated FROM series_level WHERE shift ="
                          " (SELECT max(shift) FROM series_level) ORDER BY bucket DESC"),
                   ==, summary (db, f->dev, 0, "final_allocated_bytes"));
  sqlite3_close (db);
}

/* Finalizing again gives the same result (a killed recording may be
 * finalized on open, then again). */
static void
test_refinalize (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 10, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 100);
  sqlite3 *db = finish (f);
  sqlite3_close (db);
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  char err[256];
  g_assert_cmpint (vs_trace_finalize (db, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (q (db, "SELECT count(*) FROM block"), ==, 1);
  g_assert_cmpint (q (db, "SELECT count(*) FROM summary WHERE allocator_id = 0"), ==, 2);
  g_assert_cmpint (summary (db, f->dev, 0, "peak_allocated_bytes"), ==, 100);
  sqlite3_close (db);
}

static bool
cancel_at_once (uint64_t done, uint64_t total, void *data)
{
  return false;
}

/* Cancelling leaves the trace as it was: unfinalized and intact. */
static void
test_cancel (Fixture *f, gconstpointer data)
{
  mem (f, f->dev, 10, VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 100);
  char err[256];
  g_assert_cmpint (vs_writer_close (f->w, true, cancel_at_once, NULL, err, sizeof err), ==, -1);
  g_assert_cmpstr (err, ==, "cancelled");
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (f->path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (q (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 0);
  g_assert_cmpint (q (db, "SELECT count(*) FROM mem_event"), ==, 1);
  sqlite3_close (db);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, fn)                                                                              \
  g_test_add ("/finalize/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("schema-round-trip", test_schema_round_trip);
  ADD ("before-trace-counted-apart", test_before_trace);
  ADD ("version-1-upgraded", test_version_1_upgraded);
  ADD ("kernel-configs-stored-once", test_kernel_configs);
  ADD ("version-2-kernels-upgraded", test_version_2_upgraded);
  ADD ("address-reuse-out-of-order", test_address_reuse_out_of_order);
  ADD ("live-before-trace", test_live_before_trace);
  ADD ("devices-and-kinds", test_devices_and_kinds);
  ADD ("pool", test_pool);
  ADD ("allocator-segments", test_allocator_segments);
  ADD ("owner-by-time", test_owner_by_time);
  ADD ("vmm-and-partial-unmap", test_vmm_and_partial_unmap);
  ADD ("nested-partial-unmaps", test_nested_partial_unmaps);
  ADD ("series-levels", test_series_levels);
  ADD ("refinalize", test_refinalize);
  ADD ("cancel", test_cancel);
  return g_test_run ();
}
