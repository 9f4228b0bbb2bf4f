/* SPDX-License-Identifier: MIT */
/* vs-test-x11.c — XTest input for GUI tests (see vs-test-x11.h). */
#include "vs-test-x11.h"

#include <gdk/x11/gdkx.h>

#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include "vs-test-wait.h"

static gboolean
never (gpointer data)
{
  return FALSE;
}

void
vs_test_x11_spin (guint ms)
{
  vs_test_wait_until (never, NULL, (gint64)ms * 1000);
}

static Display *
xdisplay (void)
{
  return gdk_x11_display_get_xdisplay (gdk_display_get_default ());
}

void
vs_test_x11_to_root (GtkWidget *widget, double x, double y, int *rx, int *ry)
{
  GtkNative *native = gtk_widget_get_native (widget);
  Display *d = xdisplay ();
  graphene_point_t p;
  double sx, sy;
  Window child;

  g_assert_true (
      gtk_widget_compute_point (widget, GTK_WIDGET (native), &GRAPHENE_POINT_INIT (x, y), &p));
  gtk_native_get_surface_transform (native, &sx, &sy);
  XTranslateCoordinates (d, gdk_x11_surface_get_xid (gtk_native_get_surface (native)),
                         DefaultRootWindow (d), (int)(p.x + sx), (int)(p.y + sy), rx, ry, &child);
}

guint32
vs_test_x11_screen_pixel (GtkWidget *widget, double x, double y)
{
  Display *d = xdisplay ();
  XImage *image;
  unsigned long p;
  int rx, ry;

  vs_test_x11_to_root (widget, x, y, &rx, &ry);
  image = XGetImage (d, DefaultRootWindow (d), rx, ry, 1, 1, AllPlanes, ZPixmap);
  g_assert_nonnull (image);
  p = XGetPixel (image, 0, 0);
  XDestroyImage (image);
  return (guint32)(p & 0xffffff);
}

void
vs_test_x11_move_to (GtkWidget *widget, double x, double y)
{
  Display *d = xdisplay ();
  int rx, ry;

  vs_test_x11_to_root (widget, x, y, &rx, &ry);
  XTestFakeMotionEvent (d, DefaultScreen (d), rx, ry, 0);
  XSync (d, False);
  vs_test_x11_spin (60);
}

void
vs_test_x11_click_at (GtkWidget *widget, double x, double y, guint button)
{
  Display *d = xdisplay ();

  vs_test_x11_move_to (widget, x, y);
  XTestFakeButtonEvent (d, button, True, 0);
  XSync (d, False);
  vs_test_x11_spin (30);
  XTestFakeButtonEvent (d, button, False, 0);
  XSync (d, False);
  vs_test_x11_spin (150);
}

void
vs_test_x11_click (GtkWidget *widget)
{
  vs_test_x11_click_at (widget, gtk_widget_get_width (widget) / 2.0,
                        gtk_widget_get_height (widget) / 2.0, 1);
}

void
vs_test_x11_key (KeySym keysym, const KeySym *mods, guint n_mods)
{
  Display *d = xdisplay ();

  for (guint i = 0; i < n_mods; i++)
    XTestFakeKeyEvent (d, XKeysymToKeycode (d, mods[i]), True, 0);
  XTestFakeKeyEvent (d, XKeysymToKeycode (d, keysym), True, 0);
  XTestFakeKeyEvent (d, XKeysymToKeycode (d, keysym), False, 0);
  for (guint i = n_mods; i > 0; i--)
    XTestFakeKeyEvent (d, XKeysymToKeycode (d, mods[i - 1]), False, 0);
  XSync (d, False);
  vs_test_x11_spin (60);
}

void
vs_test_x11_key_now (KeySym keysym)
{
  Display *d = xdisplay ();

  XTestFakeKeyEvent (d, XKeysymToKeycode (d, keysym), True, 0);
  XTestFakeKeyEvent (d, XKeysymToKeycode (d, keysym), False, 0);
  XSync (d, False);
}

void
vs_test_x11_type (const char *text)
{
  const KeySym shift[] = { XK_Shift_L };

  for (const char *p = text; *p; p++)
    switch (*p)
      {
      case '_':
        vs_test_x11_key (XK_underscore, shift, 1);
        break;
      case '.':
        vs_test_x11_key (XK_period, NULL, 0);
        break;
      case '-':
        vs_test_x11_key (XK_minus, NULL, 0);
        break;
      case '/':
        vs_test_x11_key (XK_slash, NULL, 0);
        break;
      default:
        if (g_ascii_isupper (*p))
          vs_test_x11_key (XStringToKeysym ((char[]){ g_ascii_tolower (*p), 0 }), shift, 1);
        else
          vs_test_x11_key (XStringToKeysym ((char[]){ *p, 0 }), NULL, 0);
      }
}

static gboolean
window_active (gpointer data)
{
  return gtk_window_is_active (data);
}

gboolean
vs_test_x11_focus (GtkWindow *window)
{
  Display *d = xdisplay ();
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));

  XSetInputFocus (d, gdk_x11_surface_get_xid (surface), RevertToParent, CurrentTime);
  XSync (d, False);
  return vs_test_wait_until (window_active, window, 20 * G_USEC_PER_SEC);
}

/* Whether widget lies in a column view's header row. */
static gboolean
in_column_header (GtkWidget *widget)
{
  for (GtkWidget *w = widget; w != NULL; w = gtk_widget_get_parent (w))
    if (g_str_equal (G_OBJECT_TYPE_NAME (w), "GtkColumnViewTitle"))
      return TRUE;
  return FALSE;
}

/* Whether widget, or the menu button it is the inside of, has a tooltip:
 * a text, or its own query-tooltip handler (has-tooltip set). */
static gboolean
has_tooltip (GtkWidget *widget)
{
  GtkWidget *menu_button = gtk_widget_get_ancestor (widget, GTK_TYPE_MENU_BUTTON);

  if (gtk_widget_get_has_tooltip (widget))
    return TRUE;
  return menu_button != NULL && gtk_widget_get_tooltip_text (menu_button) != NULL;
}

guint
vs_test_audit_reach (GtkWidget *root)
{
  guint checked = 0;

  if (!gtk_widget_get_mapped (root))
    return 0;
  if (GTK_IS_BUTTON (root))
    {
      if (!has_tooltip (root))
        g_error ("a %s without a tooltip", G_OBJECT_TYPE_NAME (root));
      if (!gtk_widget_get_focusable (root))
        g_error ("a %s the keyboard cannot reach", G_OBJECT_TYPE_NAME (root));
      checked++;
    }
  else if (GTK_IS_LABEL (root) && gtk_label_get_ellipsize (GTK_LABEL (root)) != PANGO_ELLIPSIZE_NONE
           && *gtk_label_get_text (GTK_LABEL (root)) != '\0' && !in_column_header (root))
    {
      if (!has_tooltip (root))
        g_error ("the label \"%s\", which may be cut, has no tooltip",
                 gtk_label_get_text (GTK_LABEL (root)));
      checked++;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    checked += vs_test_audit_reach (c);
  return checked;
}
