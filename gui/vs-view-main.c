/* vs-view-main.c — `vramscope-view [--screenshot PNG] [--size WxH]
 * [--pane NAME] [FILE]`.
 *
 * Parses the command line (bad options: one line on stderr, exit 1), then
 * runs the application.  The exit status is 1 when a screenshot run could
 * not load the trace or save the picture.  The picture follows the rules of
 * every output (vs-output.h): written under a temporary name and renamed,
 * an existing file replaced only with --force, never a device or the trace.
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "vs-application.h"
#include "vs-config.h"
#include "vs-output.h"

/* Whether path holds a PNG (the window wrote its picture). */
static gboolean
is_png (const char *path)
{
  static const char magic[8] = "\x89PNG\r\n\x1a\n";
  char head[8] = "";
  FILE *f = g_fopen (path, "rb");
  gboolean ok;

  if (f == NULL)
    return FALSE;
  ok = fread (head, 1, sizeof head, f) == sizeof head && memcmp (head, magic, sizeof head) == 0;
  fclose (f);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autofree char *screenshot = NULL;
  g_autofree char *size = NULL;
  g_autofree char *pane = NULL;
  gboolean version = FALSE, force = FALSE;
  char tmp[4096] = "", err[1024] = "";
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
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace the --screenshot PNG when it exists",
      NULL },
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
  if (files != NULL && files[0] != NULL && screenshot != NULL)
    {
      GStatBuf st;

      if (g_stat (files[0], &st) != 0)
        {
          g_printerr ("vramscope-view: %s: %s\n", files[0], g_strerror (errno));
          return 1;
        }
    }
  if (screenshot != NULL)
    {
      const char *inputs[] = { files[0] };

      if (vs_output_check (screenshot, force, "--force", inputs, 1, err, sizeof err) < 0)
        {
          g_printerr ("vramscope-view: %s\n", err);
          return 1;
        }
    }
  if (!gtk_init_check ())
    {
      g_printerr ("vramscope-view: cannot open a display (is DISPLAY or "
                  "WAYLAND_DISPLAY set?)\n");
      return 1;
    }

  vs_application_choose_renderer ();
  if (screenshot != NULL && vs_output_temp (screenshot, tmp, sizeof tmp, err, sizeof err) < 0)
    {
      g_printerr ("vramscope-view: %s\n", err);
      return 1;
    }
  app = vs_application_new (files ? files[0] : NULL, screenshot != NULL ? tmp : NULL, width, height,
                            pane);
  status = g_application_run (G_APPLICATION (app), 1, app_argv);
  if (status == 0 && vs_application_get_failed (app))
    status = 1;
  if (screenshot != NULL)
    {
      /* Whatever went wrong on the way, no picture means failure. */
      if (status == 0 && !is_png (tmp))
        {
          g_printerr ("vramscope-view: no picture was written to %s\n", screenshot);
          status = 1;
        }
      if (status == 0 && vs_output_commit (tmp, screenshot, force, "--force", err, sizeof err) < 0)
        {
          g_printerr ("vramscope-view: %s\n", err);
          status = 1;
        }
      if (status != 0)
        g_unlink (tmp);
    }
  return status;
}
