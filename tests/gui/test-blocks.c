/* SPDX-License-Identifier: MIT */
/* test-blocks.c — the Over Time pane (allocations over time) driven by
 * real input events.
 *
 * Runs under Xvfb with the cairo renderer; keys, pointer moves and clicks
 * are XTest events, so they travel as a user's do.  On the bundled trace
 * (a PyTorch run recorded with the collector) and on an imported PyTorch
 * snapshot, proves that:
 * - Alt+7 shows the pane, which draws the bands of the selected device
 *   over the timelines' visible range;
 * - the screen shows each band in its site's colour where the bands say
 *   it lies, the Other band in grey above the bands, and the background
 *   above the stack (pixels read back from the X server);
 * - hovering a band makes it the hovered one, whose tooltip text gives
 *   its size, times and site;
 * - clicking it selects it: the status line gives its size, the main
 *   chart's instant moves to its allocation, Attribution searches its
 *   site, and the other sites' bands fade on screen;
 * - Down/Up move the selection along the stack by keyboard.
 *
 * Environment: VS_DATA (tests/data).
 */
#include "vs-test-wait.h"
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include <X11/keysym.h>

#include "vs-attribution-pane.h"
#include "vs-blocks-draw.h"
#include "vs-blocks-pane.h"
#include "vs-test-window.h"
#include "vs-test-x11.h"
#include "vs-window-private.h"

#define WAIT_US (30 * G_USEC_PER_SEC)
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static VsWindow *window;

static guint32
rgb_of (const GdkRGBA *c)
{
  return ((guint32)lround (c->red * 255) << 16) | ((guint32)lround (c->green * 255) << 8)
         | (guint32)lround (c->blue * 255);
}

/* Whether two colours differ by at most 2 in each channel. */
static gboolean
close_to (guint32 a, guint32 b)
{
  for (int s = 0; s < 24; s += 8)
    if (ABS ((int)((a >> s) & 0xff) - (int)((b >> s) & 0xff)) > 2)
      return FALSE;
  return TRUE;
}

static VsBlocksChart *
chart (void)
{
  GtkWidget *pane = adw_view_stack_get_child_by_name (window->pane_stack, "blocks");

  return vs_blocks_pane_get_chart (VS_BLOCKS_PANE (pane));
}

static gboolean
chart_settled (gpointer data)
{
  return vs_blocks_chart_is_settled (chart ()) && vs_window_get_settled (window);
}

static gboolean
selected_is (gpointer data)
{
  return vs_blocks_chart_get_selected (chart ()) == GPOINTER_TO_INT (data);
}

static gboolean
hovered_is (gpointer data)
{
  return vs_blocks_chart_get_hovered (chart ()) == GPOINTER_TO_INT (data);
}

/* A document other than data is shown, and settled. */
static gboolean
new_document (gpointer data)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));

  return doc != NULL && (gpointer)doc != data && vs_window_get_settled (window);
}

static gboolean
blocks_shown (gpointer data)
{
  return g_strcmp0 (adw_view_stack_get_visible_child_name (window->pane_stack), "blocks") == 0;
}

/* The band drawn over the most pixels, and the point at the middle of its
 * longest run. */
static int
largest_band (const VsBlockBands *r, const VsBlocksLayout *l, double *x, double *y)
{
  int best = -1;
  double best_area = 0;

  for (guint i = 0; i < r->bands->len; i++)
    {
      const VsBand *b = &g_array_index (r->bands, VsBand, i);
      double h = b->block.bytes / l->y_max * l->height;
      double area = h * b->n_columns;

      if (b->n_columns >= 3 && h >= 6 && area > best_area)
        {
          guint mid = b->n_columns / 2;
          gint64 bottom = g_array_index (r->bottoms, gint64, b->offset + mid);
          double col = l->width / r->n_columns;

          best = (int)i;
          best_area = area;
          *x = l->x + (b->first_column + mid + 0.5) * col;
          *y = l->y + l->height - (bottom + b->block.bytes / 2.0) / l->y_max * l->height;
        }
    }
  return best;
}

static void
open_and_show (const char *name)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), name, NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  const KeySym alt[] = { XK_Alt_L };
  gpointer before = vs_session_get_document (vs_window_get_session (window));

  vs_window_open (window, file);
  g_assert_true (wait_until (new_document, before));
  vs_test_x11_key (XK_7, alt, 1);
  g_assert_true (wait_until (blocks_shown, NULL));
  g_assert_true (wait_until (chart_settled, NULL));
  vs_test_x11_spin (200);
}

/* A pixel of a widget on screen, a colour, and how the pixel should stand
 * to it once the main loop has drawn the frame asked for (later on a busy
 * machine): the same, within 2 a channel, or another. */
typedef enum
{
  PIXEL_IS,
  PIXEL_CLOSE_TO,
  PIXEL_DIFFERS,
} PixelRelation;

typedef struct
{
  GtkWidget *widget;
  double x, y;
  guint32 colour;
  PixelRelation relation;
} PixelWatch;

static gboolean
pixel_holds (gpointer data)
{
  PixelWatch *watch = data;
  guint32 p = vs_test_x11_screen_pixel (watch->widget, watch->x, watch->y);

  switch (watch->relation)
    {
    case PIXEL_IS:
      return p == watch->colour;
    case PIXEL_CLOSE_TO:
      return close_to (p, watch->colour);
    case PIXEL_DIFFERS:
    default:
      return p != watch->colour;
    }
}

/* Waits (bounded) until the pixel at (x, y) of w stands to colour as
 * relation says; returns whether it came to. */
static gboolean
wait_pixel (GtkWidget *w, double x, double y, guint32 colour, PixelRelation relation)
{
  PixelWatch watch = { w, x, y, colour, relation };

  return wait_until (pixel_holds, &watch);
}

/* Hover, pixels, click and keys on the trace shown. */
static void
check_pane (void)
{
  VsBlocksChart *c = chart ();
  GtkWidget *w = GTK_WIDGET (c);
  VsSession *session = vs_window_get_session (window);
  const VsBlockBands *r = vs_blocks_chart_get_bands (c);
  VsBlocksLayout l;
  GdkRGBA site_color, other_color;
  const VsBand *b;
  VsBand saved;
  double x = 0, y = 0;
  int band;
  g_autofree char *size = NULL;
  g_autofree char *text = NULL;

  g_assert_nonnull (r);
  g_assert_cmpuint (r->bands->len, >, 0);
  g_assert_cmpint (r->device_id, ==, vs_session_get_device (session));
  g_assert_cmpint (r->from_ns, ==, vs_session_get_visible_range (session)->begin);
  g_assert_cmpint (r->to_ns, ==, vs_session_get_visible_range (session)->end);
  vs_blocks_layout (r, gtk_widget_get_width (w), gtk_widget_get_height (w), &l);
  band = largest_band (r, &l, &x, &y);
  g_assert_cmpint (band, >=, 0);
  b = &g_array_index (r->bands, VsBand, band);

  /* The screen: the band in its site's colour, the background above the
   * tallest column. */
  vs_blocks_site_color (b->stack->site, &site_color);
  wait_pixel (w, x, y, rgb_of (&site_color), PIXEL_IS);
  g_assert_cmphex (vs_test_x11_screen_pixel (w, x, y), ==, rgb_of (&site_color));
  {
    guint c_other = G_MAXUINT;

    for (guint k = 0; k < r->n_columns && c_other == G_MAXUINT; k++)
      if (vs_block_bands_other (r, k) / l.y_max * l.height >= 6)
        c_other = k;
    if (c_other != G_MAXUINT)
      {
        double col = l.width / r->n_columns;
        double ox = l.x + (c_other + 0.5) * col;
        gint64 mid
            = g_array_index (r->banded, gint64, c_other) + vs_block_bands_other (r, c_other) / 2;
        double oy = l.y + l.height - mid / l.y_max * l.height;

        vs_blocks_other_color (adw_style_manager_get_dark (adw_style_manager_get_default ()),
                               &other_color);
        wait_pixel (w, ox, oy, rgb_of (&other_color), PIXEL_CLOSE_TO);
        if (!close_to (vs_test_x11_screen_pixel (w, ox, oy), rgb_of (&other_color)))
          g_error ("other band at column %u (%.1f, %.1f): %06x, not %06x; width %d, %u columns, "
                   "plot %.1f + %.1f",
                   c_other, ox, oy, vs_test_x11_screen_pixel (w, ox, oy), rgb_of (&other_color),
                   gtk_widget_get_width (w), r->n_columns, l.x, l.width);
      }
  }

  /* Hovering: the band under the pointer; its tooltip gives its size. */
  vs_test_x11_move_to (w, x + 1, y);
  vs_test_x11_move_to (w, x, y);
  g_assert_true (wait_until (hovered_is, GINT_TO_POINTER (band)));
  text = vs_blocks_chart_describe (c, band);
  size = vs_format_bytes (b->block.bytes);
  g_assert_true (g_str_has_prefix (text, size));
  if (*b->stack->site != '\0')
    g_assert_nonnull (strstr (text, b->stack->site));

  /* Clicking: selected, the instant at its allocation, its site in
   * Attribution, the status line saying its size.  The selection asks
   * for a new picture: the bands are read again (the same ones). */
  saved = *b;
  vs_test_x11_click_at (w, x, y, 1);
  g_assert_true (wait_until (selected_is, GINT_TO_POINTER (band)));
  g_assert_cmpint (vs_session_get_selected_time (session), ==,
                   saved.block.alloc_time_ns == VS_UNKNOWN ? 0 : saved.block.alloc_time_ns);
  g_assert_cmpstr (vs_attribution_pane_get_search (window->attribution_pane), ==,
                   saved.stack->site);
  {
    g_autofree char *line = vs_pane_get_copy_text (
        VS_PANE (adw_view_stack_get_child_by_name (window->pane_stack, "blocks")),
        VS_PANE_COPY_ROW);
    g_assert_true (g_str_has_prefix (line, size));
  }
  g_assert_true (wait_until (chart_settled, NULL));
  vs_test_x11_spin (200);
  /* Every button and every label that may be cut has a tooltip, and the
   * buttons take the keyboard focus (the status line and the chart). */
  g_assert_cmpuint (
      vs_test_audit_reach (adw_view_stack_get_child_by_name (window->pane_stack, "blocks")), >=, 1);
  r = vs_blocks_chart_get_bands (c);
  b = &g_array_index (r->bands, VsBand, band);
  g_assert_cmpint (b->block.id, ==, saved.block.id);
  /* Its own colour stays; a band of another site, if any, fades. */
  wait_pixel (w, x, y, rgb_of (&site_color), PIXEL_IS);
  g_assert_cmphex (vs_test_x11_screen_pixel (w, x, y), ==, rgb_of (&site_color));
  for (guint i = 0; i < r->bands->len; i++)
    {
      const VsBand *o = &g_array_index (r->bands, VsBand, i);
      double h = o->block.bytes / l.y_max * l.height;

      if (g_strcmp0 (o->stack->site, b->stack->site) != 0 && o->n_columns >= 3 && h >= 6)
        {
          guint mid = o->n_columns / 2;
          gint64 bottom = g_array_index (r->bottoms, gint64, o->offset + mid);
          double ox = l.x + (o->first_column + mid + 0.5) * (l.width / r->n_columns);
          double oy = l.y + l.height - (bottom + o->block.bytes / 2.0) / l.y_max * l.height;
          GdkRGBA oc;

          vs_blocks_site_color (o->stack->site, &oc);
          /* The faded picture is on screen once the main loop has drawn
           * the frame after it (later on a busy machine). */
          wait_pixel (w, ox, oy, rgb_of (&oc), PIXEL_DIFFERS);
          g_assert_cmphex (vs_test_x11_screen_pixel (w, ox, oy), !=, rgb_of (&oc));
          break;
        }
    }

  /* The keyboard: Down moves one band down the stack, Up back. */
  if (band > 0)
    {
      vs_test_x11_key (XK_Down, NULL, 0);
      g_assert_true (wait_until (selected_is, GINT_TO_POINTER (band - 1)));
      vs_test_x11_key (XK_Up, NULL, 0);
      g_assert_true (wait_until (selected_is, GINT_TO_POINTER (band)));
    }
}

/* The bundled trace, recorded with the collector. */
static void
test_bundled (void)
{
  open_and_show ("torch-eval-leak.db");
  check_pane ();
}

/* A PyTorch snapshot, imported. */
static void
test_snapshot (void)
{
  open_and_show ("snapshots/train.pickle");
  check_pane ();
}

int
main (int argc, char **argv)
{
  vs_test_home_enter ("vs-blocks-XXXXXX");
  g_test_init (&argc, &argv, NULL);
  /* Tall enough that the bundled trace's largest allocation is a band
   * several pixels high under the timelines and the pane switcher. */
  window = vs_test_window_new (1280, 1100);
  vs_test_x11_spin (300);
  g_assert_true (vs_test_x11_focus (GTK_WINDOW (window)));

  g_test_add_func ("/blocks/bundled", test_bundled);
  g_test_add_func ("/blocks/snapshot", test_snapshot);
  return vs_test_window_finish (g_test_run ());
}
