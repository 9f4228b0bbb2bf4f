/* SPDX-License-Identifier: MIT */
/* test-ranks.c — the rank comparison (vs-ranks.h) on hand-built traces:
 * one row per process and device, peaks equal to the summaries they come
 * from, failures counted as the summary counts them, devices shared by
 * processes marked, the worst rank by share of capacity, and the headline.
 */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"
#include "../vs-test-trace-file.h"

#define U VS_UNKNOWN
#define MiB (INT64_C (1) << 20)
#define T(ns) (VS_FIXTURE_T0 + (ns))

typedef struct
{
  char *dir;
  char *path;
  VsTrace *trace; /* the trace the test opened, if any */
} Fixture;

/* Frees the trace the test opened and removes its file and folder. */
static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->trace, vs_trace_free);
  vs_test_trace_file_remove (f->dir, f->path);
}

/* A writer of the trace name in a new folder (f's), its start at T0, its
 * one device a 1000 MiB "Test GPU" of that uuid (*dev its id). */
static VsWriter *
start_trace (Fixture *f, const char *name, const char *uuid, int64_t *dev)
{
  VsWriter *w = vs_test_trace_file_create ("vs-ranks-XXXXXX", name, &f->dir, &f->path);
  VsDevice d = { 0, uuid, "Test GPU", 1000 * MiB };

  g_assert_cmpint (vs_writer_set_meta_int (w, "start_ns", T (0)), ==, 0);
  *dev = vs_writer_add_device (w, &d);
  return w;
}

/* The ranks of f's trace compared over allocator all_allocator (NULL:
 * each device's own figures) into *all, and over "pytorch" into *py. */
static void
compare_both (Fixture *f, const char *all_allocator, VsRankComparison **all, VsRankComparison **py)
{
  g_autoptr (GError) error = NULL;

  *all = vs_ranks_compare (&f->trace, 1, all_allocator, &error);
  g_assert_no_error (error);
  *py = vs_ranks_compare (&f->trace, 1, "pytorch", &error);
  g_assert_no_error (error);
}

/* Adds process pid, rank of world on host h (its local rank the same),
 * running "train" from T (0) to T (100) and exiting with exit_status;
 * returns its id. */
static int64_t
add_rank (VsWriter *w, int64_t pid, int64_t rank, int64_t world, int64_t exit_status)
{
  VsProcess p = { pid, 1, "h", rank, rank, world, NULL, "train", T (0), T (100), exit_status };

  return vs_writer_add_process (w, &p);
}

/* Finalizes the trace w writes at f's path and opens it. */
static VsTrace *
finish_trace (VsWriter *w, Fixture *f)
{
  char err[512] = "";
  g_autoptr (GError) error = NULL;
  VsTrace *trace;

  g_assert_cmpint (vs_writer_close (w, true, NULL, NULL, err, sizeof err), ==, 0);
  trace = vs_trace_open (f->path, &error);
  g_assert_no_error (error);
  return trace;
}

/* A data-parallel run as one trace, times in ns since T0:
 *   process 10: the launcher (no rank), never touches a GPU;
 *   process 11, rank 0 on host h1, device 0 (1000 MiB): cudaMalloc
 *     100 MiB at 100, free at 400;
 *   process 12, rank 1 on host h1, device 0 too: cudaMalloc 200 MiB at
 *     200 — device 0 peaks at 300 MiB at 200, shared by ranks 0 and 1;
 *   process 13, rank 2 on host h2, device 1 (100 MiB): cudaMalloc 60 MiB
 *     at 150; cudaMalloc of 50 MiB fails at 500, then of 70 MiB at 600
 *     (device-level failures of a process without PyTorch: counted).
 * Rank 2 peaks at 60 % of its device, ranks 0 and 1 at 30 % of theirs. */
static void
write_run (Fixture *f)
{
  char err[512] = "";
  VsWriter *w;
  int64_t proc[4], dev0, dev1;
  VsDevice d0 = { 0, "GPU-ranks-0", "Test GPU", 1000 * MiB };
  VsDevice d1 = { 1, "GPU-ranks-1", "Test GPU", 100 * MiB };

  w = vs_test_trace_file_create ("vs-ranks-XXXXXX", "run.db", &f->dir, &f->path);
  g_assert_cmpint (vs_writer_set_meta_int (w, "start_ns", T (0)), ==, 0);
  g_assert_cmpint (vs_writer_set_meta (w, "job_id", "4242"), ==, 0);
  for (int i = 0; i < 4; i++)
    {
      VsProcess p = { 10 + i,
                      i == 0 ? 1 : 10,
                      i == 3 ? "h2" : "h1",
                      i == 0 ? U : i - 1,
                      i == 0 ? U : (i == 3 ? 0 : i - 1),
                      i == 0 ? U : 3,
                      NULL,
                      "python train.py",
                      T (0),
                      T (1000),
                      i == 3 ? 1 : 0 };

      proc[i] = vs_writer_add_process (w, &p);
      g_assert_cmpint (proc[i], >, 0);
    }
  dev0 = vs_writer_add_device (w, &d0);
  dev1 = vs_writer_add_device (w, &d1);
  {
    const struct
    {
      int64_t ts, proc, dev;
      VsMemOp op;
      int64_t addr, bytes;
    } events[] = {
      { T (100), proc[1], dev0, VS_MEM_OP_ALLOC, 0x1000, 100 * MiB },
      { T (150), proc[3], dev1, VS_MEM_OP_ALLOC, 0x1000, 60 * MiB },
      { T (200), proc[2], dev0, VS_MEM_OP_ALLOC, 0x80000000, 200 * MiB },
      { T (400), proc[1], dev0, VS_MEM_OP_FREE, 0x1000, 100 * MiB },
    };

    for (guint i = 0; i < G_N_ELEMENTS (events); i++)
      {
        VsMemEvent e = { events[i].ts,
                         events[i].proc,
                         1,
                         events[i].dev,
                         U,
                         U,
                         VS_MEM_KIND_DEVICE,
                         events[i].op,
                         events[i].addr,
                         events[i].bytes,
                         U,
                         U,
                         U,
                         U,
                         U,
                         U };

        g_assert_cmpint (vs_writer_mem_event (w, &e), ==, 0);
      }
  }
  for (int i = 0; i < 2; i++)
    {
      VsFailedAlloc fa = { T (500 + 100 * i),
                           proc[3],
                           1,
                           dev1,
                           U,
                           "cudaMalloc",
                           (i == 0 ? 50 : 70) * MiB,
                           2,
                           "cudaErrorMemoryAllocation",
                           40 * MiB,
                           100 * MiB,
                           U,
                           U,
                           U };

      g_assert_cmpint (vs_writer_failed_alloc (w, &fa), ==, 0);
    }
  g_assert_cmpint (vs_writer_close (w, true, NULL, NULL, err, sizeof err), ==, 0);
}

/* One trace of four processes: three ranks, in rank order, the launcher
 * left out; the shared device marked; rank 2 worst and failed. */
static void
test_one_trace (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsRankComparison) c = NULL;
  g_autoptr (GString) headline = g_string_new (NULL);
  g_autofree char *label = NULL;
  const VsRank *r;

  write_run (f);
  f->trace = vs_trace_open (f->path, &error);
  g_assert_no_error (error);
  c = vs_ranks_compare (&f->trace, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vs_rank_comparison_get_n_ranks (c), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      r = vs_rank_comparison_get_rank (c, i);
      g_assert_cmpint (r->rank, ==, i);
      g_assert_cmpint (r->pid, ==, 11 + i);
      g_assert_cmpint (r->world_size, ==, 3);
      g_assert_cmpstr (r->job_id, ==, "4242");
      g_assert_cmpstr (r->trace, ==, f->path);
      g_assert_cmpuint (r->trace_index, ==, 0);
    }

  /* Ranks 0 and 1 share device 0: its figures, marked shared. */
  for (guint i = 0; i < 2; i++)
    {
      r = vs_rank_comparison_get_rank (c, i);
      g_assert_cmpstr (r->host, ==, "h1");
      g_assert_cmpint (r->device_idx, ==, 0);
      g_assert_cmpstr (r->device_uuid, ==, "GPU-ranks-0");
      g_assert_true (r->shared_device);
      g_assert_cmpint (r->capacity_bytes, ==, 1000 * MiB);
      g_assert_cmpint (r->peak_reserved_bytes, ==, 300 * MiB);
      g_assert_cmpint (r->peak_reserved_time_ns, ==, 200);
      g_assert_cmpint (r->peak_allocated_bytes, ==, 300 * MiB);
      g_assert_cmpint (r->failed_alloc_count, ==, 0);
      g_assert_cmpint (r->first_failure_time_ns, ==, U);
      g_assert_false (r->worst);
    }

  r = vs_rank_comparison_get_rank (c, 2);
  g_assert_cmpstr (r->host, ==, "h2");
  g_assert_cmpint (r->local_rank, ==, 0);
  g_assert_cmpint (r->device_idx, ==, 1);
  g_assert_false (r->shared_device);
  g_assert_cmpint (r->peak_reserved_bytes, ==, 60 * MiB);
  g_assert_cmpint (r->peak_reserved_time_ns, ==, 150);
  g_assert_cmpint (r->failed_alloc_count, ==, 2);
  g_assert_cmpint (r->first_failure_time_ns, ==, 500);
  g_assert_cmpint (r->first_failure_bytes, ==, 50 * MiB);
  g_assert_cmpint (r->exit_status, ==, 1);
  g_assert_true (r->worst);
  g_assert_true (vs_rank_comparison_get_worst (c) == r);
  g_assert_true (vs_rank_comparison_get_first_failed (c) == r);

  /* The failures are those the summary counts. */
  {
    VsSummary s;

    g_assert_true (
        vs_summary_get (f->trace, vs_trace_find_device_by_idx (f->trace, 1)->id, 0, &s, NULL));
    g_assert_cmpint (s.failed_alloc_count, ==, r->failed_alloc_count);
  }

  label = vs_rank_comparison_dup_label (c, r);
  g_assert_cmpstr (label, ==, "rank 2");
  vs_rank_comparison_write_headline (c, headline);
  g_assert_cmpstr (headline->str, ==,
                   "rank 2 on host h2 peaks highest: 60.00 MiB of 100.00 MiB (60 %); "
                   "rank 2 failed\n"
                   "spread of peak reserved over 3 ranks: 60.00 MiB (rank 2) to 300.00 MiB "
                   "(rank 0), max/min 5.00×\n");

  /* The table: every row, the marks, the brief columns for text. */
  {
    g_autoptr (VsTable) t = vs_rank_comparison_table (c, FALSE);
    g_autoptr (VsTable) brief = vs_rank_comparison_table (c, TRUE);
    guint mark = vs_table_get_n_columns (t) - 1;

    g_assert_cmpuint (vs_table_get_n_rows (t), ==, 3);
    g_assert_cmpuint (vs_table_get_n_columns (t), ==, 18);
    g_assert_cmpstr (vs_table_get_column_name (t, 0), ==, "trace");
    g_assert_cmpstr (vs_table_get_column_name (t, mark), ==, "mark");
    g_assert_cmpstr (vs_table_get_text (t, 0, mark), ==, "shared-device");
    g_assert_cmpstr (vs_table_get_text (t, 2, mark), ==, "worst failed");
    g_assert_cmpuint (vs_table_get_n_columns (brief), ==, 11);
    g_assert_cmpuint (vs_table_get_n_rows (brief), ==, 3);
  }

  /* Peaks of an allocator none of the ranks has: rows kept, unknown. */
  {
    g_autoptr (VsRankComparison) py = vs_ranks_compare (&f->trace, 1, "pytorch", &error);

    g_assert_no_error (error);
    g_assert_cmpuint (vs_rank_comparison_get_n_ranks (py), ==, 3);
    g_assert_cmpint (vs_rank_comparison_get_rank (py, 0)->peak_reserved_bytes, ==, U);
    g_assert_null (vs_rank_comparison_get_worst (py));
    /* Device-level failures are no allocator's. */
    g_assert_null (vs_rank_comparison_get_first_failed (py));
  }
}

/* The full fixture: one process on two devices gives two rows; its
 * PyTorch OOM counts, the device-level failure PyTorch retried does not;
 * with allocator "pytorch" the peaks are that allocator's summary. */
static void
test_allocator (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsRankComparison) all = NULL;
  g_autoptr (VsRankComparison) py = NULL;
  char err[512] = "";

  vs_test_trace_file ("vs-ranks-XXXXXX", "full.db", &f->dir, &f->path);
  g_assert_true (vs_fixture_full (f->path, err, sizeof err));
  f->trace = vs_trace_open (f->path, &error);
  g_assert_no_error (error);
  compare_both (f, "all", &all, &py);
  g_assert_cmpuint (vs_rank_comparison_get_n_ranks (all), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      const VsRank *r = vs_rank_comparison_get_rank (all, i);
      const VsDeviceInfo *d = vs_trace_find_device_by_idx (f->trace, r->device_idx);
      VsSummary s;

      g_assert_cmpint (r->device_idx, ==, i);
      g_assert_cmpint (r->rank, ==, U);
      g_assert_false (r->shared_device);
      g_assert_true (vs_summary_get (f->trace, d->id, 0, &s, NULL));
      g_assert_cmpint (r->peak_reserved_bytes, ==, s.peak_reserved_bytes);
      g_assert_cmpint (r->peak_reserved_time_ns, ==, s.peak_reserved_time_ns);
      g_assert_cmpint (r->peak_allocated_bytes, ==, s.peak_allocated_bytes);
      g_assert_cmpint (r->peak_allocated_time_ns, ==, s.peak_allocated_time_ns);
      g_assert_cmpint (r->failed_alloc_count, ==, s.failed_alloc_count);
    }
  g_assert_cmpint (vs_rank_comparison_get_rank (all, 0)->failed_alloc_count, ==, 1);
  g_assert_cmpint (vs_rank_comparison_get_rank (all, 0)->first_failure_time_ns, ==, 1600);
  g_assert_cmpint (vs_rank_comparison_get_rank (all, 0)->first_failure_bytes, ==, 3 * MiB);
  {
    g_autofree char *label
        = vs_rank_comparison_dup_label (all, vs_rank_comparison_get_rank (all, 0));

    g_assert_cmpstr (label, ==, "process 4242");
  }

  /* PyTorch lives on device 0 only. */
  {
    const VsRank *r = vs_rank_comparison_get_rank (py, 0);
    const VsAllocatorInfo *a = NULL;
    const GPtrArray *as = vs_trace_get_allocators (f->trace);
    VsSummary s;

    for (guint i = 0; i < as->len; i++)
      if (strcmp (((VsAllocatorInfo *)g_ptr_array_index (as, i))->name, "pytorch") == 0)
        a = g_ptr_array_index (as, i);
    g_assert_nonnull (a);
    g_assert_true (vs_summary_get (f->trace, a->device_id, a->id, &s, NULL));
    g_assert_cmpint (r->peak_reserved_bytes, ==, s.peak_reserved_bytes);
    g_assert_cmpint (r->peak_allocated_bytes, ==, s.peak_allocated_bytes);
    g_assert_cmpint (r->failed_alloc_count, ==, 1);
    g_assert_true (r->worst);
    g_assert_cmpint (vs_rank_comparison_get_rank (py, 1)->peak_reserved_bytes, ==, U);
  }
}

/* Two traces of the same run: rows of both, by rank then trace; a rank
 * both have is named with its trace. */
static void
test_several_traces (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  VsTrace *traces[2];
  g_autoptr (VsRankComparison) c = NULL;
  g_autofree char *label = NULL;
  g_autofree char *expected = NULL;

  write_run (f);
  for (guint i = 0; i < 2; i++)
    {
      traces[i] = vs_trace_open (f->path, &error);
      g_assert_no_error (error);
    }
  c = vs_ranks_compare (traces, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vs_rank_comparison_get_n_ranks (c), ==, 6);
  for (guint i = 0; i < 6; i++)
    {
      const VsRank *r = vs_rank_comparison_get_rank (c, i);

      g_assert_cmpint (r->rank, ==, i / 2);
      g_assert_cmpuint (r->trace_index, ==, i % 2);
    }
  /* The first of equals is the worst. */
  g_assert_true (vs_rank_comparison_get_worst (c) == vs_rank_comparison_get_rank (c, 4));
  label = vs_rank_comparison_dup_label (c, vs_rank_comparison_get_rank (c, 5));
  expected = g_strdup_printf ("rank 2 of %s", f->path);
  g_assert_cmpstr (label, ==, expected);
  for (guint i = 0; i < 2; i++)
    vs_trace_free (traces[i]);
}

/* Ten ranks whose only deed is a failed request, on one device: each is a
 * row (its failure tells its device); the headline names eight. */
static void
test_many_failed (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsRankComparison) c = NULL;
  g_autoptr (GString) headline = g_string_new (NULL);
  int64_t dev;
  VsWriter *w = start_trace (f, "many.db", "GPU-many", &dev);

  for (int i = 0; i < 10; i++)
    {
      int64_t proc = add_rank (w, 100 + i, i, 10, 1);
      VsFailedAlloc fa
          = { T (10 + i), proc, 1, dev, U, "cudaMalloc", 2000 * MiB, 2, NULL, U, U, U, U, U };

      g_assert_cmpint (vs_writer_failed_alloc (w, &fa), ==, 0);
    }
  f->trace = finish_trace (w, f);
  c = vs_ranks_compare (&f->trace, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (vs_rank_comparison_get_n_ranks (c), ==, 10);
  for (guint i = 0; i < 10; i++)
    {
      const VsRank *r = vs_rank_comparison_get_rank (c, i);

      g_assert_cmpint (r->rank, ==, i);
      g_assert_cmpint (r->failed_alloc_count, ==, 1);
      g_assert_cmpint (r->first_failure_time_ns, ==, 10 + i);
      g_assert_true (r->shared_device);
    }
  vs_rank_comparison_write_headline (c, headline);
  /* Nothing was allocated: every rank peaks at 0, the first is the worst. */
  g_assert_cmpstr (headline->str, ==,
                   "rank 0 on host h peaks highest: 0 B of 1000.00 MiB (0 %); "
                   "ranks 0, 1, 2, 3, 4, 5, 6, 7 and 2 more failed\n"
                   "no spread of peak reserved: all 10 ranks at 0 B\n");
}

/* Two ranks on one device, each with its own PyTorch allocator: their
 * `all` figures are the device's, a tie that the rank whose allocator
 * reserved most (rank 1, 200 MiB against 100) wins; by allocator each
 * row is the rank's own. */
static void
test_shared_tie (Fixture *f, gconstpointer data)
{
  g_autoptr (VsRankComparison) all = NULL;
  g_autoptr (VsRankComparison) py = NULL;
  int64_t dev;
  VsWriter *w = start_trace (f, "shared.db", "GPU-shared", &dev);

  for (int i = 0; i < 2; i++)
    {
      int64_t proc = add_rank (w, 200 + i, i, 2, 0);
      VsAllocator a = { dev, proc, "pytorch", "pytorch", U, NULL };
      int64_t torch = vs_writer_add_allocator (w, &a);
      VsAllocEvent seg = { T (10 + i),
                           proc,
                           1,
                           dev,
                           torch,
                           VS_ALLOC_OP_SEGMENT_ALLOC,
                           0x10000000 * (i + 1),
                           (i + 1) * 100 * MiB,
                           (i + 1) * 100 * MiB,
                           U,
                           U,
                           U,
                           U,
                           0 };

      g_assert_cmpint (vs_writer_alloc_event (w, &seg), ==, 0);
    }
  f->trace = finish_trace (w, f);
  compare_both (f, NULL, &all, &py);
  g_assert_cmpuint (vs_rank_comparison_get_n_ranks (all), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      const VsRank *r = vs_rank_comparison_get_rank (all, i);

      g_assert_true (r->shared_device);
      g_assert_cmpint (r->peak_reserved_bytes, ==, 300 * MiB);
      g_assert_cmpint (r->own_peak_reserved_bytes, ==, (i + 1) * 100 * MiB);
      g_assert_cmpint (vs_rank_comparison_get_rank (py, i)->peak_reserved_bytes, ==,
                       (i + 1) * 100 * MiB);
    }
  g_assert_true (vs_rank_comparison_get_worst (all) == vs_rank_comparison_get_rank (all, 1));
  g_assert_true (vs_rank_comparison_get_worst (py) == vs_rank_comparison_get_rank (py, 1));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/ranks/one-trace", Fixture, NULL, NULL, test_one_trace, fixture_teardown);
  g_test_add ("/ranks/allocator", Fixture, NULL, NULL, test_allocator, fixture_teardown);
  g_test_add ("/ranks/several-traces", Fixture, NULL, NULL, test_several_traces, fixture_teardown);
  g_test_add ("/ranks/many-failed", Fixture, NULL, NULL, test_many_failed, fixture_teardown);
  g_test_add ("/ranks/shared-tie", Fixture, NULL, NULL, test_shared_tie, fixture_teardown);
  return g_test_run ();
}
