/* vs-view-main.c — `vramscope-view [--screenshot PNG] [--size WxH]
 * [--pane NAME] [FILE]`.
 *
 * Parses the command line (bad options: one line on stderr, exit 1), then
 * runs the application.  The exit status is 1 when a screenshot run could
 * not load the trace or save the picture.
 */
#include <locale.h>
#include <stdio.h>

#include "vs-application.h"
#include "vs-config.h"

int
main (int argc, char **argv)
{
  g_autofree char *screenshot = NULL;
  g_autofree char *size = NULL;
  g_autofree char *pane = NULL;
  gboolean version = FALSE;
  g_auto (GStrv) files = NULL;
  int width = 0, height = 0;
  const GOptionEntry entries[] = {
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, &screenshot,
      "Save the window as a PNG once the trace is drawn, then exit", "PNG" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size, "Window size for --screenshot (default 1280x860)",
      "WxH" },
    { "pane", 0, 0, G_OPTION_ARG_STRING, &pane,
      "Pane shown first: attribution, flame, allocations, fragmentation or "
      "oom",
      "NAME" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "[FILE]" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("[FILE]");
  g_autoptr (GError) error = NULL;
  g_autoptr (VsApplication) app = NULL;
  char *app_argv[] = { argv[0], NULL };
  int status;

  setlocale (LC_ALL, "");
  g_option_context_set_summary (context, "Open a vramscope trace in the desktop viewer.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("vramscope-view: %s\n", error->message);
      return 1;
    }
  if (version)
    {
      printf ("vramscope-view %s\n", VS_VERSION);
      return 0;
    }
  if (files != NULL && g_strv_length (files) > 1)
    {
      g_printerr ("vramscope-view: give one trace file, not %u\n", g_strv_length (files));
      return 1;
    }
  if (size != NULL
      && (sscanf (size, "%dx%d", &width, &height) != 2 || width < 320 || height < 240
          || width > 8192 || height > 8192))
    {
      g_printerr ("vramscope-view: --size wants WIDTHxHEIGHT between "
                  "320x240 and 8192x8192, not '%s'\n",
                  size);
      return 1;
    }
  if (pane != NULL && !vs_application_is_pane (pane))
    {
      g_printerr ("vramscope-view: --pane wants attribution, flame, "
                  "allocations, fragmentation or oom, not '%s'\n",
                  pane);
      return 1;
    }
  if (screenshot != NULL && (files == NULL || files[0] == NULL))
    {
      g_printerr ("vramscope-view: --screenshot needs a trace file\n");
      return 1;
    }
  if (files != NULL && files[0] != NULL && !g_file_test (files[0], G_FILE_TEST_EXISTS)
      && screenshot != NULL)
    {
      g_printerr ("vramscope-view: %s: no such file\n", files[0]);
      return 1;
    }
  if (!gtk_init_check ())
    {
      g_printerr ("vramscope-view: cannot open a display (is DISPLAY or "
                  "WAYLAND_DISPLAY set?)\n");
      return 1;
    }

  vs_application_choose_renderer ();
  app = vs_application_new (files ? files[0] : NULL, screenshot, width, height, pane);
  status = g_application_run (G_APPLICATION (app), 1, app_argv);
  if (status == 0 && vs_application_get_failed (app))
    status = 1;
  return status;
}
