/* SPDX-License-Identifier: MIT */
/* test-state.c — the allocators' state step by step, driven by real input
 * events.
 *
 * Runs under Xvfb (meson wraps it in xvfb-run): keys and clicks are X
 * events made by XTest, so they travel as a user's do to a real VsWindow
 * showing a recorded PyTorch run (tests/data/whatif/default.db).  Proves
 * that in Fragmentation:
 * - ] (and Alt+Right, and a click on Next Event) steps to the next
 *   allocator event and [ (Alt+Left, Previous Event) back, one event at a
 *   time, in the analyzer's order (vs_alloc_steps on the same trace);
 * - after each step the segment map drawn is the analyzer's state after
 *   that step: its segments, blocks and free gaps equal
 *   vs_fragmentation_segments / vs_fragmentation_at for the step, and the
 *   screen changes where the event happened: the pixel at an allocated
 *   block's place turns from free to allocated, and back when stepping
 *   back, and the event's range is marked under its bar;
 * - the event line names the event, and the stack shows the user's frames
 *   first;
 * - each step moves the selected instant to the event's time: the
 *   session, every timeline's marker and Attribution show it, while the
 *   step shown, and the state drawn for it, stay the step's (the
 *   session's answer is not stepped again nor computed twice);
 * - selecting another instant leaves stepping and draws that instant;
 *   one selected while a step's selection waits wins over the step's;
 * - `vramscope-view --pane state --screenshot` saves a picture of the
 *   segment map with an event shown;
 * - on a PyTorch snapshot opened as a file (imported through the snapshot
 *   cache, as `vramscope view FILE.pickle` does), stepping shows the
 *   imported trace's own state after each event and moves the selection.
 *
 * Environment: VS_DATA (tests/data), VS_VIEW (the viewer, for the
 * screenshot).
 */
#include "vs-test-screenshot.h"
#include "vs-test-wait.h"
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include <X11/keysym.h>

#include "vs-state-pane.h"
#include "vs-test-window.h"
#include "vs-test-x11.h"
#include "vs-test-widgets.h"
#include "vs-window-private.h"

#define WAIT_US (30 * G_USEC_PER_SEC)
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static char *trace_path;
static VsWindow *window;
static VsStatePane *pane;
static VsTrace *trace;

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

/* Presses and releases keysym with the modifier mod held (0: none). */
static void
press_key (KeySym keysym, KeySym mod)
{
  vs_test_x11_key (keysym, &mod, mod != 0 ? 1 : 0);
  vs_test_x11_spin (20);
  g_assert_true (wait_until (window_settled, window));
  vs_test_x11_spin (100); /* the frame after the state */
}
/* Clicks the middle of widget. */
static void
click (GtkWidget *widget)
{
  vs_test_x11_click (widget);
  g_assert_true (wait_until (window_settled, window));
  vs_test_x11_spin (100);
}
/* Whether (x, y) of the view shows inside its scrolled window (not
 * scrolled away). */
static gboolean
on_screen (GtkWidget *view, double x, double y)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (view, GTK_TYPE_SCROLLED_WINDOW);
  graphene_point_t p;

  return gtk_widget_compute_point (view, scroller, &GRAPHENE_POINT_INIT (x, y), &p) && p.y > 4
         && p.y < gtk_widget_get_height (scroller) - 16
         && p.x < gtk_widget_get_width (scroller) - 16;
}

/* Whether the block of the event is at least 3 pixels wide on the map
 * (narrower ones may lie under a neighbouring gap's 1-pixel cut). */
static gboolean
wide_enough (GtkWidget *view, const VsAllocStep *s)
{
  double x0, y0, x1, y1;

  return vs_fragmentation_view_locate (VS_FRAGMENTATION_VIEW (view), s->address, &x0, &y0)
         && vs_fragmentation_view_locate (VS_FRAGMENTATION_VIEW (view), s->address + s->bytes - 1,
                                          &x1, &y1)
         && y0 == y1 && x1 - x0 >= 3;
}

/* The block colour (blue over the light background) or the free one
 * (near white, grey). */
static gboolean
is_allocated_colour (guint32 p)
{
  int r = (p >> 16) & 0xff, b = p & 0xff;
  return b > r + 60;
}

static gboolean
is_free_colour (guint32 p)
{
  int r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
  return r > 200 && ABS (r - g) < 12 && ABS (g - b) < 12;
}

static gboolean
shows_document (gpointer data)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  return doc != NULL && vs_window_get_settled (window);
}

/* The mapped button whose action is action. */
static gboolean
is_action_button (GtkWidget *widget, gconstpointer action)
{
  return GTK_IS_BUTTON (widget) && gtk_widget_get_mapped (widget)
         && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), action) == 0;
}

static GtkWidget *
find_action_button (GtkWidget *widget, const char *action)
{
  return vs_test_find (widget, is_action_button, action);
}

/* The instant the view draws. */
static VsInstant *
drawn (void)
{
  VsInstant *in = NULL;
  g_object_get (vs_state_pane_get_view (pane), "instant", &in, NULL);
  g_assert_nonnull (in);
  return in;
}

/* The drawn state equals the trace's own state after step seq. */
static void
assert_drawn_is_trace_state (gint64 seq)
{
  g_autoptr (VsInstant) in = drawn ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) segs = vs_fragmentation_segments (trace, in->device_id, 0, seq, &error);
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  VsFragmentation f;

  g_assert_no_error (error);
  g_assert_cmpint (in->seq, ==, seq);
  g_assert_cmpuint (in->segments->len, ==, segs->len);
  g_assert_cmpmem (in->segments->data, segs->len * sizeof (VsSegment), segs->data,
                   segs->len * sizeof (VsSegment));
  g_assert_true (vs_fragmentation_at (trace, in->device_id, 0, seq, &f, gaps, &error));
  g_assert_cmpuint (in->gaps->len, ==, gaps->len);
  g_assert_cmpmem (in->gaps->data, gaps->len * sizeof (VsFreeGap), gaps->data,
                   gaps->len * sizeof (VsFreeGap));
  g_assert_cmpint (in->frag.largest_free_bytes, ==, f.largest_free_bytes);
}

/* Two steps field by field (a struct's padding is not part of it). */
static gboolean
same_step (const VsAllocStep *a, const VsAllocStep *b)
{
  return a != NULL && b != NULL && a->seq == b->seq && a->time_ns == b->time_ns
         && a->kind == b->kind && a->allocator_id == b->allocator_id && a->id == b->id
         && a->address == b->address && a->bytes == b->bytes && a->block_bytes == b->block_bytes
         && a->stream == b->stream && a->stack_id == b->stack_id;
}

static void
test_stepping (void)
{
  g_autoptr (GError) error = NULL;
  VsSession *session = vs_window_get_session (window);
  g_autoptr (VsAllocSteps) steps = NULL;
  GtkWidget *view, *next_button, *previous_button;
  const VsAllocStep *s;
  gint index;
  guint alloc_checks = 0;

  /* Alt+5: Fragmentation, showing the selected instant. */
  press_key (XK_5, XK_Alt_L);
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (window->pane_stack), ==, "fragmentation");
  g_assert_null (vs_state_pane_get_step (pane));
  view = GTK_WIDGET (vs_state_pane_get_view (pane));
  {
    g_autoptr (VsInstant) in = drawn ();
    g_assert_true (in == vs_session_get_instant (session));
    steps = vs_alloc_steps_load (trace, in->device_id, in->seq, 0, &error);
    g_assert_no_error (error);
    index = vs_alloc_steps_find (steps, in->seq);
  }

  /* ]: the event after the instant. */
  press_key (XK_bracketright, 0);
  s = vs_state_pane_get_step (pane);
  g_assert_nonnull (s);
  g_assert_true (same_step (s, vs_alloc_steps_get (steps, (guint)++index)));
  assert_drawn_is_trace_state (s->seq);

  /* Step forward by ], Alt+Right and the button in turn, 60 events; at
   * every block allocated inside a segment, the screen turns allocated
   * where the block lies, and was free there just before. */
  next_button = find_action_button (GTK_WIDGET (pane), "state.next");
  previous_button = find_action_button (GTK_WIDGET (pane), "state.previous");
  g_assert_nonnull (next_button);
  g_assert_nonnull (previous_button);
  g_assert_nonnull (gtk_widget_get_tooltip_text (next_button));
  g_assert_nonnull (gtk_widget_get_tooltip_text (previous_button));
  /* Both buttons, with a tooltip, reachable by the keyboard. */
  g_assert_cmpuint (vs_test_audit_reach (GTK_WIDGET (pane)), >=, 2);
  for (guint k = 0; k < 60 && index + 1 < (gint)vs_alloc_steps_get_n (steps); k++)
    {
      const VsAllocStep *want = vs_alloc_steps_get (steps, (guint)index + 1);
      gboolean check = want->kind == VS_ALLOC_STEP_ALLOC && want->bytes >= 64 * 1024;
      double x = 0, y = 0;
      guint32 before = 0;

      /* Where the block will be, on the map before it (its segment is
       * drawn then unless this very event's segment is new). */
      if (check && wide_enough (view, want)
          && vs_fragmentation_view_locate (VS_FRAGMENTATION_VIEW (view),
                                           want->address + want->bytes / 2, &x, &y)
          && on_screen (view, x, y))
        before = vs_test_x11_screen_pixel (view, x, y);
      else
        check = FALSE;
      if (k % 3 == 0)
        press_key (XK_bracketright, 0);
      else if (k % 3 == 1)
        press_key (XK_Right, XK_Alt_L);
      else
        click (next_button);
      s = vs_state_pane_get_step (pane);
      g_assert_nonnull (s);
      g_assert_true (same_step (s, want));
      index++;
      assert_drawn_is_trace_state (s->seq);
      if (check && is_free_colour (before))
        {
          double x2, y2;
          g_assert_true (vs_fragmentation_view_locate (VS_FRAGMENTATION_VIEW (view),
                                                       want->address + want->bytes / 2, &x2, &y2));
          if (!on_screen (view, x2, y2))
            continue; /* under the scroll bar, say */
          g_assert_true (is_allocated_colour (vs_test_x11_screen_pixel (view, x2, y2)));
          /* The event's block marked under its bar (ink: dark). */
          g_assert_cmpuint (vs_test_x11_screen_pixel (view, x2, y2 + 10.5) & 0x808080, ==, 0);
          alloc_checks++;

          /* [ goes back: free there again, the state before. */
          press_key (XK_bracketleft, 0);
          s = vs_state_pane_get_step (pane);
          g_assert_true (same_step (s, vs_alloc_steps_get (steps, (guint)index - 1)));
          assert_drawn_is_trace_state (s->seq);
          g_assert_true (vs_fragmentation_view_locate (VS_FRAGMENTATION_VIEW (view),
                                                       want->address + want->bytes / 2, &x2, &y2));
          /* (the previous event's row is the one revealed now) */
          if (on_screen (view, x2, y2))
            g_assert_true (is_free_colour (vs_test_x11_screen_pixel (view, x2, y2)));
          /* Alt+Right forward again. */
          press_key (XK_Right, XK_Alt_L);
          g_assert_true (same_step (vs_state_pane_get_step (pane), want));
        }
    }
  g_assert_cmpuint (alloc_checks, >=, 3);

  /* The Previous Event button and Alt+Left step back. */
  click (previous_button);
  g_assert_true (
      same_step (vs_state_pane_get_step (pane), vs_alloc_steps_get (steps, (guint)--index)));
  press_key (XK_Left, XK_Alt_L);
  s = vs_state_pane_get_step (pane);
  g_assert_true (same_step (s, vs_alloc_steps_get (steps, (guint)--index)));
  assert_drawn_is_trace_state (s->seq);

  /* Another instant: stepping stops and the map draws it. */
  vs_session_select_instant (session, vs_session_get_device (session), 0);
  g_assert_true (wait_until (window_settled, window));
  g_assert_null (vs_state_pane_get_step (pane));
  {
    g_autoptr (VsInstant) in = drawn ();
    g_assert_true (in == vs_session_get_instant (session));
  }
}

/* The timeline's marked instant on device. */
static gint64
chart_instant (gint64 device)
{
  gint64 t = -2;

  for (guint i = 0; i < window->slots->len; i++)
    {
      VsChartSlot *slot = &g_array_index (window->slots, VsChartSlot, i);
      if (slot->device_id == device)
        g_object_get (slot->chart, "instant", &t, NULL);
    }
  return t;
}

static const VsAllocStep *last_step;

static gboolean
step_changed (gpointer data)
{
  const VsAllocStep *s = vs_state_pane_get_step (pane);
  return s != NULL && !same_step (s, last_step);
}

/* Presses keysym, waits until the pane shows another step, then (its
 * state drawn) until the window settles: returns the instant drawn for
 * the step before the session's answer could come. */
static VsInstant *
step_by_key (KeySym keysym)
{
  VsInstant *first;

  last_step = vs_state_pane_get_step (pane);
  vs_test_x11_key_now (keysym);
  g_assert_true (wait_until (step_changed, NULL));
  first = drawn ();
  g_assert_true (wait_until (window_settled, window));
  vs_test_x11_spin (60);
  return first;
}

/* Stepping moves the selection: the session's instant, the timeline's
 * marker and Attribution's instant are the event's time, and the step
 * stays (the session's answer does not reset it or draw it again). */
static void
test_selection_follows (void)
{
  VsSession *session = vs_window_get_session (window);
  VsAttributionPane *attribution = window->attribution_pane;
  guint moved = 0;

  g_assert_cmpstr (adw_view_stack_get_visible_child_name (window->pane_stack), ==, "fragmentation");
  press_key (XK_bracketright, 0);
  for (guint k = 0; k < 40; k++)
    {
      gint64 before = vs_session_get_selected_time (session);
      g_autoptr (VsInstant) first = step_by_key (k % 4 == 3 ? XK_bracketleft : XK_bracketright);
      g_autoptr (VsInstant) now = drawn ();
      g_autoptr (VsInstant) shown = NULL;
      const VsAllocStep *s = vs_state_pane_get_step (pane);
      VsInstant *in = vs_session_get_instant (session);

      g_assert_nonnull (s);
      g_assert_true (now == first);
      g_assert_cmpint (now->seq, ==, s->seq);
      if (s->time_ns == VS_UNKNOWN)
        continue;
      g_assert_cmpint (vs_session_get_selected_time (session), ==, s->time_ns);
      g_assert_nonnull (in);
      g_assert_cmpint (in->time_ns, ==, s->time_ns);
      g_assert_cmpint (in->device_id, ==, now->device_id);
      g_assert_cmpint (chart_instant (in->device_id), ==, s->time_ns);
      g_object_get (attribution, "instant", &shown, NULL);
      g_assert_true (shown == in);
      moved += s->time_ns != before;
    }
  g_assert_cmpuint (moved, >=, 20);
}

/* A selection made while a step's waits (a click on a timeline selects
 * the clicked time in the session: vs-window-timelines.c) wins: the
 * step's waiting selection is dropped at once, and once the step's delay
 * has passed the clicked instant is still the session's. */
static void
test_click_wins (void)
{
  VsSession *session = vs_window_get_session (window);
  gint64 device = -1, clicked = -1;
  guint k;

  /* A step seen while its selection still waits: under load the delay
   * can pass before the step is seen, then step again. */
  for (k = 0; k < 20; k++)
    {
      const VsAllocStep *s;

      last_step = vs_state_pane_get_step (pane);
      vs_test_x11_key_now (XK_bracketright);
      g_assert_true (wait_until (step_changed, NULL));
      s = vs_state_pane_get_step (pane);
      if (!vs_state_pane_is_selecting (pane) || s->time_ns == VS_UNKNOWN || s->time_ns <= 0)
        continue;
      device = vs_session_get_device (session);
      clicked = s->time_ns - 1;
      vs_session_select_instant (session, device, clicked);
      break;
    }
  g_assert_cmpuint (k, <, 20);
  g_assert_false (vs_state_pane_is_selecting (pane));
  g_assert_true (wait_until (window_settled, window));
  vs_test_x11_spin (400); /* past the step's delay (150 ms) */
  g_assert_cmpint (vs_session_get_selected_time (session), ==, clicked);
  g_assert_cmpint (vs_session_get_device (session), ==, device);
}

static gboolean
stack_shown (gpointer data)
{
  const char *text = vs_state_pane_get_stack_text (pane);
  return text != NULL
         && (g_str_has_prefix (text, "Your code:")
             || g_str_has_prefix (text, "Libraries and runtime:"));
}

/* The event line and the stack of an allocation with a stack. */
static void
test_event_text (void)
{
  const VsAllocStep *s;

  /* Step until an event whose stack the trace has. */
  press_key (XK_bracketright, 0);
  for (guint k = 0; k < 200 && vs_state_pane_get_step (pane)->stack_id == 0; k++)
    press_key (XK_bracketright, 0);
  s = vs_state_pane_get_step (pane);
  g_assert_cmpint (s->stack_id, !=, 0);
  g_assert_true (wait_until (stack_shown, NULL));
  {
    g_autoptr (GError) error = NULL;
    const VsStackInfo *st = vs_stack_get (trace, s->stack_id, &error);
    const char *text = vs_state_pane_get_stack_text (pane);

    g_assert_no_error (error);
    /* The stack's innermost user frame leads when it has one. */
    if (st->innermost_user != NULL)
      {
        g_autofree char *first = g_strdup_printf ("Your code:\n  %s", st->innermost_user->text);
        g_assert_true (g_str_has_prefix (text, first));
      }
    else
      g_assert_true (g_str_has_prefix (text, "Libraries and runtime:"));
  }
  /* The event line: what, how large, where. */
  {
    g_autofree char *size = vs_format_bytes (s->bytes);
    const char *line = vs_state_pane_get_event_text (pane);
    g_assert_true (strstr (line, size) != NULL);
    g_assert_true (g_str_has_prefix (line, s->kind == VS_ALLOC_STEP_ALLOC  ? "Block allocated"
                                           : s->kind == VS_ALLOC_STEP_FREE ? "Block freed"
                                                                           : "Segment"));
  }
}

static VsDocument *old_document;

static gboolean
shows_other_document (gpointer data)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  return doc != NULL && doc != old_document && vs_window_get_settled (window);
}

/* A snapshot opened as `vramscope view FILE.pickle` opens it: imported
 * into the snapshot cache, then stepped event by event. */
static void
test_snapshot (void)
{
  g_autofree char *pickle
      = g_build_filename (g_getenv ("VS_DATA"), "snapshots", "train.pickle", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (pickle);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsAllocSteps) steps = NULL;
  g_autofree char *cached = NULL;
  VsSession *session = vs_window_get_session (window);
  gint index;
  guint stepped = 0;

  old_document = vs_session_get_document (session);
  vs_window_open (window, file);
  g_assert_true (wait_until (shows_other_document, NULL));
  /* The trace shown is the import in the user's cache folder. */
  cached = g_file_get_path (vs_document_get_file (vs_session_get_document (session)));
  g_assert_true (g_str_has_prefix (cached, g_get_user_cache_dir ()));
  g_assert_true (g_str_has_suffix (cached, ".db"));
  vs_trace_free (trace);
  trace = vs_trace_open (cached, &error);
  g_assert_no_error (error);

  press_key (XK_5, XK_Alt_L);
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (window->pane_stack), ==, "fragmentation");
  {
    g_autoptr (VsInstant) in = drawn ();
    steps = vs_alloc_steps_load (trace, in->device_id, in->seq, 0, &error);
    g_assert_no_error (error);
    index = vs_alloc_steps_find (steps, in->seq);
  }
  g_assert_cmpuint (vs_alloc_steps_get_n (steps), >=, 20);
  /* Forward while there are events after, else back. */
  for (guint k = 0; k < 24; k++)
    {
      gboolean forward = index + 1 < (gint)vs_alloc_steps_get_n (steps);
      const VsAllocStep *s;
      VsInstant *in;

      if (!forward && index <= 0)
        break;
      press_key (forward ? XK_bracketright : XK_bracketleft, 0);
      index += forward ? 1 : -1;
      s = vs_state_pane_get_step (pane);
      g_assert_true (same_step (s, vs_alloc_steps_get (steps, (guint)index)));
      assert_drawn_is_trace_state (s->seq);
      in = vs_session_get_instant (session);
      if (s->time_ns != VS_UNKNOWN)
        {
          g_assert_cmpint (in->time_ns, ==, s->time_ns);
          g_assert_cmpint (chart_instant (in->device_id), ==, s->time_ns);
        }
      stepped++;
    }
  g_assert_cmpuint (stepped, >=, 20);
}

/* --pane state --screenshot: the map of an event, with a block drawn. */
static void
test_screenshot (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-state-XXXXXX", NULL);
  g_autofree char *png = g_build_filename (dir, "state.png", NULL);
  const char *argv[] = { g_getenv ("VS_VIEW"),
                         "--screenshot",
                         png,
                         "--size",
                         "1280x900",
                         "--pane",
                         "state",
                         trace_path,
                         NULL };
  g_autofree guchar *pixels = NULL;
  int w, h, blue = 0;

  pixels = vs_test_screenshot (argv, NULL, png, &w, &h);
  /* The lower part (the pane, under the timeline) holds segment bars. */
  for (int y = h * 2 / 3; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guchar *p = pixels + ((gsize)y * w + x) * 4; /* B G R A */
        guint32 rgb = ((guint32)p[2] << 16) | ((guint32)p[1] << 8) | p[0];
        blue += is_allocated_colour (rgb);
      }
  g_assert_cmpint (blue, >, 2000);
  g_unlink (png);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  int status;
  g_autoptr (GError) error = NULL;
  g_autoptr (GFile) file = NULL;

  /* The snapshot's import goes to this home's cache folder. */
  vs_test_home_enter ("vs-state-XXXXXX");
  trace_path = g_build_filename (g_getenv ("VS_DATA"), "whatif", "default.db", NULL);
  g_test_init (&argc, &argv, NULL);
  trace = vs_trace_open (trace_path, &error);
  g_assert_no_error (error);
  window = vs_test_window_new (1280, 1000);
  file = g_file_new_for_path (trace_path);
  vs_window_open (window, file);
  g_assert_true (wait_until (shows_document, NULL));
  pane = window->state_pane;
  g_assert_true (vs_test_x11_focus (GTK_WINDOW (window)));

  g_test_add_func ("/state/stepping", test_stepping);
  g_test_add_func ("/state/selection-follows", test_selection_follows);
  g_test_add_func ("/state/click-wins", test_click_wins);
  g_test_add_func ("/state/event-text", test_event_text);
  g_test_add_func ("/state/screenshot", test_screenshot);
  g_test_add_func ("/state/snapshot", test_snapshot);
  status = vs_test_window_finish (g_test_run ());
  vs_trace_free (trace);
  return status;
}
