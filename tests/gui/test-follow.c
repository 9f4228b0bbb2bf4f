/* SPDX-License-Identifier: MIT */
/* test-follow.c — the viewer window following a recording in progress.
 *
 * Runs under an X server (meson wraps it in xvfb-run).  A recorder process
 * (this program, forked before GTK starts: SQLite's POSIX locks only show
 * to other processes, which is how the analyzer tells that a file is being
 * written) writes a trace with the writer API and commits it without
 * finalizing, keeping the file open as the collector does.  The trace is
 * opened the way `vramscope view FILE` opens it (VsApplication, open)
 * in a real window, which must follow it: show the committed state, pick up
 * a later commit — a larger allocation, later in time — within a few
 * seconds (subtitle, document, timeline data and limits, the view reaching
 * the end growing with the trace, the peak instant), and keep following
 * after the recorder finalizes and closes its file; once the file is
 * merged away (removed) following stops by itself and the window keeps
 * the last state.  The bytes and times of the source and its WAL are
 * compared around every refresh: the viewer never writes them.
 */
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-analyzer.h"
#include "vs-application.h"
#include "vs-trace-writer.h"
#include "vs-window-private.h"
#include "vs-test-source.h"

#define MiB (G_GINT64_CONSTANT (1) << 20)
#define SEC G_GINT64_CONSTANT (1000000000)
#define U VS_UNKNOWN
#define START_NS G_GINT64_CONSTANT (1700000000000000000)
#define T(ns) (START_NS + (ns))
#define WAIT_US (60 * G_USEC_PER_SEC) /* the follow timer ticks every second */

/* What the trace holds after each commit of the recorder. */
#define PEAK_1 (100 * MiB)
#define PEAK_1_T (2 * SEC)
#define DURATION_1 (2 * SEC) /* the trace ends at its peak */
#define PEAK_2 (336 * MiB)
#define PEAK_2_T (4 * SEC)
#define DURATION_2 (4 * SEC + SEC / 2)

static char *tmpdir;
static char *trace_path;

/* The recorder process and the pipes that drive it: one command byte in,
 * 'k' (done) or 'e' (failed) back. */
static pid_t recorder = -1;
static int to_recorder = -1, from_recorder = -1;

/* ------------------------------------------------------------ recorder -- */

static void
mem (VsWriter *w, gint64 proc, gint64 dev, gint64 ts, VsMemOp op, gint64 addr, gint64 bytes,
     int *failed)
{
  VsMemEvent e
      = { T (ts), proc, 1, dev, U, U, VS_MEM_KIND_DEVICE, op, addr, bytes, U, U, U, U, U, U };

  if (vs_writer_mem_event (w, &e) < 0)
    *failed = 1;
}

/* The recorder's side: 'b' starts the trace and commits 64 + 36 MiB
 * allocated at 1 s and 2 s (the peak, and the trace's last event, which
 * the timeline must draw); 'g' allocates 236 MiB at 4 s (336 MiB
 * allocated: the new peak), frees 64 MiB at 4.5 s and commits; 'f' finalizes and closes.  Exits on end of
 * input. */
static int
run_recorder (const char *path, int in, int out)
{
  VsWriter *w = NULL;
  gint64 proc = -1, dev = -1;
  char err[256] = "";
  char cmd;

  while (read (in, &cmd, 1) == 1)
    {
      int failed = 0;

      if (cmd == 'b' && w == NULL)
        {
          VsProcess p = { 4242, 1, "testhost", U, U, U, NULL, "python train.py", T (0), U, U };
          VsDevice d = { 0, "GPU-follow-0", "Test GPU", 1024 * MiB };

          w = vs_writer_create (path, err, sizeof err);
          if (w == NULL)
            failed = 1;
          else
            {
              failed |= vs_writer_set_meta_int (w, "start_ns", T (0)) < 0;
              failed |= vs_writer_set_meta (w, "clock", "CLOCK_REALTIME") < 0;
              failed |= vs_writer_set_meta_int (w, "finalized", 0) < 0;
              proc = vs_writer_add_process (w, &p);
              dev = vs_writer_add_device (w, &d);
              failed |= proc < 0 || dev < 0;
              mem (w, proc, dev, 1 * SEC, VS_MEM_OP_ALLOC, 0x10000000, 64 * MiB, &failed);
              mem (w, proc, dev, 2 * SEC, VS_MEM_OP_ALLOC, 0x20000000, 36 * MiB, &failed);
              failed |= vs_writer_commit (w) != 0;
            }
        }
      else if (cmd == 'g' && w != NULL)
        {
          mem (w, proc, dev, 4 * SEC, VS_MEM_OP_ALLOC, 0x30000000, 236 * MiB, &failed);
          mem (w, proc, dev, 4 * SEC + SEC / 2, VS_MEM_OP_FREE, 0x10000000, 64 * MiB, &failed);
          failed |= vs_writer_commit (w) != 0;
        }
      else if (cmd == 'f' && w != NULL)
        {
          failed = vs_writer_close (w, true, NULL, NULL, err, sizeof err) != 0;
          w = NULL;
        }
      else
        failed = 1;
      if (failed)
        fprintf (stderr, "recorder: command %c failed: %s\n", cmd,
                 err[0] ? err : (w ? vs_writer_errmsg (w) : "?"));
      if (write (out, failed ? "e" : "k", 1) != 1)
        return 2;
    }
  if (w != NULL)
    vs_writer_close (w, false, NULL, NULL, NULL, 0);
  return 0;
}

/* Has the recorder run cmd and checks that it succeeded. */
static void
recorder_do (char cmd)
{
  char reply = 0;

  g_assert_cmpint (write (to_recorder, &cmd, 1), ==, 1);
  g_assert_cmpint (read (from_recorder, &reply, 1), ==, 1);
  g_assert_cmpint (reply, ==, 'k');
}

/* ------------------------------------------------------------- helpers -- */

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Runs the main loop until done (self) holds or WAIT_US passed; returns
 * whether it holds. */
static gboolean
wait_until (gboolean (*done) (VsWindow *self), VsWindow *self)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  guint tick = g_timeout_add (20, wake, NULL);
  gboolean ok;

  while (!(ok = done (self)) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  return ok;
}

/* Whether the trace is shown and nothing is being fetched: every timeline
 * has its data, the instant its state, the document its diagnosis, no
 * refresh in flight. */
static gboolean
settled (VsWindow *self)
{
  if (vs_session_get_document (self->session) == NULL || self->slots->len == 0
      || !vs_document_is_diagnosed (vs_session_get_document (self->session))
      || self->refresh_in_flight || vs_session_get_instant (self->session) == NULL
      || !vs_session_is_settled (self->session))
    return FALSE;
  for (guint i = 0; i < self->slots->len; i++)
    if (!vs_query_slot_is_idle (&g_array_index (self->slots, VsChartSlot, i).query))
      return FALSE;
  /* The window's own account agrees. */
  g_assert_true (vs_window_get_settled (self));
  return TRUE;
}

static gboolean
refresh_started (VsWindow *self)
{
  return self->refresh_in_flight;
}

static gboolean
refresh_over (VsWindow *self)
{
  return !self->refresh_in_flight;
}

static gboolean
shows_second_commit (VsWindow *self)
{
  return vs_document_get_duration (vs_session_get_document (self->session)) == DURATION_2
         && settled (self);
}

static gboolean
not_following (VsWindow *self)
{
  return self->follow_source == 0 && !self->refresh_in_flight;
}

/* Waits for one run of the follow timer: a refresh starts and ends. */
static void
wait_one_refresh (VsWindow *self)
{
  g_assert_true (wait_until (refresh_started, self));
  g_assert_true (wait_until (refresh_over, self));
}

/* What the header bar's Follow toggle shows. */
static gboolean
following (VsWindow *self)
{
  gboolean on = gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->follow_button));
  gboolean property = FALSE;

  /* The toggle shows the window's "following" (the win.follow action). */
  g_object_get (self, "following", &property, NULL);
  g_assert_cmpint (on, ==, property);

  /* The toggle says what the timer does. */
  g_assert_cmpint (on, ==, self->follow_source != 0);
  return on;
}

/* Checks that the window shows a trace of duration with peak allocated
 * bytes at time peak_t: document, subtitle, every timeline's data and
 * limits, the view reaching its end, the peak instant. */
static void
check_shows (VsWindow *self, gint64 duration, gint64 peak, gint64 peak_t, gboolean recording)
{
  const char *subtitle = adw_window_title_get_subtitle (self->window_title);
  g_autofree char *peak_text = vs_format_bytes (peak);
  g_autofree char *want = g_strdup_printf ("peak allocated %s", peak_text);
  VsDocument *doc = vs_session_get_document (self->session);
  GPtrArray *devices = vs_document_get_devices (doc);
  VsInstant *instant = vs_session_get_instant (self->session);

  g_test_message ("subtitle: %s", subtitle);
  g_assert_cmpint (vs_document_get_duration (doc), ==, duration);
  g_assert_cmpint (vs_document_is_finalized (doc), ==, !recording);
  g_assert_cmpuint (devices->len, ==, 1);
  g_assert_cmpint (
      ((VsDocumentDevice *)g_ptr_array_index (devices, 0))->summary.peak_allocated_bytes, ==, peak);
  g_assert_nonnull (strstr (subtitle, want));
  g_assert_cmpint (g_str_has_suffix (subtitle, " · recording"), ==, recording);

  /* The view reached the end of the trace, and still does. */
  g_assert_cmpint (vs_session_get_visible_range (self->session)->end, ==, duration);
  g_assert_cmpuint (self->slots->len, ==, 1);
  for (guint i = 0; i < self->slots->len; i++)
    {
      VsChartSlot *s = &g_array_index (self->slots, VsChartSlot, i);
      VsChartData *d = vs_memory_chart_get_data (s->chart);
      gint64 v0, v1, highest = 0, marker = -1;

      vs_memory_chart_get_view (s->chart, &v0, &v1);
      g_assert_cmpint (v1, ==, duration);
      g_assert_nonnull (d);
      g_assert_cmpint (d->trace_end_ns, ==, duration);
      g_assert_cmpint (d->t1, >=, duration);
      for (guint b = 0; b < d->n_buckets; b++)
        if (d->buckets[b].has_data)
          highest = MAX (highest, d->buckets[b].max_allocated);
      g_assert_cmpint (highest, ==, peak);
      for (guint m = 0; m < d->markers->len; m++)
        {
          const VsChartMarker *mk = &g_array_index (d->markers, VsChartMarker, m);
          if (mk->kind == VS_CHART_MARKER_PEAK_ALLOCATED)
            marker = mk->bytes;
        }
      g_assert_cmpint (marker, ==, peak);
    }

  /* The panes show the peak instant of the trace as it is now. */
  g_assert_nonnull (instant);
  g_assert_cmpint (instant->time_ns, ==, peak_t);
  g_assert_cmpint (instant->point.allocated_bytes, ==, peak);
}

/* --------------------------------------------------------------- test -- */

static void
test_follow_recording (void)
{
  g_autoptr (VsApplication) app = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *f1 = NULL, *f2 = NULL, *now = NULL;
  g_autofree char *wal = g_strconcat (trace_path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (trace_path, "-shm", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (trace_path);
  VsWindow *self;
  int status = 0;

  /* The recorder's first commit, not finalized, file held open. */
  recorder_do ('b');
  f1 = vs_test_source_fingerprint (trace_path);

  /* Opened as `vramscope view FILE` opens it. */
  app = vs_application_new ();
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_application_open (G_APPLICATION (app), &file, 1, "");
  g_assert_nonnull (gtk_application_get_windows (GTK_APPLICATION (app)));
  self = VS_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  g_object_ref (self);

  g_assert_true (wait_until (settled, self));
  check_shows (self, DURATION_1, PEAK_1, PEAK_1_T, TRUE);
  g_assert_true (following (self));
  g_assert_true (gtk_widget_get_visible (self->follow_button));
  now = vs_test_source_fingerprint (trace_path);
  g_assert_cmpstr (now, ==, f1);

  /* A tick with nothing new committed changes nothing and writes nothing. */
  wait_one_refresh (self);
  g_assert_true (wait_until (settled, self));
  check_shows (self, DURATION_1, PEAK_1, PEAK_1_T, TRUE);
  g_assert_true (following (self));
  g_clear_pointer (&now, g_free);
  now = vs_test_source_fingerprint (trace_path);
  g_assert_cmpstr (now, ==, f1);

  /* The recorder commits a larger allocation, later: the window picks it
   * up by itself within a few ticks. */
  recorder_do ('g');
  f2 = vs_test_source_fingerprint (trace_path);
  g_assert_cmpstr (f2, !=, f1);
  g_assert_true (wait_until (shows_second_commit, self));
  check_shows (self, DURATION_2, PEAK_2, PEAK_2_T, TRUE);
  g_assert_true (following (self));
  g_clear_pointer (&now, g_free);
  now = vs_test_source_fingerprint (trace_path);
  g_assert_cmpstr (now, ==, f2);
  g_assert_cmpint (vs_test_source_finalized (trace_path), ==, 0);

  /* The recorder finalizes and closes its file.  That alone does not end
   * the recording as the viewer sees it (vs_trace_is_recording(): the file is
   * still there, to be merged); the window reads the finalized file and
   * shows the same state. */
  recorder_do ('f');
  g_assert_cmpint (close (to_recorder), ==, 0);
  to_recorder = -1;
  g_assert_cmpint (waitpid (recorder, &status, 0), ==, recorder);
  recorder = -1;
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_cmpint (vs_test_source_finalized (trace_path), ==, 1);
  wait_one_refresh (self);
  wait_one_refresh (self);
  g_assert_true (wait_until (settled, self));
  check_shows (self, DURATION_2, PEAK_2, PEAK_2_T, TRUE);

  /* `record` merges the file into the final trace and removes it:
   * following stops by itself and the window keeps the last state. */
  g_assert_cmpint (g_unlink (trace_path), ==, 0);
  g_unlink (wal);
  g_unlink (shm);
  g_assert_true (wait_until (not_following, self));
  g_assert_false (following (self));
  g_assert_true (wait_until (settled, self));
  check_shows (self, DURATION_2, PEAK_2, PEAK_2_T, FALSE);

  gtk_window_destroy (GTK_WINDOW (self));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_object_unref (self);
}

int
main (int argc, char **argv)
{
  int down[2], up[2];
  int status;

  /* The recorder is forked before GTK or any thread starts. */
  tmpdir = g_dir_make_tmp ("vs-follow-XXXXXX", NULL);
  g_assert_nonnull (tmpdir);
  trace_path = g_build_filename (tmpdir, "process-4242-1.db", NULL);
  g_assert_cmpint (pipe (down), ==, 0);
  g_assert_cmpint (pipe (up), ==, 0);
  recorder = fork ();
  g_assert_cmpint (recorder, >=, 0);
  if (recorder == 0)
    {
      close (down[1]);
      close (up[0]);
      _exit (run_recorder (trace_path, down[0], up[1]));
    }
  close (down[0]);
  close (up[1]);
  to_recorder = down[1];
  from_recorder = up[0];

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/follow/recording", test_follow_recording);
  status = g_test_run ();

  if (to_recorder >= 0)
    close (to_recorder);
  if (recorder > 0)
    waitpid (recorder, NULL, 0);
  close (from_recorder);
  {
    g_autoptr (GDir) dir = g_dir_open (tmpdir, 0, NULL);
    const char *entry;

    while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (tmpdir, entry, NULL);
        g_remove (path);
      }
  }
  g_rmdir (tmpdir);
  return status;
}
