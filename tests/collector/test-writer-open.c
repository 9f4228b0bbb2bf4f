/* SPDX-License-Identifier: MIT */
/* test-writer-open.c — vs_writer_open(): a raw trace a writer created and
 * closed, opened again to add rows (as `record` merges the process traces
 * into its own import of the allocator level).  What it held stays; rows
 * added are deduplicated against it as against the writer's own: devices
 * by uuid, frames and stack nodes by content, kernel configurations;
 * kernel execution ids go on from the last.  A finalized trace or a file
 * that is no trace is refused.  No GPU needed.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "vs-test-db.h"
#include "vs-trace-writer.h"
#include "../vs-test-records.h"

#define U VS_UNKNOWN

static VsKernel
kernel (const char *name, int64_t grid_x, int64_t start)
{
  VsKernel k = vs_test_kernel (1, 1, name, start, start + 1000, start, grid_x, U);
  return k;
}

/* Writes what the first writer holds; returns its stack id. */
static int64_t
write_first (const char *path)
{
  char err[256] = "";
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  g_assert_nonnull (w);
  VsProcess p = { 4242, 1, "host", U, U, U, NULL, "python", 1000, U, U };
  g_assert_cmpint (vs_writer_add_process (w, &p), ==, 1);
  VsDevice d = { 0, "GPU-aa", "Test GPU", 1 << 30 };
  g_assert_cmpint (vs_writer_add_device (w, &d), ==, 1);
  VsFrame f1 = { VS_FRAME_PYTHON, U, U, "step", "train.py", 10 };
  VsFrame f2 = { VS_FRAME_PYTHON, U, U, "forward", "model.py", 20 };
  int64_t frames[2] = { vs_writer_add_frame (w, &f1), vs_writer_add_frame (w, &f2) };
  int64_t stack = vs_writer_add_stack (w, frames, 2);
  g_assert_cmpint (stack, >, 0);
  VsKernel a = kernel ("kernel_a", 64, 2000), b = kernel ("kernel_b", 32, 3000);
  g_assert_cmpint (vs_writer_kernel (w, &a), ==, 0);
  g_assert_cmpint (vs_writer_kernel (w, &b), ==, 0);
  g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
  return stack;
}

static void
test_open_adds_rows (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-writer-open-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "t.db", NULL);
  int64_t stack = write_first (path);

  char err[256] = "";
  VsWriter *w = vs_writer_open (path, err, sizeof err);
  g_assert_nonnull (w);
  /* The same GPU, frames and stack: the rows it has. */
  VsDevice d = { 0, "GPU-aa", "Test GPU", 1 << 30 };
  g_assert_cmpint (vs_writer_add_device (w, &d), ==, 1);
  VsFrame f1 = { VS_FRAME_PYTHON, U, U, "step", "train.py", 10 };
  VsFrame f2 = { VS_FRAME_PYTHON, U, U, "forward", "model.py", 20 };
  int64_t frames[2] = { vs_writer_add_frame (w, &f1), vs_writer_add_frame (w, &f2) };
  g_assert_cmpint (vs_writer_add_stack (w, frames, 2), ==, stack);
  /* A kernel configuration it has, and a new one. */
  VsKernel a = kernel ("kernel_a", 64, 4000), c = kernel ("kernel_c", 8, 5000);
  g_assert_cmpint (vs_writer_kernel (w, &a), ==, 0);
  g_assert_cmpint (vs_writer_kernel (w, &c), ==, 0);
  VsDevice other = { 1, "GPU-bb", "Test GPU", 1 << 30 };
  g_assert_cmpint (vs_writer_add_device (w, &other), ==, 2);
  g_assert_cmpint (vs_writer_close (w, true, NULL, NULL, err, sizeof err), ==, 0);

  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM device"), ==, 2);
  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM frame"), ==, 2);
  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM stack"), ==, 2);
  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM kernel_config"), ==, 3);
  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM kernel"), ==, 4);
  /* Execution ids go on from the last: 1 to 4, in writing order. */
  g_assert_cmpint (vs_test_count (path, "SELECT group_concat(id, ',') = '1,2,3,4' FROM"
                                        " (SELECT id FROM kernel ORDER BY start_ns)"),
                   ==, 1);
  g_assert_cmpint (vs_test_count (path, "SELECT count(*) FROM kernel WHERE name = 'kernel_a'"), ==,
                   2);
  g_assert_cmpint (vs_test_count (path, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);

  /* Finalized now: not a raw trace to add to. */
  g_assert_null (vs_writer_open (path, err, sizeof err));
  g_assert_nonnull (strstr (err, "not a raw vramscope trace"));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_open_refuses_other_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-writer-open-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "other.db", NULL);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE t (x)", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  char err[256] = "";
  g_assert_null (vs_writer_open (path, err, sizeof err));
  g_assert_cmpstr (err, !=, "");
  g_autofree char *missing = g_build_filename (dir, "missing.db", NULL);
  g_assert_null (vs_writer_open (missing, err, sizeof err));
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/writer/open/adds-rows-deduplicated", test_open_adds_rows);
  g_test_add_func ("/writer/open/refuses-other-files", test_open_refuses_other_files);
  return g_test_run ();
}
