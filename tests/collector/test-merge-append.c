/* SPDX-License-Identifier: MIT */
/* test-merge-append.c — the merged trace appended to while the program
 * runs (record/vs-merge-append.h), against vs_merge_traces() of the whole
 * process traces.
 *
 * The process traces are written with the real writer API, each twice:
 * into the spool, where rounds append and release them, and beside it
 * whole, for vs_merge_traces().  A collector-like trace (GPU, pool, memory
 * events, kernels, ranges, one left open and closed later, stacks), a
 * second process, and an import of the first process (meta source
 * 'import', allocator events, a failed allocation) that is in the spool
 * before its collector trace.  The merged trace must hold the same rows as
 * the merge of the whole traces, ids aside, derived tables and meta
 * included (same-trace.py).  Also: release leaves no appended event row
 * but each table's last; a record killed in the middle of a round is
 * continued exactly; a second process writing an input while rows are
 * released from it loses nothing; a missing or corrupt input.  No GPU.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vs-merge-append.h"
#include "vs-merge.h"
#include "vs-test-db.h"
#include "vs-trace-writer.h"
#include "../vs-test-records.h"

#define U VS_UNKNOWN

/* The ids one phase's rows refer to in one process trace (the same in its
 * spool copy and its whole copy: both get the same writes). */
typedef struct
{
  int64_t process, device, pool, frame, open_range;
} Ids;

/* A writer on path: new at phase 0, else the raw trace opened again. */
static VsWriter *
writer (const char *path, int phase)
{
  char err[256] = "";
  VsWriter *w = phase == 0 ? vs_writer_create (path, err, sizeof err)
                           : vs_writer_open (path, err, sizeof err);
  g_assert_cmpstr (err, ==, "");
  g_assert_nonnull (w);
  return w;
}

static void
close_writer (VsWriter *w)
{
  char err[256] = "";
  g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
}

static int64_t
stack_of (VsWriter *w, Ids *ids, const char *fn, int depth)
{
  int64_t frames[4];
  for (int d = 0; d < depth; d++)
    {
      VsFrame f = { .kind = VS_FRAME_PYTHON,
                    .module_id = U,
                    .address = U,
                    .function = d == depth - 1 ? fn : "main",
                    .file = "train.py",
                    .line = 10 + d };
      frames[d] = vs_writer_add_frame (w, &f);
      g_assert_cmpint (frames[d], >, 0);
    }
  ids->frame = frames[depth - 1];
  int64_t id = vs_writer_add_stack (w, frames, (size_t)depth);
  g_assert_cmpint (id, >, 0);
  return id;
}

/* One phase of a collector's process trace of pid (base: its times). */
static void
collector_phase (VsWriter *w, int64_t pid, int phase, Ids *ids)
{
  int64_t base = pid * 1000000 + phase * 100000;
  if (phase == 0)
    {
      VsProcess p = vs_writer_process_started (pid, 1, "h", "train", base);
      ids->process = vs_writer_add_process (w, &p);
      VsDevice d = { .idx = 0, .uuid = "GPU-a", .name = "H200", .total_bytes = 1 << 30 };
      ids->device = vs_writer_add_device (w, &d);
      VsAllocator a = { .device_id = ids->device,
                        .process_id = ids->process,
                        .kind = "pool",
                        .name = "pool:0x1",
                        .handle = 1 };
      ids->pool = vs_writer_add_allocator (w, &a);
      vs_writer_set_meta_int (w, "start_ns", base);
      vs_writer_set_meta (w, "job_id", "4242");
    }
  int64_t stack = stack_of (w, ids, phase == 0 ? "forward" : "backward", 2 + phase % 2);
  VsRange r = { .process_id = ids->process,
                .tid = 5,
                .name = phase == 0 ? "epoch" : "step",
                .start_ns = base + 1,
                .end_ns = phase == 0 ? U : base + 90000,
                .parent_id = U,
                .depth = 0 };
  int64_t range = vs_writer_add_range (w, &r);
  g_assert_cmpint (range, >, 0);
  if (phase == 0)
    ids->open_range = range;
  else if (phase == 2)
    g_assert_cmpint (vs_writer_end_range (w, ids->open_range, base + 99000), ==, 0);
  for (int i = 0; i < 6; i++)
    {
      VsMemEvent e
          = vs_test_mem_event (base + 100 + 10 * i, ids->process, 5, ids->device,
                               i % 3 == 2 ? VS_MEM_KIND_DEVICE : VS_MEM_KIND_ASYNC,
                               i % 2 == 0 ? VS_MEM_OP_ALLOC : VS_MEM_OP_FREE,
                               0x10000 * (phase + 1) + 0x100 * (i / 2), 4096 * (i / 2 + 1));
      e.pool_id = i % 3 == 2 ? U : ids->pool;
      e.pool_size = 1 << 20;
      e.pool_utilized = 4096;
      e.correlation = i;
      e.stack_id = stack;
      e.range_id = range;
      g_assert_cmpint (vs_writer_mem_event (w, &e), ==, 0);
    }
  VsPoolEvent pe = { .ts = base + 50,
                     .process_id = ids->process,
                     .device_id = ids->device,
                     .pool_id = ids->pool,
                     .op = VS_POOL_OP_SAMPLE,
                     .size = 1 << 20,
                     .utilized = 4096,
                     .release_threshold = 0,
                     .min_bytes_to_keep = 0,
                     .correlation = U,
                     .stack_id = U };
  g_assert_cmpint (vs_writer_pool_event (w, &pe), ==, 0);
  for (int i = 0; i < 3; i++)
    {
      VsKernel k = vs_test_kernel (ids->process, ids->device,
                                   i == 2 ? "relu" : (phase == 1 ? "gemm_b" : "gemm"),
                                   base + 200 + 7 * i, base + 205 + 7 * i, i, 1, U);
      g_assert_cmpint (vs_writer_kernel (w, &k), ==, 0);
    }
  VsMemcpy c = { .start_ns = base + 300,
                 .end_ns = base + 310,
                 .process_id = ids->process,
                 .device_id = ids->device,
                 .stream = 7,
                 .correlation = 9,
                 .copy_kind = "HtoD",
                 .src_kind = "pageable",
                 .dst_kind = "device",
                 .bytes = 512 };
  g_assert_cmpint (vs_writer_memcpy (w, &c), ==, 0);
  if (phase == 2)
    {
      VsMemset ms = { .start_ns = base + 400,
                      .end_ns = base + 401,
                      .process_id = ids->process,
                      .device_id = ids->device,
                      .stream = 7,
                      .correlation = 10,
                      .bytes = 64,
                      .value = 0,
                      .mem_kind = VS_MEM_KIND_DEVICE };
      g_assert_cmpint (vs_writer_memset (w, &ms), ==, 0);
      vs_writer_set_meta_int (w, "collector_events", 10 + pid);
      vs_writer_set_meta_int (w, "end_ns", base + 99999);
    }
}

/* One phase of record's import of pid's PyTorch allocator. */
static void
import_phase (VsWriter *w, int64_t pid, int phase, Ids *ids)
{
  int64_t base = pid * 1000000 + phase * 100000;
  if (phase == 0)
    {
      vs_writer_set_meta (w, "source", "import");
      vs_writer_set_meta (w, "pytorch.expandable_segments", "0");
      VsProcess p = vs_writer_process_started (pid, U, "h", "import", U);
      ids->process = vs_writer_add_process (w, &p);
      VsDevice d = { .idx = 3, .uuid = "GPU-a", .name = "imported", .total_bytes = U };
      ids->device = vs_writer_add_device (w, &d);
      VsAllocator a = { .device_id = ids->device,
                        .process_id = ids->process,
                        .kind = "pytorch",
                        .name = "pytorch",
                        .handle = U };
      ids->pool = vs_writer_add_allocator (w, &a);
    }
  int64_t stack = stack_of (w, ids, phase == 1 ? "optimizer" : "forward", 2);
  static const VsAllocOp ops[] = { VS_ALLOC_OP_SEGMENT_ALLOC, VS_ALLOC_OP_ALLOC,
                                   VS_ALLOC_OP_FREE_COMPLETED, VS_ALLOC_OP_SEGMENT_FREE };
  for (int i = 0; i < 4; i++)
    {
      int64_t seg = 0x7000000 + 0x100000 * phase;
      VsAllocEvent e = { .ts = base + 150 + 10 * i,
                         .process_id = ids->process,
                         .tid = 5,
                         .device_id = ids->device,
                         .allocator_id = ids->pool,
                         .op = ops[i],
                         .address = i == 0 || i == 3 ? seg : seg + 0x200,
                         .requested_bytes = i == 0 || i == 3 ? 1 << 20 : 1000,
                         .block_bytes = i == 0 || i == 3 ? 1 << 20 : 1024,
                         .segment_address = seg,
                         .stream = 7,
                         .stack_id = stack,
                         .range_id = U,
                         .before_trace = 0 };
      g_assert_cmpint (vs_writer_alloc_event (w, &e), ==, 0);
    }
  if (phase == 1)
    {
      VsFailedAlloc f = { .ts = base + 500,
                          .process_id = ids->process,
                          .tid = 5,
                          .device_id = ids->device,
                          .allocator_id = ids->pool,
                          .api = "cudaMalloc",
                          .requested_bytes = 1 << 30,
                          .error = 2,
                          .error_name = "cudaErrorMemoryAllocation",
                          .device_free_bytes = 1 << 20,
                          .device_total_bytes = 1 << 30,
                          .correlation = U,
                          .stack_id = stack,
                          .range_id = U };
      g_assert_cmpint (vs_writer_failed_alloc (w, &f), ==, 0);
    }
}

typedef void (*PhaseFunc) (VsWriter *w, int64_t pid, int phase, Ids *ids);

/* The spool and the whole copies of the process traces. */
typedef struct
{
  char *dir, *spool, *whole, *live;
  Ids ids[3];
  bool keep;        /* one VsMergeAppend for every round */
  VsMergeAppend *a; /* it, once opened */
} Run;

static const char *names[] = { "100.db", "101.db", "torch-100.db" };
static const PhaseFunc kinds[] = { collector_phase, collector_phase, import_phase };
static const int64_t pids[] = { 100, 101, 100 };

static void
run_init (Run *r)
{
  r->dir = g_dir_make_tmp ("vs-merge-append-XXXXXX", NULL);
  g_assert_nonnull (r->dir);
  r->spool = g_build_filename (r->dir, "spool", NULL);
  r->whole = g_build_filename (r->dir, "whole", NULL);
  r->live = g_build_filename (r->spool, "live.db", NULL);
  g_assert_cmpint (g_mkdir (r->spool, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (r->whole, 0700), ==, 0);
  memset (r->ids, 0, sizeof r->ids);
  r->keep = false;
  r->a = NULL;
}

static void
run_clear (Run *r)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", r->dir);
  g_assert_cmpint (system (cmd), ==, 0);
  g_free (r->dir);
  g_free (r->spool);
  g_free (r->whole);
  g_free (r->live);
}

static char *
spool_path (Run *r, int k)
{
  return g_build_filename (r->spool, names[k], NULL);
}

/* Phase phase of input k, into its spool copy and its whole copy. */
static void
write_phase (Run *r, int k, int phase)
{
  g_autofree char *sp = spool_path (r, k);
  g_autofree char *wp = g_build_filename (r->whole, names[k], NULL);
  Ids a = r->ids[k], b = r->ids[k];
  VsWriter *w = writer (sp, phase);
  kinds[k](w, pids[k], phase, &a);
  close_writer (w);
  w = writer (wp, phase);
  kinds[k](w, pids[k], phase, &b);
  close_writer (w);
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
  r->ids[k] = a;
}

/* One round over the inputs that exist (in name order), each released
 * after; with run, the last.  Returns the late rows counted. */
static int64_t
round_ (Run *r, const VsMergeRun *run, int64_t before_ns)
{
  char err[512] = "";
  VsMergeAppend *a = r->a != NULL ? r->a : vs_merge_append_open (r->live, err, sizeof err);
  g_assert_cmpstr (err, ==, "");
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, NULL, NULL, err, sizeof err), ==, 0);
  int64_t late = 0;
  for (int k = 0; k < 3; k++)
    {
      g_autofree char *sp = spool_path (r, k);
      g_assert_cmpint (vs_merge_append_input (a, sp, before_ns, INT64_MAX, &late, err, sizeof err),
                       ==, 0);
    }
  g_assert_cmpint (vs_merge_append_end (a, run, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpstr (err, ==, "");
  for (int k = 0; k < 3 && run == NULL; k++)
    {
      g_autofree char *sp = spool_path (r, k);
      g_assert_cmpint (vs_merge_append_release (a, sp, err, sizeof err), ==, 0);
    }
  r->a = r->keep && run == NULL ? a : NULL;
  if (r->a == NULL)
    vs_merge_append_free (a);
  return late;
}

static const VsMergeRun the_run = { .main_pid = 100,
                                    .exit_status = 0,
                                    .start_ns = 0,
                                    .end_ns = 0,
                                    .command_line = "train",
                                    .host = "h",
                                    .tool_version = "t" };

/* The merge of the whole copies into whole/merged.db; same-trace.py's
 * answer on it and the merged trace of the rounds. */
static void
assert_same_as_whole (Run *r)
{
  char err[512] = "";
  g_autofree char *out = g_build_filename (r->whole, "merged.db", NULL);
  char *in[3];
  for (int k = 0; k < 3; k++)
    in[k] = g_build_filename (r->whole, names[k], NULL);
  g_assert_cmpint (
      vs_merge_traces (out, (const char *const *)in, 3, &the_run, NULL, NULL, err, sizeof err), ==,
      0);
  for (int k = 0; k < 3; k++)
    g_free (in[k]);
  const char *script = g_getenv ("SAME_TRACE");
  g_assert_nonnull (script);
  const char *argv[] = { "python3", script, r->live, out, NULL };
  g_autofree char *sout = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &sout,
                               NULL, &status, NULL));
  g_assert_cmpstr (sout, ==, "same\n");
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

/* The rows of table in the spool copy of input k. */
static int64_t
spool_rows (Run *r, int k, const char *table)
{
  g_autofree char *sp = spool_path (r, k);
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s", table);
  return vs_test_count (sp, sql);
}

/* Rounds with rows written between them; release between rounds; the
 * import in the spool first.  With keep, one VsMergeAppend for all of
 * them, else one opened each round. */
static void
equivalence (bool keep)
{
  Run r;
  run_init (&r);
  r.keep = keep;
  write_phase (&r, 2, 0);
  /* Only the import: its process and GPU rows wait for the collector's. */
  g_assert_cmpint (round_ (&r, NULL, 0), ==, 0);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM alloc_event"), ==, 4);
  g_assert_cmpint (vs_test_count (r.live, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM block"), >, 0);
  write_phase (&r, 0, 0);
  write_phase (&r, 1, 0);
  write_phase (&r, 2, 1);
  /* Late: the events before 100000160 (the collector's phase 0 of pid
   * 100: 6 memory events and a pool sample). */
  g_assert_cmpint (round_ (&r, NULL, 100000160), ==, 7);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM process"), ==, 2);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM device"), ==, 1);
  g_assert_cmpint (vs_test_count (r.live, "SELECT name = 'H200' AND idx = 0 FROM device"), ==, 1);
  g_assert_cmpint (
      vs_test_count (r.live, "SELECT command_line = 'train' FROM process WHERE pid = 100"), ==, 1);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM nvtx_range WHERE end_ns IS NULL"),
                   ==, 2);
  /* Released: of every event table only the last row stays. */
  g_assert_cmpint (spool_rows (&r, 0, "mem_event"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 0, "kernel_exec"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 0, "memcpy"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 2, "alloc_event"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 2, "failed_alloc"), ==, 1);
  /* The open range stays in its input; small tables stay whole. */
  g_assert_cmpint (spool_rows (&r, 0, "nvtx_range"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 0, "frame"), ==, 2);
  write_phase (&r, 0, 1);
  write_phase (&r, 1, 1);
  round_ (&r, NULL, 0);
  write_phase (&r, 0, 2);
  write_phase (&r, 1, 2);
  write_phase (&r, 2, 2);
  round_ (&r, NULL, 0);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM nvtx_range WHERE end_ns IS NULL"),
                   ==, 0);
  g_assert_cmpint (spool_rows (&r, 0, "nvtx_range"), ==, 1);
  g_assert_cmpint (spool_rows (&r, 0, "mem_event"), ==, 1);
  /* Nothing new: the last round appends nothing but ends the run. */
  round_ (&r, &the_run, 0);
  g_assert_cmpint (
      vs_test_count (r.live, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'merge_append%'"),
      ==, 0);
  assert_same_as_whole (&r);
  /* A finished trace is not appended to again. */
  char err[512] = "";
  g_assert_null (vs_merge_append_open (r.live, err, sizeof err));
  g_assert_nonnull (strstr (err, "finished trace"));
  run_clear (&r);
}

static void
test_equivalence (void)
{
  equivalence (false);
}

static void
test_equivalence_kept (void)
{
  equivalence (true);
}

/* Rows another connection deletes from the merged trace between rounds
 * (events, ranges): no id given again, the maps unharmed. */
static void
test_deleted_between_rounds (void)
{
  Run r;
  run_init (&r);
  write_phase (&r, 0, 0);
  write_phase (&r, 2, 0);
  round_ (&r, NULL, 0);
  int64_t top_mem = vs_test_count (r.live, "SELECT max(id) FROM mem_event");
  int64_t top_range = vs_test_count (r.live, "SELECT max(id) FROM nvtx_range");
  int64_t top_kernel = vs_test_count (r.live, "SELECT max(id) FROM kernel_exec");
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (r.live, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db,
                                 "DELETE FROM mem_event; DELETE FROM alloc_event;"
                                 " DELETE FROM kernel_exec; DELETE FROM nvtx_range WHERE end_ns"
                                 " IS NOT NULL OR id = (SELECT max(id) FROM nvtx_range)",
                                 NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);
  write_phase (&r, 0, 1);
  round_ (&r, NULL, 0);
  g_assert_cmpint (vs_test_count (r.live, "SELECT min(id) FROM mem_event"), ==, top_mem + 1);
  g_assert_cmpint (vs_test_count (r.live, "SELECT min(id) FROM nvtx_range"), >, top_range);
  g_assert_cmpint (vs_test_count (r.live, "SELECT min(id) FROM kernel_exec"), ==, top_kernel + 1);
  /* The new events name the new range and stack, through the maps. */
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event m JOIN nvtx_range g"
                                          " ON g.id = m.range_id WHERE g.name = 'step'"),
                   ==, 6);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event m JOIN stack s"
                                          " ON s.id = m.stack_id JOIN frame f ON f.id = s.frame_id"
                                          " WHERE f.function = 'backward'"),
                   ==, 6);
  run_clear (&r);
}

/* Kills itself on the second progress call: inside the copy of the event
 * tables, in the middle of an input's transaction. */
static bool
kill_in_copy (uint64_t done, uint64_t total, void *data)
{
  int *calls = data;
  if (++*calls == 2)
    raise (SIGKILL);
  return true;
}

/* A record killed in the middle of a round: opened again, the rounds go on
 * as if it had not been. */
static void
test_kill_resume (void)
{
  Run r;
  run_init (&r);
  write_phase (&r, 2, 0);
  write_phase (&r, 0, 0);
  round_ (&r, NULL, 0);
  write_phase (&r, 0, 1);
  write_phase (&r, 1, 0);
  write_phase (&r, 2, 1);
  /* Killed after 100.db's rows committed, in the copy of 101.db's. */
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      char err[512] = "";
      int calls = -100;
      VsMergeAppend *a = vs_merge_append_open (r.live, err, sizeof err);
      if (a == NULL || vs_merge_append_begin (a, kill_in_copy, &calls, err, sizeof err) != 0)
        _exit (2);
      g_autofree char *p0 = spool_path (&r, 0);
      g_autofree char *p1 = spool_path (&r, 1);
      if (vs_merge_append_input (a, p0, 0, INT64_MAX, NULL, err, sizeof err) != 0)
        _exit (3);
      calls = 0;
      vs_merge_append_input (a, p1, 0, INT64_MAX, NULL, err, sizeof err);
      _exit (4);
    }
  int status = 0;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  /* Also a round whose writer is closed without end. */
  char err[512] = "";
  VsMergeAppend *a = vs_merge_append_open (r.live, err, sizeof err);
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, NULL, NULL, err, sizeof err), ==, 0);
  g_autofree char *p2 = spool_path (&r, 2);
  g_assert_cmpint (vs_merge_append_input (a, p2, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  vs_merge_append_free (a);
  round_ (&r, NULL, 0);
  write_phase (&r, 0, 2);
  write_phase (&r, 1, 1);
  write_phase (&r, 1, 2);
  write_phase (&r, 2, 2);
  round_ (&r, &the_run, 0);
  assert_same_as_whole (&r);
  run_clear (&r);
}

/* Cancels once, on the second progress call: in the copy of the event
 * tables. */
static bool
cancel_once (uint64_t done, uint64_t total, void *data)
{
  int *calls = data;
  return ++*calls != 2;
}

/* An input cancelled in the middle of its copy leaves the merged trace as
 * it was; the round goes on with the next inputs, and the next rounds
 * take the cancelled input's rows. */
static void
test_cancel_goes_on (void)
{
  Run r;
  run_init (&r);
  write_phase (&r, 0, 0);
  write_phase (&r, 1, 0);
  write_phase (&r, 2, 0);
  char err[512] = "";
  int calls = 0;
  VsMergeAppend *a = vs_merge_append_open (r.live, err, sizeof err);
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, cancel_once, &calls, err, sizeof err), ==, 0);
  g_autofree char *p0 = spool_path (&r, 0);
  g_autofree char *p1 = spool_path (&r, 1);
  g_autofree char *p2 = spool_path (&r, 2);
  g_assert_cmpint (vs_merge_append_input (a, p0, 0, INT64_MAX, NULL, err, sizeof err), ==, -1);
  g_assert_cmpstr (err, ==, "merge: cancelled");
  g_assert_cmpint (vs_merge_append_input (a, p1, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_input (a, p2, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_end (a, NULL, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_release (a, p0, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_release (a, p1, err, sizeof err), ==, 0);
  vs_merge_append_free (a);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM process"), ==, 2);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event"), ==, 6);
  /* 100.db was not taken: release left it whole. */
  g_assert_cmpint (spool_rows (&r, 0, "mem_event"), ==, 6);
  write_phase (&r, 0, 1);
  round_ (&r, NULL, 0);
  write_phase (&r, 0, 2);
  write_phase (&r, 1, 1);
  write_phase (&r, 1, 2);
  write_phase (&r, 2, 1);
  write_phase (&r, 2, 2);
  round_ (&r, &the_run, 0);
  assert_same_as_whole (&r);
  run_clear (&r);
}

#define WRITER_ROWS 20000

/* A second process writes allocator events into an input, committing
 * often, while rounds append and release it. */
static void
test_concurrent_writer (void)
{
  Run r;
  run_init (&r);
  write_phase (&r, 2, 0);
  g_autofree char *input = spool_path (&r, 2);
  int ready[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      char err[256] = "";
      VsWriter *w = vs_writer_open (input, err, sizeof err);
      if (w == NULL)
        _exit (2);
      (void)!write (ready[1], "x", 1);
      for (int i = 0; i < WRITER_ROWS; i++)
        {
          VsAllocEvent e = vs_test_alloc_event (
              200000000 + i, r.ids[2].process, 6, r.ids[2].device, r.ids[2].pool,
              i % 2 == 0 ? VS_ALLOC_OP_ALLOC : VS_ALLOC_OP_FREE_COMPLETED,
              0x9000000 + 0x1000 * (i / 2), 100, 512);
          if (vs_writer_alloc_event (w, &e) != 0 || (i % 500 == 499 && vs_writer_commit (w) != 0))
            _exit (3);
          if (i % 500 == 499)
            g_usleep (10000);
        }
      _exit (vs_writer_close (w, false, NULL, NULL, err, sizeof err) == 0 ? 0 : 4);
    }
  char c;
  g_assert_cmpint (read (ready[0], &c, 1), ==, 1);
  int status = 0, rounds = 0;
  pid_t done = 0;
  while ((done = waitpid (child, &status, WNOHANG)) == 0)
    {
      round_ (&r, NULL, 0);
      rounds++;
    }
  g_assert_cmpint (done, ==, child);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  round_ (&r, &the_run, 0);
  g_test_message ("%d rounds while the writer ran", rounds);
  g_assert_cmpint (rounds, >, 1);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM alloc_event WHERE tid = 6"), ==,
                   WRITER_ROWS);
  g_assert_cmpint (
      vs_test_count (r.live, "SELECT count(DISTINCT ts) FROM alloc_event WHERE tid = 6"), ==,
      WRITER_ROWS);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM alloc_event"), ==, WRITER_ROWS + 4);
  g_assert_cmpint (spool_rows (&r, 2, "alloc_event"), <, WRITER_ROWS);
  close (ready[0]);
  close (ready[1]);
  run_clear (&r);
}

/* A missing input is skipped; a corrupt one gives one error and leaves the
 * merged trace as it was; the round goes on. */
static void
test_bad_input (void)
{
  Run r;
  run_init (&r);
  write_phase (&r, 0, 0);
  round_ (&r, NULL, 0);
  int64_t rows = vs_test_count (r.live, "SELECT count(*) FROM mem_event");
  g_autofree char *junk = g_build_filename (r.spool, "200.db", NULL);
  g_assert_true (
      g_file_set_contents (junk, "not a database, not at all; junk junk junk junk", -1, NULL));
  g_autofree char *missing = g_build_filename (r.spool, "300.db", NULL);
  g_autofree char *p0 = spool_path (&r, 0);
  write_phase (&r, 0, 1);
  char err[512] = "";
  VsMergeAppend *a = vs_merge_append_open (r.live, err, sizeof err);
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_input (a, missing, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_input (a, junk, 0, INT64_MAX, NULL, err, sizeof err), ==, -1);
  g_assert_nonnull (strstr (err, "200.db"));
  g_assert_null (strchr (err, '\n'));
  g_test_message ("%s", err);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event"), ==, rows);
  g_assert_cmpint (vs_merge_append_input (a, p0, 0, INT64_MAX, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_end (a, NULL, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_release (a, missing, err, sizeof err), ==, 0);
  vs_merge_append_free (a);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event"), ==, rows + 6);
  /* An input that lost rows already appended (cut back): refused. */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (p0, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DELETE FROM mem_event", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  a = vs_merge_append_open (r.live, err, sizeof err);
  g_assert_nonnull (a);
  g_assert_cmpint (vs_merge_append_begin (a, NULL, NULL, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_merge_append_input (a, p0, 0, INT64_MAX, NULL, err, sizeof err), ==, -1);
  g_assert_nonnull (strstr (err, "rows already merged are gone from its mem_event"));
  g_assert_cmpint (vs_merge_append_end (a, NULL, NULL, NULL, err, sizeof err), ==, 0);
  vs_merge_append_free (a);
  g_assert_cmpint (vs_test_count (r.live, "SELECT count(*) FROM mem_event"), ==, rows + 6);
  /* Not a trace at all as the merged trace. */
  g_assert_null (vs_merge_append_open (junk, err, sizeof err));
  g_assert_nonnull (strstr (err, "200.db"));
  run_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/merge-append/equivalence", test_equivalence);
  g_test_add_func ("/merge-append/equivalence-one-open", test_equivalence_kept);
  g_test_add_func ("/merge-append/deleted-between-rounds", test_deleted_between_rounds);
  g_test_add_func ("/merge-append/kill-resume", test_kill_resume);
  g_test_add_func ("/merge-append/cancel-goes-on", test_cancel_goes_on);
  g_test_add_func ("/merge-append/concurrent-writer", test_concurrent_writer);
  g_test_add_func ("/merge-append/bad-input", test_bad_input);
  return g_test_run ();
}
