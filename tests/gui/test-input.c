/* SPDX-License-Identifier: MIT */
/* test-input.c — the viewer driven by real input events.
 *
 * Runs under Xvfb (meson wraps it in xvfb-run): the keys and clicks are
 * X events made by the XTest extension, so they travel the way a user's
 * do — X server, GDK, GTK's shortcut controllers and gestures — to a real
 * VsWindow showing a committed trace.  Proves that:
 * - Alt+1…5 show the five panes in the switcher's order;
 * - Ctrl+F goes to the shown pane's search; typing in Attribution keeps
 *   exactly the paths to the frames that contain the text (every matching
 *   frame shown, every row leading to one); in the Flame Graph it reports
 *   the matching frames and their bytes, as counted here from the
 *   instant's tree; in Allocations it filters by site or stack;
 * - a click on a row and Ctrl+C / Shift+Ctrl+C put that row's cells or
 *   stack on the clipboard, as computed here from the item; a right click
 *   selects the row under the pointer and its menu's Copy Frame copies
 *   that row's frame, as the Menu key's menu does for the focused row; a right click on a flame graph box and Copy Stack
 *   copy that box's stack, a left click on it and Ctrl+C its row;
 * - the stack panel shows the selected allocation's stack, and each
 *   failed allocation lists its stack;
 * - the timeline's tooltip over a failure marker names what failed, its
 *   size, when and why, and over an NVTX range names it;
 * - the recent traces list a_b.db as "a_b.db" with its folder under it,
 *   and a click on one opens it;
 * - opening a file that is not a trace keeps the trace shown and says why
 *   in a toast.
 *
 * Environment: VS_DATA (tests/data, the committed traces); with
 * VS_INPUT_SHOTS set to a folder, the screen (popovers and tooltips
 * included) is saved there as PNGs at each step worth looking at.
 */
#include "vs-test-wait.h"
#include <adwaita.h>
#include <gdk/x11/gdkx.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include <X11/keysym.h>

#include "vs-allocations-pane.h"
#include "vs-attribution-pane.h"
#include "vs-block-item.h"
#include "vs-chart-draw.h"
#include "vs-diagnosis-pane.h"
#include "vs-flame-pane.h"
#include "vs-memory-chart.h"
#include "vs-oom-text.h"
#include "vs-tree-item.h"
#include "vs-test-window.h"
#include "vs-test-x11.h"
#include "vs-test-widgets.h"
#include "vs-window-private.h"

#define WAIT_US (20 * G_USEC_PER_SEC)

static const char *home; /* a private $HOME for the recent files */
static char *trace_path; /* the trace shown: $HOME/runs/a_b.db */
static char *other_path; /* another trace: $HOME/other/sample-oom.db */
static VsWindow *window;

/* ------------------------------------------------------------ waiting -- */

/* Runs the main loop until done (data) holds or WAIT_US passed. */
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static gboolean
window_settled (gpointer data)
{
  return vs_window_get_settled (data);
}

/* -------------------------------------------------------- X11 input -- */

static void
ctrl_key (KeySym keysym)
{
  const KeySym mods[] = { XK_Control_L };
  vs_test_x11_key (keysym, mods, 1);
}

/* Clicks the middle of widget. */
static void
click (GtkWidget *widget, guint button)
{
  vs_test_x11_click_at (widget, gtk_widget_get_width (widget) / 2.0,
                        gtk_widget_get_height (widget) / 2.0, button);
}

/* Saves the whole X screen as VS_INPUT_SHOTS/name.png (nothing when the
 * variable is unset): what a user sees, popovers and tooltips included. */
static void
shoot (const char *name)
{
  const char *dir = g_getenv ("VS_INPUT_SHOTS");
  Display *d = gdk_x11_display_get_xdisplay (gdk_display_get_default ());
  int w = DisplayWidth (d, DefaultScreen (d)), h = DisplayHeight (d, DefaultScreen (d));
  g_autofree char *path = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  XImage *image;
  guchar *rgb;

  if (dir == NULL)
    return;
  vs_test_x11_spin (300);
  image = XGetImage (d, DefaultRootWindow (d), 0, 0, w, h, AllPlanes, ZPixmap);
  g_assert_nonnull (image);
  rgb = g_malloc ((gsize)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        unsigned long p = XGetPixel (image, x, y);
        guchar *o = rgb + ((gsize)y * w + x) * 3;
        o[0] = (p >> 16) & 0xff;
        o[1] = (p >> 8) & 0xff;
        o[2] = p & 0xff;
      }
  XDestroyImage (image);
  bytes = g_bytes_new_take (rgb, (gsize)w * h * 3);
  texture = gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8, bytes, (gsize)w * 3);
  path = g_strdup_printf ("%s/%s.png", dir, name);
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

/* ------------------------------------------------------ the widgets -- */

/* The label under widget whose text starts with prefix (NULL: none). */
static gboolean
is_label_prefix (GtkWidget *widget, gconstpointer prefix)
{
  return GTK_IS_LABEL (widget)
         && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (widget)), prefix);
}

static GtkWidget *
find_label_prefix (GtkWidget *widget, const char *prefix)
{
  return vs_test_find (widget, is_label_prefix, prefix);
}

static GtkWidget *
shown_pane (void)
{
  return adw_view_stack_get_visible_child (window->pane_stack);
}

static const char *
shown_pane_name (void)
{
  return adw_view_stack_get_visible_child_name (window->pane_stack);
}

/* The first search entry of the shown pane. */
static GtkWidget *
pane_search_entry (void)
{
  GtkWidget *entry = vs_test_find_type (shown_pane (), GTK_TYPE_SEARCH_ENTRY);
  g_assert_nonnull (entry);
  return entry;
}

/* ------------------------------------------------------- clipboard -- */

/* One read of the clipboard after another, driven by the main loop: no
 * read waits inside another wait, so one bounded wait covers them all. */
typedef struct
{
  const char *unlike; /* the text to wait past; NULL: any text */
  char *text;         /* what the last read gave */
  gboolean reading;
} ClipboardWatch;

static void
on_text (GObject *source, GAsyncResult *result, gpointer data)
{
  ClipboardWatch *watch = data;
  g_autoptr (GError) error = NULL;

  g_free (watch->text);
  watch->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, &error);
  g_assert_no_error (error);
  if (watch->text == NULL)
    watch->text = g_strdup ("");
  watch->reading = FALSE;
}

/* Whether the last read gave the text waited for; else starts the next
 * read when none is under way. */
static gboolean
clipboard_reads (gpointer data)
{
  ClipboardWatch *watch = data;

  if (watch->reading)
    return FALSE;
  if (watch->text != NULL && (watch->unlike == NULL || g_strcmp0 (watch->text, watch->unlike) != 0))
    return TRUE;
  watch->reading = TRUE;
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (GTK_WIDGET (window)), NULL, on_text,
                                 watch);
  return FALSE;
}

/* The clipboard's text once a read gives text other than unlike (NULL:
 * the first read's). */
static char *
clipboard_text_unlike (const char *unlike)
{
  ClipboardWatch watch = { unlike, NULL, FALSE };

  g_assert_true (wait_until (clipboard_reads, &watch));
  return watch.text;
}

static char *
clipboard_text (void)
{
  return clipboard_text_unlike (NULL);
}

/* Puts a marker on the clipboard, so a copy that does nothing shows. */
static void
clear_clipboard (void)
{
  g_autofree char *t = NULL;

  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (window)), "(nothing copied)");
  t = clipboard_text ();
  g_assert_cmpstr (t, ==, "(nothing copied)");
}

/* What a copy put on the clipboard after clear_clipboard(), once the
 * events that asked for it have arrived. */
static char *
copied_text (void)
{
  return clipboard_text_unlike ("(nothing copied)");
}

static gboolean
focus_in (gpointer data)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  return focus != NULL && (focus == data || gtk_widget_is_ancestor (focus, data));
}

typedef struct
{
  GtkEditable *entry;
  const char *text;
} EntryText;

static gboolean
entry_reads (gpointer data)
{
  EntryText *e = data;
  return g_strcmp0 (gtk_editable_get_text (e->entry), e->text) == 0;
}

/* Waits until entry's text is text (typed keys all arrived). */
static void
wait_entry (GtkWidget *entry, const char *text)
{
  EntryText e = { GTK_EDITABLE (entry), text };
  g_assert_true (wait_until (entry_reads, &e));
}

static gboolean
popover_shown (gpointer data)
{
  GtkWidget *popover = vs_test_find_type (data, GTK_TYPE_POPOVER_MENU);
  return popover != NULL && gtk_widget_get_mapped (popover);
}

/* The copy menu of pane, once it is on screen. */
static GtkWidget *
wait_menu (GtkWidget *pane)
{
  g_assert_true (wait_until (popover_shown, pane));
  return vs_test_find_type (pane, GTK_TYPE_POPOVER_MENU);
}

/* ---------------------------------------------------------- helpers -- */

/* Whether the ASCII-case-insensitive needle is in hay (written here, not
 * taken from the viewer, so the check is independent). */
static gboolean
contains (const char *hay, const char *needle)
{
  g_autofree char *h = g_ascii_strdown (hay, -1);
  g_autofree char *n = g_ascii_strdown (needle, -1);
  return strstr (h, n) != NULL;
}

static guint
count_matching (const VsTreeNode *n, const char *needle)
{
  guint c = 0;
  for (guint i = 0; n->children != NULL && i < n->children->len; i++)
    {
      const VsTreeNode *k = g_ptr_array_index (n->children, i);
      c += contains (k->label, needle) + count_matching (k, needle);
    }
  return c;
}

static gboolean
subtree_has (const VsTreeNode *n, const char *needle)
{
  if (n->parent != NULL && contains (n->label, needle))
    return TRUE;
  for (guint i = 0; n->children != NULL && i < n->children->len; i++)
    if (subtree_has (g_ptr_array_index (n->children, i), needle))
      return TRUE;
  return FALSE;
}

static gint64
bytes_matching (const VsTreeNode *n, const char *needle)
{
  gint64 b = 0;
  if (n->parent != NULL && contains (n->label, needle))
    return n->total_bytes;
  for (guint i = 0; n->children != NULL && i < n->children->len; i++)
    b += bytes_matching (g_ptr_array_index (n->children, i), needle);
  return b;
}

/* The frames from the top level down to n, or from n up when up. */
static char *
path_text (const VsTreeNode *n, gboolean up)
{
  g_autoptr (GPtrArray) path = g_ptr_array_new ();
  GString *s = g_string_new (NULL);

  for (; n->parent != NULL; n = n->parent)
    g_ptr_array_insert (path, 0, (gpointer)n->label);
  for (guint i = 0; i < path->len; i++)
    g_string_append_printf (s, "%s\n",
                            (char *)g_ptr_array_index (path, up ? path->len - 1 - i : i));
  return g_string_free (s, FALSE);
}

static VsInstant *
instant (void)
{
  VsInstant *in = vs_session_get_instant (vs_window_get_session (window));
  g_assert_nonnull (in);
  return in;
}

static gboolean
pane_named (gpointer data)
{
  return g_strcmp0 (shown_pane_name (), data) == 0;
}

static void
show_pane_by_keys (guint digit, const char *name)
{
  const KeySym alt[] = { XK_Alt_L };
  vs_test_x11_key (XK_1 + digit - 1, alt, 1);
  if (!wait_until (pane_named, (gpointer)name))
    g_error ("Alt+%u showed %s, not %s (focus %s, active %d)", digit, shown_pane_name (), name,
             gtk_root_get_focus (GTK_ROOT (window))
                 ? G_OBJECT_TYPE_NAME (gtk_root_get_focus (GTK_ROOT (window)))
                 : "none",
             gtk_window_is_active (GTK_WINDOW (window)));
}

/* ------------------------------------------------------------ tests -- */

static void
test_pane_keys (void)
{
  /* The window opens on the Diagnosis pane. */
  g_assert_cmpstr (shown_pane_name (), ==, "diagnosis");
  show_pane_by_keys (6, "oom");
  show_pane_by_keys (1, "diagnosis");
  show_pane_by_keys (5, "fragmentation");
  show_pane_by_keys (4, "allocations");
  show_pane_by_keys (3, "flame");
  show_pane_by_keys (2, "attribution");
}

static gboolean
summary_is (gpointer data)
{
  return vs_test_find_label (shown_pane (), data) != NULL;
}

/* The attribution tree as shown under a search for needle: only paths to
 * matching frames, and every matching frame. */
static void
check_attribution_search (const char *needle)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (vs_test_find_type (shown_pane (), GTK_TYPE_COLUMN_VIEW));
  GListModel *rows = G_LIST_MODEL (gtk_column_view_get_model (view));
  const VsTreeNode *root = instant ()->bottom_up;
  guint matching = 0, expected = count_matching (root, needle);

  g_assert_cmpuint (expected, >, 0);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr (GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr (VsTreeItem) item = gtk_tree_list_row_get_item (row);
      const VsTreeNode *n = vs_tree_item_get_node (item);

      /* Only paths to a match, and all of them expanded. */
      g_assert_true (subtree_has (n, needle));
      matching += contains (n->label, needle);
    }
  g_assert_cmpuint (matching, ==, expected);
}

/* Whether the allocations pane lists GPOINTER_TO_UINT (data) rows. */
static gboolean
shown_count_is (gpointer data)
{
  return vs_allocations_pane_get_n_shown (VS_ALLOCATIONS_PANE (shown_pane ()))
         == GPOINTER_TO_UINT (data);
}

static void
test_search (void)
{
  const char *needle = "conv";
  g_autofree char *summary = NULL;
  g_autofree char *flame_text = NULL;
  GtkWidget *entry;
  g_autoptr (VsInstant) in = vs_instant_ref (instant ());
  guint n;
  gint64 bytes;

  /* Attribution: Ctrl+F, then type. */
  show_pane_by_keys (2, "attribution");
  click (GTK_WIDGET (window->instant_label), 1); /* the focus away from any entry */
  ctrl_key (XK_f);
  entry = pane_search_entry ();
  g_assert_true (wait_until (focus_in, entry));
  vs_test_x11_type (needle);
  wait_entry (entry, needle);
  n = count_matching (in->bottom_up, needle);
  summary = g_strdup_printf (n == 1 ? "%u frame matches" : "%u frames match", n);
  g_assert_true (wait_until (summary_is, summary));
  shoot ("search-attribution");
  check_attribution_search (needle);
  /* Escape clears it: the whole tree again. */
  vs_test_x11_key (XK_Escape, NULL, 0);
  wait_entry (entry, "");
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (VS_ATTRIBUTION_PANE (shown_pane ())), ==,
                    in->bottom_up->children->len);

  /* Flame graph: the frames found and their bytes. */
  show_pane_by_keys (3, "flame");
  ctrl_key (XK_f);
  entry = pane_search_entry ();
  g_assert_true (wait_until (focus_in, entry));
  vs_test_x11_type (needle);
  wait_entry (entry, needle);
  n = count_matching (in->top_down, needle);
  bytes = bytes_matching (in->top_down, needle);
  {
    g_autofree char *b = vs_format_bytes (bytes);
    flame_text = g_strdup_printf (n == 1 ? "%u frame matches · %s (%.1f %%)"
                                         : "%u frames match · %s (%.1f %%)",
                                  n, b, 100.0 * bytes / in->top_down->total_bytes);
  }
  g_assert_true (wait_until (summary_is, flame_text));
  shoot ("search-flame");
  g_assert_cmpint (vs_flame_graph_get_search_bytes (
                       vs_flame_pane_get_flame_graph (VS_FLAME_PANE (shown_pane ()))),
                   ==, bytes);
  vs_test_x11_key (XK_Escape, NULL, 0);

  /* Allocations: Ctrl+F is the site or stack filter. */
  show_pane_by_keys (4, "allocations");
  ctrl_key (XK_f);
  entry = pane_search_entry ();
  g_assert_true (wait_until (focus_in, entry));
  vs_test_x11_type ("linear");
  wait_entry (entry, "linear");
  {
    guint expected = 0;
    for (guint i = 0; i < in->blocks->len; i++)
      {
        g_autofree char *stack = vs_stack_dup_text (g_ptr_array_index (in->stacks, i));

        expected += strstr (g_ptr_array_index (in->sites, i), "linear") != NULL
                    || strstr (stack, "linear") != NULL;
      }
    g_assert_cmpuint (expected, >, 0);
    g_assert_true (wait_until (shown_count_is, GUINT_TO_POINTER (expected)));
  }
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  g_assert_true (wait_until (shown_count_is, GUINT_TO_POINTER (in->blocks->len)));
}

/* Whether widget lies wholly inside the visible part of its column view,
 * below the column headers. */
static gboolean
on_screen (GtkWidget *widget)
{
  GtkWidget *view = gtk_widget_get_ancestor (widget, GTK_TYPE_COLUMN_VIEW);
  GtkWidget *header = view ? gtk_widget_get_first_child (view) : NULL;
  GtkWidget *sw = view ? gtk_widget_get_ancestor (view, GTK_TYPE_SCROLLED_WINDOW) : NULL;
  graphene_rect_t r, h;

  return sw != NULL && gtk_widget_get_mapped (widget) && gtk_widget_compute_bounds (widget, sw, &r)
         && gtk_widget_compute_bounds (header, sw, &h) && r.origin.y >= h.origin.y + h.size.height
         && r.origin.y + r.size.height <= gtk_widget_get_height (sw);
}

/* Scrolls the shown pane's list to its first row. */
static void
scroll_to_top (void)
{
  GtkWidget *view = vs_test_find_type (shown_pane (), GTK_TYPE_COLUMN_VIEW);
  GtkScrolledWindow *sw
      = GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (view, GTK_TYPE_SCROLLED_WINDOW));

  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (sw), 0);
  vs_test_x11_spin (100);
}

/* The label on screen under widget whose text is text (NULL: none). */
static gboolean
is_label_on_screen (GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0
         && on_screen (widget);
}

static GtkWidget *
label_on_screen (GtkWidget *widget, const char *text)
{
  return vs_test_find (widget, is_label_on_screen, text);
}

static gboolean
row_shown (gpointer data)
{
  GtkWidget *view = vs_test_find_type (shown_pane (), GTK_TYPE_COLUMN_VIEW);
  return label_on_screen (view, data) != NULL;
}

/* The label of the row showing text in the shown pane's list, once it is
 * drawn on screen and the list's layout has settled. */
static GtkWidget *
row_label (const char *text)
{
  g_assert_true (wait_until (row_shown, (gpointer)text));
  vs_test_x11_spin (100);
  g_assert_true (wait_until (row_shown, (gpointer)text));
  return label_on_screen (vs_test_find_type (shown_pane (), GTK_TYPE_COLUMN_VIEW), text);
}

/* A label on screen under widget whose text starts with prefix. */
static gboolean
is_label_prefix_on_screen (GtkWidget *widget, gconstpointer prefix)
{
  return is_label_prefix (widget, prefix) && on_screen (widget);
}

static GtkWidget *
row_label_prefix (GtkWidget *widget, const char *prefix)
{
  return vs_test_find (widget, is_label_prefix_on_screen, prefix);
}

/* The allocation whose address is written addr. */
static VsBlockItem *
item_at_address (GListModel *rows, const char *addr)
{
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      VsBlockItem *item = g_list_model_get_item (rows, i);
      g_autofree char *a
          = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", vs_block_item_get_block (item)->address);
      if (g_str_equal (a, addr))
        return item;
      g_object_unref (item);
    }
  g_assert_not_reached ();
}

static gboolean
panel_shows (gpointer data)
{
  return vs_test_find_label (shown_pane (), data) != NULL;
}

static void
test_copy (void)
{
  g_autoptr (VsInstant) in = vs_instant_ref (instant ());
  const VsTreeNode *first, *second;
  g_autofree char *text = NULL;
  g_autofree char *expected = NULL;
  GtkWidget *menu_item;

  /* Attribution: the top rows by bytes are the root's largest children. */
  show_pane_by_keys (2, "attribution");
  {
    GPtrArray *kids = in->bottom_up->children;
    first = second = NULL;
    for (guint i = 0; i < kids->len; i++)
      {
        const VsTreeNode *k = g_ptr_array_index (kids, i);
        if (first == NULL || k->total_bytes > first->total_bytes)
          second = first, first = k;
        else if (second == NULL || k->total_bytes > second->total_bytes)
          second = k;
      }
  }
  scroll_to_top ();
  clear_clipboard ();
  click (row_label (first->label), 1);
  ctrl_key (XK_c);
  text = copied_text ();
  {
    g_autofree char *b = vs_format_bytes (first->total_bytes);
    g_autofree char *self_b = first->self_bytes > 0 ? vs_format_bytes (first->self_bytes) : NULL;
    expected = g_strdup_printf ("%s\t%s\t%.1f %%\t%lld\t%s\n", first->label, b,
                                100.0 * first->total_bytes / in->bottom_up->total_bytes,
                                (long long)first->total_count, self_b ? self_b : "");
  }
  g_assert_cmpstr (text, ==, expected);
  g_clear_pointer (&text, g_free);
  g_clear_pointer (&expected, g_free);

  /* Shift+Ctrl+C: its stack, innermost first (bottom-up: top level down). */
  {
    const KeySym mods[] = { XK_Control_L, XK_Shift_L };
    vs_test_x11_key (XK_c, mods, 2);
  }
  text = copied_text ();
  expected = path_text (first, FALSE);
  g_assert_cmpstr (text, ==, expected);
  g_clear_pointer (&text, g_free);

  /* A right click selects the row under the pointer; Copy Frame. */
  clear_clipboard ();
  click (row_label (second->label), 3);
  {
    GtkWidget *popover = wait_menu (shown_pane ());
    menu_item = vs_test_find_label (popover, "Copy Frame");
    shoot ("menu-attribution");
  }
  g_assert_nonnull (menu_item);
  click (menu_item, 1);
  text = copied_text ();
  g_assert_cmpstr (text, ==, second->label);
  g_clear_pointer (&text, g_free);

  /* Allocations: a click selects a row, the stack panel shows its stack,
   * Ctrl+C copies its cells. */
  show_pane_by_keys (4, "allocations");
  {
    GtkColumnView *view = GTK_COLUMN_VIEW (vs_test_find_type (shown_pane (), GTK_TYPE_COLUMN_VIEW));
    GListModel *rows = G_LIST_MODEL (gtk_column_view_get_model (view));
    /* A row on screen: an address cell shown, and the item with it. */
    GtkWidget *addr_label = row_label_prefix (GTK_WIDGET (view), "0x");
    g_autofree char *addr = g_strdup (gtk_label_get_text (GTK_LABEL (addr_label)));
    g_autoptr (VsBlockItem) item = item_at_address (rows, addr);
    const VsBlock *b = vs_block_item_get_block (item);
    g_autofree char *size = vs_format_bytes (b->bytes);
    g_autofree char *stack_text = vs_block_item_dup_stack (item);
    g_auto (GStrv) frames = g_strsplit (stack_text, VS_STACK_SEPARATOR, -1);
    g_autofree char *joined = g_strjoinv ("\n", frames);
    g_autofree char *stack = g_strconcat (joined, "\n", NULL);
    GtkWidget *panel;

    clear_clipboard ();
    click (addr_label, 1);
    g_assert_true (wait_until (panel_shows, stack));
    panel = vs_test_find_label (shown_pane (), stack);
    g_assert_nonnull (panel); /* the stack panel */
    shoot ("stack-panel");
    /* The Menu key: the copy menu at the focused row, Copy Frame. */
    vs_test_x11_key (XK_Menu, NULL, 0);
    menu_item = vs_test_find_label (wait_menu (shown_pane ()), "Copy Frame");
    g_assert_nonnull (menu_item);
    click (menu_item, 1);
    text = copied_text ();
    g_assert_cmpstr (text, ==, vs_block_item_get_site (item));
    g_clear_pointer (&text, g_free);
    clear_clipboard ();
    ctrl_key (XK_c);
    text = copied_text ();
    g_assert_true (g_str_has_prefix (text, size));
    g_assert_nonnull (strstr (text, addr));
    g_assert_nonnull (strstr (text, vs_block_item_get_site (item)));
    g_assert_true (g_str_has_suffix (text, "\n"));
    g_clear_pointer (&text, g_free);
    {
      const KeySym mods[] = { XK_Control_L, XK_Shift_L };
      vs_test_x11_key (XK_c, mods, 2);
    }
    text = copied_text ();
    g_assert_cmpstr (text, ==, stack);
    g_clear_pointer (&text, g_free);
  }

  /* Flame graph: a right click on a box of the second row, Copy Stack:
   * callers first in the picture, innermost first on the clipboard. */
  show_pane_by_keys (3, "flame");
  {
    VsFlameGraph *graph = vs_flame_pane_get_flame_graph (VS_FLAME_PANE (shown_pane ()));
    const VsTreeNode *node;
    GtkWidget *popover;

    clear_clipboard ();
    vs_test_x11_click_at (GTK_WIDGET (graph), 20, 20 + 10, 3);
    popover = wait_menu (shown_pane ());
    node = vs_flame_graph_get_selected (graph);
    g_assert_nonnull (node);
    g_assert_true (node->parent == in->top_down); /* the second row */
    menu_item = vs_test_find_label (popover, "Copy Stack");
    shoot ("menu-flame");
    g_assert_nonnull (menu_item);
    click (menu_item, 1);
    text = copied_text ();
    expected = path_text (node, TRUE);
    g_assert_cmpstr (text, ==, expected);
    g_clear_pointer (&text, g_free);
    g_clear_pointer (&expected, g_free);

    /* A left click zooms into the box and selects it; Ctrl+C copies its
     * row. */
    clear_clipboard ();
    vs_test_x11_click_at (GTK_WIDGET (graph), 20, 20 + 10, 1);
    g_assert_true (vs_flame_graph_get_selected (graph) == node);
    ctrl_key (XK_c);
    text = copied_text ();
    {
      g_autofree char *b = vs_format_bytes (node->total_bytes);
      expected = g_strdup_printf ("%s\t%s\t%.1f %%\t%lld\n", node->label, b,
                                  100.0 * node->total_bytes / in->top_down->total_bytes,
                                  (long long)node->total_count);
    }
    g_assert_cmpstr (text, ==, expected);
    g_clear_pointer (&text, g_free);
    g_clear_pointer (&expected, g_free);
  }
}

static void
test_failure_stacks (void)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  GPtrArray *ooms = vs_document_get_ooms (doc);
  const char *stack;

  show_pane_by_keys (6, "oom");
  g_assert_cmpuint (ooms->len, >, 0);
  stack = vs_document_get_oom_stack (doc, 0);
  g_assert_nonnull (stack);
  g_assert_cmpstr (stack, !=, "");
  {
    g_auto (GStrv) frames = g_strsplit (stack, VS_STACK_SEPARATOR, -1);
    g_autofree char *lines = g_strjoinv ("\n", frames);
    GtkWidget *pane = shown_pane ();
    GtkWidget *label = find_label_prefix (pane, lines);

    g_assert_nonnull (label);
    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (label)), ==, lines);
  }
}

static void
test_tooltips (void)
{
  VsChartSlot *slot = &g_array_index (window->slots, VsChartSlot, 0);
  VsMemoryChart *chart = slot->chart;
  VsChartData *data = vs_memory_chart_get_data (chart);
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  GPtrArray *ooms = vs_document_get_ooms (doc);
  const VsOom *o = g_ptr_array_index (ooms, 0);
  VsChartLayout l;
  gint64 v0, v1;
  double x;
  g_autofree char *text = NULL;

  /* Zoomed in on the first failure so that no other is near it. */
  vs_session_set_visible_range (vs_window_get_session (window), MAX (0, o->time_ns - 1000000),
                                o->time_ns + 1000000);
  g_assert_true (wait_until (window_settled, window));
  data = vs_memory_chart_get_data (chart);
  vs_memory_chart_get_view (chart, &v0, &v1);
  vs_chart_layout (data, gtk_widget_get_width (GTK_WIDGET (chart)),
                   gtk_widget_get_height (GTK_WIDGET (chart)), &l);
  x = floor (vs_chart_x_for_time (&l, v0, v1, o->time_ns)) + 0.5;
  vs_test_x11_move_to (GTK_WIDGET (chart), x, l.chart.origin.y + 7);
  vs_test_x11_spin (800); /* the tooltip's delay */
  shoot ("tooltip-failure");
  text = vs_memory_chart_describe (chart, x, l.chart.origin.y + 7);
  g_assert_nonnull (text);
  {
    g_autofree char *title = vs_oom_title (o);
    g_autofree char *when = vs_oom_when (doc, o);
    const char *evidence = NULL;
    VsOomCause cause = vs_document_get_oom_cause (doc, 0, &evidence);
    g_autofree char *why = g_strdup_printf ("%s: %s", vs_oom_cause_title (cause), evidence);
    g_autofree char *e_title = g_markup_escape_text (title, -1);
    g_autofree char *e_when = g_markup_escape_text (when, -1);
    g_autofree char *e_why = g_markup_escape_text (why, -1);

    g_assert_nonnull (evidence);
    g_assert_nonnull (strstr (text, e_title));
    g_assert_nonnull (strstr (text, e_when));
    g_assert_nonnull (strstr (text, e_why));
  }
  g_clear_pointer (&text, g_free);
  /* Far from it: the memory values, not the failure. */
  g_assert_null (vs_memory_chart_describe (chart, x + 40, l.chart.origin.y + 7));

  /* An NVTX range of the top lane. */
  vs_session_set_visible_range (vs_window_get_session (window), 0, vs_document_get_duration (doc));
  g_assert_true (wait_until (window_settled, window));
  data = vs_memory_chart_get_data (chart);
  vs_memory_chart_get_view (chart, &v0, &v1);
  vs_chart_layout (data, gtk_widget_get_width (GTK_WIDGET (chart)),
                   gtk_widget_get_height (GTK_WIDGET (chart)), &l);
  g_assert_cmpuint (data->ranges->len, >, 0);
  {
    const VsChartRange *widest = NULL;
    for (guint i = 0; i < data->ranges->len; i++)
      {
        const VsChartRange *g = &g_array_index (data->ranges, VsChartRange, i);
        if (g->depth == 0 && g->end_ns > 0
            && (widest == NULL || g->end_ns - g->start_ns > widest->end_ns - widest->start_ns))
          widest = g;
      }
    g_assert_nonnull (widest);
    x = vs_chart_x_for_time (&l, v0, v1,
                             widest->start_ns + (widest->end_ns - widest->start_ns) / 2);
    vs_test_x11_move_to (GTK_WIDGET (chart), x + 1, l.ranges.origin.y + 4);
    vs_test_x11_move_to (GTK_WIDGET (chart), x, l.ranges.origin.y + 4);
    vs_test_x11_spin (800);
    shoot ("tooltip-nvtx");
    text = vs_memory_chart_describe (chart, x, l.ranges.origin.y + 4);
    g_assert_nonnull (text);
    {
      g_autofree char *name = g_markup_escape_text (widest->name, -1);
      g_autofree char *head = g_strdup_printf ("<b>%s</b>\nNVTX range from ", name);
      g_assert_true (g_str_has_prefix (text, head));
    }
  }
}

/* The locate button of finding index in widget's descendants. */
static gboolean
is_locate_button (GtkWidget *widget, gconstpointer index)
{
  /* The pane keeps index + 1 on the button. */
  return GTK_IS_BUTTON (widget)
         && GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (widget), "index"))
                == GPOINTER_TO_UINT (index) + 1;
}

static GtkWidget *
find_locate_button (GtkWidget *widget, guint index)
{
  return vs_test_find (widget, is_locate_button, GUINT_TO_POINTER (index));
}

static gboolean
instant_at (gpointer data)
{
  VsSession *session = vs_window_get_session (window);
  const gint64 *t = data;
  return vs_session_get_selected_time (session) == *t && vs_session_is_settled (session)
         && vs_window_get_settled (window);
}

/* The Diagnosis pane lists the analyzer's findings of the trace (those of
 * vs_diagnose on the file opened anew), each with its evidence and remedy;
 * its locate button selects the finding's instant and shows its site in
 * Attribution. */
static void
test_diagnosis (void)
{
  VsSession *session = vs_window_get_session (window);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (trace_path, &error);
  g_autoptr (VsDiagnosis) expected = NULL;
  VsDiagnosisPane *pane;
  const VsFinding *f;
  GtkWidget *button;

  g_assert_no_error (error);
  expected = vs_diagnose (trace, 0, &error);
  g_assert_no_error (error);
  show_pane_by_keys (1, "diagnosis");
  pane = VS_DIAGNOSIS_PANE (shown_pane ());
  /* The bundled trace: evaluation keeps its outputs' graphs, growing every
   * iteration (the root cause, first), and the allocator's limit refused. */
  g_assert_cmpuint (expected->findings->len, >=, 2);
  g_assert_cmpuint (vs_diagnosis_pane_get_n_findings (pane), ==, expected->findings->len);
  for (guint i = 0; i < expected->findings->len; i++)
    {
      f = g_ptr_array_index (expected->findings, i);
      g_assert_nonnull (find_label_prefix (GTK_WIDGET (pane), f->evidence));
      if (f->remedy != NULL)
        g_assert_nonnull (find_label_prefix (GTK_WIDGET (pane), f->remedy));
    }
  f = g_ptr_array_index (expected->findings, 1);
  g_assert_cmpint (f->kind, ==, VS_FINDING_OOM_ALLOCATOR_LIMIT);
  shoot ("diagnosis");

  /* Its locate button, activated: the finding's instant, Attribution
   * searching its site, which is found there. */
  button = find_locate_button (GTK_WIDGET (pane), 0);
  g_assert_nonnull (button);
  f = g_ptr_array_index (expected->findings, 0);
  g_assert_cmpint (f->kind, ==, VS_FINDING_GROWTH_PER_ITERATION);
  g_assert_nonnull (f->site);
  g_assert_true (gtk_widget_activate (button));
  g_assert_true (wait_until (pane_named, (gpointer) "attribution"));
  vs_test_x11_spin (300);
  g_assert_true (wait_until (instant_at, (gpointer)&f->time_ns));
  g_assert_cmpint (vs_session_get_device (session), ==, f->device_id);
  g_assert_cmpstr (vs_attribution_pane_get_search (VS_ATTRIBUTION_PANE (shown_pane ())), ==,
                   f->site);
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (VS_ATTRIBUTION_PANE (shown_pane ())), >, 0);
  shoot ("diagnosis-located");
  vs_attribution_pane_show_site (VS_ATTRIBUTION_PANE (shown_pane ()), NULL);
}

/* While the instant is the peak chosen at load, the Fragmentation pane
 * opens at the instant of worst fragmentation (vs_fragmentation_worst). */
static void
test_fragmentation_worst (void)
{
  VsSession *session = vs_window_get_session (window);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = vs_trace_open (trace_path, &error);
  const VsDeviceInfo *device;
  VsFragmentation worst;
  VsInstant *in;

  g_assert_no_error (error);
  device = g_ptr_array_index (vs_trace_get_devices (trace), 0);
  g_assert_true (vs_fragmentation_worst (trace, device->id, 0, &worst, &error));
  g_assert_no_error (error);
  g_assert_cmpint (worst.free_bytes, >, 0);
  show_pane_by_keys (2, "attribution");
  vs_session_select_instant (session, device->id, -1);
  g_assert_true (wait_until (window_settled, window));
  show_pane_by_keys (5, "fragmentation");
  g_assert_true (wait_until (instant_at, &worst.time_ns));
  in = instant ();
  g_assert_true (in->have_fragmentation);
  /* The first step at that time: at least as fragmented as the worst step
   * is not guaranteed, but the same instant is. */
  g_assert_cmpint (in->time_ns, ==, worst.time_ns);
  /* An instant the user chose stays. */
  show_pane_by_keys (2, "attribution");
  vs_session_select_instant (session, device->id, worst.time_ns / 2);
  g_assert_true (wait_until (window_settled, window));
  show_pane_by_keys (5, "fragmentation");
  vs_test_x11_spin (200);
  g_assert_cmpint (vs_session_get_selected_time (session), ==, worst.time_ns / 2);
}

/* Checks that tree holds only user frames, but for a stack with no user
 * frame, whose innermost frame stands alone under the root. */
static void
check_user_tree (const VsTreeNode *n)
{
  for (guint i = 0; i < n->children->len; i++)
    {
      const VsTreeNode *c = g_ptr_array_index (n->children, i);

      if (!c->user_code)
        {
          g_assert_null (n->parent);
          g_assert_cmpuint (c->children->len, ==, 0);
        }
      check_user_tree (c);
    }
}

/* "Hide library frames" in Attribution and the Flame Graph: the trees of
 * the user's own frames, led at the peak by the diagnosis's largest user
 * site. */
static void
test_hide_library (void)
{
  VsSession *session = vs_window_get_session (window);
  VsDocument *doc = vs_session_get_document (session);
  const VsDiagnosis *diagnosis = vs_document_get_diagnosis (doc);
  const VsDeviceDiagnosis *dd = g_ptr_array_index (diagnosis->devices, 0);
  const VsGroup *top = &g_array_index (dd->sites, VsGroup, 0);
  const VsTreeNode *first;
  VsFlameGraph *graph;
  VsInstant *in;

  show_pane_by_keys (2, "attribution");
  vs_session_select_instant (session, dd->device->id, -1);
  g_assert_true (wait_until (window_settled, window));
  in = instant ();
  vs_attribution_pane_set_hide_library (VS_ATTRIBUTION_PANE (shown_pane ()), TRUE);
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (VS_ATTRIBUTION_PANE (shown_pane ())), ==,
                    in->bottom_up_user->children->len);
  g_assert_cmpint (in->bottom_up_user->total_bytes, ==, in->bottom_up->total_bytes);
  check_user_tree (in->bottom_up_user);
  check_user_tree (in->top_down_user);
  first = g_ptr_array_index (in->bottom_up_user->children, 0);
  g_assert_true (first->user_code);
  g_assert_cmpstr (first->label, ==, top->site);
  g_assert_cmpint (first->total_bytes, ==, top->bytes);
  shoot ("hide-library-attribution");
  vs_attribution_pane_set_hide_library (VS_ATTRIBUTION_PANE (shown_pane ()), FALSE);
  g_assert_cmpuint (vs_attribution_pane_get_n_roots (VS_ATTRIBUTION_PANE (shown_pane ())), ==,
                    in->bottom_up->children->len);

  show_pane_by_keys (3, "flame");
  graph = vs_flame_pane_get_flame_graph (VS_FLAME_PANE (shown_pane ()));
  g_assert_true (vs_flame_graph_get_root (graph) == in->top_down);
  vs_flame_graph_set_user_only (graph, TRUE);
  g_assert_true (vs_flame_graph_get_root (graph) == in->top_down_user);
  shoot ("hide-library-flame");
  vs_flame_graph_set_user_only (graph, FALSE);
}

static gboolean
compared (gpointer data)
{
  return !vs_window_is_comparing (window);
}

/* Compare With…: the analyzer's diff of the shown trace (A) and another
 * (B), the same text as `vramscope diff A B` at 120 columns (what the
 * Comparison pane copies); a file that is not a trace leaves the last
 * comparison (test-compare.c drives the comparison itself). */
static void
test_compare (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) a = vs_trace_open (trace_path, &error);
  g_autoptr (VsTrace) b = vs_trace_open (other_path, &error);
  g_autoptr (GArray) rows = NULL;
  g_autoptr (GString) expected = g_string_new (NULL);
  g_autoptr (GFile) other = g_file_new_for_path (other_path);
  g_autofree char *missing_path = g_build_filename (home, "no-such.db", NULL);
  g_autoptr (GFile) missing = g_file_new_for_path (missing_path);

  g_assert_no_error (error);
  rows = vs_diff (a, b, 20, &error);
  g_assert_no_error (error);
  vs_diff_write_text (rows, "a_b.db", "sample-oom.db", 120, expected);
  {
    g_autoptr (GPtrArray) differences = vs_compare_differences (a, b);

    vs_compare_write_differences (differences, 120, expected);
  }
  g_assert_null (vs_window_get_comparison_text (window));
  vs_window_compare_with (window, other);
  g_assert_true (vs_window_is_comparing (window));
  g_assert_true (wait_until (compared, NULL));
  g_assert_cmpstr (vs_window_get_comparison_text (window), ==, expected->str);
  g_assert_nonnull (strstr (expected->str, "a_b.db"));
  vs_test_x11_spin (300);
  shoot ("compare");
  vs_window_compare_with (window, missing);
  g_assert_true (wait_until (compared, NULL));
  g_assert_cmpstr (vs_window_get_comparison_text (window), ==, expected->str);
  /* The comparison ends: B leaves the timelines, its pane is hidden. */
  vs_window_stop_comparing (window);
  g_assert_null (vs_window_get_comparison (window));
  g_assert_true (wait_until (window_settled, window));
  vs_test_x11_spin (200);
  g_assert_true (vs_test_x11_focus (GTK_WINDOW (window)));
}

/* The Failed pane names each failure's cause, as vs_oom_classify says it,
 * with no negative size. */
static void
test_failure_cause (void)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  GPtrArray *ooms = vs_document_get_ooms (doc);
  const char *evidence = NULL;
  GtkWidget *label;

  show_pane_by_keys (6, "oom");
  g_assert_cmpuint (ooms->len, >, 0);
  for (guint i = 0; i < ooms->len; i++)
    g_assert_cmpint (vs_document_get_oom_cause (doc, i, NULL), ==, VS_OOM_CAUSE_ALLOCATOR_LIMIT);
  vs_document_get_oom_cause (doc, 0, &evidence);
  g_assert_nonnull (evidence);
  g_assert_null (strstr (evidence, "-"));
  label = find_label_prefix (shown_pane (), evidence);
  g_assert_nonnull (label);
  g_assert_nonnull (find_label_prefix (shown_pane (), "Cause: the allocator’s limit"));
  g_assert_null (find_label_prefix (shown_pane (), "What would have fitted"));
}

static gboolean
mapped (gpointer data)
{
  return gtk_widget_get_mapped (data);
}

/* Both traces are shown in the recent list (data: its popover). */
static gboolean
lists_recent (gpointer data)
{
  return vs_test_find_label (data, "a_b.db") != NULL
         && vs_test_find_label (data, "sample-oom.db") != NULL;
}

static void
test_recent (void)
{
  GtkWidget *popover;
  GtkWidget *name, *folder, *row;
  g_autofree char *other_folder = NULL;

  /* The window opened both traces: a_b.db last, so it comes first. */
  click (GTK_WIDGET (window->recent_button), 1);
  popover = GTK_WIDGET (gtk_menu_button_get_popover (window->recent_button));
  g_assert_true (wait_until (mapped, popover));
  /* Its rows are mapped after it, a frame or more later. */
  g_assert_true (wait_until (lists_recent, popover));
  shoot ("recent");
  name = vs_test_find_label (popover, "a_b.db");
  g_assert_nonnull (name); /* the underscore stays */
  folder = gtk_widget_get_next_sibling (name);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (folder)), ==, "~/runs");
  name = vs_test_find_label (popover, "sample-oom.db");
  g_assert_nonnull (name);
  folder = gtk_widget_get_next_sibling (name);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (folder)), ==, "~/other");

  /* A click opens it. */
  row = gtk_widget_get_ancestor (name, GTK_TYPE_LIST_BOX_ROW);
  g_object_ref (popover); /* opening rebuilds the list, inside it */
  click (row, 1);
  g_assert_true (wait_until (vs_test_window_shows, other_path));
  g_assert_false (gtk_widget_get_mapped (popover));
  g_object_unref (popover);
  popover = GTK_WIDGET (gtk_menu_button_get_popover (window->recent_button));
  g_assert_false (gtk_widget_get_mapped (popover));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "sample-oom.db");
}

static gboolean
toast_shown (gpointer data)
{
  return find_label_prefix (GTK_WIDGET (window->toast_overlay), data) != NULL;
}

static void
test_failed_open (void)
{
  g_autofree char *bad = g_build_filename (home, "notes_1.db", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (bad);
  VsDocument *before = vs_session_get_document (vs_window_get_session (window));

  g_assert_true (g_file_set_contents (bad, "not a trace, just text\n", -1, NULL));
  g_assert_nonnull (before);
  vs_window_open (window, file);
  g_assert_true (wait_until (toast_shown, "Cannot open notes_1.db: "));
  shoot ("failed-open");
  /* The trace stays, shown. */
  g_assert_true (vs_session_get_document (vs_window_get_session (window)) == before);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (window->main_stack), ==, "trace");
  g_assert_cmpstr (adw_window_title_get_title (window->window_title), ==, "sample-oom.db");
  g_assert_nonnull (vs_window_get_error (window));
  g_assert_true (wait_until (window_settled, window));
}

/* Copies tests/data/name to dest. */
static void
copy_trace (const char *name, const char *dest)
{
  g_autofree char *src = g_build_filename (g_getenv ("VS_DATA"), name, NULL);
  g_autofree char *dir = g_path_get_dirname (dest);
  g_autofree char *contents = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (src, &contents, &len, NULL));
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (dest, contents, len, NULL));
}

static void
open_and_wait (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  vs_window_open (window, file);
  g_assert_true (wait_until (vs_test_window_shows, (gpointer)path));
}

int
main (int argc, char **argv)
{
  /* A private home (and so recent files list) before GTK reads it. */
  home = vs_test_home_enter ("vs-input-XXXXXX");
  trace_path = g_build_filename (home, "runs", "a_b.db", NULL);
  other_path = g_build_filename (home, "other", "sample-oom.db", NULL);
  copy_trace ("torch-eval-leak.db", trace_path);
  copy_trace ("sample-oom.db", other_path);

  g_test_init (&argc, &argv, NULL);
  window = vs_test_window_new (0, 0);
  open_and_wait (other_path);
  open_and_wait (trace_path);
  g_assert_true (vs_test_x11_focus (GTK_WINDOW (window)));
  /* Library frames start hidden (test-details proves it); the searches,
   * copies and menus below are checked against the whole trees. */
  vs_attribution_pane_set_hide_library (window->attribution_pane, FALSE);
  vs_flame_pane_set_hide_library (
      VS_FLAME_PANE (adw_view_stack_get_child_by_name (window->pane_stack, "flame")), FALSE);

  g_test_add_func ("/input/pane-keys", test_pane_keys);
  g_test_add_func ("/input/search", test_search);
  g_test_add_func ("/input/copy", test_copy);
  g_test_add_func ("/input/failure-stacks", test_failure_stacks);
  g_test_add_func ("/input/diagnosis", test_diagnosis);
  g_test_add_func ("/input/fragmentation-worst", test_fragmentation_worst);
  g_test_add_func ("/input/failure-cause", test_failure_cause);
  g_test_add_func ("/input/hide-library", test_hide_library);
  g_test_add_func ("/input/compare", test_compare);
  g_test_add_func ("/input/tooltips", test_tooltips);
  g_test_add_func ("/input/recent", test_recent);
  g_test_add_func ("/input/failed-open", test_failed_open);
  return vs_test_window_finish (g_test_run ());
}
