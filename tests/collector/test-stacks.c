/* SPDX-License-Identifier: MIT */
/* test-stacks.c — capturing this program's own call stacks through the
 * collector's capture code, writing them with the sink, symbolizing the
 * trace with vs-symbolize.c, and checking functions and lines frame by
 * frame; plus module rows and build-ids.  No GPU needed.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vs-collector-private.h"
#include "vs-symbol-cache.h"
#include "vs-symbolize.h"
#include "vs-unwind.h"
#include "../vs-test-records.h"

static VsQueue queue;
static volatile int sink_hole;
static int line_c, line_b, line_a, line_inline, line_inline_caller;

/* The known chain: a → b → c → vs_stack_capture.  The statement after each
 * call keeps the compiler from turning it into a tail call. */
__attribute__ ((noinline)) static uint64_t
chain_c (void)
{
  line_c = __LINE__ + 1;
  uint64_t h = vs_stack_capture (&queue);
  sink_hole++;
  return h;
}

__attribute__ ((noinline)) static uint64_t
chain_b (void)
{
  line_b = __LINE__ + 1;
  uint64_t h = chain_c ();
  sink_hole++;
  return h;
}

__attribute__ ((noinline)) static uint64_t
chain_a (void)
{
  line_a = __LINE__ + 1;
  uint64_t h = chain_b ();
  sink_hole++;
  return h;
}

static inline __attribute__ ((always_inline)) uint64_t
inlined_step (void)
{
  line_inline = __LINE__ + 1;
  uint64_t h = vs_stack_capture (&queue);
  sink_hole++;
  return h;
}

__attribute__ ((noinline)) static uint64_t
inline_caller (void)
{
  line_inline_caller = __LINE__ + 1;
  uint64_t h = inlined_step ();
  sink_hole++;
  return h;
}

typedef struct
{
  char *path;
  int64_t stack_a, stack_inline;
} Trace;

/* Drains the queue into a sink writing a fresh trace; the stacks become
 * failed allocations so events name them. */
static void
write_trace (Trace *t, uint64_t hash_a, uint64_t hash_inline)
{
  char err[256];
  int fd = g_file_open_tmp ("test-stacks-XXXXXX.db", &t->path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  VsWriter *w = vs_writer_create (t->path, err, sizeof err);
  g_assert_nonnull (w);
  VsProcess p = vs_writer_process_started (getpid (), VS_UNKNOWN, NULL, NULL, 1);
  int64_t pid = vs_writer_add_process (w, &p);
  g_assert_cmpint (pid, >, 0);
  VsSink *s = vs_sink_new (w, pid);
  g_assert_nonnull (s);
  uint64_t hashes[2] = { hash_a, hash_inline };
  for (int i = 0; i < 2; i++)
    {
      VsItem it = { 0 };
      it.type = VS_ITEM_FAILED_ALLOC;
      it.ts = 10 + i;
      it.tid = 1;
      it.correlation = (uint64_t)i + 1;
      it.bytes = 1 << 20;
      it.error = 2;
      it.device = UINT32_MAX;
      it.free_bytes = it.total_bytes = VS_UNKNOWN;
      it.stack = hashes[i];
      strcpy (it.api, "cudaMalloc");
      g_assert_true (vs_queue_push (&queue, &it));
    }
  VsItem items[64];
  size_t n;
  while ((n = vs_queue_pop (&queue, items, 64)) > 0)
    for (size_t i = 0; i < n; i++)
      g_assert_cmpint (vs_sink_process_item (s, &items[i]), ==, 0);
  vs_sink_free (s);
  g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
}

typedef struct
{
  int kind;
  char *function, *file;
  int64_t line;
} Frame;

/* The frames of stack id, innermost first. */
static GArray *
read_stack (sqlite3 *db, int64_t id)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (Frame));
  sqlite3_stmt *q;
  g_assert_cmpint (
      sqlite3_prepare_v2 (db,
                          "SELECT s.parent_id, f.kind, f.function, f.file, f.line FROM stack s"
                          " JOIN frame f ON f.id = s.frame_id WHERE s.id = ?",
                          -1, &q, NULL),
      ==, SQLITE_OK);
  while (id != 0)
    {
      sqlite3_reset (q);
      sqlite3_bind_int64 (q, 1, id);
      g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
      Frame f = { sqlite3_column_int (q, 1), g_strdup ((const char *)sqlite3_column_text (q, 2)),
                  g_strdup ((const char *)sqlite3_column_text (q, 3)),
                  sqlite3_column_type (q, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64 (q, 4) };
      g_array_append_val (a, f);
      id = sqlite3_column_int64 (q, 0);
    }
  sqlite3_finalize (q);
  return a;
}

static void
check_frame (GArray *a, guint i, int kind, const char *function, int line)
{
  g_assert_cmpuint (a->len, >, i);
  Frame *f = &g_array_index (a, Frame, i);
  g_assert_cmpint (f->kind, ==, kind);
  g_assert_cmpstr (f->function, ==, function);
  g_assert_nonnull (f->file);
  g_assert_true (g_str_has_suffix (f->file, "test-stacks.c"));
  g_assert_cmpint (f->line, ==, line);
}

static void
free_frames (GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    {
      g_free (g_array_index (a, Frame, i).function);
      g_free (g_array_index (a, Frame, i).file);
    }
  g_array_unref (a);
}

/* The chain a → b → c comes back symbolized, innermost first, each frame
 * at the line of its call; the inlined function is a frame of kind
 * inline inside its caller's native frame. */
static void
test_unwind_symbolize (void)
{
  g_assert_cmpint (vs_unwind_init (), ==, VS_UNWIND_LIBUNWIND);
  vs_queue_init (&queue, 1024);
  /* The same stack twice (same call site): one hash, one blob sent. */
  uint64_t hs[2];
  for (volatile int i = 0; i < 2; i++)
    hs[i] = chain_a ();
  uint64_t ha = hs[0];
  g_assert_cmpuint (ha, !=, 0);
  g_assert_cmpuint (hs[1], ==, ha);
  g_assert_cmpuint (queue.count, ==, 1);
  uint64_t hi = inline_caller ();
  g_assert_cmpuint (hi, !=, ha);
  g_assert_cmpuint (queue.count, ==, 2);

  Trace t = { 0 };
  write_trace (&t, ha, hi);

  VsSymbolizeStats st;
  char err[512];
  int rc = vs_symbolize_file (t.path, &st, err, sizeof err);
  if (rc != 0)
    g_printerr ("%s\n", err);
  g_assert_cmpint (rc, ==, 0);
  g_assert_cmpint (st.frames, >=, 4);
  g_assert_cmpint (st.symbolized, >=, 4);
  g_assert_cmpint (st.inlined, >=, 1);
  /* Symbolizing again changes nothing. */
  g_assert_cmpint (vs_symbolize_file (t.path, NULL, err, sizeof err), ==, 0);

  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (t.path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q;
  g_assert_cmpint (
      sqlite3_prepare_v2 (db, "SELECT stack_id FROM failed_alloc ORDER BY ts", -1, &q, NULL), ==,
      SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  int64_t sa = sqlite3_column_int64 (q, 0);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  int64_t si = sqlite3_column_int64 (q, 0);
  sqlite3_finalize (q);

  GArray *a = read_stack (db, sa);
  check_frame (a, 0, VS_FRAME_NATIVE, "chain_c", line_c);
  check_frame (a, 1, VS_FRAME_NATIVE, "chain_b", line_b);
  check_frame (a, 2, VS_FRAME_NATIVE, "chain_a", line_a);
  g_assert_cmpstr (g_array_index (a, Frame, 3).function, ==, "test_unwind_symbolize");
  /* ... and on out to main (GLib's test runner calls this test). */
  gboolean saw_main = FALSE;
  for (guint i = 0; i < a->len; i++)
    saw_main |= g_strcmp0 (g_array_index (a, Frame, i).function, "main") == 0;
  g_assert_true (saw_main);
  free_frames (a);

  GArray *b = read_stack (db, si);
  check_frame (b, 0, VS_FRAME_INLINE, "inlined_step", line_inline);
  check_frame (b, 1, VS_FRAME_NATIVE, "inline_caller", line_inline_caller);
  free_frames (b);
  sqlite3_close (db);
  g_unlink (t.path);
  g_free (t.path);
  vs_queue_destroy (&queue);
}

/* The module rows: this executable is there under its real path, loaded
 * where the loader put it, with the build-id its file carries. */
static void
test_modules (void)
{
  vs_unwind_init ();
  vs_queue_init (&queue, 1024);
  uint64_t h = chain_a ();
  g_assert_cmpuint (h, !=, 0);
  Trace t = { 0 };
  write_trace (&t, h, h);

  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  g_assert_cmpint (n, >, 0);
  exe[n] = '\0';

  /* The build-id as the file on disk says (libdwelf reads the ELF). */
  elf_version (EV_CURRENT);
  int fd = open (exe, O_RDONLY);
  Elf *elf = elf_begin (fd, ELF_C_READ, NULL);
  const void *id = NULL;
  ssize_t idlen = dwelf_elf_gnu_build_id (elf, &id);
  g_assert_cmpint (idlen, >, 0);
  GString *hex = g_string_new (NULL);
  for (ssize_t i = 0; i < idlen; i++)
    g_string_append_printf (hex, "%02x", ((const unsigned char *)id)[i]);
  elf_end (elf);
  close (fd);

  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (t.path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT build_id, load_address, size FROM module"
                                       " WHERE path = ?",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_text (q, 1, exe, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_assert_cmpstr ((const char *)sqlite3_column_text (q, 0), ==, hex->str);
  g_assert_cmpint (sqlite3_column_int64 (q, 2), >, 0);
  sqlite3_finalize (q);
  /* libc is a module too, and every native frame lies in a module. */
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT count(*) FROM module WHERE path LIKE"
                                       " '%/libc.so.6'",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (q, 0), ==, 1);
  sqlite3_finalize (q);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT count(*) FROM frame WHERE kind = 1"
                                       " AND module_id IS NULL",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (q, 0), ==, 0);
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_string_free (hex, TRUE);
  g_unlink (t.path);
  g_free (t.path);
  vs_queue_destroy (&queue);
}

/* Both failed allocations' stacks of a symbolized trace, one line per
 * frame (kind, function, file, line), for comparing two traces. */
static char *
describe_stacks (const char *path)
{
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q;
  g_assert_cmpint (
      sqlite3_prepare_v2 (db, "SELECT stack_id FROM failed_alloc ORDER BY ts", -1, &q, NULL), ==,
      SQLITE_OK);
  GString *out = g_string_new (NULL);
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      GArray *a = read_stack (db, sqlite3_column_int64 (q, 0));
      for (guint i = 0; i < a->len; i++)
        {
          Frame *f = &g_array_index (a, Frame, i);
          g_string_append_printf (out, "%d %s %s %" G_GINT64_FORMAT "\n", f->kind,
                                  f->function ? f->function : "-", f->file ? f->file : "-",
                                  f->line);
        }
      g_string_append (out, "--\n");
      free_frames (a);
    }
  sqlite3_finalize (q);
  sqlite3_close (db);
  return g_string_free (out, FALSE);
}

/* Symbolizes a new copy of the raw trace raw and describes its stacks. */
static char *
symbolize_copy (const char *raw, gsize raw_len)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("test-stacks-XXXXXX.db", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (path, raw, (gssize)raw_len, NULL));
  char err[512];
  g_assert_cmpint (vs_symbolize_file (path, NULL, err, sizeof err), ==, 0);
  char *described = describe_stacks (path);
  g_unlink (path);
  return described;
}

/* The count of rows of the cache file's table `entry`, -1 when it is
 * not a readable cache. */
static int
cache_entries (const char *file)
{
  sqlite3 *db;
  sqlite3_stmt *q = NULL;
  int n = -1;
  if (sqlite3_open_v2 (file, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
      && sqlite3_prepare_v2 (db, "SELECT count(*) FROM entry", -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW)
    n = sqlite3_column_int (q, 0);
  sqlite3_finalize (q);
  sqlite3_close (db);
  return n;
}

/* Symbolizing keeps what it found per build-id: a second trace of the
 * same program is symbolized from the cache with the same frames (inline
 * ones included), and the cache is what is read — an entry edited in it
 * comes back; a cache folder that cannot be made changes nothing. */
static void
test_symbol_cache (void)
{
  /* Three copies of one raw trace (the unwinder sends a stack once per
   * process, so a copy is how the same stacks reach a second trace). */
  vs_unwind_init ();
  vs_queue_init (&queue, 1024);
  uint64_t ha = chain_a ();
  uint64_t hi = inline_caller ();
  g_assert_cmpuint (ha, !=, 0);
  g_assert_cmpuint (hi, !=, 0);
  Trace t[3] = { 0 };
  write_trace (&t[0], ha, hi);
  vs_queue_destroy (&queue);
  g_autofree char *raw = NULL;
  gsize raw_len = 0;
  g_assert_true (g_file_get_contents (t[0].path, &raw, &raw_len, NULL));
  for (int i = 1; i < 3; i++)
    {
      int fd = g_file_open_tmp ("test-stacks-XXXXXX.db", &t[i].path, NULL);
      g_assert_cmpint (fd, >=, 0);
      close (fd);
      g_assert_true (g_file_set_contents (t[i].path, raw, (gssize)raw_len, NULL));
    }
  g_autofree char *dir = g_dir_make_tmp ("test-symbol-cache-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *cache = g_build_filename (dir, "symbols", NULL);
  vs_symbol_cache_set_dir (cache);

  char err[512];
  g_assert_cmpint (vs_symbolize_file (t[0].path, NULL, err, sizeof err), ==, 0);
  g_autofree char *first = describe_stacks (t[0].path);
  g_assert_nonnull (strstr (first, "chain_b"));
  g_assert_nonnull (strstr (first, "inlined_step"));

  /* This executable's addresses in the cache, by its build-id. */
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (t[0].path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT m.build_id FROM module m JOIN frame f ON"
                                       " f.module_id = m.id WHERE f.function = 'chain_b'",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_autofree char *build_id = g_strdup ((const char *)sqlite3_column_text (q, 0));
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_autofree char *file = g_build_filename (cache, "symbols.db", NULL);
  g_assert_cmpint (sqlite3_open_v2 (file, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT count(*) FROM entry WHERE module = ?1"
                                       " AND function = 'chain_b'",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_text (q, 1, build_id, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (q, 0), >=, 1);
  sqlite3_finalize (q);
  sqlite3_close (db);

  /* The same stacks again, from the cache, for the build-id and not the
   * path: the modules of this copy are named where no file is (a stripped
   * copy of a binary keeps its build-id, and gets the names its build
   * with symbols gave, as debuginfod would give them). */
  g_assert_cmpint (sqlite3_open_v2 (t[1].path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "UPDATE module SET path = path || '-moved'", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);
  g_assert_cmpint (vs_symbolize_file (t[1].path, NULL, err, sizeof err), ==, 0);
  g_autofree char *second = describe_stacks (t[1].path);
  g_assert_cmpstr (second, ==, first);

  /* An edited entry comes back: the cache is read, the module is not. */
  g_assert_cmpint (sqlite3_open_v2 (file, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "UPDATE entry SET function = 'chain_b_from_the_cache'"
                                 " WHERE function = 'chain_b'",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_changes (db), ==, 1);
  sqlite3_close (db);
  g_assert_cmpint (vs_symbolize_file (t[2].path, NULL, err, sizeof err), ==, 0);
  g_autofree char *third = describe_stacks (t[2].path);
  g_assert_nonnull (strstr (third, " chain_b_from_the_cache "));
  g_assert_null (strstr (third, " chain_b "));

  /* A cache file that is not a database: symbolized all the same, and
   * the file made anew. */
  int kept = cache_entries (file);
  g_assert_cmpint (kept, >, 0);
  g_assert_true (g_file_set_contents (file, "not a database, not a cache either\n", -1, NULL));
  g_autofree char *after_garbage = symbolize_copy (raw, raw_len);
  g_assert_cmpstr (after_garbage, ==, first);
  g_assert_cmpint (cache_entries (file), ==, kept);

  /* A cache from a newer version is neither read nor written. */
  g_assert_cmpint (sqlite3_open_v2 (file, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  g_assert_cmpint (
      sqlite3_exec (db,
                    "UPDATE entry SET function = 'chain_b_from_the_cache'"
                    " WHERE function = 'chain_b';"
                    " DELETE FROM entry WHERE function IS NOT 'chain_b_from_the_cache';"
                    " DELETE FROM address WHERE NOT EXISTS (SELECT 1 FROM entry e"
                    " WHERE e.module = address.module AND e.offset = address.offset);"
                    " PRAGMA user_version = 2",
                    NULL, NULL, NULL),
      ==, SQLITE_OK);
  sqlite3_close (db);
  g_autofree char *newer = symbolize_copy (raw, raw_len);
  g_assert_cmpstr (newer, ==, first);
  g_assert_cmpint (cache_entries (file), ==, 1);
  g_unlink (file);

  /* A cache folder that cannot be made: symbolized all the same. */
  g_autofree char *blocked = g_build_filename (dir, "a-file", NULL);
  g_assert_true (g_file_set_contents (blocked, "", 0, NULL));
  g_autofree char *unusable = g_build_filename (blocked, "symbols", NULL);
  vs_symbol_cache_set_dir (unusable);
  Trace u = { 0 };
  int fd = g_file_open_tmp ("test-stacks-XXXXXX.db", &u.path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (u.path, raw, (gssize)raw_len, NULL));
  g_assert_cmpint (vs_symbolize_file (u.path, NULL, err, sizeof err), ==, 0);
  g_autofree char *fourth = describe_stacks (u.path);
  g_assert_cmpstr (fourth, ==, first);
  g_unlink (u.path);
  g_free (u.path);
  g_unlink (blocked);

  vs_symbol_cache_set_dir (NULL);
  for (int i = 0; i < 3; i++)
    {
      g_unlink (t[i].path);
      g_free (t[i].path);
    }
  g_unlink (file);
  g_rmdir (cache);
  g_rmdir (dir);
}

/* Capturing is off when asked to be (the fork child does so). */
static void
test_disabled (void)
{
  vs_unwind_init ();
  vs_queue_init (&queue, 16);
  vs_stack_set_enabled (false);
  g_assert_cmpuint (chain_a (), ==, 0);
  g_assert_cmpuint (queue.count, ==, 0);
  vs_stack_set_enabled (true);
  vs_queue_destroy (&queue);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stacks/unwind-symbolize", test_unwind_symbolize);
  g_test_add_func ("/stacks/modules", test_modules);
  g_test_add_func ("/stacks/disabled", test_disabled);
  g_test_add_func ("/stacks/symbol-cache", test_symbol_cache);
  return g_test_run ();
}
