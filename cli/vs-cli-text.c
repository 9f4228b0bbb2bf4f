/* SPDX-License-Identifier: MIT */
/* vs-cli-text.c — the shape of the CLI's text output: the width it is
 * fitted to, and words wrapped to a width.  Shared by every command that
 * writes text (report, diff, predict, whatif).
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <glib.h>

#include "vs-cli.h"

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

void
vs_cli_wrap (const char *text, guint width, GString *out)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  guint col = 0;
  for (char **w = words; *w != NULL; w++)
    {
      guint len = (guint)g_utf8_strlen (*w, -1);
      if (col > 0 && col + 1 + len > width)
        {
          g_string_append_c (out, '\n');
          col = 0;
        }
      else if (col > 0)
        {
          g_string_append_c (out, ' ');
          col++;
        }
      g_string_append (out, *w);
      col += len;
    }
  g_string_append_c (out, '\n');
}
