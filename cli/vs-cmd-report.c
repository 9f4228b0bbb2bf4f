/* vs-cmd-report.c — `vramscope report FILE [OPTIONS] [REPORT]`.
 *
 * Parses the options, opens the trace, builds the report with
 * vs_report_build() and prints it as text (the default) or CSV; with no
 * REPORT, the diagnosis.  Text fits the terminal: at most --limit rows
 * (20 by default; CSV gives all) narrowed to its width, peak and leaks by
 * site (CSV: by stack, as the contract says) and stacks showing the
 * user's own frames.  Any failure is one line on stderr: status 2 for a
 * usage error, 1 for a trace that cannot be read or a device or allocator
 * it does not have.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

static const char usage_line[]
    = "usage: vramscope report FILE [--format text|csv] [--device N] [--allocator NAME] "
      "[--limit N] [--by site|stack] [--full-paths] [--full-stacks] [--width N] "
      "[--buckets N] [--from NS] [--to NS] [REPORT]\n";

guint
vs_cli_text_width (gint requested)
{
  struct winsize ws;
  const char *columns = g_getenv ("COLUMNS");

  if (requested > 0)
    return (guint)requested;
  if (isatty (STDOUT_FILENO) && ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  if (columns != NULL && atoi (columns) > 0)
    return (guint)atoi (columns);
  return 100;
}

static int
usage_error (const char *message)
{
  fprintf (stderr, "vramscope report: %s\n", message);
  fputs (usage_line, stderr);
  return 2;
}

int
vs_cmd_report (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *allocator = NULL;
  g_autofree char *device_arg = NULL, *from_arg = NULL, *to_arg = NULL;
  gint64 device = 0, from = 0, to = 0;
  gint buckets = 100, limit = -1, width = 0;
  g_autofree char *by = NULL;
  gboolean full_paths = FALSE, full_stacks = FALSE;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      "Output format: text (aligned, human units; the default) or csv", "FORMAT" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device_arg,
      "Only this device (its index, as in the device column)", "N" },
    { "allocator", 0, 0, G_OPTION_ARG_STRING, &allocator,
      "Only this allocator (all, pytorch, pool:0x…, nvtx:<heap>)", "NAME" },
    { "buckets", 0, 0, G_OPTION_ARG_INT, &buckets, "timeline: number of buckets (default 100)",
      "N" },
    { "from", 0, 0, G_OPTION_ARG_STRING, &from_arg,
      "timeline: start, ns since the trace's start (default 0)", "NS" },
    { "to", 0, 0, G_OPTION_ARG_STRING, &to_arg,
      "timeline: end, ns since the trace's start (default: the trace's end)", "NS" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit,
      "At most N rows (text: 20 by default; csv: all; 0: all)", "N" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &by,
      "peak, leaks: one row per site or per stack (text: site; csv: stack)", "site|stack" },
    { "full-paths", 0, 0, G_OPTION_ARG_NONE, &full_paths,
      "Whole paths (default: packages' files relative to the package, the program's to its "
      "working directory)",
      NULL },
    { "full-stacks", 0, 0, G_OPTION_ARG_NONE, &full_stacks,
      "Text: every frame of a stack (default: the user's own frames)", NULL },
    { "width", 0, 0, G_OPTION_ARG_INT, &width,
      "Text: fit lines to N columns (default: the terminal's width, else 100)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsTable) table = NULL;
  g_autoptr (GString) out = NULL;
  g_autoptr (GString) summary = g_string_new ("Reports:");
  VsReportOptions opts;
  gboolean csv;
  const char *file, *report;

  for (const char *const *n = vs_report_names (); *n != NULL; n++)
    g_string_append_printf (summary, "\n  %-14s %s", *n, vs_report_describe (*n));
  g_string_append (summary, "\n\nTimes are ns since the trace's start; in CSV an empty"
                            " field means the trace cannot know the value.");
  context = g_option_context_new ("FILE [REPORT]");
  g_option_context_set_summary (context, "Print a report on a vramscope trace.");
  g_option_context_set_description (context, summary->str);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (error->message);
  if (rest == NULL || g_strv_length (rest) < 1 || g_strv_length (rest) > 2)
    return usage_error ("expected a trace file and a report name");
  file = rest[0];
  report = rest[1] != NULL ? rest[1] : "diagnose";
  if (vs_report_describe (report) == NULL)
    {
      g_autofree char *names = g_strjoinv (", ", (char **)vs_report_names ());
      g_autofree char *msg = g_strdup_printf ("unknown report '%s' (reports: %s)", report, names);
      return usage_error (msg);
    }
  if (format == NULL || strcmp (format, "text") == 0)
    csv = FALSE;
  else if (strcmp (format, "csv") == 0)
    csv = TRUE;
  else
    return usage_error ("--format must be text or csv");
  if (buckets < 1 || buckets > 1000000)
    return usage_error ("--buckets must be between 1 and 1000000");
  /* Parsed here, not by GOption, whose INT64_MIN would read as "not
   * given": whether an option was given is told by its string, and times
   * stop short of INT64_MIN, which the library takes for "unknown". */
  {
    const char *names[] = { "--device", "--from", "--to" };
    const char *args[] = { device_arg, from_arg, to_arg };
    gint64 *values[] = { &device, &from, &to };

    for (guint i = 0; i < G_N_ELEMENTS (names); i++)
      if (args[i] != NULL
          && !g_ascii_string_to_signed (args[i], 10, i == 0 ? G_MININT64 : G_MININT64 + 1,
                                        G_MAXINT64, values[i], NULL))
        {
          g_autofree char *msg
              = g_strdup_printf ("%s wants an integer%s, not '%s'", names[i],
                                 i == 0 ? "" : " above -9223372036854775808", args[i]);
          return usage_error (msg);
        }
  }
  if (from_arg != NULL && to_arg != NULL && from >= to)
    return usage_error ("--from must be before --to");
  if (limit < -1)
    return usage_error ("--limit must be 0 (all) or more");
  if (width < 0 || (width > 0 && width < 40))
    return usage_error ("--width must be at least 40");
  if (by != NULL && strcmp (by, "site") != 0 && strcmp (by, "stack") != 0)
    return usage_error ("--by must be site or stack");

  trace = vs_trace_open (file, &error);
  if (trace == NULL)
    {
      fprintf (stderr, "vramscope: %s\n", error->message);
      return 1;
    }

  vs_report_options_init (&opts);
  if (device_arg != NULL)
    {
      const VsDeviceInfo *d = vs_trace_find_device_by_idx (trace, device);

      if (d == NULL)
        {
          fprintf (stderr, "vramscope: %s has no device %" G_GINT64_FORMAT "\n", file, device);
          return 1;
        }
      opts.device_id = d->id;
    }
  opts.allocator = allocator;
  opts.buckets = (guint)buckets;
  opts.from_ns = from_arg != NULL ? from : VS_UNKNOWN;
  opts.to_ns = to_arg != NULL ? to : VS_UNKNOWN;
  opts.by_site = by != NULL ? strcmp (by, "site") == 0 : !csv;
  opts.user_stacks = !csv && !full_stacks;
  vs_stack_set_full_paths (trace, full_paths);

  out = g_string_new (NULL);
  if (!csv && strcmp (report, "diagnose") == 0)
    {
      g_autoptr (VsDiagnosis) dx = NULL;

      /* Checks the device and allocator options as every report does. */
      table = vs_report_build (trace, "summary", &opts, &error);
      dx = table != NULL ? vs_diagnose (trace, opts.device_id, &error) : NULL;
      if (dx == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      vs_diagnosis_write_text (trace, dx, MIN (vs_cli_text_width (width), 100), out);
    }
  else
    {
      table = vs_report_build (trace, report, &opts, &error);
      if (table == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      if (csv)
        {
          if (limit > 0 && (guint)limit < vs_table_get_n_rows (table))
            vs_table_truncate (table, (guint)limit);
          vs_table_write_csv (table, out);
        }
      else
        vs_table_write_text_fitted (table, out, limit < 0 ? 20 : (guint)limit,
                                    vs_cli_text_width (width));
    }
  if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the report: %s\n", g_strerror (errno));
      return 1;
    }
  return 0;
}
