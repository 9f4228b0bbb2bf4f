/* SPDX-License-Identifier: MIT */
/* vs-diagnose-pools.c — the diagnosis's rule on a framework's pool whose
 * reserved memory grows every iteration (see vs-diagnose.h,
 * growth-per-iteration of a pool's allocator): the pool's words and its
 * framework's remedies around what vs_pool_growth_find() measured.
 */
#include "vs-diagnose-private.h"
#include "vs-pool-growth.h"

#include <string.h>

/* The pool as its users know it. */
static const char *
pool_title (const char *framework)
{
  if (strcmp (framework, "xla") == 0)
    return "XLA's BFC allocator (JAX)";
  if (strcmp (framework, "tensorflow") == 0)
    return "TensorFlow's BFC allocator";
  if (strcmp (framework, "cupy") == 0)
    return "CuPy's memory pool";
  return "RMM's pool";
}

/* What to change, in the framework's own settings and calls. */
static const char *
pool_remedy (const char *framework)
{
  if (strcmp (framework, "xla") == 0)
    return "XLA's BFC allocator takes more from CUDA whenever no free block of its pool fits a "
           "request, and keeps it: keep shapes fixed from step to step (pad to a few sizes), so "
           "buffers of one size are reused; let it take its pool once at start "
           "(XLA_PYTHON_CLIENT_PREALLOCATE unset or true, XLA_PYTHON_CLIENT_MEM_FRACTION sized "
           "for the run) so it never grows during the run; to find which buffers make it grow, "
           "record once with XLA_PYTHON_CLIENT_ALLOCATOR=platform (every buffer is then a CUDA "
           "allocation with its own line; slower, for the diagnosis only)";
  if (strcmp (framework, "tensorflow") == 0)
    return "TensorFlow's BFC allocator takes more from CUDA whenever no free block of its pool "
           "fits a request, and keeps it: keep shapes fixed from step to step; bound it with a "
           "memory limit (tf.config.set_logical_device_configuration with memory_limit) or let "
           "it take its pool once (TF_FORCE_GPU_ALLOW_GROWTH=false); "
           "TF_GPU_ALLOCATOR=cuda_malloc_async makes every buffer a CUDA allocation CUDA can "
           "reuse and trim";
  if (strcmp (framework, "cupy") == 0)
    return "CuPy's pool keeps every block the program frees and takes a new segment from CUDA "
           "when no kept block fits (sizes that change every step): call "
           "cupy.get_default_memory_pool().free_all_blocks() between steps to give the kept "
           "blocks back, cap the pool with set_limit(size=…) or CUPY_GPU_MEMORY_LIMIT, or use "
           "the stream-ordered pool (cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)), "
           "which CUDA trims; keep sizes that repeat";
  return "RMM's pool takes more from CUDA when no free block fits and gives nothing back: give "
         "it an initial_pool_size that covers the run and a maximum_pool_size to bound it "
         "(rmm.reinitialize(pool_allocator=True, …)), keep sizes that repeat, or use "
         "cuda_async_memory_resource, which CUDA trims";
}

/* The finding for pool growth pg on dd's device. */
static VsFinding *
pool_finding (VsDeviceDiagnosis *dd, const VsPoolGrowth *pg)
{
  const VsGrowth *g = &pg->growth;
  const char *unit = dd->iterations->unit;
  VsFinding *f
      = vs_diagnose_finding_new (VS_FINDING_GROWTH_PER_ITERATION, dd->device->id, pg->allocator_id);
  g_autofree char *from = vs_diagnose_bytes (pg->first_reserved_bytes);
  g_autofree char *to = vs_diagnose_bytes (pg->last_reserved_bytes);
  g_autofree char *how = NULL;
  g_autofree char *held = NULL;
  const char *site = g->site != NULL && g->site[0] != '\0' ? g->site : NULL;

  f->bytes = g->bytes_per_iteration;
  f->count = g->iterations;
  f->unit = unit;
  f->time_ns = g->first_time_ns;
  f->seq = g->first_seq;
  f->site = g_strdup (site);
  f->stack_id = g->site_stack_id;
  how = vs_diagnose_growth_how (g, unit);
  if (pg->allocated_known)
    {
      g_autofree char *a0 = vs_diagnose_bytes (pg->first_allocated_bytes);
      g_autofree char *a1 = vs_diagnose_bytes (pg->last_allocated_bytes);

      held = g_strdup_printf ("while what it handed out did not grow (%s, then %s)", a0, a1);
    }
  else
    held = g_strdup ("while what it hands out is unknown over time (the pool is seen from "
                     "CUDA's side only)");
  f->evidence = g_strdup_printf (
      "%s: its reserved memory at the start of each %s (%s) %s, from %s to %s in %" G_GINT64_FORMAT
      " segment%s taken from CUDA, %s",
      pool_title (pg->framework), unit, dd->iterations->what, how, from, to, pg->segment_count,
      pg->segment_count == 1 ? "" : "s", held);
  f->remedy = g_strdup (pool_remedy (pg->framework));
  f->saving_bytes = pg->last_reserved_bytes - pg->first_reserved_bytes;
  return f;
}

gboolean
vs_diagnose_pool_growth (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  g_autoptr (GArray) pools = NULL;

  if (dd->iterations == NULL || dd->iterations->iterations->len == 0)
    return TRUE;
  pools = vs_pool_growth_find (trace, dd->iterations, error);
  if (pools == NULL)
    return FALSE;
  for (guint i = 0; i < pools->len; i++)
    g_ptr_array_add (findings, pool_finding (dd, &g_array_index (pools, VsPoolGrowth, i)));
  return TRUE;
}
