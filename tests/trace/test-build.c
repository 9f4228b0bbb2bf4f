/* SPDX-License-Identifier: MIT */
/* test-build.c — building a trace (vs-trace-build.c): a fill that
 * succeeds gives the trace under the output's name and nothing else; a
 * fill that fails, or a cancel that comes after the fill (while the
 * window or compaction runs, where no progress is reported), leaves
 * nothing: no output, no temporary.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

#include "vs-trace-build.h"
#include "vs-trace-finalize.h"
#include "vs-trace-writer.h"

typedef struct
{
  volatile sig_atomic_t *cancel_after; /* set once the fill is done (NULL: none) */
  gboolean fail;                       /* the fill fails */
} Fill;

/* Writes one process, device and cudaMalloc, and finalizes (VsTraceFill). */
static int
fill_small (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err, size_t errlen)
{
  Fill *f = data;
  VsWriter *w = vs_writer_create (tmp, err, errlen);
  if (w == NULL)
    return -1;
  vs_writer_set_meta (w, "source", "synthetic");
  VsProcess p = { 100,  1,      "host",     VS_UNKNOWN, VS_UNKNOWN, VS_UNKNOWN,
                  NULL, "prog", VS_UNKNOWN, VS_UNKNOWN, VS_UNKNOWN };
  int64_t proc = vs_writer_add_process (w, &p);
  VsDevice d = { 0, "GPU-test-0", "Test GPU", 1LL << 34 };
  int64_t dev = vs_writer_add_device (w, &d);
  VsMemEvent e = { 1000,
                   proc,
                   1,
                   dev,
                   VS_UNKNOWN,
                   VS_UNKNOWN,
                   VS_MEM_KIND_DEVICE,
                   VS_MEM_OP_ALLOC,
                   1 << 20,
                   4096,
                   0,
                   VS_UNKNOWN,
                   VS_UNKNOWN,
                   VS_UNKNOWN,
                   0,
                   0 };
  if (vs_writer_mem_event (w, &e) != 0)
    {
      g_snprintf (err, errlen, "cannot write an event");
      vs_writer_close (w, false, NULL, NULL, NULL, 0);
      return -1;
    }
  if (vs_trace_close_finalized (w, fo, err, errlen) != 0)
    return -1;
  if (f->fail)
    {
      g_snprintf (err, errlen, "the fill failed");
      return -1;
    }
  if (f->cancel_after != NULL)
    *f->cancel_after = 1;
  return 0;
}

/* A window that cancels the build as it runs (VsTraceWindow). */
static int
window_cancels (const char *tmp, void *data, char *err, size_t errlen)
{
  (void)tmp, (void)err, (void)errlen;
  *(volatile sig_atomic_t *)data = 1;
  return 0;
}

/* The names in dir: the output and any temporary beside it. */
static guint
files_in (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static void
test_build (gconstpointer how)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-build-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "run.db", NULL);
  volatile sig_atomic_t cancel = 0;
  Fill f = { 0 };
  VsTraceBuildOptions o = { .output = out, .finalize = true, .cancel = &cancel };
  char err[512] = "";

  if (g_str_equal (how, "fill"))
    f.cancel_after = &cancel;
  else if (g_str_equal (how, "window"))
    {
      o.window = window_cancels;
      o.window_data = (void *)&cancel;
    }
  else if (g_str_equal (how, "failed"))
    f.fail = TRUE;
  int rc = vs_trace_build (&o, fill_small, &f, NULL, 0, err, sizeof err);
  if (g_str_equal (how, "none"))
    {
      if (rc != 0)
        g_printerr ("%s\n", err);
      g_assert_cmpint (rc, ==, 0);
      g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpuint (files_in (dir), ==, 1);
      g_unlink (out);
    }
  else
    {
      g_assert_cmpint (rc, ==, -1);
      g_assert_cmpstr (err, ==, g_str_equal (how, "failed") ? "the fill failed" : "interrupted");
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (files_in (dir), ==, 0);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/build/complete", "none", test_build);
  g_test_add_data_func ("/build/fill-failed", "failed", test_build);
  g_test_add_data_func ("/build/cancelled-after-fill", "fill", test_build);
  g_test_add_data_func ("/build/cancelled-in-window", "window", test_build);
  return g_test_run ();
}
