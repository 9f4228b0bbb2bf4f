/* SPDX-License-Identifier: MIT */
/* test-deep-stacks.c — readers stay bounded on the deepest stacks a trace
 * may hold: LEAVES leaf stacks sharing one chain of frames, each stack
 * VS_TRACE_MAX_STACK_DEPTH frames deep, each with a 1 MiB block live at
 * the end, written through the writer and finalized
 * (bench/vs-gen-deep-stacks).
 *
 * - the stacks share the chain's nodes in the stack cache (one node per
 *   trie node, not per stack and frame);
 * - the viewer's top-down trees have one node per trie node reached;
 * - `vramscope report` (the diagnosis) and `vramscope export --format
 *   folded` stay within a bound proportional to the file (peak RSS of the
 *   command, read with wait4()), where resolving each stack on its own
 *   took memory proportional to LEAVES × depth (over 300 MB here); the
 *   folded lines are all there, each with every frame.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-trace-writer.h"

#define LEAVES 16
#define DEPTH VS_TRACE_MAX_STACK_DEPTH
#define MiB INT64_C (1048576)

typedef struct
{
  char *dir;
  char *path;
  gint64 file_bytes;
  VsTrace *trace; /* fx_setup_leaves: the trace, opened */
  GArray *blocks; /* fx_setup_leaves: its leaked blocks, one per leaf */
} Fx;

/* The trace, written once for every test. */
static Fx fx_trace;

static void
fx_setup (Fx *fx, gconstpointer data)
{
  *fx = fx_trace;
}

static void
fx_teardown (Fx *fx, gconstpointer data)
{
  g_clear_pointer (&fx->blocks, g_array_unref);
  g_clear_pointer (&fx->trace, vs_trace_free);
}

static void
trace_make (Fx *fx)
{
  GStatBuf st;

  fx->dir = g_dir_make_tmp ("vs-deep-XXXXXX", NULL);
  g_assert_nonnull (fx->dir);
  fx->path = g_build_filename (fx->dir, "deep.db", NULL);
  /* Written by bench/vs-gen-deep-stacks through the writer; this process
   * stays small, as a command's peak RSS counts the memory of the process
   * it was forked from. */
  {
    g_autofree char *leaves = g_strdup_printf ("%d", LEAVES);
    const char *argv[] = { g_getenv ("VS_GEN_DEEP"), "-l", leaves, "-o", fx->path, NULL };
    int status;

    g_assert_nonnull (argv[0]);
    g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                                 &status, NULL));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  g_assert_cmpint (g_stat (fx->path, &st), ==, 0);
  fx->file_bytes = st.st_size;
}

/* Removes the trace's folder and all in it. */
static void
trace_remove (Fx *fx)
{
  g_autoptr (GDir) d = g_dir_open (fx->dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (fx->dir, name, NULL);

      g_unlink (p);
    }
  g_rmdir (fx->dir);
  g_free (fx->dir);
  g_free (fx->path);
}

/* The blocks live at the end: one per leaf. */
static GArray *
leaf_blocks (VsTrace *trace)
{
  g_autoptr (GError) error = NULL;
  GArray *blocks = vs_leaked_blocks (trace, 0, 0, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (blocks->len, ==, LEAVES);
  return blocks;
}

/* fx_setup, then the trace opened with its leaked blocks. */
static void
fx_setup_leaves (Fx *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  fx_setup (fx, data);
  fx->trace = vs_trace_open (fx->path, &error);
  g_assert_no_error (error);
  fx->blocks = leaf_blocks (fx->trace);
}

static void
test_shared_nodes (Fx *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const VsStackInfo *chain = NULL;

  for (guint i = 0; i < fx->blocks->len; i++)
    {
      const VsStackInfo *s
          = vs_stack_get (fx->trace, g_array_index (fx->blocks, VsBlock, i).stack_id, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (s->depth, ==, DEPTH);
      g_assert_cmpstr (s->site, ==, s->top_frame);
      g_assert_true (g_str_has_prefix (s->top_frame, "/home/user/proj/leaf.py:"));
      /* Every leaf's outer frames are the same node. */
      if (chain == NULL)
        chain = s->parent;
      g_assert_true (s->parent == chain);
    }
  g_assert_cmpuint (chain->depth, ==, DEPTH - 1);
}

/* Nodes in the tree under n, n included. */
static guint64
tree_size (const VsTreeNode *n)
{
  g_autoptr (GPtrArray) todo = g_ptr_array_new ();
  guint64 count = 0;

  g_ptr_array_add (todo, (gpointer)n);
  while (todo->len > 0)
    {
      const VsTreeNode *t = g_ptr_array_steal_index_fast (todo, todo->len - 1);

      count++;
      for (guint i = 0; i < t->children->len; i++)
        g_ptr_array_add (todo, g_ptr_array_index (t->children, i));
    }
  return count;
}

static void
test_top_down_trees (Fx *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  for (int user_only = 0; user_only <= 1; user_only++)
    {
      g_autoptr (VsTreeNode) root
          = vs_tree_build_filtered (fx->trace, fx->blocks, VS_TREE_TOP_DOWN, user_only, &error);
      const VsTreeNode *n = root;

      g_assert_no_error (error);
      /* The root, the chain, one node per leaf. */
      g_assert_cmpuint (tree_size (root), ==, 1 + (DEPTH - 1) + LEAVES);
      g_assert_cmpint (root->total_bytes, ==, LEAVES * MiB);
      while (n->children->len == 1)
        n = g_ptr_array_index (n->children, 0);
      g_assert_cmpuint (n->children->len, ==, LEAVES);
      g_assert_cmpint (n->total_bytes, ==, LEAVES * MiB);
    }
}

/* Runs the command line argv, its output to out_path; returns its peak
 * resident set in bytes. */
static gint64
run_peak_rss (char **argv, const char *out_path)
{
  struct rusage ru;
  int status;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int fd = open (out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

      if (fd < 0 || dup2 (fd, 1) < 0)
        _exit (126);
      execv (argv[0], argv);
      _exit (127);
    }
  g_assert_cmpint (wait4 (pid, &status, 0, &ru), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  return (gint64)ru.ru_maxrss * 1024;
}

/* A command's memory: at most 64 MiB (the process, GLib and SQLite's
 * caches) plus 8 times the file. */
static void
assert_bounded (gint64 rss, gint64 file_bytes)
{
  g_test_message ("peak RSS %" G_GINT64_FORMAT " bytes, file %" G_GINT64_FORMAT " bytes", rss,
                  file_bytes);
  g_assert_cmpint (rss, <=, 64 * MiB + 8 * file_bytes);
}

static void
test_commands_bounded (Fx *fx, gconstpointer data)
{
  const char *cli = g_getenv ("VS_CLI");
  g_autofree char *text = g_build_filename (fx->dir, "report.txt", NULL);
  g_autofree char *folded = g_build_filename (fx->dir, "peak.folded", NULL);
  char *report[] = { (char *)cli, "report", fx->path, NULL };
  char *export[] = { (char *)cli, "export", fx->path, "--format", "folded", "-o", folded, NULL };
  g_autofree char *out = NULL;
  g_auto (GStrv) lines = NULL;
  gsize len;

  g_assert_nonnull (cli);
  assert_bounded (run_peak_rss (report, text), fx->file_bytes);
  assert_bounded (run_peak_rss (export, text), fx->file_bytes);
  g_assert_true (g_file_get_contents (folded, &out, &len, NULL));
  lines = g_strsplit (out, "\n", -1);
  /* One line per leaf (and the empty string after the last newline),
   * each with every frame and its leaf's bytes. */
  g_assert_cmpuint (g_strv_length (lines), ==, LEAVES + 1);
  for (guint i = 0; i < LEAVES; i++)
    {
      guint separators = 0;

      for (const char *p = lines[i]; *p; p++)
        separators += *p == ';';
      g_assert_cmpuint (separators, ==, DEPTH - 1);
      g_assert_true (g_str_has_suffix (lines[i], " 1048576"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The commands first, while this process is small (see trace_make). */
  g_test_add ("/deep-stacks/commands-bounded", Fx, NULL, fx_setup, test_commands_bounded,
              fx_teardown);
  g_test_add ("/deep-stacks/shared-nodes", Fx, NULL, fx_setup_leaves, test_shared_nodes,
              fx_teardown);
  g_test_add ("/deep-stacks/top-down-trees", Fx, NULL, fx_setup_leaves, test_top_down_trees,
              fx_teardown);
  int rc;

  trace_make (&fx_trace);
  rc = g_test_run ();
  trace_remove (&fx_trace);
  return rc;
}
