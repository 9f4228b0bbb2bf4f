/* SPDX-License-Identifier: MIT */
/* test-queries.c — the analyzer's answers on hand-built traces, checked
 * against the numbers worked out in vs-test-fixtures.c.
 */
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"
#include "../vs-test-trace-file.h"

#define MiB G_GINT64_CONSTANT (1048576)

typedef struct
{
  char *dir, *path;
  VsTrace *trace;
  gint64 dev0, dev1, torch, pool;
} Fx;

typedef bool (*BuildFunc) (const char *path, char *err, size_t errlen);

static bool
build_basic (const char *path, char *err, size_t errlen)
{
  return vs_fixture_basic (path, true, err, errlen);
}

static void
fx_setup (Fx *f, gconstpointer data)
{
  BuildFunc build = (BuildFunc)data;
  g_autoptr (GError) error = NULL;
  const GPtrArray *allocators;
  char err[256];

  vs_test_trace_file ("vs-queries-XXXXXX", "t.db", &f->dir, &f->path);
  if (!build (f->path, err, sizeof err))
    g_error ("fixture: %s", err);
  f->trace = vs_trace_open (f->path, &error);
  g_assert_no_error (error);
  f->dev0 = vs_trace_find_device_by_idx (f->trace, 0)->id;
  f->dev1 = vs_trace_find_device_by_idx (f->trace, 1)
                ? vs_trace_find_device_by_idx (f->trace, 1)->id
                : 0;
  allocators = vs_trace_get_allocators (f->trace);
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (strcmp (a->kind, "pytorch") == 0)
        f->torch = a->id;
      else if (strcmp (a->kind, "pool") == 0)
        f->pool = a->id;
    }
}

static void
fx_teardown (Fx *f, gconstpointer data)
{
  vs_trace_free (f->trace);
  vs_test_trace_file_remove (f->dir, f->path);
}

static gint64
sum_bytes (GArray *blocks)
{
  gint64 sum = 0;

  for (guint i = 0; i < blocks->len; i++)
    sum += g_array_index (blocks, VsBlock, i).bytes;
  return sum;
}

/* ------------------------------------------------------------- basic */

static void
test_basic_summary (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  VsSummary s;

  g_assert_true (vs_summary_get (f->trace, f->dev0, 0, &s, &error));
  g_assert_cmpint (s.peak_allocated_bytes, ==, 9500);
  g_assert_cmpint (s.peak_allocated_time_ns, ==, 500);
  g_assert_cmpint (s.peak_reserved_bytes, ==, 9500);
  g_assert_cmpint (s.final_allocated_bytes, ==, 500);
  g_assert_cmpint (s.alloc_count, ==, 4);
  g_assert_cmpint (s.free_count, ==, 4);
  g_assert_cmpint (s.failed_alloc_count, ==, 0);
  g_assert_cmpint (s.capacity_bytes, ==, 1024 * MiB);
  g_assert_false (vs_summary_get (f->trace, f->dev0, 12345, &s, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT);
}

/* The free of 0x3000 was written before its allocation; 0x1000 was reused;
 * 0x9000 was live before the trace began. */
static void
test_basic_live_at_peak (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (GArray) groups = NULL;
  const VsBlock *b;
  VsSummary s;

  g_assert_true (vs_summary_get (f->trace, f->dev0, 0, &s, &error));
  blocks = vs_live_blocks (f->trace, f->dev0, 0, s.peak_allocated_seq, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (blocks->len, ==, 4);
  g_assert_cmpint (sum_bytes (blocks), ==, 9500);
  b = &g_array_index (blocks, VsBlock, 0);
  g_assert_cmpint (b->address, ==, 0x3000);
  g_assert_cmpint (b->bytes, ==, 4000);
  g_assert_cmpint (b->alloc_time_ns, ==, 500);
  g_assert_cmpint (b->free_time_ns, ==, 600);
  b = &g_array_index (blocks, VsBlock, 1);
  g_assert_cmpint (b->address, ==, 0x9000);
  g_assert_cmpint (b->alloc_seq, ==, VS_UNKNOWN);
  g_assert_cmpint (b->alloc_time_ns, ==, VS_UNKNOWN);
  g_assert_cmpint (b->stack_id, ==, 0);
  /* The reused address holds the second allocation (500 bytes). */
  b = &g_array_index (blocks, VsBlock, 3);
  g_assert_cmpint (b->address, ==, 0x1000);
  g_assert_cmpint (b->bytes, ==, 500);

  groups = vs_group_blocks (f->trace, blocks, VS_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (groups->len, ==, 3);
  g_assert_cmpint (g_array_index (groups, VsGroup, 0).bytes, ==, 6000);
  g_assert_cmpint (g_array_index (groups, VsGroup, 0).count, ==, 2);
  g_assert_cmpstr (g_array_index (groups, VsGroup, 0).site, ==, "/home/user/proj/data.py:5 load");
  g_assert_cmpint (g_array_index (groups, VsGroup, 0).first_alloc_time_ns, ==, 200);
  g_assert_cmpint (g_array_index (groups, VsGroup, 0).last_alloc_time_ns, ==, 500);
  g_assert_cmpint (g_array_index (groups, VsGroup, 1).bytes, ==, 3000);
  g_assert_cmpuint (g_array_index (groups, VsGroup, 1).stack->depth, ==, 0);
  g_assert_cmpint (g_array_index (groups, VsGroup, 1).first_alloc_time_ns, ==, VS_UNKNOWN);
  g_assert_cmpint (g_array_index (groups, VsGroup, 2).bytes, ==, 500);
}

static void
test_basic_state_over_time (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  VsSeriesPoint p;
  static const struct
  {
    gint64 t, allocated;
  } expect[] = {
    { -5, 3000 },  { 0, 3000 },   { 99, 3000 },    { 100, 4000 }, { 250, 6000 },
    { 300, 5000 }, { 450, 5500 }, { 500, 9500 },   { 599, 9500 }, { 600, 5500 },
    { 700, 3500 }, { 800, 500 },  { 100000, 500 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    {
      g_assert_true (vs_series_at_time (f->trace, f->dev0, 0, expect[i].t, &p, &error));
      g_assert_no_error (error);
      g_assert_cmpint (p.allocated_bytes, ==, expect[i].allocated);
      g_assert_cmpint (p.reserved_bytes, ==, expect[i].allocated);
    }
  /* Before the first change the state is the memory live before the trace. */
  g_assert_true (vs_series_at_seq (f->trace, f->dev0, 0, 0, &p, &error));
  g_assert_cmpint (p.seq, ==, 0);
  g_assert_cmpint (p.allocated_bytes, ==, 3000);
  g_assert_cmpint (p.device_bytes, ==, 3000);
}

static void
test_basic_leaks (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) blocks = vs_leaked_blocks (f->trace, 0, 0, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (blocks->len, ==, 1);
  g_assert_cmpint (g_array_index (blocks, VsBlock, 0).address, ==, 0x1000);
  g_assert_cmpint (g_array_index (blocks, VsBlock, 0).bytes, ==, 500);
  g_assert_cmpint (g_array_index (blocks, VsBlock, 0).alloc_time_ns, ==, 400);
}

static void
test_basic_stack_rendering (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) blocks = vs_leaked_blocks (f->trace, 0, 0, &error);
  const VsStackInfo *s
      = vs_stack_get (f->trace, g_array_index (blocks, VsBlock, 0).stack_id, &error);

  g_assert_no_error (error);
  const VsStackInfo *full;

  g_autofree char *text = vs_stack_dup_text (s);
  g_autofree char *user_text = vs_stack_dup_user_text (s);

  g_assert_cmpuint (s->depth, ==, 3);
  /* Short paths: a package's file relative to the package's folder; the
   * program's own unchanged while its working directory is unknown. */
  g_assert_cmpstr (s->top_frame, ==, "torch/nn/functional.py:2000 linear");
  g_assert_cmpstr (s->site, ==, "/home/user/proj/model.py:17 forward");
  g_assert_cmpstr (text, ==,
                   "torch/nn/functional.py:2000 linear"
                   " <- /home/user/proj/model.py:17 forward"
                   " <- /home/user/proj/train.py:42 main");
  g_assert_cmpstr (user_text, ==,
                   "/home/user/proj/model.py:17 forward <- /home/user/proj/train.py:42 main");
  g_assert_false (s->frame->user_code);
  g_assert_true (s->parent->frame->user_code);
  /* Stacks share their outer nodes: the parent is the stack of the outer
   * frames, read once. */
  g_assert_true (vs_stack_get (f->trace, s->parent->stack_id, NULL) == s->parent);
  g_assert_cmpuint (s->parent->parent->depth, ==, 1);
  g_assert_null (s->parent->parent->parent);
  /* The same stack comes from the cache. */
  g_assert_true (vs_stack_get (f->trace, s->stack_id, NULL) == s);
  /* Full paths on request; the short rendering stays valid. */
  vs_stack_set_full_paths (f->trace, TRUE);
  full = vs_stack_get (f->trace, s->stack_id, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (full->top_frame, ==,
                   "/usr/lib/python3/dist-packages/torch/nn/functional.py:2000 linear");
  g_assert_cmpstr (s->top_frame, ==, "torch/nn/functional.py:2000 linear");
  vs_stack_set_full_paths (f->trace, FALSE);
  g_assert_cmpstr (vs_stack_get (f->trace, 0, NULL)->top_frame, ==, "");
  g_assert_null (vs_stack_get (f->trace, 999999, &error));
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT);
}

static void
test_user_code (void)
{
  g_assert_true (vs_frame_is_user_code ("/home/me/train.py", NULL));
  g_assert_true (vs_frame_is_user_code ("/home/user/app/main.c", "/home/user/app/bin/app"));
  g_assert_false (vs_frame_is_user_code ("/usr/lib/python3.11/threading.py", NULL));
  g_assert_false (vs_frame_is_user_code (
      "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", NULL));
  g_assert_false (vs_frame_is_user_code ("/home/me/.venv/lib/python3.12/site-packages/x.py", NULL));
  g_assert_false (vs_frame_is_user_code (NULL, "/usr/local/cuda/lib64/libcudart.so.13"));
  g_assert_false (vs_frame_is_user_code (NULL, "/opt/torch/lib/libtorch_cuda.so"));
  g_assert_false (vs_frame_is_user_code (NULL, "/opt/torch/lib/libc10_cuda.so"));
  g_assert_false (vs_frame_is_user_code ("<frozen importlib._bootstrap>", NULL));
  g_assert_false (vs_frame_is_user_code (NULL, NULL));
  g_assert_false (vs_frame_is_user_code ("??", NULL));

  /* stacks="all" snapshots: PyTorch's C++ frames come first. */
  g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE, "??", NULL, "torch::unwind::unwind()", 0));
  g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE,
                                    "/pytorch/torch/csrc/profiler/combined_traceback.cpp", NULL,
                                    "torch::CapturedTraceback::gather(bool, bool, bool)", 0));
  g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE, "/build/src/CUDACachingAllocator.cpp", NULL,
                                    "c10::cuda::CUDACachingAllocator::Native::malloc", 1234));
  g_assert_false (
      vs_frame_is_user (VS_FRAME_NATIVE, "/home/ci/aten/native/Foo.cpp", NULL, "foo_kernel", 0));
  g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE, "/home/ci/Python/ceval.c", NULL,
                                    "_PyEval_EvalFrameDefault", 4000));
  g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE, "/home/ci/Objects/call.c", NULL,
                                    "PyObject_Vectorcall", 300));
  g_assert_false (vs_frame_is_user (VS_FRAME_LABEL, NULL, NULL, "backward pass", VS_UNKNOWN));
  g_assert_true (vs_frame_is_user (VS_FRAME_PYTHON, "/home/me/train.py", NULL, "main", 12));
  g_assert_true (
      vs_frame_is_user (VS_FRAME_NATIVE, "/home/me/app/main.cu", "/home/me/app/app", "launch", 40));
  g_assert_true (
      vs_frame_is_user (VS_FRAME_NATIVE, NULL, "/home/me/app/app", "launch", VS_UNKNOWN));
}

/* Frames seen in snapshots recorded with stacks="all" on other machines:
 * the interpreter's C frames (with and without debug info), the C and C++
 * runtime, unsymbolized frames. */
static void
test_runtime_frames (void)
{
  static const struct
  {
    const char *file, *module, *function;
    gint64 line;
  } never[] = {
    { "Objects/methodobject.c", NULL, "cfunction_call", 537 },
    { "Python/ceval.c", NULL, "_PyEval_EvalFrameDefault", 4181 },
    { "/usr/local/src/conda/python-3.10.13/Objects/call.c", NULL, "_PyObject_MakeTpCall", 215 },
    { "/usr/local/src/conda/python-3.10.13/Modules/main.c", NULL, "pymain_run_python", 610 },
    { "Objects/descrobject.c", NULL, "method_vectorcall_NOARGS", 0 },
    { "thread48.o", NULL, "execute_native_thread_routine", 0 },
    { "./nptl/pthread_create.c", NULL, "start_thread", 442 },
    { "../sysdeps/unix/sysv/linux/x86_64/clone3.S", NULL, "clone3", 81 },
    { "??", NULL, "python3.10+0x1a2b3c", 0 },
    { NULL, NULL, "python3.12+0x22f00", VS_UNKNOWN },
    { "python3.11", NULL, NULL, 0 },
    { NULL, "/home/me/.conda/envs/x/bin/python3.11", NULL, VS_UNKNOWN },
    { NULL, "/home/me/.conda/envs/x/lib/libstdc++.so.6", "something", VS_UNKNOWN },
    { "??", NULL, "??", 0 },
    { NULL, NULL, NULL, VS_UNKNOWN },
    { "??", NULL, "0x7f3a12345678", 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (never); i++)
    {
      g_test_message ("frame %u: %s %s", i, never[i].file, never[i].function);
      g_assert_true (vs_frame_is_runtime (VS_FRAME_NATIVE, never[i].file, never[i].module,
                                          never[i].function, never[i].line));
      g_assert_false (vs_frame_is_user (VS_FRAME_NATIVE, never[i].file, never[i].module,
                                        never[i].function, never[i].line));
    }
  /* The user's own native code stays a site; Python frames never are the
   * runtime's. */
  g_assert_false (vs_frame_is_runtime (VS_FRAME_NATIVE, "/home/me/app/main.cu", NULL, "main", 40));
  g_assert_false (
      vs_frame_is_runtime (VS_FRAME_NATIVE, "/home/me/misc/kernels.cu", NULL, "clone_weights", 12));
  g_assert_false (vs_frame_is_runtime (VS_FRAME_PYTHON, "Python/train.py", NULL, "main", 3));
  g_assert_true (
      vs_frame_is_user (VS_FRAME_NATIVE, "/home/me/misc/kernels.cu", NULL, "clone_weights", 12));
}

static void
test_display_path (void)
{
  static const struct
  {
    const char *path, *base, *shown;
  } cases[] = {
    { "/opt/conda/lib/python3.11/site-packages/torch/nn/functional.py", NULL,
      "torch/nn/functional.py" },
    { "/usr/lib/python3/dist-packages/numpy/core/numeric.py", "/home/me", "numpy/core/numeric.py" },
    { "/usr/lib/python3.12/threading.py", NULL, "python3.12/threading.py" },
    { "/home/me/proj/train.py", "/home/me/proj", "train.py" },
    { "/home/me/proj/lib/data.py", "/home/me/proj/", "lib/data.py" },
    { "/home/me/projects/x.py", "/home/me/proj", "/home/me/projects/x.py" },
    { "/home/me/proj/train.py", NULL, "/home/me/proj/train.py" },
    { "train.py", "/home/me", "train.py" },
    { "<frozen runpy>", NULL, "<frozen runpy>" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *shown = vs_frame_display_path (cases[i].path, cases[i].base, FALSE);
      g_autofree char *full = vs_frame_display_path (cases[i].path, cases[i].base, TRUE);

      g_assert_cmpstr (shown, ==, cases[i].shown);
      g_assert_cmpstr (full, ==, cases[i].path);
    }
}

static void
test_basic_trees (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (VsTreeNode) td = NULL;
  g_autoptr (VsTreeNode) bu = NULL;
  VsTreeNode *main_node, *n;
  VsSummary s;

  g_assert_true (vs_summary_get (f->trace, f->dev0, 0, &s, &error));
  blocks = vs_live_blocks (f->trace, f->dev0, 0, s.peak_allocated_seq, &error);
  td = vs_tree_build (f->trace, blocks, VS_TREE_TOP_DOWN, &error);
  g_assert_no_error (error);
  g_assert_cmpint (td->total_bytes, ==, 9500);
  g_assert_cmpint (td->total_count, ==, 4);
  /* Top-down: main (6500 = 6000 via load + 500 via forward), then the
   * block with no stack. */
  g_assert_cmpuint (td->children->len, ==, 2);
  main_node = g_ptr_array_index (td->children, 0);
  g_assert_cmpstr (main_node->label, ==, "/home/user/proj/train.py:42 main");
  g_assert_cmpint (main_node->total_bytes, ==, 6500);
  g_assert_cmpint (main_node->self_bytes, ==, 0);
  g_assert_cmpuint (main_node->children->len, ==, 2);
  n = g_ptr_array_index (main_node->children, 0);
  g_assert_cmpstr (n->label, ==, "/home/user/proj/data.py:5 load");
  g_assert_cmpint (n->self_bytes, ==, 6000);
  g_assert_cmpint (n->self_count, ==, 2);
  g_assert_true (n->parent == main_node);
  n = g_ptr_array_index (td->children, 1);
  g_assert_cmpstr (n->label, ==, "(no stack)");
  g_assert_cmpint (n->self_bytes, ==, 3000);

  /* Bottom-up: the allocating frames first. */
  bu = vs_tree_build (f->trace, blocks, VS_TREE_BOTTOM_UP, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (bu->children->len, ==, 3);
  n = g_ptr_array_index (bu->children, 0);
  g_assert_cmpstr (n->label, ==, "/home/user/proj/data.py:5 load");
  g_assert_cmpint (n->total_bytes, ==, 6000);
  n = g_ptr_array_index (n->children, 0);
  g_assert_cmpstr (n->label, ==, "/home/user/proj/train.py:42 main");
  g_assert_cmpint (n->self_bytes, ==, 6000);
  n = g_ptr_array_index (bu->children, 2);
  g_assert_cmpstr (n->label, ==, "torch/nn/functional.py:2000 linear");
  g_assert_cmpint (n->total_bytes, ==, 500);
}

/* -------------------------------------------------------------- full */

static void
test_full_summary (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rows = vs_summary_list (f->trace, 0, 0, &error);
  const VsSummary *s;

  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 4);
  /* Device 0, all: reserved counts PyTorch's segment once (not also its
   * cudaMalloc), the plain cudaMalloc and the pool's size. */
  s = &g_array_index (rows, VsSummary, 0);
  g_assert_cmpint (s->allocator_id, ==, 0);
  g_assert_cmpint (s->peak_reserved_bytes, ==, 14 * MiB);
  g_assert_cmpint (s->peak_reserved_time_ns, ==, 1250);
  g_assert_cmpint (s->peak_allocated_bytes, ==, 11223616);
  g_assert_cmpint (s->peak_allocated_time_ns, ==, 1300);
  g_assert_cmpint (s->final_reserved_bytes, ==, 6 * MiB);
  g_assert_cmpint (s->final_allocated_bytes, ==, 262144);
  g_assert_cmpint (s->alloc_count, ==, 5);
  g_assert_cmpint (s->free_count, ==, 4);
  /* PyTorch's OOM counts; the device-level cudaMalloc it retried does not. */
  g_assert_cmpint (s->failed_alloc_count, ==, 1);
  g_assert_cmpint (s->peak_device_bytes, ==, 14 * MiB);
  g_assert_cmpint (s->static_bytes, ==, 4096);
  s = &g_array_index (rows, VsSummary, 1);
  g_assert_cmpint (s->allocator_id, ==, f->pool);
  g_assert_cmpint (s->peak_reserved_bytes, ==, 4 * MiB);
  g_assert_cmpint (s->peak_allocated_bytes, ==, MiB);
  g_assert_cmpint (s->static_bytes, ==, VS_UNKNOWN);
  s = &g_array_index (rows, VsSummary, 2);
  g_assert_cmpint (s->allocator_id, ==, f->torch);
  g_assert_cmpint (s->peak_reserved_bytes, ==, 2 * MiB);
  g_assert_cmpint (s->peak_allocated_bytes, ==, 1786432);
  g_assert_cmpint (s->final_allocated_bytes, ==, 262144);
  g_assert_cmpint (s->alloc_count, ==, 3);
  g_assert_cmpint (s->free_count, ==, 2);
  g_assert_cmpint (s->failed_alloc_count, ==, 1);
  s = &g_array_index (rows, VsSummary, 3);
  g_assert_cmpint (s->device_id, ==, f->dev1);
  g_assert_cmpint (s->peak_reserved_bytes, ==, 18 * MiB);
  g_assert_cmpint (s->final_reserved_bytes, ==, 16 * MiB);
}

static void
test_full_peak_sums (Fx *f, gconstpointer data)
{
  gint64 series[][2]
      = { { f->dev0, 0 }, { f->dev1, 0 }, { f->dev0, f->torch }, { f->dev0, f->pool } };

  /* For every series, the live allocated blocks at its peak sum to its
   * peak: blocks and series agree. */
  for (guint i = 0; i < G_N_ELEMENTS (series); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) blocks = NULL;
      g_autoptr (GArray) groups = NULL;
      gint64 sum = 0;
      VsSummary s;

      g_assert_true (vs_summary_get (f->trace, series[i][0], series[i][1], &s, &error));
      blocks = vs_live_blocks (f->trace, series[i][0], series[i][1], s.peak_allocated_seq, &error);
      g_assert_no_error (error);
      g_assert_cmpint (sum_bytes (blocks), ==, s.peak_allocated_bytes);
      groups = vs_group_blocks (f->trace, blocks, VS_GROUP_BY_SITE, &error);
      g_assert_no_error (error);
      for (guint j = 0; j < groups->len; j++)
        sum += g_array_index (groups, VsGroup, j).bytes;
      g_assert_cmpint (sum, ==, s.peak_allocated_bytes);
    }
}

static void
test_full_sites (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (GArray) sites = NULL;
  VsSummary s;

  g_assert_true (vs_summary_get (f->trace, f->dev0, 0, &s, &error));
  blocks = vs_live_blocks (f->trace, f->dev0, 0, s.peak_allocated_seq, &error);
  sites = vs_group_blocks (f->trace, blocks, VS_GROUP_BY_SITE, &error);
  g_assert_no_error (error);
  /* model.py:17 is the site of two stacks (1262144 + 524288 bytes). */
  g_assert_cmpuint (sites->len, ==, 3);
  g_assert_cmpstr (g_array_index (sites, VsGroup, 0).site, ==,
                   "/home/user/proj/comm.c:88 init_comm");
  g_assert_cmpstr (g_array_index (sites, VsGroup, 0).top_frame, ==, "libnccl.so.2+0x1234");
  g_assert_cmpint (g_array_index (sites, VsGroup, 0).bytes, ==, 8 * MiB);
  g_assert_cmpstr (g_array_index (sites, VsGroup, 1).site, ==,
                   "/home/user/proj/model.py:17 forward");
  g_assert_cmpint (g_array_index (sites, VsGroup, 1).bytes, ==, 1786432);
  g_assert_cmpint (g_array_index (sites, VsGroup, 1).count, ==, 3);
  g_assert_cmpstr (g_array_index (sites, VsGroup, 2).site, ==, "backward pass");
}

static void
test_full_fragmentation (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  VsFragmentation fr;
  VsSummary s;

  /* PyTorch at its peak: blocks of 1 MiB, 512 KiB and 256 KiB in the 2 MiB
   * segment leave one gap of 256 KiB at its end. */
  g_assert_true (vs_summary_get (f->trace, f->dev0, f->torch, &s, &error));
  g_assert_true (
      vs_fragmentation_at (f->trace, f->dev0, f->torch, s.peak_allocated_seq, &fr, gaps, &error));
  g_assert_no_error (error);
  g_assert_cmpint (fr.reserved_bytes, ==, 2 * MiB);
  g_assert_cmpint (fr.allocated_bytes, ==, 1786432);
  g_assert_cmpint (fr.free_bytes, ==, 310720);
  g_assert_cmpint (fr.segment_count, ==, 1);
  g_assert_cmpint (fr.segment_free_bytes, ==, 262144);
  g_assert_cmpint (fr.largest_free_bytes, ==, 262144);
  g_assert_cmpuint (gaps->len, ==, 1);
  g_assert_cmpint (g_array_index (gaps, VsFreeGap, 0).address, ==, 0x101C0000);

  /* `all` includes the pool, whose free memory has no known layout. */
  g_assert_true (
      vs_fragmentation_at (f->trace, f->dev0, 0, s.peak_allocated_seq, &fr, NULL, &error));
  g_assert_cmpint (fr.free_bytes, ==, 14 * MiB - 11223616);
  g_assert_cmpint (fr.largest_free_bytes, ==, VS_UNKNOWN);
  /* Device 1 holds only plain allocations: nothing free. */
  g_assert_true (vs_fragmentation_at (f->trace, f->dev1, 0, vs_trace_get_last_seq (f->trace), &fr,
                                      NULL, &error));
  g_assert_cmpint (fr.free_bytes, ==, 0);
  g_assert_cmpint (fr.largest_free_bytes, ==, 0);
}

static void
test_full_oom (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = vs_oom_list (f->trace, 0, 0, &error);
  const VsOom *o;

  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 2);
  o = g_ptr_array_index (list, 0);
  g_assert_cmpstr (o->api, ==, "cudaMalloc");
  g_assert_cmpint (o->allocator_id, ==, 0);
  g_assert_cmpint (o->time_ns, ==, 1590);
  g_assert_cmpint (o->all.reserved_bytes, ==, 14 * MiB);
  g_assert_cmpint (o->all.allocated_bytes, ==, 10699328);
  o = g_ptr_array_index (list, 1);
  g_assert_cmpstr (o->api, ==, "pytorch");
  g_assert_cmpint (o->allocator_id, ==, f->torch);
  g_assert_cmpint (o->requested_bytes, ==, 3 * MiB);
  g_assert_cmpint (o->error, ==, VS_UNKNOWN);
  g_assert_cmpint (o->device_free_bytes, ==, 1000000);
  /* At 1600 PyTorch holds blocks of 1 MiB and 256 KiB in its 2 MiB
   * segment: gaps of 512 KiB and 256 KiB, so the 3 MiB request could not
   * fit whatever the fragmentation. */
  g_assert_cmpint (o->allocator.reserved_bytes, ==, 2 * MiB);
  g_assert_cmpint (o->allocator.allocated_bytes, ==, 1262144);
  g_assert_cmpint (o->allocator.segment_free_bytes, ==, 786432);
  g_assert_cmpint (o->allocator.largest_free_bytes, ==, 524288);
  g_assert_cmpstr (vs_stack_get (f->trace, o->stack_id, NULL)->site, ==,
                   "/home/user/proj/model.py:25 forward");
  list = (g_ptr_array_unref (list), vs_oom_list (f->trace, f->dev1, 0, &error));
  g_assert_cmpuint (list->len, ==, 0);
}

static void
test_full_kernels_and_ranges (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) kernels = vs_kernel_stats (f->trace, f->dev0, &error);
  g_autoptr (GPtrArray) ranges = NULL;
  const VsKernelStats *k;
  const VsRangeMemory *r;

  g_assert_no_error (error);
  g_assert_cmpuint (kernels->len, ==, 2);
  k = g_ptr_array_index (kernels, 0);
  g_assert_cmpstr (k->name, ==, "void gemm<float, 128>(float const*)");
  g_assert_cmpint (k->count, ==, 3);
  g_assert_cmpint (k->total_ns, ==, 600);
  g_assert_cmpint (k->avg_ns, ==, 200);
  g_assert_cmpint (k->min_ns, ==, 100);
  g_assert_cmpint (k->max_ns, ==, 300);

  ranges = vs_range_memory (f->trace, f->dev0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ranges->len, ==, 3);
  r = g_ptr_array_index (ranges, 0);
  g_assert_cmpstr (r->name, ==, "epoch");
  g_assert_cmpint (r->end_ns, ==, VS_UNKNOWN);
  g_assert_cmpint (r->peak_allocated, ==, 11223616);
  g_assert_cmpint (r->allocated_at_end, ==, 262144);
  r = g_ptr_array_index (ranges, 1);
  g_assert_cmpstr (r->name, ==, "forward");
  g_assert_cmpint (r->allocated_at_start, ==, 0);
  g_assert_cmpint (r->allocated_at_end, ==, 10699328);
  g_assert_cmpint (r->peak_allocated, ==, 11223616);
  g_assert_cmpint (r->peak_reserved, ==, 14 * MiB);
  r = g_ptr_array_index (ranges, 2);
  g_assert_cmpstr (r->domain, ==, "train");
  g_assert_cmpint (r->allocated_at_start, ==, 10699328);
  g_assert_cmpint (r->peak_allocated, ==, 10699328);
  g_assert_cmpint (r->allocated_at_end, ==, 262144);
}

/* ------------------------------------------------------- expandable */

static void
test_expandable (Fx *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  VsFragmentation fr;
  VsSummary s;

  /* The VMM maps are the segment's own memory: not counted twice. */
  g_assert_true (vs_summary_get (f->trace, f->dev0, 0, &s, &error));
  g_assert_cmpint (s.peak_reserved_bytes, ==, 4 * MiB);
  g_assert_cmpint (s.peak_device_bytes, ==, 4 * MiB);
  g_assert_true (vs_summary_get (f->trace, f->dev0, f->torch, &s, &error));
  g_assert_true (
      vs_fragmentation_at (f->trace, f->dev0, f->torch, s.peak_allocated_seq, &fr, gaps, &error));
  g_assert_no_error (error);
  /* The two chunks are one extent: the gap after the block that straddles
   * them runs to the end of the second chunk. */
  g_assert_cmpint (fr.segment_count, ==, 1);
  g_assert_cmpint (fr.segment_free_bytes, ==, 2 * MiB);
  g_assert_cmpint (fr.largest_free_bytes, ==, 3 * MiB / 2);
  g_assert_cmpuint (gaps->len, ==, 2);
  g_assert_cmpint (g_array_index (gaps, VsFreeGap, 0).address, ==, 0x60100000);
  g_assert_cmpint (g_array_index (gaps, VsFreeGap, 0).bytes, ==, MiB / 2);
  g_assert_cmpint (g_array_index (gaps, VsFreeGap, 1).address, ==, 0x60280000);
}

/* Every stack of the trace, in id order, until the first id with none. */
static GPtrArray *
all_stacks (VsTrace *trace)
{
  GPtrArray *stacks = g_ptr_array_new ();

  g_ptr_array_add (stacks, (gpointer)vs_stack_get (trace, 0, NULL));
  for (gint64 id = 1;; id++)
    {
      g_autoptr (GError) error = NULL;
      const VsStackInfo *s = vs_stack_get (trace, id, &error);

      if (s == NULL)
        break;
      g_ptr_array_add (stacks, (gpointer)s);
    }
  return stacks;
}

/* Stacks compared without their texts order as their texts do; a stack's
 * frames are its nodes' frames, innermost first. */
static void
test_full_stack_order (Fx *f, gconstpointer data)
{
  g_autoptr (GPtrArray) stacks = all_stacks (f->trace);

  g_assert_cmpuint (stacks->len, >, 4);
  for (guint i = 0; i < stacks->len; i++)
    {
      const VsStackInfo *a = g_ptr_array_index (stacks, i);
      g_autofree char *ta = vs_stack_dup_text (a);
      g_autofree const VsFrameInfo **frames = vs_stack_dup_frames (a);
      const VsStackInfo *n = a;

      for (guint k = 0; k < a->depth; k++, n = n->parent)
        g_assert_true (frames[k] == n->frame);
      for (guint j = 0; j < stacks->len; j++)
        {
          const VsStackInfo *b = g_ptr_array_index (stacks, j);
          g_autofree char *tb = vs_stack_dup_text (b);
          int want = strcmp (ta, tb);

          g_assert_cmpint (vs_stack_text_cmp (a, b), ==, (want > 0) - (want < 0));
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, build, fn)                                                                       \
  g_test_add ("/queries/" name, Fx, (gconstpointer)build, fx_setup, fn, fx_teardown)
  ADD ("basic/summary", build_basic, test_basic_summary);
  ADD ("basic/live-at-peak", build_basic, test_basic_live_at_peak);
  ADD ("basic/state-over-time", build_basic, test_basic_state_over_time);
  ADD ("basic/leaks", build_basic, test_basic_leaks);
  ADD ("basic/stack-rendering", build_basic, test_basic_stack_rendering);
  ADD ("basic/trees", build_basic, test_basic_trees);
  ADD ("full/summary", vs_fixture_full, test_full_summary);
  ADD ("full/peak-sums", vs_fixture_full, test_full_peak_sums);
  ADD ("full/sites", vs_fixture_full, test_full_sites);
  ADD ("full/stack-order", vs_fixture_full, test_full_stack_order);
  ADD ("full/fragmentation", vs_fixture_full, test_full_fragmentation);
  ADD ("full/oom", vs_fixture_full, test_full_oom);
  ADD ("full/kernels-and-ranges", vs_fixture_full, test_full_kernels_and_ranges);
  ADD ("expandable/fragmentation", vs_fixture_expandable, test_expandable);
#undef ADD
  g_test_add_func ("/queries/user-code", test_user_code);
  g_test_add_func ("/queries/display-path", test_display_path);
  g_test_add_func ("/queries/runtime-frames", test_runtime_frames);
  return g_test_run ();
}
