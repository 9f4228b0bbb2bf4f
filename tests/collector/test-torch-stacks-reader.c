/* SPDX-License-Identifier: MIT */
/* test-torch-stacks-reader.c — the reader of the allocator stream's stacks
 * file (record/vs-torch-stacks.c) on a file the real gatherer wrote.
 *
 * The file and what it must hold come from make-torch-stacks.py (the
 * gatherer, collector/python/vs_torch_stacks.hpp, run inside Python at
 * build time).  Checked: every stack and frame read exactly; every cut
 * inside the last entry (a write its process's death cut short) reads as
 * the stacks before it with `torn` set, every cut at an entry's end as
 * those stacks, not torn; every single damaged byte is an error, or (a
 * damaged length) reads as an earlier end, never as other content; files
 * that are no stacks file are errors; the stacks written into a trace walk
 * back to the same frames.
 *
 * Usage: test-torch-stacks-reader STACKS EXPECTED   (g_test, TAP)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "vs-torch-stacks.h"
#include "vs-trace-writer.h"

static const char *stacks_path, *expected_path;

typedef struct
{
  char *file, *function;
  int line;
} Frame;

typedef struct
{
  GArray *frames; /* Frame */
} Stack;

/* The expected stacks, index id - 1. */
static GPtrArray *expected;

static void
free_stack (gpointer p)
{
  Stack *s = p;
  for (guint i = 0; i < s->frames->len; i++)
    {
      g_free (g_array_index (s->frames, Frame, i).file);
      g_free (g_array_index (s->frames, Frame, i).function);
    }
  g_array_unref (s->frames);
  g_free (s);
}

static void
load_expected (void)
{
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (expected_path, &text, NULL, NULL));
  expected = g_ptr_array_new_with_free_func (free_stack);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  Stack *cur = NULL;
  for (char **l = lines; *l != NULL && **l != '\0'; l++)
    {
      guint id, n;
      if (sscanf (*l, "stack %u %u", &id, &n) == 2)
        {
          g_assert_cmpuint (id, ==, expected->len + 1);
          cur = g_new0 (Stack, 1);
          cur->frames = g_array_new (FALSE, FALSE, sizeof (Frame));
          g_ptr_array_add (expected, cur);
          continue;
        }
      g_auto (GStrv) f = g_strsplit (*l, "\t", 3);
      g_assert_nonnull (cur);
      g_assert_cmpuint (g_strv_length (f), ==, 3);
      Frame fr = { g_strdup (f[0]), g_strdup (f[1]), atoi (f[2]) };
      g_array_append_val (cur->frames, fr);
    }
  g_assert_cmpuint (expected->len, >, 3);
}

/* True when s holds exactly the first n expected stacks. */
static gboolean
holds_expected (const VsTorchStacks *s, size_t n)
{
  if (vs_torch_stacks_n_stacks (s) != n)
    return FALSE;
  for (size_t id = 1; id <= n; id++)
    {
      const Stack *e = g_ptr_array_index (expected, id - 1);
      size_t count = 0;
      const uint32_t *fids = vs_torch_stacks_get (s, (uint32_t)id, &count);
      if (fids == NULL || count != e->frames->len)
        return FALSE;
      for (size_t i = 0; i < count; i++)
        {
          const Frame *want = &g_array_index (e->frames, Frame, i);
          const char *file, *function;
          int32_t line;
          if (!vs_torch_stacks_frame (s, fids[i], &file, &function, &line)
              || strcmp (file, want->file) != 0 || strcmp (function, want->function) != 0
              || line != want->line)
            return FALSE;
        }
    }
  return TRUE;
}

/* The file's bytes. */
static GBytes *
file_bytes (void)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (stacks_path, &data, &len, NULL));
  return g_bytes_new_take (g_steal_pointer (&data), len);
}

/* Reads data[0..len) as a stacks file, through a temporary file. */
static VsTorchStacks *
read_bytes (const void *data, gsize len, gboolean *torn, char *err, size_t errlen)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-stacks-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "t.stacks", NULL);
  g_assert_true (g_file_set_contents (path, data, (gssize)len, NULL));
  bool t = false;
  VsTorchStacks *s = vs_torch_stacks_read (path, &t, err, errlen);
  *torn = t;
  g_unlink (path);
  g_rmdir (dir);
  return s;
}

/* The offsets where entries end, after the header. */
static GArray *
entry_ends (const unsigned char *d, gsize len)
{
  GArray *ends = g_array_new (FALSE, FALSE, sizeof (gsize));
  gsize off = 16;
  while (off + 12 <= len)
    {
      guint32 n;
      memcpy (&n, d + off + 4, 4);
      off += 12 + n;
      g_assert_cmpuint (off, <=, len);
      g_array_append_val (ends, off);
    }
  g_assert_cmpuint (off, ==, len);
  return ends;
}

/* Stacks whose entries end at or before cut. */
static size_t
stacks_before (const unsigned char *d, GArray *ends, gsize cut)
{
  size_t n = 0;
  gsize start = 16;
  for (guint i = 0; i < ends->len; i++)
    {
      gsize end = g_array_index (ends, gsize, i);
      guint32 kind;
      memcpy (&kind, d + start, 4);
      if (end <= cut && kind == 2)
        n++;
      start = end;
    }
  return n;
}

static void
test_read (void)
{
  char err[512] = "";
  bool torn = true;
  VsTorchStacks *s = vs_torch_stacks_read (stacks_path, &torn, err, sizeof err);
  g_assert_nonnull (s);
  g_assert_false (torn);
  g_assert_true (holds_expected (s, expected->len));
  /* Frames are shared between stacks, not repeated. */
  size_t frames = 0;
  for (guint i = 0; i < expected->len; i++)
    frames += ((Stack *)g_ptr_array_index (expected, i))->frames->len;
  g_assert_cmpuint (vs_torch_stacks_n_frames (s), <, frames);
  size_t n = 0;
  g_assert_null (vs_torch_stacks_get (s, 0, &n));
  g_assert_null (vs_torch_stacks_get (s, (uint32_t)expected->len + 1, &n));
  g_assert_false (vs_torch_stacks_frame (s, 0, NULL, NULL, NULL));
  vs_torch_stacks_free (s);
}

static void
test_torn (void)
{
  g_autoptr (GBytes) b = file_bytes ();
  gsize len;
  const unsigned char *d = g_bytes_get_data (b, &len);
  g_autoptr (GArray) ends = entry_ends (d, len);
  for (gsize cut = 16; cut <= len; cut++)
    {
      char err[512] = "";
      gboolean torn = FALSE;
      VsTorchStacks *s = read_bytes (d, cut, &torn, err, sizeof err);
      g_assert_nonnull (s);
      gboolean at_end = cut == 16;
      for (guint i = 0; i < ends->len; i++)
        at_end |= g_array_index (ends, gsize, i) == cut;
      g_assert_cmpint (torn, ==, !at_end);
      g_assert_true (holds_expected (s, stacks_before (d, ends, cut)));
      vs_torch_stacks_free (s);
    }
}

static void
test_garbage (void)
{
  g_autoptr (GBytes) b = file_bytes ();
  gsize len;
  const unsigned char *d = g_bytes_get_data (b, &len);
  g_autofree unsigned char *copy = g_memdup2 (d, len);
  for (gsize i = 0; i < len; i++)
    {
      char err[512] = "";
      gboolean torn = FALSE;
      copy[i] ^= 0x5A;
      VsTorchStacks *s = read_bytes (copy, len, &torn, err, sizeof err);
      copy[i] = d[i];
      if (s == NULL)
        {
          g_assert_true (strstr (err, "malformed") || strstr (err, "not a Python stacks"));
          continue;
        }
      /* Only a damaged length can read as an end: never as other content. */
      g_assert_true (torn);
      size_t n = vs_torch_stacks_n_stacks (s);
      g_assert_cmpuint (n, <, expected->len);
      g_assert_true (holds_expected (s, n));
      vs_torch_stacks_free (s);
    }
  const char *not_stacks[] = { "", "VSSTACK", "VSSTACK2\1\0\0\0\0\0\0\0",
                               "VSSTACK1\2\0\0\0\0\0\0\0", "VSTORCH1\1\0\0\0\0\0\0\0" };
  const gsize lens[] = { 0, 7, 16, 16, 16 };
  for (gsize i = 0; i < G_N_ELEMENTS (not_stacks); i++)
    {
      char err[512] = "";
      gboolean torn = FALSE;
      g_assert_null (read_bytes (not_stacks[i], lens[i], &torn, err, sizeof err));
      g_assert_nonnull (strstr (err, "not a Python stacks file"));
    }
  char err[512] = "";
  bool torn = false;
  g_assert_null (vs_torch_stacks_read ("/nonexistent/t.stacks", &torn, err, sizeof err));
  g_assert_nonnull (strstr (err, "cannot read"));
}

static void
test_into_trace (void)
{
  char err[512] = "";
  VsTorchStacks *s = vs_torch_stacks_read (stacks_path, NULL, err, sizeof err);
  g_assert_nonnull (s);
  g_autofree char *dir = g_dir_make_tmp ("vs-stacks-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "t.db", NULL);
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  g_assert_nonnull (w);
  g_autofree int64_t *ids = g_new0 (int64_t, expected->len + 1);
  for (guint id = expected->len; id >= 1; id--)
    {
      ids[id] = vs_torch_stacks_trace_id (s, w, id);
      g_assert_cmpint (ids[id], >, 0);
      g_assert_cmpint (vs_torch_stacks_trace_id (s, w, id), ==, ids[id]);
    }
  g_assert_cmpint (vs_torch_stacks_trace_id (s, w, 0), ==, VS_UNKNOWN);
  g_assert_cmpint (vs_torch_stacks_trace_id (s, w, expected->len + 1), ==, VS_UNKNOWN);
  g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
  vs_torch_stacks_free (s);

  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  static const char *walk_sql = "SELECT s.parent_id, f.file, f.function, f.line, f.kind"
                                " FROM stack s JOIN frame f ON f.id = s.frame_id WHERE s.id = ?1";
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, walk_sql, -1, &st, NULL), ==, SQLITE_OK);
  for (guint id = 1; id <= expected->len; id++)
    {
      const Stack *e = g_ptr_array_index (expected, id - 1);
      int64_t node = ids[id];
      for (guint i = 0; i < e->frames->len; i++)
        {
          const Frame *want = &g_array_index (e->frames, Frame, i);
          sqlite3_reset (st);
          sqlite3_bind_int64 (st, 1, node);
          g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
          g_assert_cmpstr ((const char *)sqlite3_column_text (st, 1), ==, want->file);
          g_assert_cmpstr ((const char *)sqlite3_column_text (st, 2), ==, want->function);
          g_assert_cmpint (sqlite3_column_int (st, 3), ==, want->line);
          /* As the snapshot importer marks them: .py files are Python. */
          g_assert_cmpint (sqlite3_column_int (st, 4), ==,
                           g_str_has_suffix (want->file, ".py") || want->file[0] == '<'
                               ? VS_FRAME_PYTHON
                               : VS_FRAME_NATIVE);
          node = sqlite3_column_int64 (st, 0);
        }
      g_assert_cmpint (node, ==, 0); /* the root: no frame more */
    }
  sqlite3_finalize (st);
  sqlite3_close (db);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_assert_cmpint (argc, ==, 3);
  stacks_path = argv[1];
  expected_path = argv[2];
  load_expected ();
  g_test_add_func ("/torch-stacks/read", test_read);
  g_test_add_func ("/torch-stacks/torn", test_torn);
  g_test_add_func ("/torch-stacks/garbage", test_garbage);
  g_test_add_func ("/torch-stacks/into-trace", test_into_trace);
  int rc = g_test_run ();
  g_ptr_array_unref (expected);
  return rc;
}
