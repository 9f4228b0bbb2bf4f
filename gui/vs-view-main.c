/* SPDX-License-Identifier: MIT */
/* vs-view-main.c — `vramscope-view [--screenshot PNG] [--size WxH]
 * [--pane NAME] [FILE]`.
 *
 * Sets up the locale and the message catalog, then runs the application,
 * which parses the command line (vs-application.c).  The exit status is 2
 * when the command line was wrong, 1 when a screenshot run could not load
 * the trace or save the picture.
 */
#include <glib/gi18n.h>
#include <locale.h>

#include "vs-application.h"
#include "vs-config.h"

int
main (int argc, char **argv)
{
  g_autoptr (VsApplication) app = NULL;
  int status;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, VS_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = vs_application_new ();
  status = g_application_run (G_APPLICATION (app), argc, argv);
  if (status == 0 && vs_application_get_failed (app))
    status = 1;
  /* A wrong command line is a usage error, as for every command. */
  if (status != 0 && vs_application_get_usage_error (app))
    status = 2;
  return status;
}
