/* SPDX-License-Identifier: MIT */
/* vs-application.c — the viewer's GtkApplication.
 *
 * Not unique: each `vramscope view` is its own process, so a screenshot
 * run or a test never hands its work to another running viewer, and no
 * session bus is needed (Xvfb in CI has none).  Options are checked in
 * handle-local-options, before the display is opened; files come through
 * "open", one window each.
 */
#include "vs-application.h"

#include <epoxy/gl.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "vs-alloc-conf.h"
#include "vs-config.h"
#include "vs-output.h"
#include "vs-screenshot.h"
#include "vs-window.h"

struct _VsApplication
{
  AdwApplication parent_instance;

  /* From the command line. */
  char *screenshot_path;
  char *pane;
  char *whatif;  /* --whatif CONF */
  char *compare; /* --compare OTHER */
  int width, height;

  VsScreenshot *screenshot;
  gboolean failed;
  gboolean usage_error;     /* the command line was wrong (exit status 2) */
  gboolean options_handled; /* GApplication parsed the options */
  gboolean force;           /* --force: the screenshot may replace an existing file */
};

G_DEFINE_FINAL_TYPE (VsApplication, vs_application, ADW_TYPE_APPLICATION)

static const GOptionEntry option_entries[] = {
  { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL,
    N_("Save the window as a PNG once the trace is drawn, then exit"), N_("PNG") },
  { "size", 0, 0, G_OPTION_ARG_STRING, NULL, N_("Window size for --screenshot (default 1280x860)"),
    N_("WxH") },
  { "pane", 0, 0, G_OPTION_ARG_STRING, NULL,
    N_("Pane shown first: diagnosis (the default), attribution, flame, allocations, "
       "blocks, fragmentation, state (the allocator's state step by step) or oom"),
    N_("NAME") },
  { "force", 'f', 0, G_OPTION_ARG_NONE, NULL, N_("Replace the --screenshot PNG when it exists"),
    NULL },
  { "whatif", 0, 0, G_OPTION_ARG_STRING, NULL,
    N_("Draw the reserved memory PyTorch's allocator would have had under these "
       "PYTORCH_CUDA_ALLOC_CONF settings"),
    N_("CONF") },
  { "compare", 0, 0, G_OPTION_ARG_FILENAME, NULL,
    N_("Compare the trace with another trace or snapshot: its lines on the timelines and the "
       "Comparison pane"),
    N_("OTHER") },
  { "version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version"), NULL },
  { NULL },
};

/* Checks the options and opens the display; returns -1 to go on, or the
 * exit status. */
static int
vs_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  VsApplication *self = VS_APPLICATION (app);
  const char *size = NULL;

  self->options_handled = TRUE;
  if (g_variant_dict_contains (options, "version"))
    {
      printf ("vramscope-view %s\n", VS_VERSION);
      return 0;
    }
  g_variant_dict_lookup (options, "screenshot", "^ay", &self->screenshot_path);
  self->force = g_variant_dict_contains (options, "force");
  g_variant_dict_lookup (options, "pane", "s", &self->pane);
  if (g_variant_dict_lookup (options, "size", "&s", &size)
      && (sscanf (size, "%dx%d", &self->width, &self->height) != 2 || self->width < 320
          || self->height < 240 || self->width > 8192 || self->height > 8192))
    {
      g_printerr (_("vramscope-view: --size wants WIDTHxHEIGHT between "
                    "320x240 and 8192x8192, not '%s'\n"),
                  size);
      self->usage_error = TRUE;
      return 2;
    }
  g_variant_dict_lookup (options, "whatif", "s", &self->whatif);
  g_variant_dict_lookup (options, "compare", "^ay", &self->compare);
  if (self->whatif != NULL)
    {
      VsAllocConf conf;
      g_autoptr (GError) error = NULL;

      if (!vs_alloc_conf_parse (self->whatif, &conf, &error))
        {
          g_printerr (_("vramscope-view: --whatif: %s\n"), error->message);
          self->usage_error = TRUE;
          return 2;
        }
    }
  if (self->pane != NULL && !vs_application_is_pane (self->pane))
    {
      g_printerr (_("vramscope-view: --pane wants diagnosis, attribution, flame, "
                    "allocations, blocks, fragmentation, state or oom, not '%s'\n"),
                  self->pane);
      self->usage_error = TRUE;
      return 2;
    }
  if (!gtk_init_check ())
    {
      g_printerr (_("vramscope-view: cannot open a display (is DISPLAY or "
                    "WAYLAND_DISPLAY set?)\n"));
      return 1;
    }
  vs_application_choose_renderer ();
  return -1;
}

/* A new window as the command line asked for. */
static VsWindow *
new_window (VsApplication *self)
{
  VsWindow *window = vs_window_new (ADW_APPLICATION (self));

  if (self->width > 0 && self->height > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), self->width, self->height);
  if (self->pane != NULL)
    vs_window_show_pane (window, self->pane);
  if (self->whatif != NULL)
    vs_window_choose_whatif (window, self->whatif, VS_UNKNOWN);
  if (self->compare != NULL)
    {
      g_autoptr (GFile) other = g_file_new_for_commandline_arg (self->compare);

      /* Shown once the trace is; its pane unless --pane chose another. */
      vs_window_compare_with (window, other);
    }
  return window;
}

static void
vs_application_activate (GApplication *app)
{
  VsApplication *self = VS_APPLICATION (app);

  if (self->screenshot_path != NULL)
    {
      /* Nothing to wait for: an empty window is no picture. */
      g_printerr (_("vramscope-view: --screenshot needs a trace file\n"));
      self->failed = self->usage_error = TRUE;
      return;
    }
  gtk_window_present (GTK_WINDOW (new_window (self)));
}

static void
vs_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  VsApplication *self = VS_APPLICATION (app);
  VsWindow *window;

  if (n_files != 1)
    {
      g_printerr (_("vramscope-view: give one trace file, not %d\n"), n_files);
      self->failed = self->usage_error = TRUE;
      return;
    }
  if (self->screenshot_path != NULL)
    {
      /* The picture follows the rules of every output (vs-output.h),
       * checked before the trace is loaded. */
      g_autofree char *input = g_file_get_path (files[0]);
      const char *inputs[] = { input, self->compare };
      char err[1024];

      if (vs_output_check (self->screenshot_path, self->force, "--force", inputs,
                           self->compare != NULL ? 2 : 1, err, sizeof err)
          < 0)
        {
          g_printerr ("vramscope-view: %s\n", err);
          self->failed = TRUE;
          return;
        }
    }
  window = new_window (self);
  if (self->screenshot_path != NULL && self->screenshot == NULL)
    {
      self->screenshot
          = vs_screenshot_new (window, self->screenshot_path, self->width, self->height);
      vs_screenshot_set_force (self->screenshot, self->force);
    }
  vs_window_open (window, files[0]);
  gtk_window_present (GTK_WINDOW (window));
}

static void
quit_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  g_application_quit (G_APPLICATION (data));
}

static void
about_activated (GSimpleAction *a, GVariant *p, gpointer data)
{
  GtkApplication *app = data;
  const char *developers[] = { _("The vramscope authors"), NULL };
  GtkWidget *about = adw_about_window_new ();

  g_object_set (about, "transient-for", gtk_application_get_active_window (app), "application-name",
                "vramscope", "application-icon", "org.vramscope.View", "version", VS_VERSION,
                "comments",
                _("GPU memory profiler: what holds the memory at the "
                  "peak, fragmentation, leaks and failed allocations"),
                "license-type", GTK_LICENSE_MIT_X11, "developers", developers, NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static const GActionEntry app_actions[] = {
  { "quit", quit_activated },
  { "about", about_activated },
};

static void
vs_application_startup (GApplication *app)
{
  const char *quit[] = { "<Primary>q", NULL };
  const char *close[] = { "<Primary>w", NULL };

  /* GLib (2.74) sets up its MIME database's folders on the first call
   * that asks for them, without the lock its content-type readers hold:
   * made while the file chooser's worker threads guess content types, that
   * first call frees the folder list they are reading.  Made here, before
   * any such thread exists, it is never made again. */
  (void)g_content_type_get_mime_dirs ();
  G_APPLICATION_CLASS (vs_application_parent_class)->startup (app);
  /* Light or dark as the desktop prefers. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  /* The window's own shortcuts are bound on its class (vs-window.c). */
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "window.close", close);
}

static void
vs_application_finalize (GObject *object)
{
  VsApplication *self = VS_APPLICATION (object);
  g_free (self->screenshot_path);
  g_free (self->pane);
  g_free (self->whatif);
  g_free (self->compare);
  g_clear_object (&self->screenshot);
  G_OBJECT_CLASS (vs_application_parent_class)->finalize (object);
}

static void
vs_application_class_init (VsApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = vs_application_finalize;
  G_APPLICATION_CLASS (klass)->handle_local_options = vs_application_handle_local_options;
  G_APPLICATION_CLASS (klass)->activate = vs_application_activate;
  G_APPLICATION_CLASS (klass)->open = vs_application_open;
  G_APPLICATION_CLASS (klass)->startup = vs_application_startup;
}

static void
vs_application_init (VsApplication *self)
{
  g_application_add_main_option_entries (G_APPLICATION (self), option_entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), _("[FILE]"));
  g_application_set_option_context_summary (
      G_APPLICATION (self),
      _("Open a vramscope trace or a PyTorch memory snapshot (.pickle) in the desktop viewer."));
  g_application_set_option_context_description (
      G_APPLICATION (self),
      _("Examples:\n"
        "  vramscope view run.db\n"
        "  vramscope view snapshot.pickle --pane oom\n"
        "  vramscope view run.db --whatif expandable_segments:True\n"
        "  vramscope view --compare before.db after.db\n"
        "  vramscope view run.db --screenshot run.png --size 1280x860 -f\n"));
}

/* See vs-application.h. */
void
vs_application_choose_renderer (void)
{
  g_autoptr (GdkGLContext) context = NULL;
  const char *renderer;

  if (g_getenv ("GSK_RENDERER") != NULL)
    return;
  context = gdk_display_create_gl_context (gdk_display_get_default (), NULL);
  if (context == NULL || !gdk_gl_context_realize (context, NULL))
    return; /* GTK falls back to cairo by itself */
  gdk_gl_context_make_current (context);
  renderer = (const char *)glGetString (GL_RENDERER);
  if (renderer != NULL
      && (strstr (renderer, "llvmpipe") || strstr (renderer, "softpipe")
          || strstr (renderer, "swrast")))
    g_setenv ("GSK_RENDERER", "cairo", TRUE);
  gdk_gl_context_clear_current ();
}

/* See vs-application.h. */
VsApplication *
vs_application_new (void)
{
  return g_object_new (VS_TYPE_APPLICATION, "application-id", "org.vramscope.View", "flags",
                       G_APPLICATION_NON_UNIQUE | G_APPLICATION_HANDLES_OPEN, "resource-base-path",
                       "/org/vramscope/View", NULL);
}

/* See vs-application.h. */
gboolean
vs_application_is_pane (const char *name)
{
  const char *panes[] = { "diagnosis",     "attribution", "flame", "allocations", "blocks",
                          "fragmentation", "state",       "oom",   NULL };
  return name != NULL && g_strv_contains (panes, name);
}

/* See vs-application.h. */
gboolean
vs_application_get_failed (VsApplication *self)
{
  g_return_val_if_fail (VS_IS_APPLICATION (self), TRUE);
  return self->failed || (self->screenshot != NULL && vs_screenshot_get_failed (self->screenshot));
}

/* See vs-application.h. */
gboolean
vs_application_get_usage_error (VsApplication *self)
{
  g_return_val_if_fail (VS_IS_APPLICATION (self), FALSE);
  return self->usage_error || !self->options_handled;
}
