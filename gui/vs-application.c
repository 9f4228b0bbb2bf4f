/* vs-application.c — the viewer's GtkApplication.
 *
 * Not unique: each `vramscope view` is its own process, so a screenshot
 * run or a test never hands its work to another running viewer, and no
 * session bus is needed (Xvfb in CI has none).
 */
#include "vs-application.h"

#include <epoxy/gl.h>
#include <string.h>

#include "vs-config.h"
#include "vs-window.h"

struct _VsApplication
{
  AdwApplication parent_instance;

  char *file;
  char *screenshot;
  char *pane;
  int width, height;
  gboolean failed;
};

G_DEFINE_FINAL_TYPE (VsApplication, vs_application, ADW_TYPE_APPLICATION)

static void
on_window_destroy (GtkWidget *window, VsApplication *self)
{
  if (vs_window_get_failed (VS_WINDOW (window)))
    self->failed = TRUE;
}

static void
vs_application_activate (GApplication *app)
{
  VsApplication *self = VS_APPLICATION (app);
  VsWindow *window = vs_window_new (ADW_APPLICATION (app));

  g_signal_connect (window, "destroy", G_CALLBACK (on_window_destroy), self);
  if (self->width > 0 && self->height > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), self->width, self->height);
  if (self->screenshot != NULL)
    vs_window_set_screenshot (window, self->screenshot, self->width, self->height);
  if (self->pane != NULL)
    vs_window_show_pane (window, self->pane);
  if (self->file != NULL)
    {
      g_autoptr (GFile) file = g_file_new_for_commandline_arg (self->file);
      vs_window_open (window, file);
    }
  else if (self->screenshot != NULL)
    {
      /* Nothing to wait for: the empty window is the picture. */
      g_printerr ("vramscope-view: --screenshot needs a trace file\n");
      self->failed = TRUE;
      gtk_window_destroy (GTK_WINDOW (window));
      return;
    }
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
  const char *developers[] = { "The vramscope authors", NULL };
  GtkWidget *about = adw_about_window_new ();

  g_object_set (about, "transient-for", gtk_application_get_active_window (app), "application-name",
                "vramscope", "application-icon", "org.vramscope.View", "version", VS_VERSION,
                "comments",
                "GPU memory profiler: what holds the memory at the "
                "peak, fragmentation, leaks and failed allocations",
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
  const char *open[] = { "<Primary>o", NULL };
  const char *zoom_in[] = { "<Primary>plus", "<Primary>equal", "<Primary>KP_Add", NULL };
  const char *zoom_out[] = { "<Primary>minus", "<Primary>KP_Subtract", NULL };
  const char *zoom_reset[] = { "<Primary>0", "<Primary>KP_0", NULL };
  const char *pan_left[] = { "<Primary>Left", NULL };
  const char *pan_right[] = { "<Primary>Right", NULL };

  G_APPLICATION_CLASS (vs_application_parent_class)->startup (app);
  /* Light or dark as the desktop prefers. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "window.close", close);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.open", open);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.zoom-in", zoom_in);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.zoom-out", zoom_out);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.zoom-reset", zoom_reset);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.pan-left", pan_left);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.pan-right", pan_right);
}

static void
vs_application_finalize (GObject *object)
{
  VsApplication *self = VS_APPLICATION (object);
  g_free (self->file);
  g_free (self->screenshot);
  g_free (self->pane);
  G_OBJECT_CLASS (vs_application_parent_class)->finalize (object);
}

static void
vs_application_class_init (VsApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = vs_application_finalize;
  G_APPLICATION_CLASS (klass)->activate = vs_application_activate;
  G_APPLICATION_CLASS (klass)->startup = vs_application_startup;
}

static void
vs_application_init (VsApplication *self)
{
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
vs_application_new (const char *file, const char *screenshot, int width, int height,
                    const char *pane)
{
  VsApplication *self
      = g_object_new (VS_TYPE_APPLICATION, "application-id", "org.vramscope.View", "flags",
                      G_APPLICATION_NON_UNIQUE, "resource-base-path", "/org/vramscope/View", NULL);
  self->file = g_strdup (file);
  self->screenshot = g_strdup (screenshot);
  self->width = width;
  self->height = height;
  self->pane = g_strdup (pane);
  return self;
}

/* See vs-application.h. */
gboolean
vs_application_is_pane (const char *name)
{
  const char *panes[] = { "attribution", "flame", "allocations", "fragmentation", "oom", NULL };
  return name != NULL && g_strv_contains (panes, name);
}

/* See vs-application.h. */
gboolean
vs_application_get_failed (VsApplication *self)
{
  g_return_val_if_fail (VS_IS_APPLICATION (self), TRUE);
  return self->failed;
}
