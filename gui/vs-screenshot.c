/* SPDX-License-Identifier: MIT */
/* vs-screenshot.c — a window saved as a PNG once fully drawn.
 *
 * The picture is the window's own render node rendered again by its
 * renderer into a texture, after a frame in which everything was loaded,
 * at exactly the size asked for (the window is resized by the difference
 * its client-side decorations make).
 */
#include "vs-screenshot.h"

#include <glib/gstdio.h>

#include "vs-output.h"

struct _VsScreenshot
{
  GObject parent_instance;

  VsWindow *window; /* held until it is destroyed */
  char *path;
  int width, height; /* 0: as the window is */
  gboolean scheduled;
  guint tries;
  guint resize_tries;
  gboolean failed;
  gboolean force; /* may replace an existing regular file */
  gboolean saved; /* the PNG is in place */
};

G_DEFINE_FINAL_TYPE (VsScreenshot, vs_screenshot, G_TYPE_OBJECT)

static void maybe_take (VsScreenshot *self);

/* Ends with the window closed; failed with message on stderr when
 * message is not NULL. */
static void
finish (VsScreenshot *self, const char *message)
{
  g_autoptr (VsWindow) window = g_steal_pointer (&self->window);

  if (window == NULL)
    return;
  g_signal_handlers_disconnect_by_data (window, self);
  if (message != NULL)
    {
      g_printerr ("vramscope-view: %s\n", message);
      self->failed = TRUE;
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Renders the window with its own renderer and saves it as a PNG.
 * Returns FALSE with error set on failure. */
static gboolean
save (VsScreenshot *self, GError **error)
{
  GtkWidget *widget = GTK_WIDGET (self->window);
  int w = gtk_widget_get_width (widget);
  int h = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (widget));
  g_autoptr (GdkTexture) texture = NULL;

  gdk_paintable_snapshot (paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL || renderer == NULL)
    {
      g_clear_pointer (&node, gsk_render_node_unref);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PENDING, "the window has nothing drawn to save");
      return FALSE;
    }
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gsk_render_node_unref (node);
  {
    char tmp[4096], err[1024];

    if (vs_output_temp (self->path, tmp, sizeof tmp, err, sizeof err) < 0)
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err);
        return FALSE;
      }
    if (!gdk_texture_save_to_png (texture, tmp))
      {
        g_unlink (tmp);
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s", self->path);
        return FALSE;
      }
    if (vs_output_commit (tmp, self->path, self->force, "--force", err, sizeof err) < 0)
      {
        g_unlink (tmp);
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err);
        return FALSE;
      }
  }
  self->saved = TRUE;
  return TRUE;
}

static void on_after_paint (GdkFrameClock *clock, VsScreenshot *self);

static gboolean
take (gpointer data)
{
  VsScreenshot *self = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *message = NULL;

  if (self->window == NULL)
    return G_SOURCE_REMOVE;
  if (save (self, &error))
    {
      finish (self, NULL);
      return G_SOURCE_REMOVE;
    }
  /* A list still laying out its rows can leave the window with nothing
   * to snapshot for a frame: try again after the next one. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING) && self->tries++ < 100)
    {
      g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (self->window)), "after-paint",
                        G_CALLBACK (on_after_paint), self);
      gtk_widget_queue_draw (GTK_WIDGET (self->window));
      return G_SOURCE_REMOVE;
    }
  message = g_strdup_printf ("screenshot failed: %s", error->message);
  finish (self, message);
  return G_SOURCE_REMOVE;
}

static void
on_after_paint (GdkFrameClock *clock, VsScreenshot *self)
{
  g_signal_handlers_disconnect_by_func (clock, on_after_paint, self);
  /* Outside the paint cycle: render our own copy of the drawn frame. */
  g_idle_add_full (G_PRIORITY_DEFAULT, take, g_object_ref (self), g_object_unref);
}

static gboolean
retry (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  maybe_take (data);
  return G_SOURCE_REMOVE;
}

/* Whether the window's content has the size asked for; if not, resizes
 * the window by the difference (the default size counts client-side
 * decorations, the picture does not) and looks again next frame. */
static gboolean
size_ok (VsScreenshot *self)
{
  GtkWidget *widget = GTK_WIDGET (self->window);
  int w = gtk_widget_get_width (widget);
  int h = gtk_widget_get_height (widget);
  int dw, dh;

  if (self->width <= 0 || (w == self->width && h == self->height))
    return TRUE;
  if (self->resize_tries++ > 20)
    return TRUE; /* the window system will not give that size: take it */
  gtk_window_get_default_size (GTK_WINDOW (widget), &dw, &dh);
  if (w > 0 && h > 0)
    gtk_window_set_default_size (GTK_WINDOW (widget), dw + self->width - w, dh + self->height - h);
  gtk_widget_add_tick_callback (widget, retry, g_object_ref (self), g_object_unref);
  return FALSE;
}

/* Saves the picture after the next frame once the window is settled. */
static void
maybe_take (VsScreenshot *self)
{
  GdkFrameClock *clock;

  if (self->window == NULL || self->scheduled || !vs_window_get_settled (self->window))
    return;
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self->window));
  if (clock == NULL || !size_ok (self))
    return;
  self->scheduled = TRUE;
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), self);
  gtk_widget_queue_draw (GTK_WIDGET (self->window));
}

static void
on_settled (VsWindow *window, GParamSpec *pspec, VsScreenshot *self)
{
  maybe_take (self);
}

static void
on_error (VsWindow *window, GParamSpec *pspec, VsScreenshot *self)
{
  const char *message = vs_window_get_error (window);

  if (message != NULL)
    finish (self, message);
}

static void
on_map (GtkWidget *window, VsScreenshot *self)
{
  maybe_take (self);
}

static void
vs_screenshot_dispose (GObject *object)
{
  VsScreenshot *self = VS_SCREENSHOT (object);

  if (self->window != NULL)
    g_signal_handlers_disconnect_by_data (self->window, self);
  g_clear_object (&self->window);
  G_OBJECT_CLASS (vs_screenshot_parent_class)->dispose (object);
}

static void
vs_screenshot_finalize (GObject *object)
{
  g_free (VS_SCREENSHOT (object)->path);
  G_OBJECT_CLASS (vs_screenshot_parent_class)->finalize (object);
}

static void
vs_screenshot_class_init (VsScreenshotClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = vs_screenshot_dispose;
  G_OBJECT_CLASS (klass)->finalize = vs_screenshot_finalize;
}

static void
vs_screenshot_init (VsScreenshot *self)
{
}

/* See vs-screenshot.h. */
VsScreenshot *
vs_screenshot_new (VsWindow *window, const char *path, int width, int height)
{
  VsScreenshot *self;

  g_return_val_if_fail (VS_IS_WINDOW (window), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  self = g_object_new (VS_TYPE_SCREENSHOT, NULL);
  self->window = g_object_ref (window);
  self->path = g_strdup (path);
  self->width = width;
  self->height = height;
  g_signal_connect (window, "notify::settled", G_CALLBACK (on_settled), self);
  g_signal_connect (window, "notify::error", G_CALLBACK (on_error), self);
  g_signal_connect (window, "map", G_CALLBACK (on_map), self);
  return self;
}

/* See vs-screenshot.h. */
void
vs_screenshot_set_force (VsScreenshot *self, gboolean force)
{
  g_return_if_fail (VS_IS_SCREENSHOT (self));
  self->force = force;
}

/* See vs-screenshot.h. */
gboolean
vs_screenshot_get_failed (VsScreenshot *self)
{
  g_return_val_if_fail (VS_IS_SCREENSHOT (self), TRUE);
  return self->failed || !self->saved;
}
