/* SPDX-License-Identifier: MIT */
/* vs-cli.h — the subcommands of the `vramscope` executable.
 *
 * Each takes the arguments after `vramscope` (argv[0] is the subcommand's
 * name) and returns the process exit status: 0 success, 1 bad input (one
 * line on stderr), 2 usage error.
 */
#pragma once

#include <stdio.h>

#include <glib.h>

int vs_cmd_report (int argc, char **argv);
int vs_cmd_import (int argc, char **argv);
int vs_cmd_export (int argc, char **argv);
int vs_cmd_record (int argc, char **argv);
int vs_cmd_recover (int argc, char **argv);
int vs_cmd_diff (int argc, char **argv);
int vs_cmd_whatif (int argc, char **argv);
int vs_cmd_predict (int argc, char **argv);

typedef struct _VsTrace VsTrace;

/* Opens the trace at path, or, for a PyTorch snapshot (.pickle), the trace
 * it was imported into in the user's cache (imported now when it is not
 * there yet; nothing is written beside path).  NULL with error set, a
 * message naming path, otherwise. */
VsTrace *vs_cli_open_trace (const char *path, GError **error);

/* How `vramscope report` prints, as its options set it. */
typedef struct
{
  gboolean csv, json;    /* else text */
  const char *allocator; /* --allocator, NULL when not given */
  int limit;             /* --limit, -1 when not given */
  unsigned int width;    /* text: the width to fit */
  gboolean colored;      /* text: with terminal colours */
  gboolean full_paths;   /* --full-paths */
} VsCliReportSettings;

/* `vramscope report` on files[0..n_files-1] (n_files >= 1) for report
 * "ranks", or "diagnose" of several traces (vs-cmd-report-ranks.c).
 * Returns the exit status. */
int vs_cli_report_traces (char **files, guint n_files, const char *report,
                          const VsCliReportSettings *how);

/* --limit as `whatif` and `predict` take it: whole bytes (*bytes), or a
 * fraction of the device in (0, 1] written with a decimal point, as
 * set_per_process_memory_fraction takes it (*fraction; *bytes then
 * VS_UNKNOWN).  FALSE when text is neither. */
gboolean vs_cli_parse_limit (const char *text, gint64 *bytes, double *fraction);

/* The width text output is fitted to: requested when > 0, else the
 * terminal's when standard output is one, else $COLUMNS, else 100. */
unsigned int vs_cli_text_width (int requested);

/* --color: 1 to colour, 0 not to, for when = "auto" (NULL: on a terminal
 * unless NO_COLOR is set and non-empty, or TERM is dumb), "always" or
 * "never"; -1 for anything else. */
int vs_cli_color_choice (const char *when);

typedef enum
{
  VS_CLI_TEXT_TABLE,     /* vs_table_write_text*(): a bold title */
  VS_CLI_TEXT_DIAGNOSIS, /* vs_diagnosis_write_text(): headings, finding names */
  VS_CLI_TEXT_DIFF,      /* vs_diff_write_text(): header, deltas */
} VsCliText;

/* Adds terminal colours (SGR escapes) to text of that kind, in place. */
void vs_cli_colorize (GString *text, VsCliText kind);

/* Writes text to standard output, through $PAGER (default `less -FRX`;
 * empty or "cat": none) when standard output is a terminal.  Returns the
 * exit status: 0, or 1 after one line on stderr naming what. */
int vs_cli_emit (const char *text, gsize len, const char *what);

/* Reports a usage error of `vramscope COMMAND`: the message and the
 * command's usage line on stderr.  Returns 2, the exit status of a usage
 * error. */
static inline int
vs_cli_usage_error (const char *command, const char *usage_line, const char *message)
{
  fprintf (stderr, "vramscope %s: %s\n", command, message);
  fputs (usage_line, stderr);
  return 2;
}

/* Parses the options of `vramscope COMMAND` (the program's name in
 * messages from then on): --help shows parameters, summary and
 * description; entries fill their variables, and *argc, *argv keep what
 * no entry took.  Returns 0, or 2 after a usage error
 * (vs_cli_usage_error()) for options the command does not take. */
int vs_cli_parse_options (const char *command, const char *parameters, const char *summary,
                          const char *description, GOptionEntry *entries, int *argc, char ***argv,
                          const char *usage_line);

/* The option entries the commands that print reports share, for their
 * GOptionEntry lists: --width into the gint var, --color into the char *
 * var, and the operands into the GStrv var, which ends the list. */
#define VS_CLI_WIDTH_ENTRY(var)                                                                    \
  {                                                                                                \
    "width", 0, 0, G_OPTION_ARG_INT, &(var),                                                       \
        "Text: fit lines to N columns (default: the terminal's width, else 100)", "N"              \
  }
#define VS_CLI_COLOR_ENTRY(var)                                                                    \
  {                                                                                                \
    "color", 0, 0, G_OPTION_ARG_STRING, &(var),                                                    \
        "Text: colour on a terminal unless NO_COLOR is set (auto, the default), always or never",  \
        "WHEN"                                                                                     \
  }
/* --allocator NAME into the char * var, for the commands that take one
 * allocator by name; scope starts the list of names in its help (""; or
 * "folded: ", the output it applies to). */
#define VS_CLI_ALLOCATOR_ENTRY(var, scope)                                                         \
  {                                                                                                \
    "allocator", 0, 0, G_OPTION_ARG_STRING, &(var),                                                \
        "Only this allocator (" scope "all, pytorch, pool:0x…, nvtx:<heap>)", "NAME"               \
  }
#define VS_CLI_OPERANDS_ENTRIES(var)                                                               \
  { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &(var), NULL, NULL }, { NULL }

/* --format of the commands that print reports: sets *csv and *json from
 * format ("text" or NULL: both FALSE); FALSE when format is none of text,
 * csv and json. */
gboolean vs_cli_parse_format (const char *format, gboolean *csv, gboolean *json);

/* Appends text to out as lines of at most width columns, broken at spaces,
 * ending in a newline. */
void vs_cli_wrap (const char *text, guint width, GString *out);
