/* vs-cmd-diff.c — `vramscope diff A B [--format text|csv] [--limit N]`:
 * two traces side by side (vs_diff()): peaks, memory by role, bytes per
 * user site at the peak, fragmentation, failures and findings, with the
 * delta B − A.  Bad input is one line on stderr and status 1; usage
 * errors status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

static const char usage_line[]
    = "usage: vramscope diff A.db B.db [--format text|csv] [--limit N] [--full-paths] "
      "[--width N]\n";

static int
usage_error (const char *message)
{
  fprintf (stderr, "vramscope diff: %s\n", message);
  fputs (usage_line, stderr);
  return 2;
}

int
vs_cmd_diff (int argc, char **argv)
{
  g_autofree char *format = NULL;
  gint limit = 20, width = 0;
  gboolean full_paths = FALSE;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (the default) or csv", "FORMAT" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit,
      "Compare the N largest user sites of each peak (default 20; 0: all)", "N" },
    { "full-paths", 0, 0, G_OPTION_ARG_NONE, &full_paths, "Whole paths in site names", NULL },
    { "width", 0, 0, G_OPTION_ARG_INT, &width,
      "Text: fit lines to N columns (default: the terminal's width, else 100)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("A B");
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) a = NULL;
  g_autoptr (VsTrace) b = NULL;
  g_autoptr (GArray) rows = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean csv;

  g_option_context_set_summary (context,
                                "Compare two vramscope traces: peaks, memory by role, bytes per "
                                "user site at the peak, fragmentation, failures and findings.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (error->message);
  if (rest == NULL || g_strv_length (rest) != 2)
    return usage_error ("expected two trace files");
  if (format == NULL || strcmp (format, "text") == 0)
    csv = FALSE;
  else if (strcmp (format, "csv") == 0)
    csv = TRUE;
  else
    return usage_error ("--format must be text or csv");
  if (limit < 0)
    return usage_error ("--limit must be 0 (all) or more");
  if (width < 0 || (width > 0 && width < 40))
    return usage_error ("--width must be at least 40");

  a = vs_trace_open (rest[0], &error);
  if (a != NULL)
    b = vs_trace_open (rest[1], &error);
  if (a == NULL || b == NULL)
    {
      fprintf (stderr, "vramscope: %s\n", error->message);
      return 1;
    }
  vs_stack_set_full_paths (a, full_paths);
  vs_stack_set_full_paths (b, full_paths);
  rows = vs_diff (a, b, (guint)limit, &error);
  if (rows == NULL)
    {
      fprintf (stderr, "vramscope: %s\n", error->message);
      return 1;
    }
  if (csv)
    {
      g_autoptr (VsTable) t = vs_diff_table (rows);

      vs_table_write_csv (t, out);
    }
  else
    vs_diff_write_text (rows, rest[0], rest[1], vs_cli_text_width (width), out);
  if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the comparison: %s\n", g_strerror (errno));
      return 1;
    }
  return 0;
}
