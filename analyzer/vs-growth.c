/* SPDX-License-Identifier: MIT */
/* vs-growth.c — finding iterations (annotations, or the allocation
 * pattern) and judging whether memory grows from one to the next (see
 * vs-growth.h).
 */
#include "vs-growth.h"
#include "vs-blocks.h"
#include "vs-framework-pools.h"
#include "vs-library-ranges.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"
#include "vs-windowed.h"

#include <stdlib.h>
#include <string.h>

/* Iterations judged need at least this many. */
#define MIN_ITERATIONS 3
#define MIN_GROWTH_BYTES (64 * 1024)
#define STEPPED_MIN_ITERATIONS 8
#define STEPPED_MIN_RISES 4
#define STEPPED_MIN_BYTES (1024 * 1024)

void
vs_iterations_free (VsIterations *it)
{
  if (it == NULL)
    return;
  g_free (it->what);
  g_array_unref (it->iterations);
  g_free (it);
}

/* "step 12" -> "step #". */
static char *
range_family (const char *name)
{
  GString *s = g_string_new (NULL);

  for (const char *p = name; *p != '\0'; p++)
    {
      if (g_ascii_isdigit (*p))
        {
          while (g_ascii_isdigit (p[1]))
            p++;
          g_string_append_c (s, '#');
        }
      else
        g_string_append_c (s, *p);
    }
  return g_string_free (s, FALSE);
}

typedef struct
{
  char *family;
  gint64 depth;
  GArray *starts; /* gint64 ns since start */
} Family;

static void
family_free (gpointer data)
{
  Family *f = data;

  g_free (f->family);
  g_array_unref (f->starts);
  g_free (f);
}

/* Iteration starts (ns since start) from the repeating family of ranges
 * of the device's processes (those owning its PyTorch allocator, else any
 * of its allocators, else every process), or NULL when there is none.
 * Libraries' own ranges (NCCL's collectives, XLA's launches, CUB's
 * algorithms: vs_range_is_library()) are not iterations. */
static GArray *
starts_from_ranges (VsTrace *trace, gint64 device_id, char **what, GError **error)
{
  static const char *ranges_sql
      = "WITH owners AS (SELECT process_id FROM allocator WHERE device_id = ?1"
        "  AND (kind = 'pytorch' OR NOT EXISTS"
        "   (SELECT 1 FROM allocator WHERE device_id = ?1 AND kind = 'pytorch')))"
        " SELECT name, start_ns, depth, domain FROM nvtx_range"
        " WHERE ifnull(domain, '') != 'NCCL'"
        " AND (process_id IS NULL OR NOT EXISTS (SELECT 1 FROM owners)"
        "  OR process_id IN (SELECT process_id FROM owners))"
        " ORDER BY start_ns, id";
  g_autoptr (GHashTable) families
      = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, family_free);
  sqlite3_stmt *stmt = vs_trace_statement (trace, ranges_sql, error);
  Family *best = NULL;
  GHashTableIter iter;
  gpointer value;
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *name = (const char *)sqlite3_column_text (stmt, 0);
      /* A range with no name (a damaged or hand-made trace) is none of a
       * family: skipped. */
      g_autofree char *family = name != NULL ? range_family (name) : NULL;
      gint64 depth = sqlite3_column_int64 (stmt, 2);
      gint64 start = vs_trace_rel (trace, sqlite3_column_int64 (stmt, 1));
      g_autofree char *key = NULL;
      Family *f;

      if (family == NULL || vs_range_is_library ((const char *)sqlite3_column_text (stmt, 3), name))
        continue;
      key = g_strdup_printf ("%" G_GINT64_FORMAT "/%s", depth, family);
      f = g_hash_table_lookup (families, key);

      if (f == NULL)
        {
          f = g_new0 (Family, 1);
          f->family = g_steal_pointer (&family);
          f->depth = depth;
          f->starts = g_array_new (FALSE, FALSE, sizeof (gint64));
          g_hash_table_insert (families, g_steal_pointer (&key), f);
        }
      g_array_append_val (f->starts, start);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  g_hash_table_iter_init (&iter, families);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Family *f = value;

      if (f->starts->len < MIN_ITERATIONS)
        continue;
      if (best == NULL || f->depth < best->depth
          || (f->depth == best->depth && f->starts->len > best->starts->len)
          || (f->depth == best->depth && f->starts->len == best->starts->len
              && strcmp (f->family, best->family) < 0))
        best = f;
    }
  if (best == NULL)
    return NULL;
  *what = g_strdup_printf ("NVTX ranges '%s'", best->family);
  return g_array_ref (best->starts);
}

/* One allocation of the pattern window: its key (stack, size) and its
 * index among the window's allocations. */
typedef struct
{
  gint64 stack_id;
  gint64 bytes;
  gint64 index;
} Occurrence;

/* By key, then index: each key's occurrences together, in order. */
static int
occurrence_cmp (const void *a, const void *b)
{
  const Occurrence *x = a, *y = b;

  if (x->stack_id != y->stack_id)
    return x->stack_id < y->stack_id ? -1 : 1;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int
cmp_gint64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

  return x < y ? -1 : x > y;
}

/* Whether the n occurrences occ[] of one key (allocation indices in
 * order) recur at one distance: the most common gap after the first
 * covers at least 60 % of them, is at least 2, and no gap exceeds it by
 * more than half (an allocation made several times per iteration has
 * short gaps and one long one; periodic extra work such as an evaluation
 * every few steps lengthens some gaps a little). */
static gboolean
recurs_regularly (const Occurrence *occ, guint n)
{
  g_autofree gint64 *gaps = NULL;
  guint first = n >= 4 ? 1 : 0, m, best = 0, run = 1;
  gint64 mode = 0;

  if (n < MIN_ITERATIONS)
    return FALSE;
  m = n - 1 - first;
  gaps = g_new (gint64, m);
  for (guint i = 0; i < m; i++)
    gaps[i] = occ[first + i + 1].index - occ[first + i].index;
  qsort (gaps, m, sizeof *gaps, cmp_gint64);
  for (guint i = 1; i <= m; i++)
    {
      if (i < m && gaps[i] == gaps[i - 1])
        run++;
      else
        {
          if (run > best && gaps[i - 1] >= 2)
            {
              best = run;
              mode = gaps[i - 1];
            }
          run = 1;
        }
    }
  return best * 10 >= m * 6 && gaps[m - 1] * 2 <= mode * 3;
}

/* Whether the allocation recurring at occ[0..n-1] is, at least 80 % of
 * the time, freed before it recurs: a tensor of each iteration (a
 * repeated layer's activations, kept within one forward pass, are not).
 * seqs and frees: each allocation's alloc_seq and free_seq by index. */
static gboolean
freed_each_time (const Occurrence *occ, guint n, GArray *seqs, GArray *frees)
{
  guint freed = 0;

  for (guint i = 0; i + 1 < n; i++)
    {
      gint64 next = g_array_index (seqs, gint64, occ[i + 1].index);

      if (g_array_index (frees, gint64, occ[i].index) < next)
        freed++;
    }
  return freed * 10 >= (n - 1) * 8;
}

/* Iteration starts (replay steps) from the allocation pattern, or NULL.
 * The window's allocations are sorted by key rather than hashed: one
 * array, no allocation per distinct key (a trace of 10 M events has
 * tens of thousands of them in its window). */
static GArray *
seqs_from_pattern (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  static const char *allocs_sql
      = "SELECT alloc_seq, ifnull(stack_id, 0), bytes, free_seq FROM block"
        " WHERE device_id = ?1 AND level = ?3 AND alloc_seq > 0"
        " AND (?2 = 0 OR allocator_id = ?2) ORDER BY alloc_seq LIMIT ?4";
  g_autoptr (GArray) seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) frees = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) occurrences = g_array_new (FALSE, FALSE, sizeof (Occurrence));
  const Occurrence *occ, *best = NULL;
  guint best_n = 0;

  /* Allocator blocks; a trace that saw none (device level only) by its
   * device-level allocations. */
  for (int level = 2; level >= 1 && seqs->len == 0; level--)
    {
      sqlite3_stmt *stmt = vs_trace_statement (trace, allocs_sql, error);
      int rc;

      if (stmt == NULL)
        return NULL;
      sqlite3_bind_int64 (stmt, 1, device_id);
      sqlite3_bind_int64 (stmt, 2, allocator_id);
      sqlite3_bind_int (stmt, 3, level);
      sqlite3_bind_int (stmt, 4, VS_GROWTH_PATTERN_WINDOW);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          Occurrence o
              = { sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2), seqs->len };
          gint64 seq = sqlite3_column_int64 (stmt, 0);
          gint64 free_seq = sqlite3_column_type (stmt, 3) == SQLITE_NULL
                                ? G_MAXINT64
                                : sqlite3_column_int64 (stmt, 3);

          g_array_append_val (occurrences, o);
          g_array_append_val (seqs, seq);
          g_array_append_val (frees, free_seq);
        }
      if (!vs_trace_step_done (trace, stmt, rc, error))
        return NULL;
    }

  /* The key recurring regularly most often (ties: the one first seen). */
  if (occurrences->len > 1) /* an empty array's data is NULL */
    qsort (occurrences->data, occurrences->len, sizeof (Occurrence), occurrence_cmp);
  occ = (const Occurrence *)(gpointer)occurrences->data;
  for (guint i = 0, n; i < occurrences->len; i += n)
    {
      for (n = 1; i + n < occurrences->len && occ[i + n].stack_id == occ[i].stack_id
                  && occ[i + n].bytes == occ[i].bytes;
           n++)
        ;
      if (n < MIN_ITERATIONS || !recurs_regularly (occ + i, n)
          || !freed_each_time (occ + i, n, seqs, frees))
        continue;
      if (best == NULL || n > best_n || (n == best_n && occ[i].index < best->index))
        {
          best = occ + i;
          best_n = n;
        }
    }
  if (best == NULL)
    return NULL;
  {
    GArray *starts = g_array_sized_new (FALSE, FALSE, sizeof (gint64), best_n);

    for (guint i = 0; i < best_n; i++)
      {
        /* The state just before the recurring allocation. */
        gint64 seq = g_array_index (seqs, gint64, best[i].index) - 1;

        g_array_append_val (starts, seq);
      }
    return starts;
  }
}

/* A windowed trace's slices as its iterations (see vs-growth.h); takes
 * it. */
static VsIterations *
iterations_from_slices (VsTrace *trace, VsIterations *it, GArray *slices, GError **error)
{
  g_autoptr (VsIterations) owned = it;

  it->source = VS_ITERATIONS_SLICES;
  it->unit = "slice";
  {
    VsWindowedInfo info;
    if (!vs_windowed_info (trace, &info, error))
      return NULL;
    it->what = info.slice_iterations > 0
                   ? g_strdup_printf ("the windowed trace's slices of %" G_GINT64_FORMAT
                                      " iteration%s (lowest allocated in each)",
                                      info.slice_iterations, info.slice_iterations == 1 ? "" : "s")
                   : g_strdup_printf ("the windowed trace's slices of %.3f s of the run (lowest "
                                      "allocated in each)",
                                      info.slice_ns / 1e9);
  }
  for (guint i = 0; i < slices->len; i++)
    {
      const VsWindowedSlice *s = &g_array_index (slices, VsWindowedSlice, i);
      VsIteration v = { 0 };

      v.index = i;
      v.time_ns = s->start_ns;
      v.seq = vs_trace_seq_at_time (trace, it->device_id, it->allocator_id, s->start_ns, error);
      if (v.seq < 0)
        return NULL;
      v.allocated_bytes = s->min_allocated_bytes;
      v.growth_bytes
          = i == 0 ? VS_UNKNOWN
                   : v.allocated_bytes
                         - g_array_index (it->iterations, VsIteration, i - 1).allocated_bytes;
      g_array_append_val (it->iterations, v);
    }
  return g_steal_pointer (&owned);
}

VsIterations *
vs_iterations_find (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  g_autoptr (VsIterations) it = g_new0 (VsIterations, 1);
  g_autoptr (GArray) starts = NULL;
  g_autoptr (GArray) seqs = NULL;
  char *what = NULL;
  gboolean pool;

  g_return_val_if_fail (trace != NULL, NULL);
  it->device_id = device_id;
  it->allocator_id = allocator_id;
  it->unit = "iteration";
  it->iterations = g_array_new (FALSE, TRUE, sizeof (VsIteration));

  {
    g_autoptr (GArray) slices = vs_windowed_slices (trace, device_id, allocator_id, error);

    if (slices == NULL)
      return NULL;
    if (slices->len > 0)
      return iterations_from_slices (trace, g_steal_pointer (&it), slices, error);
  }
  starts = starts_from_ranges (trace, device_id, &what, error);
  if (starts == NULL && error != NULL && *error != NULL)
    return NULL;
  if (starts != NULL)
    {
      it->source = VS_ITERATIONS_RANGES;
      it->what = what;
      seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
      for (guint i = 0; i < starts->len; i++)
        {
          gint64 seq = vs_trace_seq_at_time (trace, device_id, allocator_id,
                                             g_array_index (starts, gint64, i), error);

          if (seq < 0)
            return NULL;
          g_array_append_val (seqs, seq);
        }
    }
  else
    {
      seqs = seqs_from_pattern (trace, device_id, allocator_id, error);
      if (seqs == NULL && error != NULL && *error != NULL)
        return NULL;
      if (seqs == NULL)
        return g_steal_pointer (&it);
      it->source = VS_ITERATIONS_PATTERN;
      it->what = g_strdup ("the repeating allocation pattern");
    }

  pool = vs_framework_pool_is (trace, allocator_id);
  for (guint i = 0; i < seqs->len; i++)
    {
      VsIteration v = { 0 };
      VsSeriesPoint p;

      v.index = i;
      v.seq = g_array_index (seqs, gint64, i);
      if (!vs_series_at_seq (trace, device_id, allocator_id, v.seq, &p, error))
        return NULL;
      v.time_ns = starts != NULL ? g_array_index (starts, gint64, i) : p.time_ns;
      v.allocated_bytes = p.seq == 0 ? 0 : p.allocated_bytes;
      v.growth_bytes
          = i == 0 ? VS_UNKNOWN
                   : v.allocated_bytes
                         - g_array_index (it->iterations, VsIteration, i - 1).allocated_bytes;
      /* A pool seen only from the device level: what it hands out is
       * unknown (its reserved memory is its timeline's). */
      if (pool)
        v.allocated_bytes = v.growth_bytes = VS_UNKNOWN;
      g_array_append_val (it->iterations, v);
    }
  return g_steal_pointer (&it);
}

/* Growth in steps over iterations first - 1 .. n - 1: the rise of the
 * lowest allocated memory from each iteration on (memory that never came
 * back), when it rose at least STEPPED_MIN_RISES times over at least half
 * of the iterations by STEPPED_MIN_BYTES in all; 0 otherwise.  The last
 * iterations (a tenth, STEPPED_MIN_ITERATIONS at least) count as one, by
 * their lowest: a rise must outlast them.  Memory that only wavers (work
 * queued ahead of the GPU, as JAX's dispatch does) has a lowest from
 * each iteration on that rises near the end by chance alone, as ever
 * fewer iterations are left to bring it down.  *rises: how many times it
 * rose. */
static gint64
stepped_growth (const VsIterations *it, guint first, gint64 *rises)
{
  guint n = it->iterations->len, first_rise = 0, last_rise = 0, tail;
  g_autofree gint64 *low = NULL;
  gint64 tail_low = G_MAXINT64;

  *rises = 0;
  if (n < first + STEPPED_MIN_ITERATIONS)
    return 0;
  tail = MAX (STEPPED_MIN_ITERATIONS, (n - first) / 10);
  low = g_new (gint64, n);
  for (guint i = n - tail; i < n; i++)
    tail_low = MIN (tail_low, g_array_index (it->iterations, VsIteration, i).allocated_bytes);
  for (guint i = n - tail; i < n; i++)
    low[i] = tail_low;
  for (guint i = n - tail; i-- > first - 1;)
    low[i] = MIN (low[i + 1], g_array_index (it->iterations, VsIteration, i).allocated_bytes);
  for (guint i = first; i < n; i++)
    if (low[i] > low[i - 1])
      {
        if ((*rises)++ == 0)
          first_rise = i;
        last_rise = i;
      }
  if (*rises < STEPPED_MIN_RISES || (last_rise - first_rise) * 2 < n - first
      || low[n - 1] - low[first - 1] < STEPPED_MIN_BYTES)
    return 0;
  return low[n - 1] - low[first - 1];
}

gboolean
vs_growth_judge_values (const VsIterations *it, VsGrowth *out)
{
  g_autofree gint64 *growths = NULL;
  guint n, first = 2, grew = 0;
  const VsIteration *a, *z;

  g_return_val_if_fail (it != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->device_id = it->device_id;
  out->allocator_id = it->allocator_id;
  out->first_seq = out->last_seq = VS_UNKNOWN;
  out->first_time_ns = VS_UNKNOWN;
  out->site_stack_id = VS_UNKNOWN;
  n = it->iterations->len;
  /* Allocated memory unknown (a pool seen only from the device level):
   * nothing to judge. */
  if (n < first + MIN_ITERATIONS
      || g_array_index (it->iterations, VsIteration, n - 1).allocated_bytes == VS_UNKNOWN)
    return FALSE;
  growths = g_new (gint64, n - first);
  for (guint i = first; i < n; i++)
    {
      const VsIteration *v = &g_array_index (it->iterations, VsIteration, i);

      growths[i - first] = v->growth_bytes;
      if (v->growth_bytes > 0)
        grew++;
    }
  out->iterations = n - first;
  out->growing = grew;
  qsort (growths, n - first, sizeof *growths, cmp_gint64);
  if (grew * 10 >= (n - first) * 8 && growths[(n - first) / 2] >= MIN_GROWTH_BYTES)
    out->bytes_per_iteration = growths[(n - first) / 2];
  else
    {
      gint64 rises, total = stepped_growth (it, first, &rises);

      if (total == 0)
        return FALSE;
      out->bytes_per_iteration = MAX (total / (n - first), 1);
      out->growing = rises;
      out->stepped = TRUE;
    }
  a = &g_array_index (it->iterations, VsIteration, first - 1);
  z = &g_array_index (it->iterations, VsIteration, n - 1);
  out->first_seq = a->seq;
  out->last_seq = z->seq;
  out->first_time_ns = a->time_ns;
  return TRUE;
}

gboolean
vs_growth_judge (VsTrace *trace, const VsIterations *it, VsGrowth *out, GError **error)
{
  const VsIteration *z;

  g_return_val_if_fail (trace != NULL && it != NULL && out != NULL, FALSE);
  if (!vs_growth_judge_values (it, out))
    return TRUE;
  z = &g_array_index (it->iterations, VsIteration, it->iterations->len - 1);

  /* The site: what was allocated after the first compared iteration and
   * is still live at the last. */
  {
    g_autoptr (GArray) live
        = vs_live_blocks (trace, it->device_id, it->allocator_id, z->seq, error);
    g_autoptr (GArray) kept = NULL;
    g_autoptr (GArray) sites = NULL;

    if (live == NULL)
      return FALSE;
    kept = g_array_new (FALSE, FALSE, sizeof (VsBlock));
    for (guint i = 0; i < live->len; i++)
      {
        const VsBlock *b = &g_array_index (live, VsBlock, i);

        if (b->alloc_seq != VS_UNKNOWN && b->alloc_seq > out->first_seq)
          g_array_append_val (kept, *b);
      }
    sites = vs_group_blocks (trace, kept, VS_GROUP_BY_SITE, error);
    if (sites == NULL)
      return FALSE;
    if (sites->len > 0)
      {
        const VsGroup *g = &g_array_index (sites, VsGroup, 0);

        out->site = g->site;
        out->site_stack_id = g->stack_id;
        out->site_bytes = g->bytes;
      }
  }
  return TRUE;
}
