/* SPDX-License-Identifier: MIT */
/* test-snapshot-open.c — the viewer's opening of PyTorch snapshots
 * (gui/vs-snapshot-open.c), without a window.
 *
 * On a copy of a committed snapshot: it is recognised by its bytes; the
 * first open imports it into the user's cache folder, with progress, and
 * writes nothing beside it; the second finds the cache and imports
 * nothing, as does a copy of the same content under another name; other
 * content under the same name is imported anew; a snapshot in a folder
 * nothing can be written to opens; a broken snapshot gives exactly the
 * sentence `vramscope import` prints after its name and leaves no trace.
 *
 * Environment (set by tests/gui/meson.build): VS_CLI, VS_SNAPSHOTS.
 */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-snapshot-cache.h"
#include "vs-snapshot-open.h"

static char *tmpdir;

typedef struct
{
  GMainLoop *loop;
  GFile *trace;
  GError *error;
  guint progress_calls;
  gboolean progress_named;
} Opened;

static void
on_progress (const char *what, double fraction, gpointer data)
{
  Opened *o = data;
  o->progress_calls++;
  if (g_str_has_prefix (what, "Importing the snapshot") && fraction >= 0 && fraction <= 1)
    o->progress_named = TRUE;
}

static void
on_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Opened *o = data;
  o->trace = vs_snapshot_open_finish (result, &o->error);
  g_main_loop_quit (o->loop);
}

/* Opens path as the viewer does and waits for the result. */
static Opened
open_snapshot (const char *path)
{
  Opened o = { 0 };
  g_autoptr (GFile) file = g_file_new_for_path (path);
  o.loop = g_main_loop_new (NULL, FALSE);
  vs_snapshot_open_async (file, NULL, on_progress, &o, on_done, &o);
  g_main_loop_run (o.loop);
  g_main_loop_unref (o.loop);
  return o;
}

static void
opened_clear (Opened *o)
{
  g_clear_object (&o->trace);
  g_clear_error (&o->error);
}

static char *
copy_snapshot (const char *name, const char *as)
{
  g_autofree char *src = g_build_filename (g_getenv ("VS_SNAPSHOTS"), name, NULL);
  g_autofree char *data = NULL;
  gsize len;
  char *dst = g_build_filename (tmpdir, as, NULL);
  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
  return dst;
}

/* Makes folder in the test's folder and copies the committed snapshot
 * name into it under the same name; returns the copy's path. */
static char *
snapshot_in_new_folder (const char *folder, const char *name)
{
  g_autofree char *dir = g_build_filename (tmpdir, folder, NULL);
  g_autofree char *as = g_build_filename (folder, name, NULL);

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  return copy_snapshot (name, as);
}

static gint64
inode_of (const char *path)
{
  GStatBuf sb;
  g_assert_cmpint (g_stat (path, &sb), ==, 0);
  return (gint64)sb.st_ino;
}

/* The summary's peak allocated bytes of the trace at path (the pytorch
 * row of device 0). */
static gint64
peak_of (GFile *trace)
{
  g_autofree char *path = g_file_get_path (trace);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) t = vs_trace_open (path, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) rows = vs_summary_list (t, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, >, 0);
  return g_array_index (rows, VsSummary, 0).peak_allocated_bytes;
}

static void
test_recognised (void)
{
  g_autofree char *snap = copy_snapshot ("oom.pickle", "renamed.bin");
  g_autofree char *db = g_build_filename (g_getenv ("VS_SNAPSHOTS"), "..", "torch-train.db", NULL);
  g_autoptr (GFile) s = g_file_new_for_path (snap);
  g_autoptr (GFile) d = g_file_new_for_path (db);
  g_autoptr (GFile) missing = g_file_new_for_path ("/nonexistent/run.pickle");
  g_assert_true (vs_snapshot_open_is_snapshot (s)); /* by its bytes */
  g_assert_false (vs_snapshot_open_is_snapshot (d));
  g_assert_true (vs_snapshot_open_is_snapshot (missing)); /* by its name */
}

/* The names in folder dir, sorted, joined by spaces. */
static char *
names_in (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc)g_strcmp0);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **)names->pdata);
}

static void
test_cached_in_user_cache (void)
{
  g_autofree char *snap = snapshot_in_new_folder ("cached", "train.pickle");
  g_autofree char *dir = g_path_get_dirname (snap);
  g_autofree char *name = g_build_filename ("cached", "train.pickle", NULL);
  g_autofree char *cache = vs_snapshot_cache_path (snap, NULL);

  g_assert_nonnull (cache);
  g_assert_true (g_str_has_prefix (cache, g_get_user_cache_dir ()));
  Opened o = open_snapshot (snap);
  g_assert_no_error (o.error);
  g_autofree char *got = g_file_get_path (o.trace);
  g_assert_cmpstr (got, ==, cache);
  g_assert_true (o.progress_named);
  gint64 peak = peak_of (o.trace);
  g_assert_cmpint (peak, >, 0);
  gint64 ino = inode_of (cache);
  opened_clear (&o);
  /* Nothing beside the user's file. */
  g_autofree char *listed = names_in (dir);
  g_assert_cmpstr (listed, ==, "train.pickle");

  /* Unchanged: the same file, no import (no progress). */
  o = open_snapshot (snap);
  g_assert_no_error (o.error);
  g_assert_cmpint (o.progress_calls, ==, 0);
  g_assert_cmpint (inode_of (cache), ==, ino);
  opened_clear (&o);

  /* The same content under another name: the same trace. */
  g_autofree char *other_name = g_build_filename ("cached", "copy.bin", NULL);
  g_autofree char *copy = copy_snapshot ("train.pickle", other_name);
  o = open_snapshot (copy);
  g_assert_no_error (o.error);
  g_assert_cmpint (o.progress_calls, ==, 0);
  g_autofree char *got_copy = g_file_get_path (o.trace);
  g_assert_cmpstr (got_copy, ==, cache);
  opened_clear (&o);

  /* Other content under the first name: imported anew, elsewhere. */
  g_autofree char *replaced = copy_snapshot ("leak.pickle", name);
  o = open_snapshot (replaced);
  g_assert_no_error (o.error);
  g_assert_cmpint (o.progress_calls, >, 0);
  g_autofree char *got_new = g_file_get_path (o.trace);
  g_assert_cmpstr (got_new, !=, cache);
  g_assert_cmpint (peak_of (o.trace), !=, peak);
  opened_clear (&o);
}

static void
test_read_only_folder (void)
{
  g_autofree char *snap = snapshot_in_new_folder ("ro", "expandable.pickle");
  g_autofree char *dir = g_path_get_dirname (snap);
  g_assert_cmpint (g_chmod (dir, 0555), ==, 0);

  Opened o = open_snapshot (snap);
  g_assert_no_error (o.error);
  g_autofree char *got = g_file_get_path (o.trace);
  g_assert_true (g_str_has_prefix (got, g_get_user_cache_dir ()));
  opened_clear (&o);
  g_chmod (dir, 0755);
  g_autofree char *listed = names_in (dir);
  g_assert_cmpstr (listed, ==, "expandable.pickle");
}

static void
test_broken_snapshot (void)
{
  /* A truncated snapshot: its pickle ends early. */
  g_autofree char *whole = copy_snapshot ("streams.pickle", "whole.pickle");
  g_autofree char *data = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (whole, &data, &len, NULL));
  g_autofree char *snap = g_build_filename (tmpdir, "broken.pickle", NULL);
  g_assert_true (g_file_set_contents (snap, data, (gssize)len / 2, NULL));

  Opened o = open_snapshot (snap);
  g_assert_null (o.trace);
  g_assert_nonnull (o.error);

  g_autofree char *out = g_build_filename (tmpdir, "broken.db", NULL);
  const char *argv[] = { g_getenv ("VS_CLI"), "import", snap, "-o", out, NULL };
  g_autofree char *err = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &status, NULL));
  g_autofree char *want = g_strdup_printf ("vramscope import: %s\n", o.error->message);
  g_assert_cmpstr (err, ==, want);
  g_assert_null (strchr (o.error->message, '\n'));
  /* Nothing is left behind that looks like a trace. */
  g_autofree char *cache = vs_snapshot_cache_path (snap, NULL);
  g_assert_false (g_file_test (cache, G_FILE_TEST_EXISTS));
  opened_clear (&o);
}

/* Removes the folder at path and everything in it. */
static void
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  g_chmod (path, 0755);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("vs-snapshot-open-XXXXXX", NULL);
  /* The user's cache folder, before GLib reads it. */
  g_autofree char *cache = g_build_filename (tmpdir, "cache", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_test_add_func ("/snapshot-open/recognised", test_recognised);
  g_test_add_func ("/snapshot-open/cached-in-user-cache", test_cached_in_user_cache);
  g_test_add_func ("/snapshot-open/read-only-folder", test_read_only_folder);
  g_test_add_func ("/snapshot-open/broken-snapshot", test_broken_snapshot);
  int rc = g_test_run ();
  remove_tree (tmpdir);
  return rc;
}
