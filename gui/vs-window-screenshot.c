/* vs-window-screenshot.c — `vramscope view --screenshot`: the window saves
 * a PNG of itself once the trace, the timelines and the panes are drawn.
 *
 * The picture is the window's own render node rendered again by its
 * renderer into a texture, after a frame in which everything was loaded,
 * at exactly the size asked for (the window is resized by the difference
 * its client-side decorations make).
 */
#include "vs-window-private.h"

/* Renders the window with its own renderer and saves it as a PNG.
 * Returns FALSE with error set on failure. */
static gboolean
save_screenshot (VsWindow *self, const char *path, GError **error)
{
  GtkWidget *widget = GTK_WIDGET (self);
  int w = gtk_widget_get_width (widget);
  int h = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (self));
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
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s", path);
      return FALSE;
    }
  return TRUE;
}

static void on_after_paint (GdkFrameClock *clock, VsWindow *self);

static void
finish_screenshot (VsWindow *self)
{
  g_autoptr (GError) error = NULL;

  if (save_screenshot (self, self->screenshot_path, &error))
    {
      gtk_window_destroy (GTK_WINDOW (self));
      return;
    }
  /* A list still laying out its rows can leave the window with nothing
   * to snapshot for a frame: try again after the next one. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING) && self->screenshot_tries++ < 100)
    {
      g_signal_connect (gtk_widget_get_frame_clock (GTK_WIDGET (self)), "after-paint",
                        G_CALLBACK (on_after_paint), self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  g_printerr ("vramscope-view: screenshot failed: %s\n", error->message);
  self->failed = TRUE;
  gtk_window_destroy (GTK_WINDOW (self));
}

static void
on_after_paint (GdkFrameClock *clock, VsWindow *self)
{
  g_signal_handlers_disconnect_by_func (clock, on_after_paint, self);
  /* Outside the paint cycle: render our own copy of the drawn frame. */
  g_idle_add_full (G_PRIORITY_DEFAULT, (GSourceFunc)(void (*) (void))finish_screenshot,
                   g_object_ref (self), g_object_unref);
}

static gboolean
retry_screenshot (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  vs_window_maybe_screenshot (VS_WINDOW (widget));
  return G_SOURCE_REMOVE;
}

/* Whether the window's content has the size asked for; if not, resizes
 * the window by the difference (the default size counts client-side
 * decorations, the picture does not) and looks again next frame. */
static gboolean
screenshot_size_ok (VsWindow *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));
  int dw, dh;

  if (self->screenshot_width <= 0 || (w == self->screenshot_width && h == self->screenshot_height))
    return TRUE;
  if (self->resize_tries++ > 20)
    return TRUE; /* the window system will not give that size: take it */
  gtk_window_get_default_size (GTK_WINDOW (self), &dw, &dh);
  if (w > 0 && h > 0)
    gtk_window_set_default_size (GTK_WINDOW (self), dw + self->screenshot_width - w,
                                 dh + self->screenshot_height - h);
  gtk_widget_add_tick_callback (GTK_WIDGET (self), retry_screenshot, NULL, NULL);
  return FALSE;
}

/* Saves the screenshot after the next frame once everything is loaded. */
/* See vs-window-private.h. */
void
vs_window_maybe_screenshot (VsWindow *self)
{
  GdkFrameClock *clock;

  if (self->screenshot_path == NULL || self->screenshot_scheduled || self->doc == NULL
      || !self->instant_loaded || self->instant_in_flight)
    return;
  for (guint i = 0; i < self->slots->len; i++)
    {
      ChartSlot *s = &g_array_index (self->slots, ChartSlot, i);
      if (!s->loaded || s->in_flight || s->dirty)
        return;
    }
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
  if (clock == NULL || !screenshot_size_ok (self))
    return;
  self->screenshot_scheduled = TRUE;
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* See vs-window.h. */
void
vs_window_set_screenshot (VsWindow *self, const char *path, int width, int height)
{
  g_return_if_fail (VS_IS_WINDOW (self));
  g_free (self->screenshot_path);
  self->screenshot_path = g_strdup (path);
  self->screenshot_width = width;
  self->screenshot_height = height;
}
