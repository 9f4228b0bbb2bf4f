/* SPDX-License-Identifier: MIT */
/* vs-diagnose-held.c — the diagnosis's rules on memory held (see
 * vs-diagnose.h): growth per iteration, activations kept without a
 * backward pass, device memory leaked at exit, fragmentation at the peak
 * and memory outside every allocator.
 */
#include "vs-alloc-conf.h"
#include "vs-diagnose-private.h"
#include "vs-format.h"
#include "vs-framework-oom.h"
#include "vs-framework-pools.h"
#include "vs-fragmentation.h"
#include "vs-oom.h"
#include "vs-stack.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"
#include "vs-whatif.h"
#include "vs-windowed.h"

#include <sqlite3.h>
#include <string.h>

#define MiB (G_GINT64_CONSTANT (1) << 20)
#define GiB (G_GINT64_CONSTANT (1) << 30)

/* ------------------------------------------------------------- growth */

/* See vs-diagnose-private.h. */
char *
vs_diagnose_growth_how (const VsGrowth *g, const char *unit)
{
  g_autofree char *per = vs_diagnose_bytes (g->bytes_per_iteration);

  return g->stepped ? g_strdup_printf ("rose in %" G_GINT64_FORMAT " steps over %" G_GINT64_FORMAT
                                       " %ss and never came back down: %s per %s on average",
                                       g->growing, g->iterations, unit, per, unit)
                    : g_strdup_printf ("grew in %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                       " %ss, by %s per %s",
                                       g->growing, g->iterations, unit, per, unit);
}

void
vs_diagnose_growth (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings)
{
  const VsGrowth *g = &dd->growth;
  VsFinding *f;
  g_autofree char *site_bytes = NULL;
  g_autofree char *how = NULL;
  const char *site;

  if (g->bytes_per_iteration <= 0)
    return;
  f = vs_diagnose_finding_new (VS_FINDING_GROWTH_PER_ITERATION, dd->device->id,
                               dd->iterations->allocator_id);
  f->bytes = g->bytes_per_iteration;
  f->count = g->iterations;
  f->unit = dd->iterations->unit;
  f->time_ns = g->first_time_ns;
  f->seq = g->first_seq;
  /* A site of no known stack has an empty name. */
  site = g->site != NULL && g->site[0] != '\0' ? g->site : NULL;
  f->site = g_strdup (site);
  f->stack_id = g->site_stack_id;
  site_bytes = vs_diagnose_bytes (g->site_bytes);
  const char *unit = dd->iterations->unit;
  how = vs_diagnose_growth_how (g, unit);
  f->evidence = g_strdup_printf ("allocated memory at the start of each %s (%s) %s; %s "
                                 "allocated since then is still live, most of it from %s",
                                 unit, dd->iterations->what, how, site_bytes,
                                 site != NULL ? site : "an unknown site");
  if (dd->settings.pytorch)
    f->remedy = g_strdup ("keep no tensor that holds its autograd graph across iterations: "
                          ".item() for logged values, .detach() (or .cpu()) for kept outputs, "
                          "torch.no_grad() around evaluation; clear caches and lists that grow");
  else
    f->remedy = g_strdup ("free in each iteration what it allocates (or allocate once and "
                          "reuse the buffer)");
  f->saving_bytes = g->site_bytes;
  g_ptr_array_add (findings, f);
}

/* ------------------------------------------- forward without backward */

/* peak_blocks: the live blocks at the device's peak of allocated memory
 * (vs_live_blocks() of every allocator), NULL when it has none. */
gboolean
vs_diagnose_unused_activations (VsTrace *trace, VsDeviceDiagnosis *dd, GArray *peak_blocks,
                                GPtrArray *findings, GError **error)
{
  VsUnusedActivations u;
  const VsStackInfo *s;
  VsFinding *f;
  g_autofree char *b = NULL, *all = NULL;
  gint64 peak = dd->all.peak_allocated_bytes;

  if (!dd->settings.pytorch || peak_blocks == NULL)
    return TRUE;
  if (!vs_unused_activations_of_blocks (trace, peak_blocks, &u, error))
    return FALSE;
  if (u.bytes < 64 * MiB || u.bytes * 4 < peak || u.count < 8)
    return TRUE;
  s = vs_stack_get (trace, u.stack_id, error);
  if (s == NULL)
    return FALSE;
  f = vs_diagnose_finding_new (VS_FINDING_FORWARD_WITHOUT_BACKWARD, dd->device->id,
                               dd->allocator_id);
  b = vs_diagnose_bytes (u.bytes);
  all = vs_diagnose_bytes (peak);
  f->bytes = u.bytes;
  f->count = u.count;
  f->time_ns = dd->all.peak_allocated_time_ns;
  f->seq = dd->all.peak_allocated_seq;
  f->site = s->site[0] != '\0' ? g_strdup (s->site) : NULL;
  f->stack_id = u.stack_id > 0 ? u.stack_id : VS_UNKNOWN;
  f->evidence = g_strdup_printf (
      "at the peak (%s), %s in %" G_GINT64_FORMAT " blocks are activations a forward pass saved "
      "for a backward pass that never came: no backward allocation happened before they were "
      "freed",
      all, b, u.count);
  f->remedy = g_strdup ("run evaluation and inference under torch.no_grad() or "
                        "torch.inference_mode(): the forward pass then keeps no activations "
                        "for backward");
  f->saving_bytes = u.bytes;
  g_ptr_array_add (findings, f);
  return TRUE;
}

/* ------------------------------------------------------- leak at exit */

gboolean
vs_diagnose_leaks (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  /* Device-level memory of no allocator still live at the end, by stack
   * (index on (device_id, level, free_seq)). */
  /* Only of processes that exited on their own: memory a process held
   * when a signal (exit status 128 + N) or the end of recording stopped
   * it was in use, not left behind. */
  static const char *leaked_sql
      = "SELECT stack_id, count(*), sum(bytes) FROM block"
        " WHERE device_id = ?1 AND level = 1 AND free_seq IS NULL AND allocator_id IS NULL"
        " AND kind IN (1, 5, 6) AND stack_id IS NOT NULL AND stack_id > 0"
        " AND process_id IN (SELECT id FROM process WHERE exit_status BETWEEN 0 AND 127)"
        " GROUP BY stack_id ORDER BY sum(bytes) DESC, stack_id LIMIT 8";
  static const char *freed_sql
      = "SELECT count(*) FROM block WHERE device_id = ?1 AND level = 1"
        " AND free_seq IS NOT NULL AND allocator_id IS NULL AND kind IN (1, 5, 6)";
  g_autoptr (GArray) groups = g_array_new (FALSE, TRUE, sizeof (gint64) * 3);
  sqlite3_stmt *stmt = vs_trace_statement (trace, leaked_sql, error);
  gint64 freed = 0;
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, dd->device->id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 g[3] = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                      sqlite3_column_int64 (stmt, 2) };

      g_array_append_vals (groups, g, 1);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  if (groups->len == 0)
    return TRUE;
  /* A program that frees device memory but not these: a leak.  One that
   * never frees any (a caching allocator seen from below keeps its
   * segments to the end) says nothing by keeping them. */
  stmt = vs_trace_statement (trace, freed_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, dd->device->id);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    freed = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (freed == 0)
    return TRUE;
  for (guint i = 0; i < groups->len; i++)
    {
      const gint64 *g = (const gint64 *)groups->data + 3 * i;
      gint64 stack_id = g[0], count = g[1], held_bytes = g[2];
      const VsStackInfo *s;

      /* What a pool still holds at the end is never a leak. */
      if (count < 2 || vs_framework_pool_of_stack (trace, dd->device->id, stack_id) != 0)
        continue;
      s = vs_stack_get (trace, stack_id, error);
      if (s == NULL)
        return FALSE;
      {
        VsFinding *f = vs_diagnose_finding_new (VS_FINDING_LEAK_AT_EXIT, dd->device->id, 0);
        g_autofree char *held = vs_diagnose_bytes (held_bytes);

        f->bytes = held_bytes;
        f->count = count;
        f->time_ns = vs_trace_get_duration_ns (trace);
        f->seq = vs_trace_get_last_seq (trace);
        f->site = g_strdup (s->site);
        f->stack_id = stack_id;
        f->evidence = g_strdup_printf ("%" G_GINT64_FORMAT " allocations (%s) from one stack "
                                       "were still allocated at the end, while the program "
                                       "freed %" G_GINT64_FORMAT " other device allocations",
                                       count, held, freed);
        f->remedy = g_strdup ("free them (cudaFree) on every path, or keep one buffer and "
                              "reuse it");
        f->saving_bytes = held_bytes;
        g_ptr_array_add (findings, f);
      }
    }
  return TRUE;
}

/* ------------------------------------------------------ fragmentation */

gboolean
vs_diagnose_fragmentation (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings,
                           GError **error)
{
  const VsSummary *s = &dd->allocator;
  gint64 held = s->peak_reserved_bytes - s->peak_allocated_bytes;
  VsFragmentation frag, worst;
  VsFinding *f;
  g_autofree char *r = NULL, *a = NULL, *h = NULL, *l = NULL, *fr = NULL;
  g_autofree char *w_at = NULL, *w_free = NULL, *w_res = NULL, *w_largest = NULL;

  if (dd->allocator_id == 0 || s->peak_reserved_seq == VS_UNKNOWN
      || s->peak_allocated_bytes == VS_UNKNOWN)
    return TRUE;
  /* The caching allocator of a healthy loop holds 20–35 % more than it
   * ever hands out at once (measured on the samples): not a finding. */
  if (held < 64 * MiB || held * 10 < s->peak_reserved_bytes * 4)
    return TRUE;
  /* Fragmentation only where free memory hurt: a request its free blocks
   * could not serve while at least as much was free. */
  if (!vs_fragmentation_worst (trace, dd->device->id, dd->allocator_id, &worst, error))
    return FALSE;
  if (worst.seq == 0 || worst.free_bytes < 64 * MiB || worst.largest_free_bytes == VS_UNKNOWN
      || worst.largest_free_bytes >= worst.free_bytes)
    return TRUE;
  if (!vs_fragmentation_at (trace, dd->device->id, dd->allocator_id, s->peak_reserved_seq, &frag,
                            NULL, error))
    return FALSE;
  f = vs_diagnose_finding_new (VS_FINDING_FRAGMENTATION, dd->device->id, dd->allocator_id);
  r = vs_diagnose_bytes (s->peak_reserved_bytes);
  a = vs_diagnose_bytes (s->peak_allocated_bytes);
  h = vs_diagnose_bytes (held);
  l = vs_diagnose_bytes (frag.largest_free_bytes);
  f->bytes = held;
  f->time_ns = s->peak_reserved_time_ns;
  f->seq = s->peak_reserved_seq;
  fr = vs_diagnose_bytes (frag.free_bytes);
  w_at = vs_format_duration (worst.time_ns);
  w_free = vs_diagnose_bytes (worst.free_bytes);
  w_res = vs_diagnose_bytes (worst.reserved_bytes);
  w_largest = vs_diagnose_bytes (worst.largest_free_bytes);
  f->evidence = g_strdup_printf (
      "peak reserved %s vs peak allocated %s: %s (%d%%) reserved but never in use at once; at "
      "peak reserved %" G_GINT64_FORMAT " segments hold %s free, the largest free block %s. "
      "It blocked requests: at %s (the worst), %s was free inside %s reserved in blocks of at "
      "most %s, yet the next request took a new segment or failed",
      r, a, h, (int)(100 * held / MAX (s->peak_reserved_bytes, 1)), frag.segment_count, fr,
      frag.largest_free_bytes != VS_UNKNOWN ? l : "unknown", w_at, w_free, w_res, w_largest);
  if (dd->settings.expandable_segments != 1)
    {
      f->remedy = g_strdup ("PYTORCH_CUDA_ALLOC_CONF=" VS_ALLOC_CONF_EXPANDABLE " (segments grow "
                            "in place, so freed memory is reused for any size)");
      f->saving_bytes = held;
    }
  else
    f->remedy = g_strdup ("expandable segments are already on: "
                          "PYTORCH_CUDA_ALLOC_CONF=" VS_ALLOC_CONF_GC " returns "
                          "cached blocks sooner; allocate sizes that repeat");
  g_ptr_array_add (findings, f);
  return TRUE;
}

/* ---------------------------------------------------- outside allocators */

gboolean
vs_diagnose_measure_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GError **error)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  const VsSummary *s = &dd->all;
  gint64 inside = 0;
  gboolean any = FALSE;
  VsSeriesPoint p;

  dd->allocator_at_peak_bytes = dd->outside_at_peak_bytes = VS_UNKNOWN;
  if (s->peak_reserved_seq == VS_UNKNOWN)
    return TRUE;
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id != dd->device->id)
        continue;
      any = TRUE;
      /* Pools seen from the device level: added below, all at once. */
      if (vs_framework_pool_is (trace, a->id))
        continue;
      if (!vs_series_at_seq (trace, dd->device->id, a->id, s->peak_reserved_seq, &p, error))
        return FALSE;
      if (p.seq != 0)
        inside += p.reserved_bytes;
      if (a->id == dd->allocator_id)
        dd->allocator_at_peak_bytes = p.seq != 0 ? p.reserved_bytes : 0;
    }
  /* Pools seen from the device level are allocators too. */
  inside += vs_framework_pools_reserved_at (trace, dd->device->id, s->peak_reserved_seq);
  if (!any || !vs_trace_has_device_level (trace))
    return TRUE;
  dd->outside_at_peak_bytes = s->peak_reserved_bytes - inside;
  if (s->static_bytes != VS_UNKNOWN)
    dd->outside_at_peak_bytes += s->static_bytes;
  return TRUE;
}

gboolean
vs_diagnose_outside (VsTrace *trace, VsDeviceDiagnosis *dd, GPtrArray *findings, GError **error)
{
  const VsSummary *s = &dd->all;
  gint64 outside = dd->outside_at_peak_bytes;
  g_autoptr (GArray) live = NULL;
  g_autoptr (GArray) unowned = NULL;
  g_autoptr (GArray) sites = NULL;
  VsFinding *f;
  g_autofree char *out_text = NULL, *all_text = NULL;
  GString *names;

  if (outside == VS_UNKNOWN)
    return TRUE;
  /* cuBLAS's and cuDNN's workspaces of any PyTorch program take about
   * 130 MiB (measured on the samples): not a finding by themselves. */
  if (outside < 256 * MiB || outside * 10 < s->peak_reserved_bytes)
    return TRUE;
  live = vs_live_blocks (trace, dd->device->id, 0, s->peak_reserved_seq, error);
  if (live == NULL)
    return FALSE;
  unowned = g_array_new (FALSE, FALSE, sizeof (VsBlock));
  for (guint i = 0; i < live->len; i++)
    {
      const VsBlock *b = &g_array_index (live, VsBlock, i);

      if (b->level == 1 && b->allocator_id == 0)
        g_array_append_val (unowned, *b);
    }
  sites = vs_group_blocks (trace, unowned, VS_GROUP_BY_STACK, error);
  if (sites == NULL)
    return FALSE;
  names = g_string_new (NULL);
  for (guint i = 0; i < sites->len && i < 2; i++)
    {
      const VsGroup *g = &g_array_index (sites, VsGroup, i);
      g_autofree char *b = vs_diagnose_bytes (g->bytes);

      /* C++ signatures can be long: the name up to its parameters. */
      const char *where = g->top_frame[0] != '\0' ? g->top_frame : "an unknown stack";
      g_autofree char *name = g_strndup (where, strcspn (where, "("));

      g_string_append_printf (names, "%s%s from %s", i > 0 ? ", " : "; largest: ", b, name);
    }
  f = vs_diagnose_finding_new (VS_FINDING_OUTSIDE_ALLOCATOR, dd->device->id, 0);
  out_text = vs_diagnose_bytes (outside);
  all_text = vs_diagnose_bytes (s->peak_reserved_bytes);
  f->bytes = outside;
  f->time_ns = s->peak_reserved_time_ns;
  f->seq = s->peak_reserved_seq;
  if (sites->len > 0)
    {
      const VsGroup *g = &g_array_index (sites, VsGroup, 0);

      f->site = g->site != NULL && g->site[0] != '\0' ? g_strdup (g->site) : NULL;
      f->stack_id = g->stack_id;
    }
  f->evidence = g_strdup_printf (
      "at the device's peak, %s of its %s was held outside every allocator (libraries' own "
      "cudaMalloc: cuBLAS/cuDNN workspaces, NCCL buffers; module globals)%s",
      out_text, all_text, names->str);
  g_string_free (names, TRUE);
  f->remedy = g_strdup ("count it when sizing batches and limits: the allocator cannot reuse "
                        "it (NCCL_BUFFSIZE shrinks NCCL's buffers, "
                        "CUBLAS_WORKSPACE_CONFIG cuBLAS's workspaces)");
  g_ptr_array_add (findings, f);
  return TRUE;
}
