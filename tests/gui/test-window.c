/* SPDX-License-Identifier: MIT */
/* test-window.c — the real viewer window, run as a user runs it.
 *
 * Runs under an X server (meson wraps it in xvfb-run).  Builds traces the
 * way users get them — `vramscope import` of the committed PyTorch
 * snapshots, the hand-built two-device fixture, and every trace committed
 * under tests/data/ — opens each with `vramscope-view --screenshot`, and
 * checks the picture: its size, that it is not blank, that the allocated
 * fill and the reserved line are drawn, failed-allocation markers where
 * the trace has failures, the dark style when asked for.  Bad inputs must
 * give exit status 1 with one line on stderr.
 *
 * Environment (set by tests/gui/meson.build): VS_VIEW, VS_CLI,
 * VS_MAKE_FIXTURE (may be empty), VS_SNAPSHOTS, VS_DATA.
 */
#include <gtk/gtk.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-chart-draw.h"

#define WIDTH 1100
#define HEIGHT 760

static char *tmpdir;

typedef struct
{
  char *name;
  char *path;
  gboolean has_failures;
} Trace;

static GPtrArray *traces;

/* Runs argv; returns the exit status, stderr in *err (may be NULL). */
static int
run (const char *const *argv, const char *const *envp, char **err)
{
  g_autoptr (GError) error = NULL;
  int status = -1;

  if (!g_spawn_sync (NULL, (char **)argv, (char **)envp, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                     NULL, err, &status, &error))
    g_error ("cannot run %s: %s", argv[0], error->message);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}

static int
count_near (GdkTexture *t, const guchar *pixels, gsize stride, double r, double g, double b,
            double tol)
{
  int n = 0, w = gdk_texture_get_width (t), h = gdk_texture_get_height (t);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guchar *p = pixels + y * stride + x * 4;
        /* cairo ARGB32 in memory: B G R A */
        if (fabs (p[2] / 255.0 - r) < tol && fabs (p[1] / 255.0 - g) < tol
            && fabs (p[0] / 255.0 - b) < tol)
          n++;
      }
  return n;
}

/* colour c with its alpha blended over bg. */
static void
blend (const GdkRGBA *c, const GdkRGBA *bg, double *r, double *g, double *b)
{
  *r = c->red * c->alpha + bg->red * (1 - c->alpha);
  *g = c->green * c->alpha + bg->green * (1 - c->alpha);
  *b = c->blue * c->alpha + bg->blue * (1 - c->alpha);
}

/* Screenshots trace and checks the picture in the given style. */
static void
check_screenshot (const Trace *tr, gboolean dark, const char *pane)
{
  g_autofree char *png
      = g_strdup_printf ("%s/%s%s-%s.png", tmpdir, tr->name, dark ? "-dark" : "", pane);
  const char *argv[] = {
    g_getenv ("VS_VIEW"), "--screenshot", png, "--size", "1100x760", "--pane", pane, tr->path, NULL
  };
  g_auto (GStrv) env = g_get_environ ();
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  g_autofree guchar *pixels = NULL;
  const VsChartPalette *p = vs_chart_palette (dark);
  double r, g, b;
  int fill, line, failed, background;
  gsize stride = WIDTH * 4;

  env = g_environ_setenv (env, "ADW_DEBUG_COLOR_SCHEME", dark ? "prefer-dark" : "prefer-light",
                          TRUE);
  {
    int status = run (argv, (const char *const *)env, &err);

    /* The viewer's own words say why, should it fail. */
    if (status != 0)
      g_test_message ("%s --screenshot: status %d: %s", tr->path, status, err);
    g_assert_cmpint (status, ==, 0);
  }
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, WIDTH);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, HEIGHT);
  pixels = g_malloc (stride * HEIGHT);
  gdk_texture_download (texture, pixels, stride);

  blend (&p->allocated_fill, &p->background, &r, &g, &b);
  fill = count_near (texture, pixels, stride, r, g, b, 0.03);
  line = count_near (texture, pixels, stride, p->reserved_line.red, p->reserved_line.green,
                     p->reserved_line.blue, 0.06);
  failed
      = count_near (texture, pixels, stride, p->failed.red, p->failed.green, p->failed.blue, 0.06);
  background = count_near (texture, pixels, stride, p->background.red, p->background.green,
                           p->background.blue, 0.01);
  g_test_message ("%s: fill %d, reserved line %d, failed %d, background %d", png, fill, line,
                  failed, background);
  /* The allocated area covers a good part of the chart; the reserved line
   * runs across it; the chart background shows above the curves. */
  g_assert_cmpint (fill, >, 1000);
  g_assert_cmpint (line, >, 300);
  g_assert_cmpint (background, >, 20000);
  /* Failed allocations: markers, labels and the legend entry, which is
   * only drawn when there are failures. */
  if (tr->has_failures)
    g_assert_cmpint (failed, >, 100);
  else
    g_assert_cmpint (failed, ==, 0);
}

static void
test_screenshot (gconstpointer data)
{
  check_screenshot (data, FALSE, "attribution");
}

static void
test_screenshot_dark (gconstpointer data)
{
  check_screenshot (data, TRUE, "fragmentation");
}

/* Runs `vramscope-view --screenshot` on name in the test's folder, which
 * must fail: exit status 1, and no picture saved.  Returns its stderr. */
static char *
screenshot_fails (const char *name)
{
  g_autofree char *path = g_build_filename (tmpdir, name, NULL);
  g_autofree char *png = g_strconcat (path, ".png", NULL);
  const char *argv[] = { g_getenv ("VS_VIEW"), "--screenshot", png, path, NULL };
  char *err = NULL;

  g_assert_cmpint (run (argv, NULL, &err), ==, 1);
  g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
  return err;
}

/* A file that is not a trace: one line on stderr naming it, exit 1. */
static void
test_not_a_trace (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "notes.db", NULL);
  g_autofree char *err = NULL;

  g_assert_true (g_file_set_contents (path, "not a trace\n", -1, NULL));
  err = screenshot_fails ("notes.db");
  g_assert_nonnull (strstr (err, "notes.db"));
  /* Only GTK's own notices besides our one line. */
  {
    g_auto (GStrv) lines = g_strsplit (err, "\n", -1);
    guint ours = 0;
    for (guint i = 0; lines[i]; i++)
      if (g_str_has_prefix (lines[i], "vramscope-view: "))
        ours++;
    g_assert_cmpuint (ours, ==, 1);
  }
}

/* A broken PyTorch snapshot given on the command line: exit 1 and one
 * line, the sentence `vramscope import` prints for it. */
static void
test_broken_snapshot (void)
{
  g_autofree char *src = g_build_filename (g_getenv ("VS_SNAPSHOTS"), "oom.pickle", NULL);
  g_autofree char *path = g_build_filename (tmpdir, "broken.pickle", NULL);
  g_autofree char *out = g_build_filename (tmpdir, "broken.db", NULL);
  g_autofree char *data = NULL;
  gsize len;
  const char *cli[] = { g_getenv ("VS_CLI"), "import", path, "-o", out, NULL };
  g_autofree char *err = NULL;
  g_autofree char *cli_err = NULL;

  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  g_assert_true (g_file_set_contents (path, data, (gssize)len - 7, NULL));
  err = screenshot_fails ("broken.pickle");
  g_assert_cmpint (run (cli, NULL, &cli_err), ==, 1);
  g_assert_true (g_str_has_prefix (cli_err, "vramscope import: "));
  g_assert_nonnull (strstr (err, cli_err + strlen ("vramscope import: ")));
}

/* A missing file: exit 1, and it is not created. */
static void
test_missing_file (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "missing.db", NULL);
  g_autofree char *err = screenshot_fails ("missing.db");

  g_assert_nonnull (strstr (err, "missing.db"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Bad options are usage errors: one line, exit 2, as for every command. */
static void
test_bad_options (void)
{
  const char *size[] = { g_getenv ("VS_VIEW"), "--size", "huge", "x.db", NULL };
  const char *pane[] = { g_getenv ("VS_VIEW"), "--pane", "nope", "x.db", NULL };
  const char *unknown[] = { g_getenv ("VS_VIEW"), "--frobnicate", "x.db", NULL };
  const char *whatif[] = { g_getenv ("VS_VIEW"), "--whatif", "no_such_key:1", "x.db", NULL };
  const char *screenshot[] = { g_getenv ("VS_VIEW"), "--screenshot", "x.png", NULL };
  g_autofree char *e1 = NULL;
  g_autofree char *e2 = NULL;
  g_autofree char *e3 = NULL;
  g_autofree char *e4 = NULL;
  g_autofree char *e5 = NULL;

  g_assert_cmpint (run (size, NULL, &e1), ==, 2);
  g_assert_nonnull (strstr (e1, "--size"));
  g_assert_cmpint (run (pane, NULL, &e2), ==, 2);
  g_assert_nonnull (strstr (e2, "--pane"));
  g_assert_cmpint (run (unknown, NULL, &e3), ==, 2);
  g_assert_nonnull (strstr (e3, "frobnicate"));
  g_assert_cmpint (run (whatif, NULL, &e4), ==, 2);
  g_assert_nonnull (strstr (e4, "--whatif"));
  g_assert_cmpint (run (screenshot, NULL, &e5), ==, 2);
  g_assert_nonnull (strstr (e5, "--screenshot"));
}

static void
add_trace (const char *name, const char *path, gboolean has_failures)
{
  Trace *t = g_new0 (Trace, 1);
  t->name = g_strdup (name);
  t->path = g_strdup (path);
  t->has_failures = has_failures;
  g_ptr_array_add (traces, t);
}

/* Every committed trace must open: a fixture that the analyzer cannot read
 * is a bug, never a reason to look away.  data is the path. */
static void
test_committed_opens (gconstpointer data)
{
  const char *path = data;
  const char *argv[] = { g_getenv ("VS_CLI"), "report", path, "--format", "csv", "summary", NULL };
  g_autofree char *err = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  int status = run (argv, NULL, &err);

  if (status != 0)
    g_test_message ("vramscope report %s: %s", path, err);
  g_assert_cmpint (status, ==, 0);
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vs_trace_get_devices (trace)->len, >, 0);
}

/* Adds the committed trace at path: a test that it opens, and its
 * screenshots when it reports. */
static void
add_committed (const char *name, const char *path)
{
  /* Whether it has failures is part of what the picture must show: ask
   * the CLI.  A committed trace it cannot report on fails
   * /window/committed-opens. */
  const char *argv[] = { g_getenv ("VS_CLI"), "report", path, "--format", "csv", "oom", NULL };
  const char *peak[] = { g_getenv ("VS_CLI"), "report", path, "--format", "csv", "peak", NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  {
    g_autofree char *test = g_strdup_printf ("/window/committed-opens/%s", name);
    g_test_add_data_func_full (test, g_strdup (path), test_committed_opens, g_free);
  }
  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                     &status, &error)
      || !g_spawn_check_wait_status (status, NULL) || run (peak, NULL, NULL) != 0)
    return; /* failed above, in committed-opens */
  add_trace (name, path, strchr (out, '\n') != NULL && strchr (out, '\n')[1] != '\0');
}

/* Makes the traces: imports of committed snapshots, the fixture, and the
 * committed traces. */
static void
make_traces (void)
{
  const struct
  {
    const char *name;
    gboolean failures;
  } snapshots[] = {
    { "oom", TRUE },
    { "fragmentation", FALSE },
    { "train", FALSE },
  };
  const char *fixture = g_getenv ("VS_MAKE_FIXTURE");
  g_autoptr (GDir) dir = NULL;
  const char *entry;

  for (guint i = 0; i < G_N_ELEMENTS (snapshots); i++)
    {
      g_autofree char *pickle
          = g_strdup_printf ("%s/%s.pickle", g_getenv ("VS_SNAPSHOTS"), snapshots[i].name);
      g_autofree char *db = g_strdup_printf ("%s/%s.db", tmpdir, snapshots[i].name);
      const char *argv[] = { g_getenv ("VS_CLI"), "import", pickle, "-o", db, NULL };
      g_autofree char *err = NULL;

      if (run (argv, NULL, &err) != 0)
        g_error ("importing %s failed: %s", pickle, err);
      add_trace (snapshots[i].name, db, snapshots[i].failures);
    }
  if (fixture != NULL && *fixture != '\0')
    {
      g_autofree char *db = g_build_filename (tmpdir, "full.db", NULL);
      const char *argv[] = { fixture, "full", db, NULL };
      g_autofree char *err = NULL;

      if (run (argv, NULL, &err) != 0)
        g_error ("make-fixture failed: %s", err);
      add_trace ("full", db, TRUE);
    }
  dir = g_dir_open (g_getenv ("VS_DATA"), 0, NULL);
  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (entry, ".db"))
      {
        g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), entry, NULL);
        g_autofree char *name = g_strndup (entry, strlen (entry) - 3);
        add_committed (name, path);
      }
  /* The windowed recordings (record --window), a folder per run. */
  {
    g_autofree char *windows = g_build_filename (g_getenv ("VS_DATA"), "window", NULL);
    g_autoptr (GDir) wdir = g_dir_open (windows, 0, NULL);
    while (wdir != NULL && (entry = g_dir_read_name (wdir)) != NULL)
      {
        g_autofree char *path = g_build_filename (windows, entry, "run.db", NULL);
        g_autofree char *name = g_strdup_printf ("window-%s", entry);
        if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
          add_committed (name, path);
      }
  }
}

/* Removes the folder at path and everything in it (the pictures, the
 * traces and the snapshot cache). */
static void
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_remove (child);
    }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  g_type_ensure (GSK_TYPE_CAIRO_NODE);
  tmpdir = g_dir_make_tmp ("vs-gui-XXXXXX", &error);
  g_assert_no_error (error);
  {
    /* Snapshots the viewer opens are imported into the user's cache: a
     * folder of the test's own, for it and the viewers it starts. */
    g_autofree char *cache = g_build_filename (tmpdir, "cache", NULL);

    g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  }
  traces = g_ptr_array_new ();
  make_traces ();
  {
    /* A snapshot opened directly (imported by the viewer itself). */
    g_autofree char *src = g_build_filename (g_getenv ("VS_SNAPSHOTS"), "train.pickle", NULL);
    g_autofree char *dst = g_build_filename (tmpdir, "direct.pickle", NULL);
    g_autofree char *data = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (src, &data, &len, NULL));
    g_assert_true (g_file_set_contents (dst, data, (gssize)len, NULL));
    add_trace ("snapshot-opened-directly", dst, FALSE);
  }

  for (guint i = 0; i < traces->len; i++)
    {
      Trace *t = g_ptr_array_index (traces, i);
      g_autofree char *p1 = g_strdup_printf ("/window/screenshot/%s", t->name);
      g_autofree char *p2 = g_strdup_printf ("/window/screenshot-dark/%s", t->name);
      g_test_add_data_func (p1, t, test_screenshot);
      g_test_add_data_func (p2, t, test_screenshot_dark);
    }
  g_test_add_func ("/window/not-a-trace", test_not_a_trace);
  g_test_add_func ("/window/missing-file", test_missing_file);
  g_test_add_func ("/window/broken-snapshot", test_broken_snapshot);
  g_test_add_func ("/window/bad-options", test_bad_options);
  status = g_test_run ();

  /* Keep the pictures for a person to look at when asked to. */
  if (g_getenv ("VS_KEEP_SCREENSHOTS") == NULL)
    {
      remove_tree (tmpdir);
    }
  else
    g_printerr ("# screenshots kept in %s\n", tmpdir);
  return status;
}
