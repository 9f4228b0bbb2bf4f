/* SPDX-License-Identifier: MIT */
/* vs-pool-growth.c — framework pools whose reserved memory grows from one
 * iteration to the next (see vs-pool-growth.h).
 *
 * Per pool of the device: its reserved (and, where known, allocated)
 * memory at the start of every iteration — from its segments replayed
 * (vs-framework-pools.c) for a pool seen from the device level, from its
 * series for one `record` kept the allocator level of — judged by
 * vs_growth_judge_values(); then the segments it took meanwhile, by
 * stack, for the site.
 */
#include "vs-pool-growth.h"
#include "vs-framework-pools.h"
#include "vs-stack.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

#include <string.h>

/* The allocator kinds that are a framework's pool. */
static gboolean
is_pool_kind (const char *kind)
{
  static const char *const kinds[] = { "xla", "cupy", "rmm", "tensorflow" };

  for (guint i = 0; kind != NULL && i < G_N_ELEMENTS (kinds); i++)
    if (strcmp (kind, kinds[i]) == 0)
      return TRUE;
  return FALSE;
}

/* The pool's reserved and allocated memory at the start of each
 * iteration of it, as two VsIterations of the same iterations (the
 * allocated one with VS_UNKNOWN bytes where the trace does not know
 * them).  FALSE with error set when the trace cannot be read; *reserved
 * NULL when the pool's reserved memory over time is unknown (a pool the
 * hook described but whose segments the trace does not show). */
static gboolean
pool_series (VsTrace *trace, const VsIterations *it, gint64 pool, VsIterations **reserved,
             VsIterations **allocated, GError **error)
{
  gboolean below = vs_framework_pool_is (trace, pool);
  g_autoptr (VsIterations) r = g_new0 (VsIterations, 1);
  g_autoptr (VsIterations) a = g_new0 (VsIterations, 1);

  *reserved = *allocated = NULL;
  r->device_id = a->device_id = it->device_id;
  r->allocator_id = a->allocator_id = pool;
  r->source = a->source = it->source;
  r->unit = a->unit = it->unit;
  r->iterations = g_array_sized_new (FALSE, TRUE, sizeof (VsIteration), it->iterations->len);
  a->iterations = g_array_sized_new (FALSE, TRUE, sizeof (VsIteration), it->iterations->len);
  for (guint i = 0; i < it->iterations->len; i++)
    {
      VsIteration v = g_array_index (it->iterations, VsIteration, i), w = v;

      if (below)
        {
          v.allocated_bytes = vs_framework_pool_reserved_at (trace, pool, v.seq);
          if (v.allocated_bytes == VS_UNKNOWN)
            return TRUE;
          w.allocated_bytes = VS_UNKNOWN;
        }
      else
        {
          VsSeriesPoint p;

          if (!vs_series_at_seq (trace, it->device_id, pool, v.seq, &p, error))
            return FALSE;
          /* Before the pool's first change it held nothing. */
          v.allocated_bytes = p.seq == 0 ? 0 : p.reserved_bytes;
          w.allocated_bytes = p.seq == 0 ? 0 : p.allocated_bytes;
        }
      v.growth_bytes
          = i == 0 ? VS_UNKNOWN
                   : v.allocated_bytes
                         - g_array_index (r->iterations, VsIteration, i - 1).allocated_bytes;
      w.growth_bytes
          = i == 0 || w.allocated_bytes == VS_UNKNOWN
                ? VS_UNKNOWN
                : w.allocated_bytes
                      - g_array_index (a->iterations, VsIteration, i - 1).allocated_bytes;
      g_array_append_val (r->iterations, v);
      g_array_append_val (a->iterations, w);
    }
  *reserved = g_steal_pointer (&r);
  *allocated = g_steal_pointer (&a);
  return TRUE;
}

/* The segments pool took after step first_seq up to step last_seq: their
 * count, and the stack that took the most bytes as g's site. */
static gboolean
segments_taken (VsTrace *trace, VsPoolGrowth *pg, GError **error)
{
  /* Device-level allocations of no allocator (the segments of a pool
   * seen from below, told apart by their stacks) and the segments of the
   * allocator level, by stack. */
  static const char *segments_sql
      = "SELECT ifnull(stack_id, 0), level, count(*), sum(bytes) FROM block"
        " WHERE device_id = ?1 AND alloc_seq > ?2 AND alloc_seq <= ?3"
        " AND (" VS_FRAMEWORK_POOL_SEGMENT_SQL " OR (level = 3 AND allocator_id = ?4))"
        " GROUP BY 1, 2 ORDER BY 4 DESC, 1";
  VsGrowth *g = &pg->growth;
  sqlite3_stmt *stmt = vs_trace_statement (trace, segments_sql, error);
  gint64 best = 0, best_bytes = -1;
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, g->device_id);
  sqlite3_bind_int64 (stmt, 2, g->first_seq);
  sqlite3_bind_int64 (stmt, 3, g->last_seq);
  sqlite3_bind_int64 (stmt, 4, pg->allocator_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 stack_id = sqlite3_column_int64 (stmt, 0);
      gint64 bytes = sqlite3_column_int64 (stmt, 3);

      if (sqlite3_column_int (stmt, 1) == 1
          && vs_framework_pool_of_stack (trace, g->device_id, stack_id) != pg->allocator_id)
        continue;
      pg->segment_count += sqlite3_column_int64 (stmt, 2);
      if (bytes > best_bytes)
        {
          best = stack_id;
          best_bytes = bytes;
        }
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  if (best > 0)
    {
      const VsStackInfo *s = vs_stack_get (trace, best, error);

      if (s == NULL)
        return FALSE;
      g->site = s->site;
      g->site_stack_id = best;
      g->site_bytes = best_bytes;
    }
  return TRUE;
}

/* Judges pool a on iterations it; appends to out when it grows. */
static gboolean
judge_pool (VsTrace *trace, const VsIterations *it, const VsAllocatorInfo *a, GArray *out,
            GError **error)
{
  g_autoptr (VsIterations) reserved = NULL;
  g_autoptr (VsIterations) allocated = NULL;
  VsPoolGrowth pg = { 0 };
  VsGrowth held;
  const VsIteration *first, *last;

  if (!pool_series (trace, it, a->id, &reserved, &allocated, error))
    return FALSE;
  if (reserved == NULL || !vs_growth_judge_values (reserved, &pg.growth))
    return TRUE;
  /* What the pool hands out grows too: the program keeps it. */
  if (vs_growth_judge_values (allocated, &held))
    return TRUE;
  pg.allocator_id = a->id;
  pg.framework = a->kind;
  pg.growth.site_stack_id = VS_UNKNOWN;
  first = &g_array_index (reserved->iterations, VsIteration, 1);
  last = &g_array_index (reserved->iterations, VsIteration, reserved->iterations->len - 1);
  pg.first_reserved_bytes = first->allocated_bytes;
  pg.last_reserved_bytes = last->allocated_bytes;
  pg.first_allocated_bytes = g_array_index (allocated->iterations, VsIteration, 1).allocated_bytes;
  pg.last_allocated_bytes
      = g_array_index (allocated->iterations, VsIteration, allocated->iterations->len - 1)
            .allocated_bytes;
  pg.allocated_known = pg.last_allocated_bytes != VS_UNKNOWN;
  if (!segments_taken (trace, &pg, error))
    return FALSE;
  g_array_append_val (out, pg);
  return TRUE;
}

GArray *
vs_pool_growth_find (VsTrace *trace, const VsIterations *it, GError **error)
{
  const GPtrArray *allocators;
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (VsPoolGrowth));

  g_return_val_if_fail (trace != NULL && it != NULL, NULL);
  allocators = vs_trace_get_allocators (trace);
  for (guint i = 0; it->iterations->len > 0 && i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == it->device_id && is_pool_kind (a->kind)
          && !judge_pool (trace, it, a, out, error))
        return NULL;
    }
  return g_steal_pointer (&out);
}
