/* SPDX-License-Identifier: MIT */
/* vs-cli-main.c — the `vramscope` command: dispatches to its subcommands.
 *
 * Exit status: a subcommand's own (record returns the program's), 2 for a
 * usage error, 1 for bad input.  `view` hands over to the separate GTK
 * binary vramscope-view, so this binary needs no GTK and, with GLib linked
 * statically, runs on GPU servers that have no GLib.
 */
#include "vs-config.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "vs-cli.h"

static const char usage_line[]
    = "usage: vramscope {record|recover|import|report|diff|export|whatif|predict|view|help} "
      "[ARGS...]  (vramscope help for more)\n";

static const char help_text[]
    = "vramscope " VS_VERSION " — GPU memory profiler\n"
      "\n"
      "  vramscope record [-o FILE] [--force] [OPTIONS] -- PROGRAM [ARGS...]\n"
      "      run PROGRAM with the collector and write a trace\n"
      "  vramscope recover SPOOL_DIR -o FILE [--force]\n"
      "      write the trace a killed record left in its spool directory\n"
      "  vramscope import SNAPSHOT.pickle -o FILE [--force]\n"
      "      turn a PyTorch memory snapshot into a trace\n"
      "  vramscope report FILE [REPORT] [--format text|csv|json] [--device N]\n"
      "                   [--allocator NAME] [--from TIME] [--to TIME]\n"
      "      print a report: diagnose (the default), summary, peak, leaks, timeline,\n"
      "      oom, fragmentation, kernels, ranges, roles, growth, meta, ranks\n"
      "      (vramscope report --help for the options)\n"
      "  vramscope report FILE... [ranks]\n"
      "      the ranks of a run compared (run-*.db): the worst rank, the ranks that\n"
      "      failed; diagnose adds the diagnosis of the rank to look at first\n"
      "  vramscope diff A.db B.db... [--baseline A.db] [--format text|csv|json]\n"
      "      traces side by side: peaks, roles, sites, fragmentation, failures;\n"
      "      more than two: each compared with the first (or --baseline)\n"
      "  vramscope export FILE --format perfetto|snapshot|folded [-o OUT]\n"
      "      write the trace for Perfetto, PyTorch's memory_viz or flame graphs\n"
      "  vramscope whatif FILE [--alloc-conf CONF]... [--limit BYTES|FRACTION]\n"
      "                  [--format text|csv|json]\n"
      "      replay PyTorch's caching allocator under other settings: reserved peak\n"
      "      and failed requests each would have given\n"
      "  vramscope predict RUN@B1 [RUN2@B2] [--batch N]... [--limit BYTES|FRACTION]\n"
      "                   [--format text|csv|json]\n"
      "      predict the peaks at other batch sizes and the largest batch that fits\n"
      "  vramscope view [FILE]\n"
      "      open the desktop viewer on a trace or a PyTorch snapshot (.pickle)\n"
      "  vramscope --version\n"
      "\n"
      "Every command that reads a trace also takes a PyTorch snapshot (.pickle),\n"
      "imported once into $XDG_CACHE_HOME/vramscope (nothing is written beside it).\n"
      "\n"
      "Examples:\n"
      "  vramscope record -o run.db -- python train.py\n"
      "  vramscope report run.db                 the diagnosis\n"
      "  vramscope report snapshot.pickle peak\n"
      "  vramscope whatif run.db                 the allocator settings worth trying\n"
      "  vramscope view run.db\n";

/* Execs vramscope-view from next to this executable, from the build tree's
 * gui/ folder, or from PATH.  Returns only on failure. */
static int
run_view (int argc, char **argv)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr (GPtrArray) args = g_ptr_array_new ();

  g_ptr_array_add (args, (char *)"vramscope-view");
  for (int i = 1; i < argc; i++)
    g_ptr_array_add (args, argv[i]);
  g_ptr_array_add (args, NULL);

  if (self != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self);
      g_autofree char *beside = g_build_filename (dir, "vramscope-view", NULL);
      g_autofree char *build = g_build_filename (dir, "..", "gui", "vramscope-view", NULL);

      if (g_file_test (beside, G_FILE_TEST_IS_EXECUTABLE))
        execv (beside, (char **)args->pdata);
      if (g_file_test (build, G_FILE_TEST_IS_EXECUTABLE))
        execv (build, (char **)args->pdata);
    }
  execvp ("vramscope-view", (char **)args->pdata);
  fprintf (stderr,
           "vramscope: cannot start the viewer vramscope-view: %s "
           "(this build may not include the viewer)\n",
           g_strerror (errno));
  return 1;
}

static int run_command (int argc, char **argv);

/* Runs the command; output that could not be written (a full disk, a
 * closed pipe) fails the command even when it succeeded otherwise. */
int
main (int argc, char **argv)
{
  int status = run_command (argc, argv);

  if ((fflush (stdout) != 0 || ferror (stdout)) && status == 0)
    {
      fprintf (stderr, "vramscope: cannot write the output: %s\n", g_strerror (errno));
      status = 1;
    }
  return status;
}

static int
run_command (int argc, char **argv)
{
  const char *cmd;

  /* GOption's help speaks the user's charset ("[OPTION…]", not "?"). */
  setlocale (LC_ALL, "");
  g_set_prgname ("vramscope");
  if (argc < 2)
    {
      fputs (usage_line, stderr);
      return 2;
    }
  cmd = argv[1];
  if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "version") == 0)
    {
      printf ("vramscope %s\n", VS_VERSION);
      return 0;
    }
  if (strcmp (cmd, "help") == 0 || strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0)
    {
      fputs (help_text, stdout);
      return 0;
    }
  if (strcmp (cmd, "report") == 0)
    return vs_cmd_report (argc - 1, argv + 1);
  if (strcmp (cmd, "diff") == 0)
    return vs_cmd_diff (argc - 1, argv + 1);
  if (strcmp (cmd, "whatif") == 0)
    return vs_cmd_whatif (argc - 1, argv + 1);
  if (strcmp (cmd, "predict") == 0)
    return vs_cmd_predict (argc - 1, argv + 1);
  if (strcmp (cmd, "view") == 0)
    return run_view (argc - 1, argv + 1);
  if (strcmp (cmd, "import") == 0)
    return vs_cmd_import (argc - 1, argv + 1);
  if (strcmp (cmd, "export") == 0)
    return vs_cmd_export (argc - 1, argv + 1);
  if (strcmp (cmd, "record") == 0)
    {
#ifdef VS_HAVE_RECORD
      return vs_cmd_record (argc - 1, argv + 1);
#else
      fputs ("vramscope: this build does not include the collector "
             "(record needs the CUDA Toolkit with CUPTI at build time)\n",
             stderr);
      return 2;
#endif
    }
  if (strcmp (cmd, "recover") == 0)
    {
#ifdef VS_HAVE_RECORD
      return vs_cmd_recover (argc - 1, argv + 1);
#else
      fputs ("vramscope: this build does not include the collector "
             "(recover needs the CUDA Toolkit with CUPTI at build time)\n",
             stderr);
      return 2;
#endif
    }
  fprintf (stderr, "vramscope: unknown command '%s'\n", cmd);
  fputs (usage_line, stderr);
  return 2;
}
