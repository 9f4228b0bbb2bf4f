/* SPDX-License-Identifier: MIT */
/* vs-cmd-diff.c — `vramscope diff A B [--format text|csv|json] [--limit N]`:
 * two traces side by side (vs_diff()): peaks, memory by role, bytes per
 * user site at the peak, fragmentation, failures and findings, with the
 * delta B − A; text coloured and paged on a terminal, followed by what
 * differs between the runs (vs_compare_differences(): GPUs, allocator
 * settings, programs).
 *
 * With more traces (`diff A B C…`, or `--baseline A B C…`), each is
 * compared with the baseline (the first, or --baseline): text gives one
 * section per trace, CSV and JSON the rows of every comparison led by a
 * column `trace` naming the trace compared.  Every trace is opened before
 * anything is printed.  Bad input is one line on stderr and status 1;
 * usage errors status 2.
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
  g_autofree char *baseline = NULL;
  gint limit = 20, width = 0;
  gboolean full_paths = FALSE;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (the default), csv or json", "FORMAT" },
    { "baseline", 0, 0, G_OPTION_ARG_FILENAME, &baseline,
      "Compare every trace given with this one (default: the first given)", "A.db" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit,
      "Compare the N largest user sites of each peak (default 20; 0: all)", "N" },
    { "full-paths", 0, 0, G_OPTION_ARG_NONE, &full_paths, "Whole paths in site names", NULL },
    VS_CLI_WIDTH_ENTRY (width),
    VS_CLI_COLOR_ENTRY (color),
    VS_CLI_OPERANDS_ENTRIES (rest),
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GPtrArray) traces = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_trace_free);
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_table_free);
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean csv, json;
  int colored;

  if (vs_cli_parse_options ("diff", "A B [C…]",
                            "Compare two vramscope traces: peaks, memory by role, bytes per "
                            "user site at the peak, fragmentation, failures and findings.\n"
                            "With more, compare each with the first (or --baseline).",
                            "A, B… are traces or PyTorch snapshots (.pickle).\n\n"
                            "Examples:\n"
                            "  vramscope diff fp32.db bf16.db\n"
                            "  vramscope diff before.pickle after.pickle --format csv\n"
                            "  vramscope diff run-*.db --baseline run-0.db\n",
                            entries, &argc, &argv, usage_line)
      != 0)
    return 2;
  /* The baseline first, then every other trace once. */
  if (baseline != NULL)
    g_ptr_array_add (names, baseline);
  for (guint i = 0; rest != NULL && rest[i] != NULL; i++)
    if (baseline == NULL || strcmp (rest[i], baseline) != 0)
      g_ptr_array_add (names, rest[i]);
  if (names->len < 2)
    return vs_cli_usage_error ("diff", usage_line, "expected two trace files");
  if (!vs_cli_parse_format (format, &csv, &json))
    return vs_cli_usage_error ("diff", usage_line, "--format must be text, csv or json");
  colored = vs_cli_color_choice (color);
  if (colored < 0)
    return vs_cli_usage_error ("diff", usage_line, "--color must be auto, always or never");
  if (limit < 0)
    return vs_cli_usage_error ("diff", usage_line, "--limit must be 0 (all) or more");
  if (width < 0 || (width > 0 && width < 40))
    return vs_cli_usage_error ("diff", usage_line, "--width must be at least 40");

  for (guint i = 0; i < names->len; i++)
    {
      VsTrace *t = vs_cli_open_trace (g_ptr_array_index (names, i), &error);

      if (t == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      vs_stack_set_full_paths (t, full_paths);
      g_ptr_array_add (traces, t);
    }
  for (guint i = 1; i < traces->len; i++)
    {
      g_autoptr (GArray) rows = vs_diff (g_ptr_array_index (traces, 0),
                                         g_ptr_array_index (traces, i), (guint)limit, &error);

      if (rows == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      if (!csv && !json)
        {
          g_autoptr (GString) text = g_string_new (NULL);

          if (i > 1)
            g_string_append (out, "\n");
          g_autoptr (GPtrArray) differences = vs_compare_differences (
              g_ptr_array_index (traces, 0), g_ptr_array_index (traces, i));

          vs_diff_write_text (rows, g_ptr_array_index (names, 0), g_ptr_array_index (names, i),
                              vs_cli_text_width (width), text);
          /* GPUs, allocator settings or programs that differ. */
          vs_compare_write_differences (differences, vs_cli_text_width (width), text);
          if (colored)
            vs_cli_colorize (text, VS_CLI_TEXT_DIFF);
          g_string_append_len (out, text->str, (gssize)text->len);
        }
      else
        g_ptr_array_add (tables, vs_diff_table (rows));
    }
  if (!csv && !json)
    return vs_cli_emit (out->str, out->len, "comparison");
  {
    /* Two traces: the table as it always was; more: each row says which
     * trace the baseline was compared with. */
    g_autoptr (VsTable) t
        = tables->len == 1
              ? g_steal_pointer (&g_ptr_array_index (tables, 0))
              : vs_table_concat ((VsTable *const *)tables->pdata,
                                 (const char *const *)names->pdata + 1, tables->len, "trace");

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
