/* SPDX-License-Identifier: MIT */
/* vs-cli-output.c — how the CLI's output reaches the terminal: the format
 * --format names, colour (on a TTY, unless NO_COLOR is set or --color says
 * otherwise) and a pager ($PAGER, else `less -FRX`) when standard output
 * is a terminal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "vs-cli.h"

#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[1;33m"
#define RESET "\033[0m"

int
vs_cli_color_choice (const char *when)
{
  const char *no_color = g_getenv ("NO_COLOR");
  const char *term = g_getenv ("TERM");

  if (when == NULL || strcmp (when, "auto") == 0)
    return isatty (STDOUT_FILENO) && (no_color == NULL || *no_color == '\0')
           && g_strcmp0 (term, "dumb") != 0;
  if (strcmp (when, "always") == 0)
    return 1;
  if (strcmp (when, "never") == 0)
    return 0;
  return -1;
}

gboolean
vs_cli_parse_format (const char *format, gboolean *csv, gboolean *json)
{
  *csv = format != NULL && strcmp (format, "csv") == 0;
  *json = format != NULL && strcmp (format, "json") == 0;
  return format == NULL || *csv || *json || strcmp (format, "text") == 0;
}

/* Replaces each match of pattern (in multiline mode) by replacement. */
static void
replace_all (GString *text, const char *pattern, const char *replacement)
{
  g_autoptr (GRegex) re = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autofree char *done = NULL;

  g_assert (re != NULL);
  done = g_regex_replace (re, text->str, (gssize)text->len, 0, replacement, 0, NULL);
  if (done != NULL)
    g_string_assign (text, done);
}

void
vs_cli_colorize (GString *text, VsCliText kind)
{
  g_return_if_fail (text != NULL);
  switch (kind)
    {
    case VS_CLI_TEXT_TABLE:
      {
        /* The title: each of its lines up to the first blank one (a pager
         * keeps attributes line by line). */
        const char *blank = strstr (text->str, "\n\n");
        gsize n = blank != NULL ? (gsize)(blank - text->str) : text->len;
        g_autoptr (GString) title = g_string_new_len (text->str, (gssize)n);

        replace_all (title, "^(.+)$", BOLD "\\1" RESET);
        g_string_erase (text, 0, (gssize)n);
        g_string_prepend (text, title->str);
      }
      break;
    case VS_CLI_TEXT_DIAGNOSIS:
      replace_all (text, "^((Diagnosis of|Device|Findings|No findings).*)$", BOLD "\\1" RESET);
      /* Each finding's name: "1. growth-per-iteration: ...". */
      replace_all (text, "^([0-9]+\\. )([a-z][a-z0-9-]*):", "\\1" YELLOW "\\2" RESET ":");
      replace_all (text, "^(   )(Evidence|Remedy):", "\\1" BOLD "\\2" RESET ":");
      break;
    case VS_CLI_TEXT_DIFF:
      replace_all (text, "^(device .*)$", BOLD "\\1" RESET);
      /* The delta B − A closing each row: less memory green, more red. */
      replace_all (text, "(  )(-[0-9][0-9.]*( [A-Za-z]+)?)$", "\\1" GREEN "\\2" RESET);
      replace_all (text, "(  )(\\+[0-9][0-9.]*( [A-Za-z]+)?)$", "\\1" RED "\\2" RESET);
      break;
    }
}

static int
write_directly (const char *text, gsize len, const char *what)
{
  if (fwrite (text, 1, len, stdout) != len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the %s: %s\n", what, g_strerror (errno));
      return 1;
    }
  return 0;
}

int
vs_cli_emit (const char *text, gsize len, const char *what)
{
  const char *pager = g_getenv ("PAGER");
  FILE *pipe;
  int status;

  if (!isatty (STDOUT_FILENO) || (pager != NULL && (*pager == '\0' || strcmp (pager, "cat") == 0)))
    return write_directly (text, len, what);
  fflush (stdout);
  /* As git does: less quits when the text fits, and keeps colours. */
  g_setenv ("LESS", "FRX", FALSE);
  pipe = popen (pager != NULL ? pager : "less -FRX", "w");
  if (pipe == NULL)
    {
      fprintf (stderr, "vramscope: cannot start the pager: %s\n", g_strerror (errno));
      return 1;
    }
  /* A pager quit before the end is no error: ignore the broken pipe. */
  signal (SIGPIPE, SIG_IGN);
  fwrite (text, 1, len, pipe);
  status = pclose (pipe);
  if (status == -1)
    {
      fprintf (stderr, "vramscope: the pager failed: %s\n", g_strerror (errno));
      return 1;
    }
  /* No such pager (the shell's 127): the text itself, after the shell's
   * complaint. */
  if (WIFEXITED (status) && WEXITSTATUS (status) == 127)
    return write_directly (text, len, what);
  return 0;
}
