/* SPDX-License-Identifier: MIT */
/* test-trace-open.c — vs_trace_open() accepts traces and refuses every
 * kind of bad input with one clear sentence naming the file.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"
#include "vs-trace-private.h"

typedef struct
{
  char *dir;
  char *path; /* the test's file in dir, named by the test's data */
} Dir;

static void
dir_setup (Dir *d, gconstpointer data)
{
  d->dir = g_dir_make_tmp ("vs-open-XXXXXX", NULL);
  g_assert_nonnull (d->dir);
  d->path = data != NULL ? g_build_filename (d->dir, data, NULL) : NULL;
}

static void
dir_teardown (Dir *d, gconstpointer data)
{
  GDir *dir = g_dir_open (d->dir, 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *p = g_build_filename (d->dir, name, NULL);

      g_unlink (p);
    }
  g_dir_close (dir);
  g_rmdir (d->dir);
  g_free (d->dir);
  g_free (d->path);
}

/* Opening path must fail with code, and the message must be one line that
 * names the file. */
static void
assert_refused (const char *path, int code)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (path, &error);

  g_assert_null (trace);
  g_assert_error (error, VS_TRACE_ERROR, code);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_null (strchr (error->message, '\n'));
}

static void
test_missing_file_not_created (Dir *d, gconstpointer data)
{
  assert_refused (d->path, VS_TRACE_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (d->path, G_FILE_TEST_EXISTS));
}

static void
test_empty_file (Dir *d, gconstpointer data)
{
  g_assert_true (g_file_set_contents (d->path, "", 0, NULL));
  assert_refused (d->path, VS_TRACE_ERROR_NOT_A_TRACE);
}

static void
test_random_bytes (Dir *d, gconstpointer data)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  char buf[8192];

  for (gsize i = 0; i < sizeof buf; i++)
    buf[i] = (char)g_rand_int_range (rand, 0, 256);
  g_assert_true (g_file_set_contents (d->path, buf, sizeof buf, NULL));
  assert_refused (d->path, VS_TRACE_ERROR_NOT_A_TRACE);
}

static void
test_text_file (Dir *d, gconstpointer data)
{
  const char *text = "This is a text file, not a trace.\n"
                     "It has several lines but nothing else.\n";

  g_assert_true (g_file_set_contents (d->path, text, -1, NULL));
  assert_refused (d->path, VS_TRACE_ERROR_NOT_A_TRACE);
}

static void
test_directory (Dir *d, gconstpointer data)
{
  assert_refused (d->dir, VS_TRACE_ERROR_NOT_A_TRACE);
}

static void
test_other_application (Dir *d, gconstpointer data)
{
  sqlite3 *db;

  g_assert_cmpint (sqlite3_open (d->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (
      sqlite3_exec (db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", NULL, NULL, NULL), ==,
      SQLITE_OK);
  sqlite3_close (db);
  assert_refused (d->path, VS_TRACE_ERROR_NOT_A_TRACE);
}

static void
test_newer_schema (Dir *d, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  char err[256];
  sqlite3 *db;

  g_assert_true (vs_fixture_basic (d->path, true, err, sizeof err));
  g_assert_cmpint (sqlite3_open (d->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA user_version = 99", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  trace = vs_trace_open (d->path, &error);
  g_assert_null (trace);
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NEWER_SCHEMA);
  g_assert_nonnull (
      strstr (error->message, "newer vramscope (schema 99, this build reads up to 5)"));
}

static void
test_truncated (Dir *d, gconstpointer data)
{
  g_autofree char *contents = NULL;
  gsize len;
  char err[256];

  /* A real trace big enough to span many pages, cut in half. */
  g_assert_true (vs_fixture_random (d->path, 5000, 3, err, sizeof err));
  g_assert_true (g_file_get_contents (d->path, &contents, &len, NULL));
  g_assert_cmpuint (len, >, 8192);
  g_assert_true (g_file_set_contents (d->path, contents, len / 2, NULL));
  assert_refused (d->path, VS_TRACE_ERROR_CORRUPT);
}

static void
test_valid_trace (Dir *d, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autofree char *start = NULL;
  const GPtrArray *devices, *allocators;
  const VsDeviceInfo *dev;
  char err[256];

  g_assert_true (vs_fixture_full (d->path, err, sizeof err));
  trace = vs_trace_open (d->path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (vs_trace_get_path (trace), ==, d->path);
  g_assert_cmpint (vs_trace_get_start_abs_ns (trace), ==, VS_FIXTURE_T0);
  /* The latest thing in the trace is the kernel on device 1 ending at 3400. */
  g_assert_cmpint (vs_trace_get_duration_ns (trace), ==, 3400);
  start = vs_trace_dup_meta (trace, "start_ns");
  g_assert_cmpstr (start, ==, "1700000000000000000");
  g_assert_null (vs_trace_dup_meta (trace, "no such key"));

  devices = vs_trace_get_devices (trace);
  g_assert_cmpuint (devices->len, ==, 2);
  dev = g_ptr_array_index (devices, 1);
  g_assert_cmpint (dev->idx, ==, 1);
  g_assert_cmpstr (dev->uuid, ==, "GPU-full-1");
  g_assert_cmpstr (dev->name, ==, "Test GPU B");
  g_assert_cmpint (dev->total_bytes, ==, G_GINT64_CONSTANT (2147483648));
  g_assert_true (vs_trace_find_device_by_idx (trace, 1) == dev);
  g_assert_true (vs_trace_lookup_device (trace, dev->id) == dev);
  g_assert_null (vs_trace_find_device_by_idx (trace, 7));

  allocators = vs_trace_get_allocators (trace);
  g_assert_cmpuint (allocators->len, ==, 2);
  /* Ordered by device, then name. */
  g_assert_cmpstr (((VsAllocatorInfo *)g_ptr_array_index (allocators, 0))->name, ==, "pool:0x5000");
  g_assert_cmpstr (((VsAllocatorInfo *)g_ptr_array_index (allocators, 1))->kind, ==, "pytorch");
  g_assert_cmpstr (vs_trace_allocator_name (trace, 0), ==, "all");

  /* Memory kind names come from the trace's own mem_kind table. */
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, VS_MEM_KIND_DEVICE), ==, "device");
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, VS_MEM_KIND_ASYNC), ==, "async");
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, VS_MEM_KIND_MANAGED_STATIC), ==,
                   "managed_static");
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, 0), ==, "?");
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, -1), ==, "?");
  g_assert_cmpstr (vs_trace_mem_kind_name (trace, 1000), ==, "?");
}

/* A recording that was killed has meta finalized = 0: the first open
 * finalizes it in place, then reads it like any other. */
static void
test_unfinalized_is_finalized (Dir *d, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autofree char *fin = NULL;
  VsSummary s;
  char err[256];

  g_assert_true (vs_fixture_basic (d->path, false, err, sizeof err));
  trace = vs_trace_open (d->path, &error);
  g_assert_no_error (error);
  fin = vs_trace_dup_meta (trace, "finalized");
  g_assert_cmpstr (fin, ==, "1");
  g_assert_true (vs_summary_get (trace, vs_trace_find_device_by_idx (trace, 0)->id, 0, &s, &error));
  g_assert_cmpint (s.peak_allocated_bytes, ==, 9500);
}

/* Without write access an unfinalized trace cannot be repaired: a clear
 * error.  (root can write anything, so there the open must succeed.) */
static void
test_unfinalized_read_only (Dir *d, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  char err[256];

  g_assert_true (vs_fixture_basic (d->path, false, err, sizeof err));
  g_assert_cmpint (g_chmod (d->path, 0444), ==, 0);
  g_assert_cmpint (g_chmod (d->dir, 0555), ==, 0);
  trace = vs_trace_open (d->path, &error);
  g_chmod (d->dir, 0755);
  if (geteuid () == 0)
    g_assert_no_error (error);
  else
    {
      g_assert_null (trace);
      g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_NOT_FINALIZED);
      g_assert_nonnull (strstr (error->message, d->path));
    }
}

/* A query that would never end is interrupted at the time limit, with an
 * error saying so, and the next query gets a budget of its own.  (Were it
 * not interrupted, the test would never end: meson's timeout fails it; no
 * clock is read here.) */
static void
test_query_time_limit (Dir *d, gconstpointer data)
{
  static const char *forever = "WITH RECURSIVE r (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
                               " SELECT count(*) FROM r";
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  char err[256];
  gint64 v;

  g_assert_true (vs_fixture_full (d->path, err, sizeof err));
  g_setenv (VS_TRACE_QUERY_LIMIT_ENV, "1", TRUE);
  trace = vs_trace_open (d->path, &error);
  g_assert_no_error (error);
  g_assert_false (vs_trace_query_int (trace, forever, &v, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "took too long"));
  g_assert_nonnull (strstr (error->message, d->path));
  g_clear_error (&error);
  g_assert_true (vs_trace_query_int (trace, "SELECT count(*) FROM device", &v, &error));
  g_assert_no_error (error);
  g_assert_cmpint (v, ==, 2);
  g_unsetenv (VS_TRACE_QUERY_LIMIT_ENV);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, file, fn) g_test_add ("/trace-open/" name, Dir, file, dir_setup, fn, dir_teardown)
  ADD ("missing-file-is-not-created", "missing.db", test_missing_file_not_created);
  ADD ("empty-file", "empty.db", test_empty_file);
  ADD ("random-bytes", "random.db", test_random_bytes);
  ADD ("text-file", "notes.txt", test_text_file);
  ADD ("directory", NULL, test_directory);
  ADD ("other-application", "other.db", test_other_application);
  ADD ("newer-schema", "newer.db", test_newer_schema);
  ADD ("truncated", "cut.db", test_truncated);
  ADD ("valid-trace", "full.db", test_valid_trace);
  ADD ("unfinalized-is-finalized", "killed.db", test_unfinalized_is_finalized);
  ADD ("unfinalized-read-only", "ro.db", test_unfinalized_read_only);
  ADD ("query-time-limit", "full.db", test_query_time_limit);
#undef ADD
  return g_test_run ();
}
