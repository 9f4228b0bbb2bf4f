/* SPDX-License-Identifier: MIT */
/* test-live.c — reading traces while they are being recorded, and the
 * queries the viewer draws from: kernel density, live segments, the peak
 * inside a range, the plain range list.
 *
 * The live tests write a trace with the writer API in steps, exactly as
 * the collector does (WAL, commits), and check after each step that the
 * reader sees what is committed, that refresh notices new commits, and
 * that the source file is never touched: its bytes and times (and its
 * WAL's) are compared around every reader call.
 */
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"
#include "vs-test-source.h"
#include "../vs-test-trace-file.h"

#define MiB (G_GINT64_CONSTANT (1) << 20)
#define U VS_UNKNOWN
#define T(ns) (VS_FIXTURE_T0 + (ns))

typedef struct
{
  VsWriter *w;
  gint64 proc, dev;
} Rec;

/* Starts a recording as the collector does: schema, meta, a process and a
 * device, committed. */
static void
rec_begin (Rec *r, const char *path)
{
  char err[256] = "";
  VsProcess p = { 77, 1, "testhost", U, U, U, NULL, "python train.py", T (0), U, U };
  VsDevice d = { 0, "GPU-live-0", "Test GPU", 1024 * MiB };

  r->w = vs_writer_create (path, err, sizeof err);
  g_assert_nonnull (r->w);
  g_assert_cmpint (vs_writer_set_meta_int (r->w, "start_ns", T (0)), >=, 0);
  g_assert_cmpint (vs_writer_set_meta (r->w, "clock", "CLOCK_REALTIME"), >=, 0);
  g_assert_cmpint (vs_writer_set_meta_int (r->w, "finalized", 0), >=, 0);
  r->proc = vs_writer_add_process (r->w, &p);
  r->dev = vs_writer_add_device (r->w, &d);
  g_assert_cmpint (r->proc, >, 0);
  g_assert_cmpint (r->dev, >, 0);
}

static void
rec_mem (Rec *r, gint64 ts, VsMemOp op, gint64 addr, gint64 bytes)
{
  VsMemEvent e
      = { T (ts), r->proc, 1, r->dev, U, U, VS_MEM_KIND_DEVICE, op, addr, bytes, U, U, U, U, U, U };

  g_assert_cmpint (vs_writer_mem_event (r->w, &e), >=, 0);
}

static void
rec_kernel (Rec *r, gint64 start, gint64 len)
{
  VsKernel k = {
    T (start), T (start + len), r->proc, r->dev, 1, 7, U, "gemm", 1, 1, 1, 32, 1, 1, 0, 0, 32
  };

  g_assert_cmpint (vs_writer_kernel (r->w, &k), >=, 0);
}

static gint64
allocated_now (VsTrace *trace)
{
  const VsDeviceInfo *d = g_ptr_array_index (vs_trace_get_devices (trace), 0);
  VsSeriesPoint p;
  g_autoptr (GError) error = NULL;

  g_assert_true (vs_series_at_time (trace, d->id, 0, G_MAXINT64 / 2, &p, &error));
  g_assert_no_error (error);
  return p.allocated_bytes;
}

static gint64
peak_allocated (VsTrace *trace)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) sums = vs_summary_list (trace, 0, 0, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < sums->len; i++)
    {
      VsSummary *s = &g_array_index (sums, VsSummary, i);
      if (s->allocator_id == 0)
        return s->peak_allocated_bytes;
    }
  g_assert_not_reached ();
}

/* Opens path with open_fn (vs_trace_open or vs_trace_open_recording),
 * asserting that it opens and that the source's bytes and times stay as
 * they were. */
static VsTrace *
open_untouched (const char *path, VsTrace *(*open_fn) (const char *, GError **))
{
  g_autoptr (GError) error = NULL;
  g_autofree char *before = vs_test_source_fingerprint (path);
  VsTrace *trace = open_fn (path, &error);
  g_autofree char *after = vs_test_source_fingerprint (path);

  g_assert_no_error (error);
  g_assert_nonnull (trace);
  g_assert_cmpstr (before, ==, after);
  return trace;
}

/* Refreshes trace, asserting that it can and that its source at path
 * stays as it was; returns whether the trace changed. */
static gboolean
refresh_untouched (VsTrace *trace, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *before = vs_test_source_fingerprint (path);
  g_autofree char *after = NULL;
  gboolean changed = FALSE;

  g_assert_true (vs_trace_refresh (trace, &changed, &error));
  g_assert_no_error (error);
  after = vs_test_source_fingerprint (path);
  g_assert_cmpstr (before, ==, after);
  return changed;
}

/* Commit, open live, check; write and commit more, refresh, check again;
 * the source is never written by the reader. */
static void
test_follow (void)
{
  g_autofree char *dir = NULL, *path = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) density = NULL;
  gboolean changed = TRUE;
  Rec r;

  vs_test_trace_file ("vs-live-XXXXXX", "process-77.db", &dir, &path);
  rec_begin (&r, path);
  rec_mem (&r, 1000, VS_MEM_OP_ALLOC, 0x10000000, 100 * MiB);
  rec_kernel (&r, 1500, 200);
  g_assert_cmpint (vs_writer_commit (r.w), ==, 0);

  trace = open_untouched (path, vs_trace_open_recording);
  g_assert_true (vs_trace_is_recording (trace));
  g_assert_cmpstr (vs_trace_get_path (trace), ==, path);
  g_assert_cmpint (allocated_now (trace), ==, 100 * MiB);
  g_assert_cmpint (peak_allocated (trace), ==, 100 * MiB);
  g_assert_cmpint (vs_trace_get_duration_ns (trace), ==, 1700);
  density = vs_kernel_density (trace, 0, 0, 2000, 4, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_array_index (density, VsKernelBucket, 3).count, ==, 1);
  g_clear_pointer (&density, g_array_unref);

  /* Nothing committed since: no new copy. */
  g_assert_false (refresh_untouched (trace, path));

  /* The recorder goes on: more memory, a free, another kernel. */
  rec_mem (&r, 3000, VS_MEM_OP_ALLOC, 0x20000000, 50 * MiB);
  rec_mem (&r, 4000, VS_MEM_OP_FREE, 0x10000000, 100 * MiB);
  rec_kernel (&r, 4500, 500);
  g_assert_cmpint (vs_writer_commit (r.w), ==, 0);

  g_assert_true (refresh_untouched (trace, path));
  g_assert_cmpint (allocated_now (trace), ==, 50 * MiB);
  g_assert_cmpint (peak_allocated (trace), ==, 150 * MiB);
  g_assert_cmpint (vs_trace_get_duration_ns (trace), ==, 5000);
  density = vs_kernel_density (trace, 0, 0, 5000, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_array_index (density, VsKernelBucket, 1).count, ==, 1);
  g_assert_cmpint (g_array_index (density, VsKernelBucket, 4).count, ==, 1);
  g_assert_cmpint (g_array_index (density, VsKernelBucket, 4).busy_ns, ==, 500);

  /* The source itself was never finalized by the reader. */
  g_assert_cmpint (vs_test_source_finalized (path), ==, 0);

  /* The recorder finishes and its file is merged away: the last copy
   * stays readable and the trace is no longer live. */
  g_assert_cmpint (vs_writer_close (r.w, false, NULL, NULL, NULL, 0), ==, 0);
  g_assert_cmpint (g_unlink (path), ==, 0);
  vs_test_trace_file_remove (g_steal_pointer (&dir), g_steal_pointer (&path));
  g_assert_true (vs_trace_refresh (trace, &changed, &error));
  g_assert_no_error (error);
  g_assert_false (changed);
  g_assert_false (vs_trace_is_recording (trace));
  g_assert_cmpint (allocated_now (trace), ==, 50 * MiB);
}

/* vs_trace_open() on a trace another process is still writing reads a
 * live copy instead of finalizing the file under its writer. */
static void
test_open_while_recording (void)
{
  g_autofree char *dir = NULL, *path = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (GError) error = NULL;
  int ready[2], go[2];
  char byte = 0;
  pid_t child;
  int status;

  vs_test_trace_file ("vs-live-XXXXXX", "process-78.db", &dir, &path);
  g_assert_cmpint (pipe (ready), ==, 0);
  g_assert_cmpint (pipe (go), ==, 0);
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      /* The recorder: commits, then keeps the file open until told. */
      Rec r;

      rec_begin (&r, path);
      rec_mem (&r, 1000, VS_MEM_OP_ALLOC, 0x10000000, 64 * MiB);
      if (vs_writer_commit (r.w) != 0 || write (ready[1], "r", 1) != 1
          || read (go[0], &byte, 1) != 1)
        _exit (2);
      _exit (vs_writer_close (r.w, false, NULL, NULL, NULL, 0) == 0 ? 0 : 3);
    }
  g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);

  trace = open_untouched (path, vs_trace_open);
  g_assert_true (vs_trace_is_recording (trace));
  g_assert_cmpint (allocated_now (trace), ==, 64 * MiB);
  g_assert_cmpint (vs_test_source_finalized (path), ==, 0);

  g_assert_cmpint (write (go[1], "g", 1), ==, 1);
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_clear_pointer (&trace, vs_trace_free);

  /* Closed by its writer without finalizing (a killed recording): opened
   * again, it is finalized in place as before. */
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  g_assert_false (vs_trace_is_recording (trace));
  g_assert_cmpint (vs_test_source_finalized (path), ==, 1);
  g_assert_cmpint (allocated_now (trace), ==, 64 * MiB);
  g_clear_pointer (&trace, vs_trace_free);
  close (ready[0]);
  close (ready[1]);
  close (go[0]);
  close (go[1]);
  vs_test_trace_file_remove (g_steal_pointer (&dir), g_steal_pointer (&path));
}

static char *
make_fixture (const char *name, int kind)
{
  g_autofree char *dir = NULL;
  char *path;
  char err[512] = "";
  bool ok;

  vs_test_trace_file ("vs-viewq-XXXXXX", name, &dir, &path);
  ok = kind == 0   ? vs_fixture_full (path, err, sizeof err)
       : kind == 1 ? vs_fixture_random (path, 20000, 7, err, sizeof err)
                   : vs_fixture_expandable (path, err, sizeof err);

  if (!ok)
    g_error ("fixture: %s", err);
  return path;
}

/* Density against a brute-force pass over the kernel table. */
static void
test_kernel_density (void)
{
  g_autofree char *path = make_fixture ("full.db", 0);
  g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
  const GPtrArray *devices = vs_trace_get_devices (trace);
  gint64 duration = vs_trace_get_duration_ns (trace);

  g_assert_nonnull (trace);
  for (guint d = 0; d <= devices->len; d++)
    for (guint n = 1; n <= 64; n *= 4)
      for (int zoom = 0; zoom < 3; zoom++)
        {
          gint64 dev
              = d == devices->len ? 0 : ((const VsDeviceInfo *)g_ptr_array_index (devices, d))->id;
          gint64 from = zoom * duration / 5, to = duration - zoom * duration / 7 + 1;
          g_autoptr (GError) error = NULL;
          g_autoptr (GArray) b = vs_kernel_density (trace, dev, from, to, n, &error);
          sqlite3 *db = NULL;
          sqlite3_stmt *st = NULL;
          gint64 want_count = 0, want_busy = 0, got_count = 0, got_busy = 0;

          g_assert_no_error (error);
          g_assert_cmpuint (b->len, ==, n);
          g_assert_cmpint (g_array_index (b, VsKernelBucket, 0).from_ns, ==, from);
          g_assert_cmpint (g_array_index (b, VsKernelBucket, n - 1).to_ns, ==, to);
          for (guint i = 0; i < n; i++)
            {
              const VsKernelBucket *k = &g_array_index (b, VsKernelBucket, i);
              got_count += k->count;
              got_busy += k->busy_ns;
              if (i > 0)
                g_assert_cmpint (k->from_ns, ==, g_array_index (b, VsKernelBucket, i - 1).to_ns);
            }
          g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
          g_assert_cmpint (
              sqlite3_prepare_v2 (
                  db,
                  "SELECT start_ns - ?2, end_ns - ?2 FROM kernel WHERE ?1 = 0 OR device_id = ?1",
                  -1, &st, NULL),
              ==, SQLITE_OK);
          sqlite3_bind_int64 (st, 1, dev);
          sqlite3_bind_int64 (st, 2, vs_trace_get_start_abs_ns (trace));
          while (sqlite3_step (st) == SQLITE_ROW)
            {
              gint64 s = sqlite3_column_int64 (st, 0), e = sqlite3_column_int64 (st, 1);
              if (s >= from && s < to)
                want_count++;
              if (MIN (e, to) > MAX (s, from))
                want_busy += MIN (e, to) - MAX (s, from);
            }
          sqlite3_finalize (st);
          sqlite3_close (db);
          g_assert_cmpint (got_count, ==, want_count);
          g_assert_cmpint (got_busy, ==, want_busy);
        }
  {
    g_autoptr (GError) error = NULL;
    g_assert_null (vs_kernel_density (trace, 0, 10, 10, 4, &error));
    g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT);
  }
  vs_test_file_remove_with_folder (path);
}

/* The peak inside a range against every series row of that range. */
static void
test_peak_between (void)
{
  g_autofree char *path = make_fixture ("random.db", 1);
  g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
  const VsDeviceInfo *dev = g_ptr_array_index (vs_trace_get_devices (trace), 0);
  gint64 duration = vs_trace_get_duration_ns (trace);
  GRand *rand = g_rand_new_with_seed (11);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  for (int i = 0; i < 60; i++)
    {
      gint64 a = g_rand_int_range (rand, 0, (gint32)MIN (duration, G_MAXINT32 - 1));
      gint64 b
          = i % 3 == 0
                ? duration
                : a + g_rand_int_range (rand, 0, (gint32)MIN (duration - a + 1, G_MAXINT32 - 1));
      g_autoptr (GError) error = NULL;
      VsSeriesPoint got, entering;
      sqlite3_stmt *st = NULL;
      gint64 want_seq = -1, want_bytes;

      if (i == 1)
        a = 0, b = duration;
      g_assert_true (vs_series_at_time (trace, dev->id, 0, a - 1, &entering, &error));
      want_bytes = entering.allocated_bytes;
      want_seq = entering.seq;
      g_assert_cmpint (
          sqlite3_prepare_v2 (
              db,
              "SELECT seq, allocated_bytes FROM series WHERE device_id = ?1 AND allocator_id = 0"
              " AND ts >= ?2 AND ts <= ?3 ORDER BY ts, seq",
              -1, &st, NULL),
          ==, SQLITE_OK);
      sqlite3_bind_int64 (st, 1, dev->id);
      sqlite3_bind_int64 (st, 2, vs_trace_get_start_abs_ns (trace) + a);
      sqlite3_bind_int64 (st, 3, vs_trace_get_start_abs_ns (trace) + b);
      while (sqlite3_step (st) == SQLITE_ROW)
        if (sqlite3_column_int64 (st, 1) > want_bytes)
          {
            want_bytes = sqlite3_column_int64 (st, 1);
            want_seq = sqlite3_column_int64 (st, 0);
          }
      sqlite3_finalize (st);

      g_assert_true (vs_series_peak_between (trace, dev->id, 0, a, b, &got, &error));
      g_assert_no_error (error);
      g_assert_cmpint (got.allocated_bytes, ==, want_bytes);
      g_assert_cmpint (got.seq, ==, want_seq);
    }
  sqlite3_close (db);
  g_rand_free (rand);
  vs_test_file_remove_with_folder (path);
}

/* Live segments: every segment, full ones too, and exactly the extents
 * the gaps of vs_fragmentation_at() name. */
static void
test_live_segments (void)
{
  for (int kind = 0; kind <= 2; kind += 2)
    {
      g_autofree char *path = make_fixture (kind == 0 ? "full.db" : "exp.db", kind);
      g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
      const VsDeviceInfo *dev = g_ptr_array_index (vs_trace_get_devices (trace), 0);
      gint64 last = vs_trace_get_last_seq (trace);
      gboolean saw_segment = FALSE;

      for (gint64 seq = 0; seq <= last; seq++)
        {
          g_autoptr (GError) error = NULL;
          g_autoptr (GArray) segs = vs_fragmentation_segments (trace, dev->id, 0, seq, &error);
          g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
          VsFragmentation frag;
          gint64 total = 0, free_total = 0;

          g_assert_no_error (error);
          g_assert_true (vs_fragmentation_at (trace, dev->id, 0, seq, &frag, gaps, &error));
          g_assert_cmpint (segs->len, ==, frag.segment_count);
          for (guint i = 0; i < segs->len; i++)
            {
              const VsSegment *s = &g_array_index (segs, VsSegment, i);
              total += s->bytes;
              saw_segment = TRUE;
              g_assert_cmpint (s->pieces, >=, 1);
            }
          for (guint g = 0; g < gaps->len; g++)
            {
              const VsFreeGap *gap = &g_array_index (gaps, VsFreeGap, g);
              gboolean inside = FALSE;

              free_total += gap->bytes;
              for (guint i = 0; i < segs->len; i++)
                {
                  const VsSegment *s = &g_array_index (segs, VsSegment, i);
                  if (s->id == gap->segment_id && gap->address >= s->address
                      && gap->address + gap->bytes <= s->address + s->bytes)
                    inside = TRUE;
                }
              g_assert_true (inside);
            }
          g_assert_cmpint (free_total, ==, frag.segment_free_bytes);
          g_assert_cmpint (total, >=, free_total);
        }
      g_assert_true (saw_segment);
      vs_test_file_remove_with_folder (path);
    }
}

/* The plain list has the ranges vs_range_memory() describes, in order. */
static void
test_range_list (void)
{
  g_autofree char *path = make_fixture ("full.db", 0);
  g_autoptr (VsTrace) trace = vs_trace_open (path, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = vs_range_list (trace, &error);
  const VsDeviceInfo *dev = g_ptr_array_index (vs_trace_get_devices (trace), 0);
  g_autoptr (GPtrArray) mem = vs_range_memory (trace, dev->id, 0, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (list->len, >, 0);
  g_assert_cmpuint (list->len, ==, mem->len);
  for (guint i = 0; i < list->len; i++)
    {
      const VsRangeInfo *r = g_ptr_array_index (list, i);
      const VsRangeMemory *m = g_ptr_array_index (mem, i);

      g_assert_cmpint (r->id, ==, m->id);
      g_assert_cmpstr (r->name, ==, m->name);
      g_assert_cmpint (r->start_ns, ==, m->start_ns);
      g_assert_cmpint (r->end_ns, ==, m->end_ns);
      g_assert_cmpint (r->depth, ==, m->depth);
    }
  vs_test_file_remove_with_folder (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/live/follow", test_follow);
  g_test_add_func ("/live/open-while-recording", test_open_while_recording);
  g_test_add_func ("/viewer-queries/kernel-density", test_kernel_density);
  g_test_add_func ("/viewer-queries/peak-between", test_peak_between);
  g_test_add_func ("/viewer-queries/live-segments", test_live_segments);
  g_test_add_func ("/viewer-queries/range-list", test_range_list);
  return g_test_run ();
}
