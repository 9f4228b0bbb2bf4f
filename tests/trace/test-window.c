/* SPDX-License-Identifier: MIT */
/* test-window.c — the flight recorder (vs-trace-window.c) against the
 * complete trace of the same run.
 *
 * A synthetic training run is written twice through the writer (same
 * events): once kept whole, once bounded to a window.  The windowed trace
 * must give the same peaks (bytes and instants), the same blocks live at
 * the peak and at the end with their stacks, the same failures and
 * counts; the same series at every instant inside its detail intervals;
 * outside them one point per slice, at the slice's true peak; slice
 * aggregates equal to what the complete trace gives per slice; and a size
 * that does not grow with the run's length.  A window longer than the run
 * leaves the trace as it was.
 *
 * The run: a segment that lives throughout; each 10 ms step allocates 8
 * activations in it and frees them in reverse, launches 3 kernels and
 * copies once, inside an NVTX range; every 20 steps a temporary segment
 * (with the cudaMalloc that backs it) holds one block; every 100 steps a
 * small block is kept (a leak); at a tenth of the run an 8 GiB segment and
 * block make the peak and are freed; every 50 steps a request fails; every
 * 3 steps a library outside the allocator takes and frees 2 MiB of device
 * memory (a plain cudaMalloc), every 1000 steps keeps 1 MiB.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vs-trace-window.h"
#include "vs-trace-finalize.h"
#include "vs-trace-writer.h"

#define U VS_UNKNOWN
#define MiB (1024LL * 1024)
#define STEP_NS 10000000LL
#define T0 1700000000000000000LL

static void
gen (const char *path, int nsteps)
{
  char err[512];
  VsWriter *w = vs_writer_create (path, err, sizeof err);
  g_assert_nonnull (w);
  vs_writer_set_meta (w, "source", "synthetic");
  vs_writer_set_meta (w, "clock", "CLOCK_REALTIME");
  vs_writer_set_meta_int (w, "start_ns", T0);
  VsProcess p = { 4242, 1, "node", U, U, U, "0", "python train.py", T0, U, 0 };
  int64_t proc = vs_writer_add_process (w, &p);
  VsDevice d = { 0, "GPU-test-0", "Test GPU", 80 * 1024 * MiB };
  int64_t dev = vs_writer_add_device (w, &d);
  VsAllocator a = { dev, proc, "pytorch", "pytorch", U, "" };
  int64_t pt = vs_writer_add_allocator (w, &a);
  int64_t stacks[6];
  for (int s = 0; s < 6; s++)
    {
      char fn[32];
      g_snprintf (fn, sizeof fn, "layer%d", s);
      VsFrame fr = { VS_FRAME_PYTHON, 0, U, fn, "model.py", 10 + s };
      int64_t f = vs_writer_add_frame (w, &fr);
      stacks[s] = vs_writer_add_stack (w, &f, 1);
    }
  int64_t ts = T0 + 1000;
#define MEM(op, addr, bytes)                                                                       \
  do                                                                                               \
    {                                                                                              \
      VsMemEvent me = { ts, proc, 1, dev, U, U, VS_MEM_KIND_DEVICE, (op), (addr), (bytes),         \
                        0,  U,    U, U,   0, 0 };                                                  \
      g_assert_cmpint (vs_writer_mem_event (w, &me), ==, 0);                                       \
    }                                                                                              \
  while (0)
#define ALLOC(op, addr, bytes, stack)                                                              \
  do                                                                                               \
    {                                                                                              \
      VsAllocEvent ae                                                                              \
          = { ts, proc, 1, dev, pt, (op), (addr), (bytes), (bytes), U, 7, (stack), 0, 0 };         \
      g_assert_cmpint (vs_writer_alloc_event (w, &ae), ==, 0);                                     \
    }                                                                                              \
  while (0)
  const int64_t seg = 0x7f0000000000LL, tmp_seg = 0x7f1000000000LL, big = 0x7f2000000000LL,
                plain = 0x7f3000000000LL;
  MEM (VS_MEM_OP_ALLOC, seg, 1024 * MiB);
  ALLOC (VS_ALLOC_OP_SEGMENT_ALLOC, seg, 1024 * MiB, 0);
  int leaks = 0;
  for (int i = 0; i < nsteps; i++)
    {
      ts = T0 + 1000000 + (int64_t)i * STEP_NS;
      VsRange r = { proc, 1, NULL, "step", ts, ts + STEP_NS - 1000, 0, 0 };
      g_assert_cmpint (vs_writer_add_range (w, &r), >, 0);
      for (int k = 0; k < 8; k++)
        {
          ts += 1000;
          ALLOC (VS_ALLOC_OP_ALLOC, seg + k * 16 * MiB, (1 + (i + k) % 7) * MiB, stacks[k % 5]);
        }
      for (int k = 0; k < 3; k++)
        {
          VsKernel kn = { ts + k * 100,
                          ts + k * 100 + 50,
                          proc,
                          dev,
                          1,
                          7,
                          i * 3 + k,
                          "gemm",
                          1,
                          1,
                          1,
                          128,
                          1,
                          1,
                          0,
                          0,
                          32 };
          g_assert_cmpint (vs_writer_kernel (w, &kn), ==, 0);
        }
      VsMemcpy mc = { ts, ts + 10, proc, dev, 7, i, "HtoD", "pageable", "device", 4096 };
      g_assert_cmpint (vs_writer_memcpy (w, &mc), ==, 0);
      if (i % 3 == 0)
        {
          ts += 1000;
          MEM (VS_MEM_OP_ALLOC, plain, 2 * MiB);
        }
      if (i % 1000 == 999)
        {
          ts += 1000;
          MEM (VS_MEM_OP_ALLOC, plain + 64 * MiB + i * MiB, MiB);
        }
      if (i % 20 == 0)
        {
          ts += 1000;
          MEM (VS_MEM_OP_ALLOC, tmp_seg, 64 * MiB);
          ALLOC (VS_ALLOC_OP_SEGMENT_ALLOC, tmp_seg, 64 * MiB, 0);
          ALLOC (VS_ALLOC_OP_ALLOC, tmp_seg, 32 * MiB, stacks[2]);
        }
      if (i == nsteps / 10)
        {
          ts += 1000;
          MEM (VS_MEM_OP_ALLOC, big, 8192 * MiB);
          ALLOC (VS_ALLOC_OP_SEGMENT_ALLOC, big, 8192 * MiB, 0);
          ALLOC (VS_ALLOC_OP_ALLOC, big, 8192 * MiB, stacks[4]);
        }
      if (i % 50 == 25)
        {
          ts += 1000;
          VsFailedAlloc f = { ts,
                              proc,
                              1,
                              dev,
                              pt,
                              "pytorch",
                              100 * 1024 * MiB,
                              2,
                              "cudaErrorMemoryAllocation",
                              1024 * MiB,
                              80 * 1024 * MiB,
                              U,
                              stacks[3],
                              0 };
          g_assert_cmpint (vs_writer_failed_alloc (w, &f), ==, 0);
        }
      if (i % 100 == 0)
        {
          ts += 1000;
          ALLOC (VS_ALLOC_OP_ALLOC, seg + 512 * MiB + leaks * 4096, 4096, stacks[5]);
          leaks++;
        }
      for (int k = 7; k >= 0; k--)
        {
          ts += 1000;
          ALLOC (VS_ALLOC_OP_FREE_REQUESTED, seg + k * 16 * MiB, (1 + (i + k) % 7) * MiB, 0);
          ALLOC (VS_ALLOC_OP_FREE_COMPLETED, seg + k * 16 * MiB, (1 + (i + k) % 7) * MiB, 0);
        }
      if (i % 20 == 0)
        {
          ts += 1000;
          ALLOC (VS_ALLOC_OP_FREE_COMPLETED, tmp_seg, 32 * MiB, 0);
          ALLOC (VS_ALLOC_OP_SEGMENT_FREE, tmp_seg, 64 * MiB, 0);
          MEM (VS_MEM_OP_FREE, tmp_seg, 64 * MiB);
        }
      if (i % 3 == 0)
        {
          ts += 1000;
          MEM (VS_MEM_OP_FREE, plain, 2 * MiB);
        }
      if (i == nsteps / 10 + 1)
        {
          ts += 1000;
          ALLOC (VS_ALLOC_OP_FREE_COMPLETED, big, 8192 * MiB, 0);
          ALLOC (VS_ALLOC_OP_SEGMENT_FREE, big, 8192 * MiB, 0);
          MEM (VS_MEM_OP_FREE, big, 8192 * MiB);
        }
    }
  vs_writer_set_meta_int (w, "end_ns", ts + 1000);
  g_assert_cmpint (vs_writer_close (w, true, NULL, NULL, err, sizeof err), ==, 0);
#undef MEM
#undef ALLOC
}

static sqlite3 *
open_db (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  return db;
}

/* sql prepared on db; asserts that it could be. */
static sqlite3_stmt *
prepared (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s = NULL;

  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  return s;
}

static int64_t
q (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s = prepared (db, sql);
  int64_t v = sqlite3_step (s) == SQLITE_ROW ? sqlite3_column_int64 (s, 0) : -1;
  sqlite3_finalize (s);
  return v;
}

/* The rows of sql, one line per row, columns joined by '|'. */
static char *
rows (sqlite3 *db, const char *sql, int64_t arg)
{
  sqlite3_stmt *s = prepared (db, sql);
  if (sqlite3_bind_parameter_count (s) > 0)
    sqlite3_bind_int64 (s, 1, arg);
  GString *out = g_string_new (NULL);
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      for (int c = 0; c < sqlite3_column_count (s); c++)
        g_string_append_printf (out, "%s%s", c ? "|" : "",
                                sqlite3_column_type (s, c) == SQLITE_NULL
                                    ? "NULL"
                                    : (const char *)sqlite3_column_text (s, c));
      g_string_append_c (out, '\n');
    }
  sqlite3_finalize (s);
  return g_string_free (out, FALSE);
}

typedef struct
{
  char *dir, *full, *win;
  sqlite3 *f, *w;
  VsTraceWindowStats st;
} Pair;

/* Slices of fixed time (0) or of the run's iterations (1), for the tests
 * run both ways. */
static int slicing_mode;

/* The run of nsteps written whole and windowed to window_ns. */
static void
pair_make (Pair *p, int nsteps, int64_t window_ns)
{
  p->dir = g_dir_make_tmp ("vs-window-XXXXXX", NULL);
  p->full = g_build_filename (p->dir, "full.db", NULL);
  p->win = g_build_filename (p->dir, "win.db", NULL);
  gen (p->full, nsteps);
  gen (p->win, nsteps);
  p->f = open_db (p->full);
  p->w = open_db (p->win);
  char err[512] = "";
  int rc;
  if (slicing_mode == 1)
    {
      /* The steps' starts, as the analyzer finds them from their ranges. */
      g_autofree int64_t *starts = g_new (int64_t, nsteps);
      for (int i = 0; i < nsteps; i++)
        starts[i] = T0 + 1000000 + (int64_t)i * STEP_NS;
      rc = vs_trace_window_iterations (p->w, window_ns, starts, (size_t)nsteps, &p->st, NULL, err,
                                       sizeof err);
    }
  else
    rc = vs_trace_window (p->w, window_ns, &p->st, err, sizeof err);
  if (rc != 0)
    g_printerr ("%s\n", err);
  g_assert_cmpint (rc, ==, 0);
}

/* The run the windowed checks share: slicing as slicing says (see
 * slicing_mode), 3000 steps, the window their last tenth; makes p and
 * returns the steps. */
static int
pair_make_run (Pair *p, int slicing)
{
  int n = 3000;

  slicing_mode = slicing;
  pair_make (p, n, (int64_t)n * STEP_NS / 10);
  return n;
}

static void
pair_free (Pair *p)
{
  sqlite3_close (p->f);
  sqlite3_close (p->w);
  g_unlink (p->full);
  g_unlink (p->win);
  g_rmdir (p->dir);
  g_free (p->full);
  g_free (p->win);
  g_free (p->dir);
}

static void
assert_same (sqlite3 *a, sqlite3 *b, const char *sql, int64_t arg_a, int64_t arg_b)
{
  g_autofree char *x = rows (a, sql, arg_a);
  g_autofree char *y = rows (b, sql, arg_b);
  g_assert_cmpstr (x, ==, y);
}

static const char *summary_sql
    = "SELECT device_id, allocator_id, peak_reserved_bytes, peak_reserved_ts,"
      " peak_allocated_bytes, peak_allocated_ts, final_reserved_bytes, final_allocated_bytes,"
      " alloc_count, free_count, failed_alloc_count, peak_device_bytes, peak_device_ts,"
      " static_bytes, before_trace_bytes, before_trace_count FROM summary ORDER BY 1, 2";
/* The blocks live at the replay position ?1, as attribution reads them. */
static const char *live_at_sql
    = "SELECT level, address, bytes, alloc_ts, free_ts, stack_id FROM block"
      " WHERE alloc_seq <= ?1 AND (free_seq IS NULL OR free_seq > ?1) ORDER BY 1, 2, 4";
static const char *live_at_end_sql
    = "SELECT level, address, bytes, alloc_ts, stack_id FROM block WHERE free_seq IS NULL"
      " ORDER BY 1, 2, 4";
static const char *failures_sql
    = "SELECT ts, requested_bytes, stack_id FROM failed_alloc ORDER BY ts";

/* Windowed: the same answers as the complete trace. */
static void
test_same_answers (gconstpointer mode)
{
  Pair p;
  int n = pair_make_run (&p, GPOINTER_TO_INT (mode));
  g_assert_cmpint (p.st.blocks_dropped, >, 0);
  g_assert_cmpint (p.st.kernels_dropped, >, 0);
  assert_same (p.f, p.w, summary_sql, 0, 0);
  /* Peak attribution: every block live at each peak instant. */
  const char *peak_seq[] = { "SELECT peak_allocated_seq FROM summary WHERE allocator_id = 0",
                             "SELECT peak_reserved_seq FROM summary WHERE allocator_id = 0",
                             "SELECT peak_allocated_seq FROM summary WHERE allocator_id = 1" };
  for (size_t k = 0; k < G_N_ELEMENTS (peak_seq); k++)
    {
      int64_t sf = q (p.f, peak_seq[k]), sw = q (p.w, peak_seq[k]);
      g_assert_cmpint (sf, >, 0);
      g_assert_cmpint (sw, >, 0);
      assert_same (p.f, p.w, live_at_sql, sf, sw);
    }
  assert_same (p.f, p.w, live_at_end_sql, 0, 0);
  /* Failures: the count (summary, above); the first and last kept. */
  g_autofree char *ff = rows (p.f, failures_sql, 0);
  g_autofree char *fw = rows (p.w, failures_sql, 0);
  g_auto (GStrv) lf = g_strsplit (ff, "\n", -1);
  g_auto (GStrv) lw = g_strsplit (fw, "\n", -1);
  guint nf = g_strv_length (lf) - 1, nw = g_strv_length (lw) - 1;
  g_assert_cmpuint (nf, ==, (guint)(n / 50));
  g_assert_cmpuint (nw, >=, 2 * VS_WINDOW_FAILURES_KEPT);
  g_assert_cmpuint (nw, <, nf);
  for (int k = 0; k < VS_WINDOW_FAILURES_KEPT; k++)
    {
      g_assert_cmpstr (lf[k], ==, lw[k]);
      g_assert_cmpstr (lf[nf - 1 - k], ==, lw[nw - 1 - k]);
    }
  g_assert_cmpint (q (p.w, "PRAGMA user_version"), ==, VS_TRACE_SCHEMA_VERSION);
  g_assert_cmpint (q (p.w, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_ns'"), ==,
                   (int64_t)n * STEP_NS / 10);
  pair_free (&p);
}

/* The state of series (dev 1, allocator a) at instant ts: the last row at
 * or before it, as "reserved|allocated|device". */
static char *
state_at (sqlite3 *db, int64_t a, int64_t ts)
{
  sqlite3_stmt *s;
  const char *sql = "SELECT reserved_bytes, allocated_bytes, device_bytes FROM series"
                    " WHERE device_id = 1 AND allocator_id = ?1 AND ts <= ?2"
                    " ORDER BY ts DESC, seq DESC LIMIT 1";
  s = prepared (db, sql);
  sqlite3_bind_int64 (s, 1, a);
  sqlite3_bind_int64 (s, 2, ts);
  char *v = sqlite3_step (s) == SQLITE_ROW
                ? g_strdup_printf ("%lld|%lld|%s", (long long)sqlite3_column_int64 (s, 0),
                                   (long long)sqlite3_column_int64 (s, 1),
                                   sqlite3_column_type (s, 2) == SQLITE_NULL
                                       ? "NULL"
                                       : (const char *)sqlite3_column_text (s, 2))
                : g_strdup ("none");
  sqlite3_finalize (s);
  return v;
}

/* SQL of the complete trace's highest (agg "max") or lowest ("min")
 * reserved and allocated memory of allocator a in the slice [s, e), the
 * state entering it included. */
static char *
slice_state_sql (const char *agg, int64_t a, int64_t s, int64_t e)
{
  return g_strdup_printf (
      "SELECT %s(r), %s(al) FROM (SELECT reserved_bytes AS r, allocated_bytes AS al"
      " FROM series WHERE device_id = 1 AND allocator_id = %lld AND ts >= %lld AND ts < %lld"
      " UNION ALL SELECT * FROM (SELECT reserved_bytes, allocated_bytes FROM series"
      " WHERE device_id = 1 AND allocator_id = %lld AND ts < %lld"
      " ORDER BY ts DESC, seq DESC LIMIT 1))",
      agg, agg, (long long)a, (long long)s, (long long)e, (long long)a, (long long)s);
}

/* Windowed: the series inside every detail interval as the complete
 * trace's; outside, one point per slice at the slice's true peak. */
static void
test_series (gconstpointer mode)
{
  Pair p;
  pair_make_run (&p, GPOINTER_TO_INT (mode));
  g_assert_cmpint (q (p.w, "SELECT count(*) FROM detail_interval"), >=, 3);
  sqlite3_stmt *iv = prepared (p.w, "SELECT start_ns, end_ns FROM detail_interval"
                                    " WHERE device_id = 1 ORDER BY start_ns");
  int64_t checked = 0;
  while (sqlite3_step (iv) == SQLITE_ROW)
    {
      int64_t s = sqlite3_column_int64 (iv, 0), e = sqlite3_column_int64 (iv, 1);
      sqlite3_stmt *r = prepared (p.f, "SELECT DISTINCT allocator_id, ts FROM series"
                                       " WHERE device_id = 1 AND ts >= ?1 AND ts < ?2");
      sqlite3_bind_int64 (r, 1, s);
      sqlite3_bind_int64 (r, 2, e);
      while (sqlite3_step (r) == SQLITE_ROW)
        {
          int64_t a = sqlite3_column_int64 (r, 0), ts = sqlite3_column_int64 (r, 1);
          g_autofree char *x = state_at (p.f, a, ts);
          g_autofree char *y = state_at (p.w, a, ts);
          g_assert_cmpstr (x, ==, y);
          checked++;
        }
      sqlite3_finalize (r);
    }
  sqlite3_finalize (iv);
  g_assert_cmpint (checked, >, 1000);

  /* Outside: each coarse slice's one row holds the slice's peak, the
   * highest state of the complete trace from its start to its end (the
   * state entering it included). */
  sqlite3_stmt *sl
      = prepared (p.w, "SELECT s.allocator_id, s.start_ns, s.end_ns FROM window_slice s"
                       " WHERE NOT EXISTS (SELECT 1 FROM detail_interval i WHERE"
                       " i.device_id = s.device_id AND i.start_ns < s.end_ns"
                       " AND i.end_ns > s.start_ns)");
  int64_t coarse = 0;
  while (sqlite3_step (sl) == SQLITE_ROW)
    {
      int64_t a = sqlite3_column_int64 (sl, 0), s = sqlite3_column_int64 (sl, 1),
              e = sqlite3_column_int64 (sl, 2);
      g_autofree char *sql = slice_state_sql ("max", a, s, e);
      g_autofree char *truth = rows (p.f, sql, 0);
      g_autofree char *wsql = g_strdup_printf (
          "SELECT reserved_bytes, allocated_bytes FROM series WHERE device_id = 1"
          " AND allocator_id = %lld AND ts >= %lld AND ts < %lld",
          (long long)a, (long long)s, (long long)e);
      g_autofree char *drawn = rows (p.w, wsql, 0);
      g_assert_cmpstr (drawn, ==, truth);
      /* And its lowest state. */
      g_autofree char *low_sql = slice_state_sql ("min", a, s, e);
      g_autofree char *low = rows (p.f, low_sql, 0);
      g_autofree char *kept_sql = g_strdup_printf (
          "SELECT min_reserved_bytes, min_allocated_bytes FROM window_slice WHERE device_id = 1"
          " AND allocator_id = %lld AND start_ns = %lld",
          (long long)a, (long long)s);
      g_autofree char *kept = rows (p.w, kept_sql, 0);
      g_assert_cmpstr (kept, ==, low);
      coarse++;
    }
  sqlite3_finalize (sl);
  g_assert_cmpint (coarse, >, 10);
  pair_free (&p);
}

/* The aggregates: the whole run's counts and every slice's final state as
 * the complete trace gives them, and per site the bytes still live. */
static void
test_aggregates (gconstpointer mode)
{
  Pair p;
  int n = pair_make_run (&p, GPOINTER_TO_INT (mode));
  /* Counts over all slices: the complete trace's. */
  assert_same (p.f, p.w, "SELECT allocator_id, alloc_count, free_count FROM summary ORDER BY 1", 0,
               0);
  g_autofree char *sums
      = rows (p.w,
              "SELECT allocator_id, sum(alloc_count), sum(free_count) FROM window_slice"
              " GROUP BY 1 ORDER BY 1",
              0);
  g_autofree char *counts
      = rows (p.f, "SELECT allocator_id, alloc_count, free_count FROM summary ORDER BY 1", 0);
  g_assert_cmpstr (sums, ==, counts);
  g_assert_cmpint (q (p.w, "SELECT sum(failed_alloc_count) FROM window_slice"
                           " WHERE allocator_id = 0"),
                   ==, n / 50);
  /* Each slice's final state: the complete trace's state at its end. */
  sqlite3_stmt *sl = prepared (p.w, "SELECT allocator_id, end_ns, final_reserved_bytes,"
                                    " final_allocated_bytes FROM window_slice");
  while (sqlite3_step (sl) == SQLITE_ROW)
    {
      g_autofree char *truth
          = state_at (p.f, sqlite3_column_int64 (sl, 0), sqlite3_column_int64 (sl, 1) - 1);
      g_autofree char *got = g_strdup_printf ("%lld|%lld|", (long long)sqlite3_column_int64 (sl, 2),
                                              (long long)sqlite3_column_int64 (sl, 3));
      g_assert_true (g_str_has_prefix (truth, got) || strcmp (truth, "none") == 0);
    }
  sqlite3_finalize (sl);
  /* Each slice's allocations and frees of the allocator: the complete
   * trace's blocks allocated and freed in it. */
  {
    sqlite3_stmt *cs = prepared (p.w, "SELECT start_ns, end_ns, alloc_count, alloc_bytes,"
                                      " free_count, free_bytes FROM window_slice"
                                      " WHERE allocator_id = 1");
    int64_t nonzero = 0;
    while (sqlite3_step (cs) == SQLITE_ROW)
      {
        int64_t a = sqlite3_column_int64 (cs, 0), e = sqlite3_column_int64 (cs, 1);
        g_autofree char *sql = g_strdup_printf (
            "SELECT (SELECT count(*) FROM block WHERE level = 2 AND alloc_ts >= %lld"
            "  AND alloc_ts < %lld),"
            " (SELECT ifnull(sum(bytes), 0) FROM block WHERE level = 2 AND alloc_ts >= %lld"
            "  AND alloc_ts < %lld),"
            " (SELECT count(*) FROM block WHERE level = 2 AND free_ts >= %lld AND free_ts < %lld),"
            " (SELECT ifnull(sum(bytes), 0) FROM block WHERE level = 2 AND free_ts >= %lld"
            "  AND free_ts < %lld)",
            (long long)a, (long long)e, (long long)a, (long long)e, (long long)a, (long long)e,
            (long long)a, (long long)e);
        g_autofree char *truth = rows (p.f, sql, 0);
        g_autofree char *got = g_strdup_printf (
            "%lld|%lld|%lld|%lld\n", (long long)sqlite3_column_int64 (cs, 2),
            (long long)sqlite3_column_int64 (cs, 3), (long long)sqlite3_column_int64 (cs, 4),
            (long long)sqlite3_column_int64 (cs, 5));
        g_assert_cmpstr (got, ==, truth);
        if (sqlite3_column_int64 (cs, 2) > 0)
          nonzero++;
      }
    sqlite3_finalize (cs);
    g_assert_cmpint (nonzero, >, 100);
  }
  /* Growth per site over the run: the bytes each site still holds. */
  assert_same (p.f, p.w,
               "SELECT ifnull(stack_id, 0), sum(bytes) FROM block WHERE level = 2"
               " AND free_seq IS NULL GROUP BY 1 ORDER BY 1",
               0, 0);
  g_autofree char *live = rows (p.f,
                                "SELECT ifnull(stack_id, 0), sum(bytes) FROM block WHERE level = 2"
                                " AND free_seq IS NULL GROUP BY 1 ORDER BY 1",
                                0);
  g_autofree char *grown = rows (p.w,
                                 "SELECT stack_id, sum(net_bytes) FROM window_site"
                                 " WHERE allocator_id = 1 GROUP BY 1 HAVING sum(net_bytes) != 0"
                                 " ORDER BY 1",
                                 0);
  g_assert_cmpstr (grown, ==, live);
  pair_free (&p);
}

/* Slices that follow iterations: each starts where an iteration does,
 * groups of the fewest iterations that leave at most 1024 slices before
 * the window (2700 steps there: 3 each). */
static void
test_iteration_slices (void)
{
  Pair p;
  int n = pair_make_run (&p, 1);
  g_assert_cmpint (p.st.slice_iterations, ==, 3);
  g_assert_cmpint (p.st.slice_ns, ==, 0);
  g_assert_cmpint (q (p.w, "SELECT CAST(value AS INTEGER) FROM meta"
                           " WHERE key = 'window_slice_iterations'"),
                   ==, 3);
  /* Every slice but the first starts at a step, every third step, or
   * where a detail interval begins or ends (slices are cut there). */
  static const char *cut = " (start_ns IN (SELECT start_ns FROM detail_interval"
                           "  UNION SELECT end_ns FROM detail_interval))";
  g_autofree char *bad_sql = g_strdup_printf (
      "SELECT start_ns FROM window_slice WHERE allocator_id = 0"
      " AND start_ns != (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns')"
      " AND ((start_ns - 1700000000001000000) %% 30000000 != 0) AND NOT %s",
      cut);
  g_autofree char *bad = rows (p.w, bad_sql, 0);
  g_assert_cmpstr (bad, ==, "");
  g_autofree char *cuts_sql = g_strdup_printf (
      "SELECT count(*) FROM window_slice WHERE allocator_id = 0 AND %s"
      " AND ((start_ns - 1700000000001000000) %% 30000000 != 0)"
      " AND start_ns != (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns')",
      cut);
  int64_t cuts = q (p.w, cuts_sql);
  g_assert_cmpint (cuts, >, 0);
  g_assert_cmpint (q (p.w, "SELECT count(*) FROM window_slice WHERE allocator_id = 0"), ==,
                   1 + (n + 2) / 3 + cuts);
  pair_free (&p);
  slicing_mode = 0;
}

static int64_t
file_size (const char *path)
{
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return (int64_t)st.st_size;
}

/* Size: a run four times longer gives a windowed trace of about the same
 * size (the blocks it leaks, still live, are all it adds), while the
 * complete trace grows fourfold. */
static void
test_size_bounded (void)
{
  int64_t window = 3000 * STEP_NS / 10;
  Pair a, b;
  pair_make (&a, 3000, window);
  pair_make (&b, 12000, window);
  int64_t fa = file_size (a.full), fb = file_size (b.full);
  int64_t wa = file_size (a.win), wb = file_size (b.win);
  g_test_message ("complete %lld → %lld bytes, windowed %lld → %lld bytes", (long long)fa,
                  (long long)fb, (long long)wa, (long long)wb);
  g_assert_cmpint (fb, >, 3 * fa);
  g_assert_cmpint (wb, <, wa * 3 / 2);
  g_assert_cmpint (wa, <, fa / 2);
  pair_free (&a);
  pair_free (&b);
}

/* A window longer than the run: the trace is the complete one. */
static void
test_longer_window (void)
{
  Pair p;
  pair_make (&p, 500, 1000 * STEP_NS);
  g_assert_cmpint (p.st.slice_ns, ==, 0);
  g_assert_cmpint (p.st.blocks_dropped, ==, 0);
  assert_same (p.f, p.w, "SELECT * FROM summary ORDER BY 1, 2", 0, 0);
  assert_same (p.f, p.w, "SELECT * FROM series ORDER BY 1, 2, 3, 4", 0, 0);
  assert_same (p.f, p.w, "SELECT * FROM block ORDER BY id", 0, 0);
  assert_same (p.f, p.w, "SELECT count(*) FROM kernel", 0, 0);
  g_assert_cmpint (q (p.w, "SELECT count(*) FROM detail_interval"), ==, 0);
  /* Finalized again (a reader's repair), still the same. */
  char err[256];
  g_assert_cmpint (vs_trace_finalize (p.w, NULL, NULL, err, sizeof err), ==, 0);
  assert_same (p.f, p.w, "SELECT * FROM series ORDER BY 1, 2, 3, 4", 0, 0);
  pair_free (&p);
}

/* Finalizing a windowed trace again gives the same derived tables. */
static void
test_refinalize (void)
{
  Pair p;
  pair_make (&p, 2000, 2000 * STEP_NS / 10);
  g_autofree char *series = rows (p.w, "SELECT * FROM series ORDER BY 1, 2, 3, 4", 0);
  g_autofree char *summary = rows (p.w, "SELECT * FROM summary ORDER BY 1, 2", 0);
  char err[256];
  g_assert_cmpint (vs_trace_finalize (p.w, NULL, NULL, err, sizeof err), ==, 0);
  g_autofree char *series2 = rows (p.w, "SELECT * FROM series ORDER BY 1, 2, 3, 4", 0);
  g_autofree char *summary2 = rows (p.w, "SELECT * FROM summary ORDER BY 1, 2", 0);
  g_assert_cmpstr (series, ==, series2);
  g_assert_cmpstr (summary, ==, summary2);
  char err2[256] = "";
  g_assert_cmpint (vs_trace_window (p.w, 0, NULL, err2, sizeof err2), ==, -1);
  g_assert_cmpstr (err2, !=, "");
  pair_free (&p);
}

/* The event tables and the column that says when each row happened. */
static const char *const timed[][2]
    = { { "alloc_event", "ts" },  { "mem_event", "ts" },         { "pool_event", "ts" },
        { "failed_alloc", "ts" }, { "kernel_exec", "start_ns" }, { "memcpy", "start_ns" },
        { "memset", "start_ns" }, { "nvtx_range", "start_ns" } };

/* Copies into live (attached full as x) the rows of (from, to]. */
static void
arrive (sqlite3 *live, int64_t from, int64_t to)
{
  for (size_t k = 0; k < G_N_ELEMENTS (timed); k++)
    {
      g_autofree char *sql = g_strdup_printf (
          "INSERT INTO main.%s SELECT * FROM x.%s WHERE %s > %lld AND %s <= %lld", timed[k][0],
          timed[k][0], timed[k][1], (long long)from, timed[k][1], (long long)to);
      g_assert_cmpint (sqlite3_exec (live, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    }
}

/* The window applied while the run is written (vs_trace_window_trim every
 * epoch_ns on what has arrived, the frontier lag_ns behind), then at its
 * end: the same trace as the window applied to the whole run at its end,
 * table by table, ids included; and the trace never holds more than a
 * fraction of the run meanwhile. */
static void
test_live (gconstpointer lag_p)
{
  int64_t lag = GPOINTER_TO_INT (lag_p) * 1000000LL;
  int n = 1500; /* 30 trims, 500 ms apart: the window is a tenth of the run */
  int64_t window_ns = (int64_t)n * STEP_NS / 10, epoch = window_ns / 3;
  Pair p;
  pair_make (&p, n, window_ns);
  g_autofree char *live_path = g_build_filename (p.dir, "live.db", NULL);
  g_autofree char *copy = g_strdup_printf ("VACUUM INTO '%s'", live_path);
  g_assert_cmpint (sqlite3_exec (p.f, copy, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3 *l = open_db (live_path);
  for (size_t k = 0; k < G_N_ELEMENTS (timed); k++)
    {
      g_autofree char *sql = g_strdup_printf ("DELETE FROM %s", timed[k][0]);
      g_assert_cmpint (sqlite3_exec (l, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    }
  g_autofree char *attach = g_strdup_printf ("ATTACH '%s' AS x", p.full);
  g_assert_cmpint (sqlite3_exec (l, attach, NULL, NULL, NULL), ==, SQLITE_OK);
  int64_t end = q (p.f, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns'");
  int64_t total = q (p.f, "SELECT count(*) FROM alloc_event"), most = 0, dropped = 0, trims = 0;
  char err[512] = "";
  int64_t at = T0 - 1;
  for (int64_t now = T0 + epoch; now < end; now += epoch)
    {
      arrive (l, at, now);
      at = now;
      g_assert_cmpint (vs_trace_finalize (l, NULL, NULL, err, sizeof err), ==, 0);
      VsTraceTrimStats ts;
      int rc = vs_trace_window_trim (l, window_ns, now - lag, now, &ts, err, sizeof err);
      if (rc != 0)
        g_printerr ("%s\n", err);
      g_assert_cmpint (rc, ==, 0);
      g_assert_cmpint (ts.to, <=, now - lag);
      dropped += ts.blocks_dropped;
      trims++;
      int64_t held = q (l, "SELECT count(*) FROM alloc_event");
      if (held > most)
        most = held;
    }
  arrive (l, at, end);
  g_assert_cmpint (sqlite3_exec (l, "DETACH x", NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (vs_trace_finalize (l, NULL, NULL, err, sizeof err), ==, 0);
  VsTraceWindowStats st;
  int rc = vs_trace_window (l, window_ns, &st, err, sizeof err);
  if (rc != 0)
    g_printerr ("%s\n", err);
  g_assert_cmpint (rc, ==, 0);
  g_assert_cmpint (trims, >, 20);
  g_assert_cmpint (dropped, >, 0);
  /* The live trace held at most the window, its bounds and the peak's and
   * failures' neighbourhoods: well under the run. */
  g_assert_cmpint (most, <, total / 3);
  g_assert_cmpint (st.blocks_dropped, ==, p.st.blocks_dropped);
  g_assert_cmpint (st.kernels_dropped, ==, p.st.kernels_dropped);
  g_assert_cmpint (st.failures_dropped, ==, p.st.failures_dropped);
  g_assert_cmpint (st.slice_ns, ==, p.st.slice_ns);
  static const char *same[] = { "SELECT * FROM summary ORDER BY 1, 2",
                                "SELECT * FROM detail_interval ORDER BY 1, 2",
                                "SELECT * FROM window_slice ORDER BY 1, 2, 3",
                                "SELECT * FROM window_site ORDER BY 1, 2, 3, 4",
                                "SELECT * FROM window_count ORDER BY 1, 2",
                                "SELECT * FROM block ORDER BY id",
                                "SELECT * FROM series ORDER BY seq",
                                "SELECT * FROM alloc_event ORDER BY id",
                                "SELECT * FROM mem_event ORDER BY id",
                                "SELECT * FROM failed_alloc ORDER BY id",
                                "SELECT * FROM kernel_exec ORDER BY start_ns, id",
                                "SELECT * FROM memcpy ORDER BY id",
                                "SELECT * FROM nvtx_range ORDER BY id",
                                "SELECT * FROM meta WHERE key LIKE 'window%' ORDER BY key",
                                "SELECT name FROM sqlite_master ORDER BY name" };
  for (size_t k = 0; k < G_N_ELEMENTS (same); k++)
    assert_same (p.w, l, same[k], 0, 0);
  sqlite3_close (l);
  g_unlink (live_path);
  pair_free (&p);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/window/same-answers", GINT_TO_POINTER (0), test_same_answers);
  g_test_add_data_func ("/window/series", GINT_TO_POINTER (0), test_series);
  g_test_add_data_func ("/window/aggregates", GINT_TO_POINTER (0), test_aggregates);
  g_test_add_data_func ("/window/iterations/same-answers", GINT_TO_POINTER (1), test_same_answers);
  g_test_add_data_func ("/window/iterations/series", GINT_TO_POINTER (1), test_series);
  g_test_add_data_func ("/window/iterations/aggregates", GINT_TO_POINTER (1), test_aggregates);
  g_test_add_func ("/window/iterations/slices", test_iteration_slices);
  g_test_add_func ("/window/size-bounded", test_size_bounded);
  g_test_add_func ("/window/longer-than-run", test_longer_window);
  g_test_add_func ("/window/refinalize", test_refinalize);
  g_test_add_data_func ("/window/live", GINT_TO_POINTER (0), test_live);
  g_test_add_data_func ("/window/live/lagging", GINT_TO_POINTER (350), test_live);
  return g_test_run ();
}
