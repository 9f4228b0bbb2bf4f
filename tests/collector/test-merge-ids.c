/* SPDX-License-Identifier: MIT */
/* test-merge-ids.c — the merge's id maps (record/vs-merge-idmap.h) given
 * ids far past the ones a collector hands out: 2^29, 2^62, INT64_MAX.
 * The map answers every id as set, in memory proportional to the number
 * of ids, never to their values; and vs_merge_traces() of a process trace
 * whose process, frame and stack ids were edited up there returns, its
 * events referring to the merged rows; a round of the appended merge
 * releases an input whose last event id is 2^62.  No GPU.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-merge-append.h"
#include "vs-merge-private.h"
#include "vs-merge.h"
#include "vs-test-db.h"
#include "vs-trace-writer.h"
#include "../vs-test-records.h"

#define U VS_UNKNOWN
#define ID_2_29 (INT64_C (1) << 29)
#define ID_2_62 (INT64_C (1) << 62)

static int
count_one (int64_t old, int64_t new_id, void *data)
{
  g_assert_cmpint (new_id, ==, old == INT64_MAX ? 3 : old + 7);
  (*(int64_t *)data)++;
  return 0;
}

static void
test_map_sparse (void)
{
  VsIdMap m = { 0 };
  for (int64_t old = 1; old <= 1000; old++)
    g_assert_cmpint (vs_merge_idmap_set (&m, old, old + 7), ==, 0);
  int64_t far[] = { ID_2_29, ID_2_62, ID_2_62 + 1, INT64_MAX - 1 };
  for (size_t k = 0; k < G_N_ELEMENTS (far); k++)
    g_assert_cmpint (vs_merge_idmap_set (&m, far[k], far[k] + 7), ==, 0);
  g_assert_cmpint (vs_merge_idmap_set (&m, INT64_MAX, 3), ==, 0);
  /* dense ids that come after the far ones, in descending order */
  for (int64_t old = 3000; old > 1000; old--)
    g_assert_cmpint (vs_merge_idmap_set (&m, old, old + 7), ==, 0);

  for (int64_t old = 1; old <= 3000; old++)
    g_assert_cmpint (vs_merge_idmap_get (&m, old), ==, old + 7);
  for (size_t k = 0; k < G_N_ELEMENTS (far); k++)
    g_assert_cmpint (vs_merge_idmap_get (&m, far[k]), ==, far[k] + 7);
  g_assert_cmpint (vs_merge_idmap_get (&m, INT64_MAX), ==, 3);
  g_assert_cmpint (vs_merge_idmap_get (&m, ID_2_29 + 1), ==, U);
  g_assert_cmpint (vs_merge_idmap_get (&m, 3001), ==, U);
  g_assert_cmpint (vs_merge_idmap_get (&m, 0), ==, U);
  g_assert_cmpint (vs_merge_idmap_get (&m, -5), ==, U);
  /* memory: the array is bounded by the ids mapped (3005), not by 2^62 */
  g_assert_cmpint (m.cap, <=, 4 * 3005 + 2 * VS_IDMAP_DENSE_SLACK);
  g_assert_cmpuint (vs_idmap_sparse_count (&m.sparse), <=, 2005);

  int64_t n = 0;
  g_assert_cmpint (vs_merge_idmap_foreach (&m, 0, INT64_MAX, count_one, &n), ==, 0);
  g_assert_cmpint (n, ==, 3005);
  n = 0;
  g_assert_cmpint (vs_merge_idmap_foreach (&m, 500, ID_2_29, count_one, &n), ==, 0);
  g_assert_cmpint (n, ==, 2501);

  VsIdMap copy;
  g_assert_cmpint (vs_merge_idmap_copy (&copy, &m), ==, 0);
  vs_merge_idmap_clear (&m);
  g_assert_cmpint (vs_merge_idmap_get (&copy, ID_2_62), ==, ID_2_62 + 7);
  g_assert_cmpint (vs_merge_idmap_get (&copy, 2999), ==, 2999 + 7);
  vs_merge_idmap_clear (&copy);
}

/* A process trace at path: one process, GPU, stack of two frames, and
 * two allocations with one free. */
static void
write_input (const char *path)
{
  char err[256] = "";
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  g_assert_nonnull (w);
  VsProcess p = vs_writer_process_started (100, 1, "h", "train", 1000);
  int64_t process = vs_writer_add_process (w, &p);
  VsDevice d = { .idx = 0, .uuid = "GPU-a", .name = "H200", .total_bytes = 1 << 30 };
  int64_t device = vs_writer_add_device (w, &d);
  int64_t frames[2];
  for (int k = 0; k < 2; k++)
    {
      VsFrame f = { .kind = VS_FRAME_PYTHON,
                    .module_id = U,
                    .address = U,
                    .function = k ? "forward" : "main",
                    .file = "train.py",
                    .line = 10 + k };
      frames[k] = vs_writer_add_frame (w, &f);
    }
  int64_t stack = vs_writer_add_stack (w, frames, 2);
  g_assert_cmpint (stack, >, 0);
  vs_writer_set_meta_int (w, "start_ns", 1000);
  for (int i = 0; i < 3; i++)
    {
      VsMemEvent e = vs_test_mem_event (1100 + 10 * i, process, 5, device, VS_MEM_KIND_DEVICE,
                                        i < 2 ? VS_MEM_OP_ALLOC : VS_MEM_OP_FREE,
                                        0x10000 * (i == 1 ? 2 : 1), 4096);
      e.correlation = i;
      e.stack_id = stack;
      g_assert_cmpint (vs_writer_mem_event (w, &e), ==, 0);
    }
  vs_writer_set_meta_int (w, "end_ns", 2000);
  g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
}

static void
exec_sql (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  char *msg = NULL;
  int rc = sqlite3_exec (db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
  sqlite3_close (db);
}

/* The input (write_input) as process-100-1.db in a new folder (*dir),
 * edited with sql; returns its path. */
static char *
edited_input (char **dir, const char *sql)
{
  char *in;

  *dir = g_dir_make_tmp ("vs-merge-ids-XXXXXX", NULL);
  in = g_build_filename (*dir, "process-100-1.db", NULL);
  write_input (in);
  exec_sql (in, sql);
  return in;
}

static void
test_merge_far_ids (void)
{
  g_autofree char *dir = NULL;
  /* The process at 2^62, a frame at 2^29, the stack's root node at
   * 2^62 + 5 and its leaf at INT64_MAX - 1 (parents before children, as
   * the collector writes them): every row referring to them follows. */
  g_autofree char *in
      = edited_input (&dir, "UPDATE process SET id = 4611686018427387904;"
                            "UPDATE mem_event SET process_id = 4611686018427387904;"
                            "UPDATE stack SET frame_id = 536870912"
                            " WHERE frame_id = (SELECT id FROM frame WHERE function = 'main');"
                            "UPDATE frame SET id = 536870912 WHERE function = 'main';"
                            "UPDATE stack SET parent_id = 4611686018427387909"
                            " WHERE parent_id = (SELECT id FROM stack WHERE parent_id = 0);"
                            "UPDATE stack SET id = 4611686018427387909 WHERE parent_id = 0;"
                            "UPDATE mem_event SET stack_id = 9223372036854775806;"
                            "UPDATE stack SET id = 9223372036854775806 WHERE parent_id != 0;");
  g_autofree char *out = g_build_filename (dir, "merged.db", NULL);
  VsMergeRun run = {
    .main_pid = 100, .exit_status = 0, .command_line = "train", .host = "h", .tool_version = "t"
  };
  const char *inputs[] = { in };
  char err[512] = "";
  g_assert_cmpint (vs_merge_traces (out, inputs, 1, &run, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_test_count (out, "SELECT count(*) FROM mem_event"), ==, 3);
  g_assert_cmpint (vs_test_count (out, "SELECT count(*) FROM mem_event e JOIN process p"
                                       " ON p.id = e.process_id WHERE p.pid = 100"),
                   ==, 3);
  /* each event's stack: two nodes, one on main and one on forward */
  g_assert_cmpint (vs_test_count (out, "SELECT count(*) FROM mem_event e JOIN stack s"
                                       " ON s.id = e.stack_id JOIN frame f ON f.id = s.frame_id"
                                       " JOIN stack s2 ON s2.id = s.parent_id"
                                       " JOIN frame f2 ON f2.id = s2.frame_id"
                                       " WHERE s2.parent_id = 0"
                                       " AND f.function || f2.function IN ('forwardmain',"
                                       " 'mainforward')"),
                   ==, 3);
  g_assert_cmpint (vs_test_count (out, "SELECT max(id) FROM process"), <, 100);
  g_unlink (in);
  g_unlink (out);
  g_rmdir (dir);
}

/* A round of the merged trace appended to (record --window, recover)
 * over an input whose last event id is 2^62: releasing what was taken
 * steps from row to row, not through every id up to 2^62. */
static void
test_release_far_ids (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *in = edited_input (&dir, "UPDATE mem_event SET id = 4611686018427387904"
                                            " WHERE id = (SELECT max(id) FROM mem_event)");
  g_autofree char *live = g_build_filename (dir, "live.trace", NULL);
  char err[512] = "";
  VsMergeAppend *a = vs_merge_append_open (live, err, sizeof err);
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_input (a, in, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_end (a, NULL, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_release (a, in, err, sizeof err), ==, 0);
  vs_merge_append_free (a);
  /* the table's largest row stays, the others are gone */
  g_assert_cmpint (vs_test_count (in, "SELECT count(*) FROM mem_event"), ==, 1);
  g_assert_cmpint (vs_test_count (in, "SELECT max(id) FROM mem_event"), ==, ID_2_62);
  g_assert_cmpint (vs_test_count (live, "SELECT count(*) FROM mem_event"), ==, 3);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/merge/idmap/sparse", test_map_sparse);
  g_test_add_func ("/merge/far-ids", test_merge_far_ids);
  g_test_add_func ("/merge/append/release-far-ids", test_release_far_ids);
  return g_test_run ();
}
