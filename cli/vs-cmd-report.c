/* SPDX-License-Identifier: MIT */
/* vs-cmd-report.c — `vramscope report FILE [OPTIONS] [REPORT]`.
 *
 * Parses the options, opens the trace, builds the report with
 * vs_report_build() and prints it as text (the default), CSV or JSON; with
 * no REPORT, the diagnosis.  FILE and REPORT come in either order.  Text
 * is coloured on a terminal (--color, NO_COLOR) and paged there
 * (vs-cli-output.c).  Text fits the terminal: at most --limit rows
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
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

static const char usage_line[]
    = "usage: vramscope report FILE... [REPORT] [--format text|csv|json] [--device N] "
      "[--allocator NAME] [--limit N] [--by site|stack] [--full-paths] [--full-stacks] "
      "[--width N] [--buckets N] [--from TIME] [--to TIME] [--color auto|always|never]\n";

/* The reports a time window applies to: the timeline covers it, peak
 * finds the peak inside it, leaks keeps the allocations made in it, oom
 * the failures in it, ranges the ranges entered in it. */
static const char *const windowed_reports[]
    = { "timeline", "peak", "leaks", "oom", "ranges", NULL };

int
vs_cmd_report (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *allocator = NULL;
  g_autofree char *color = NULL;
  g_autofree char *device_arg = NULL, *from_arg = NULL, *to_arg = NULL;
  gint64 device = 0, from = 0, to = 0;
  gint buckets = 100, limit = -1, width = 0;
  g_autofree char *by = NULL;
  gboolean full_paths = FALSE, full_stacks = FALSE;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      "Output format: text (aligned, human units; the default), csv or json", "FORMAT" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device_arg,
      "Only this device (its index, as in the device column)", "N" },
    VS_CLI_ALLOCATOR_ENTRY (allocator, ""),
    { "buckets", 0, 0, G_OPTION_ARG_INT, &buckets, "timeline: number of buckets (default 100)",
      "N" },
    { "from", 0, 0, G_OPTION_ARG_STRING, &from_arg,
      "timeline, peak, leaks, oom, ranges: start of the window since the trace's start: ns, or "
      "with a "
      "unit (850ms, 1.5s, 2m; default 0)",
      "TIME" },
    { "to", 0, 0, G_OPTION_ARG_STRING, &to_arg,
      "timeline, peak, leaks, oom, ranges: end of the window, excluded (default: the trace's end)",
      "TIME" },
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
    VS_CLI_WIDTH_ENTRY (width),
    VS_CLI_COLOR_ENTRY (color),
    VS_CLI_OPERANDS_ENTRIES (rest),
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsTable) table = NULL;
  g_autoptr (GString) out = NULL;
  g_autoptr (GString) summary = g_string_new ("Reports:");
  VsReportOptions opts;
  gboolean csv, json;
  int colored;
  const char *file, *report = NULL;
  g_autoptr (GPtrArray) files = NULL;

  for (const char *const *n = vs_report_names (); *n != NULL; n++)
    g_string_append_printf (summary, "\n  %-14s %s", *n, vs_report_describe (*n));
  g_string_append (summary,
                   "\n\nFILE and REPORT may come in either order.  Several FILEs (run-*.db) "
                   "compare\nranks: ranks, and diagnose (the rank comparison, then the worst "
                   "rank's\ndiagnosis).  Times are ns since the "
                   "trace's start;\nin CSV an empty field, in JSON null, means the trace "
                   "cannot know the value.\nText goes through $PAGER (default less -FRX) on a "
                   "terminal.  FILE may be a PyTorch snapshot (.pickle).\n\n"
                   "Examples:\n"
                   "  vramscope report run.db\n"
                   "  vramscope report run.db peak --limit 5\n"
                   "  vramscope report snapshot.pickle oom\n"
                   "  vramscope report run.db timeline --from 1.5s --to 3s --format csv\n"
                   "  vramscope report run-*.db ranks");
  if (vs_cli_parse_options ("report", "FILE... [REPORT]", "Print a report on a vramscope trace.",
                            summary->str, entries, &argc, &argv, usage_line)
      != 0)
    return 2;
  if (rest == NULL || g_strv_length (rest) < 1)
    return vs_cli_usage_error ("report", usage_line, "expected a trace file and a report name");
  /* Any order: an argument that names an existing file, or looks like a
   * file's name (a '/' or a '.', which no report's name has), is a trace;
   * the one left, if any, is the report. */
  files = g_ptr_array_new ();
  for (guint i = 0; rest[i] != NULL; i++)
    {
      if (g_file_test (rest[i], G_FILE_TEST_EXISTS) || strpbrk (rest[i], "/.") != NULL)
        g_ptr_array_add (files, rest[i]);
      else if (report != NULL)
        return vs_cli_usage_error ("report", usage_line,
                                   "expected one report name among the trace files");
      else
        report = rest[i];
    }
  if (files->len == 0)
    return vs_cli_usage_error ("report", usage_line, "expected a trace file and a report name");
  if (report == NULL)
    report = "diagnose";
  file = g_ptr_array_index (files, 0);
  if (vs_report_describe (report) == NULL)
    {
      g_autofree char *names = g_strjoinv (", ", (char **)vs_report_names ());
      g_autofree char *msg = g_strdup_printf ("unknown report '%s' (reports: %s)", report, names);
      return vs_cli_usage_error ("report", usage_line, msg);
    }
  if (files->len > 1 && strcmp (report, "ranks") != 0 && strcmp (report, "diagnose") != 0)
    {
      g_autofree char *msg
          = g_strdup_printf ("%s reads one trace; ranks and diagnose compare several", report);
      return vs_cli_usage_error ("report", usage_line, msg);
    }
  if (!vs_cli_parse_format (format, &csv, &json))
    return vs_cli_usage_error ("report", usage_line, "--format must be text, csv or json");
  colored = vs_cli_color_choice (color);
  if (colored < 0)
    return vs_cli_usage_error ("report", usage_line, "--color must be auto, always or never");
  if (buckets < 1 || buckets > 1000000)
    return vs_cli_usage_error ("report", usage_line, "--buckets must be between 1 and 1000000");
  /* Parsed here, not by GOption, whose INT64_MIN would read as "not
   * given": whether an option was given is told by its string, and times
   * stop short of INT64_MIN, which the library takes for "unknown". */
  if (device_arg != NULL
      && !g_ascii_string_to_signed (device_arg, 10, G_MININT64, G_MAXINT64, &device, NULL))
    {
      g_autofree char *msg = g_strdup_printf ("--device wants an integer, not '%s'", device_arg);
      return vs_cli_usage_error ("report", usage_line, msg);
    }
  {
    const char *names[] = { "--from", "--to" };
    const char *args[] = { from_arg, to_arg };
    gint64 *values[] = { &from, &to };

    for (guint i = 0; i < G_N_ELEMENTS (names); i++)
      if (args[i] != NULL && !vs_parse_time (args[i], values[i], &error))
        {
          g_autofree char *msg = g_strdup_printf ("%s: %s", names[i], error->message);
          return vs_cli_usage_error ("report", usage_line, msg);
        }
  }
  if (from_arg != NULL && to_arg != NULL && from >= to)
    return vs_cli_usage_error ("report", usage_line, "--from must be before --to");
  if ((from_arg != NULL || to_arg != NULL)
      && !g_strv_contains ((const char *const *)windowed_reports, report))
    {
      g_autofree char *msg = g_strdup_printf (
          "--from and --to apply to timeline, peak, leaks, oom and ranges; %s covers the whole "
          "trace",
          report);
      return vs_cli_usage_error ("report", usage_line, msg);
    }
  if (limit < -1)
    return vs_cli_usage_error ("report", usage_line, "--limit must be 0 (all) or more");
  if (width < 0 || (width > 0 && width < 40))
    return vs_cli_usage_error ("report", usage_line, "--width must be at least 40");
  if (by != NULL && strcmp (by, "site") != 0 && strcmp (by, "stack") != 0)
    return vs_cli_usage_error ("report", usage_line, "--by must be site or stack");

  if (strcmp (report, "ranks") == 0 || files->len > 1)
    {
      VsCliReportSettings how = {
        .csv = csv,
        .json = json,
        .allocator = allocator,
        .limit = limit,
        .width = vs_cli_text_width (width),
        .colored = colored,
        .full_paths = full_paths,
      };

      if (device_arg != NULL || by != NULL || from_arg != NULL || to_arg != NULL)
        return vs_cli_usage_error ("report", usage_line,
                                   files->len > 1
                                       ? "--device, --by, --from and --to apply to one trace"
                                       : "--device, --by, --from and --to do not apply to ranks");
      return vs_cli_report_traces ((char **)files->pdata, files->len, report, &how);
    }

  trace = vs_cli_open_trace (file, &error);
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
  /* CSV and JSON are for programs: every row, by stack, whole stacks. */
  opts.by_site = by != NULL ? strcmp (by, "site") == 0 : !csv && !json;
  opts.user_stacks = !csv && !json && !full_stacks;
  vs_stack_set_full_paths (trace, full_paths);

  out = g_string_new (NULL);
  if (!csv && !json && strcmp (report, "diagnose") == 0)
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
      if (colored)
        vs_cli_colorize (out, VS_CLI_TEXT_DIAGNOSIS);
    }
  else
    {
      table = vs_report_build (trace, report, &opts, &error);
      if (table == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      if (csv || json)
        {
          if (limit > 0 && (guint)limit < vs_table_get_n_rows (table))
            vs_table_truncate (table, (guint)limit);
          if (csv)
            vs_table_write_csv (table, out);
          else
            vs_table_write_json (table, report, out);
          /* Data for programs: never paged. */
          if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
            {
              fprintf (stderr, "vramscope: cannot write the report: %s\n", g_strerror (errno));
              return 1;
            }
          return 0;
        }
      vs_table_write_text_fitted (table, out, limit < 0 ? 20 : (guint)limit,
                                  vs_cli_text_width (width));
      if (colored)
        vs_cli_colorize (out, VS_CLI_TEXT_TABLE);
    }
  {
    /* A windowed trace says once what it keeps, above the report. */
    g_autofree char *note = vs_windowed_note (trace);
    if (note != NULL)
      {
        g_autoptr (GString) wrapped = g_string_new (NULL);
        vs_cli_wrap (note, MIN (vs_cli_text_width (width), 100), wrapped);
        g_string_append_c (wrapped, '\n');
        g_string_prepend (out, wrapped->str);
      }
  }
  return vs_cli_emit (out->str, out->len, "report");
}
