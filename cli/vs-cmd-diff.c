/* vs-cmd-diff.c — `vramscope diff A B [--format text|csv|json] [--limit N]`:
 * two traces side by side (vs_diff()): peaks, memory by role, bytes per
 * user site at the peak, fragmentation, failures and findings, with the
 * delta B − A; text coloured and paged on a terminal.  Bad input is one line on stderr and status 1; usage
 * errors status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

static const char usage_line[]
    = "usage: vramscope diff A.db B.db [--format text|csv|json] [--limit N] [--full-paths] "
      "[--width N] [--color auto|always|never]\n";

int
vs_cmd_diff (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *color = NULL;
  gint limit = 20, width = 0;
  gboolean full_paths = FALSE;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (the default), csv or json", "FORMAT" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit,
      "Compare the N largest user sites of each peak (default 20; 0: all)", "N" },
    { "full-paths", 0, 0, G_OPTION_ARG_NONE, &full_paths, "Whole paths in site names", NULL },
    { "width", 0, 0, G_OPTION_ARG_INT, &width,
      "Text: fit lines to N columns (default: the terminal's width, else 100)", "N" },
    { "color", 0, 0, G_OPTION_ARG_STRING, &color,
      "Text: colour on a terminal unless NO_COLOR is set (auto, the default), always or never",
      "WHEN" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) a = NULL;
  g_autoptr (VsTrace) b = NULL;
  g_autoptr (GArray) rows = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean csv, json;
  int colored;

  g_set_prgname ("vramscope diff");
  context = g_option_context_new ("A B");
  g_option_context_set_summary (context,
                                "Compare two vramscope traces: peaks, memory by role, bytes per "
                                "user site at the peak, fragmentation, failures and findings.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return vs_cli_usage_error ("diff", usage_line, error->message);
  if (rest == NULL || g_strv_length (rest) != 2)
    return vs_cli_usage_error ("diff", usage_line, "expected two trace files");
  csv = format != NULL && strcmp (format, "csv") == 0;
  json = format != NULL && strcmp (format, "json") == 0;
  if (format != NULL && !csv && !json && strcmp (format, "text") != 0)
    return vs_cli_usage_error ("diff", usage_line, "--format must be text, csv or json");
  colored = vs_cli_color_choice (color);
  if (colored < 0)
    return vs_cli_usage_error ("diff", usage_line, "--color must be auto, always or never");
  if (limit < 0)
    return vs_cli_usage_error ("diff", usage_line, "--limit must be 0 (all) or more");
  if (width < 0 || (width > 0 && width < 40))
    return vs_cli_usage_error ("diff", usage_line, "--width must be at least 40");

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
  if (!csv && !json)
    {
      vs_diff_write_text (rows, rest[0], rest[1], vs_cli_text_width (width), out);
      if (colored)
        vs_cli_colorize (out, VS_CLI_TEXT_DIFF);
      return vs_cli_emit (out->str, out->len, "comparison");
    }
  {
    g_autoptr (VsTable) t = vs_diff_table (rows);

    if (csv)
      vs_table_write_csv (t, out);
    else
      vs_table_write_json (t, "diff", out);
  }
  if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the comparison: %s\n", g_strerror (errno));
      return 1;
    }
  return 0;
}
