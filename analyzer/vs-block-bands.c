/* SPDX-License-Identifier: MIT */
/* vs-block-bands.c — allocations over time as stacked bands, with a level
 * of detail that keeps one query's cost bounded by the blocks that can be
 * seen at its zoom (see vs-block-bands.h). */
#include "vs-block-bands.h"
#include "vs-blocks-private.h"
#include "vs-framework-pools.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

/* Ranges of at most this many replay steps draw every block. */
#define EXACT_STEPS 65536

/* The blocks overlapping steps [?3, ?4] that span more than ?6 steps
 * (?5: the step a block still live at the end closes at), from the
 * interval bins of level ?7 up: a block at a lower level spans at most
 * 2^?7 steps, so none of them qualifies. */
static const char *bins_sql
    = "WITH RECURSIVE lv(l) AS (SELECT ?7 UNION ALL SELECT l + 1 FROM lv WHERE l < 47)"
      " SELECT " VS_BLOCK_COLUMNS_SQL " FROM lv JOIN block b INDEXED BY block_bin"
      " ON b.device_id = ?1 AND b.span_bin BETWEEN (lv.l << 48) | (?3 >> lv.l)"
      " AND (lv.l << 48) | (?4 >> lv.l)"
      " WHERE b.level IN (1, 2) AND b.alloc_seq <= ?4"
      " AND (b.free_seq IS NULL OR b.free_seq > ?3)"
      " AND ifnull(b.free_seq, ?5) - b.alloc_seq > ?6 AND " VS_ALLOCATED_BLOCK_SQL;

/* The same without bins: a compacted trace prunes its chunks by
 * alloc_seq; a plain one past the binned range scans. */
static const char *plain_sql
    = "SELECT " VS_BLOCK_COLUMNS_SQL " FROM block b"
      " WHERE b.device_id = ?1 AND b.level IN (1, 2) AND b.alloc_seq <= ?4"
      " AND (b.free_seq IS NULL OR b.free_seq > ?3)"
      " AND ifnull(b.free_seq, ?5) - b.alloc_seq > ?6 AND " VS_ALLOCATED_BLOCK_SQL;

/* Largest first, then the oldest. */
static int
by_bytes_desc (gconstpointer pa, gconstpointer pb)
{
  const VsBlock *a = pa, *b = pb;

  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* Stacking order: allocation order (blocks from before the trace first). */
static int
by_allocation (gconstpointer pa, gconstpointer pb)
{
  const VsBand *a = pa, *b = pb;
  gint64 sa = a->block.alloc_seq == VS_UNKNOWN ? 0 : a->block.alloc_seq;
  gint64 sb = b->block.alloc_seq == VS_UNKNOWN ? 0 : b->block.alloc_seq;

  if (sa != sb)
    return sa < sb ? -1 : 1;
  return a->block.id < b->block.id ? -1 : a->block.id > b->block.id;
}

/* The blocks overlapping steps [s0, s1] and spanning more than
 * min_lifetime steps, as a GArray of VsBlock, or NULL with error. */
static GArray *
read_candidates (VsTrace *trace, gint64 device_id, gint64 s0, gint64 s1, gint64 min_lifetime,
                 int min_level, GError **error)
{
  gboolean bins = !vs_trace_is_compacted (trace) && vs_trace_can_use_bins (trace, s1);
  sqlite3_stmt *stmt = vs_trace_statement (trace, bins ? bins_sql : plain_sql, error);
  g_autoptr (GArray) blocks = g_array_new (FALSE, TRUE, sizeof (VsBlock));
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, 0);
  sqlite3_bind_int64 (stmt, 3, s0);
  sqlite3_bind_int64 (stmt, 4, s1);
  sqlite3_bind_int64 (stmt, 5, trace->last_seq + 1);
  sqlite3_bind_int64 (stmt, 6, min_lifetime);
  sqlite3_bind_int (stmt, 7, min_level);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsBlock b;

      vs_block_read (trace, stmt, &b);
      if (b.bytes < 0)
        {
          vs_trace_corrupt_error (trace, stmt, error, "a block has a negative size");
          return NULL;
        }
      g_array_append_val (blocks, b);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  /* A pool's segments seen from the device level are reserved only. */
  vs_framework_pools_filter_blocks (trace, blocks);
  return g_steal_pointer (&blocks);
}

/* The time at the centre of column c. */
static gint64
column_centre (const VsBlockBands *r, guint c)
{
  gint64 span = r->to_ns - r->from_ns;

  return r->from_ns + (gint64)(((double)c + 0.5) * (double)span / r->n_columns);
}

/* Whether block b is live at time t. */
static gboolean
live_at (const VsBlock *b, gint64 t)
{
  return (b->alloc_time_ns == VS_UNKNOWN || b->alloc_time_ns <= t)
         && (b->free_time_ns == VS_UNKNOWN || b->free_time_ns > t);
}

/* Sets each band's run of columns and, column by column, its bottom: the
 * bands live at the column's centre stacked in allocation order. */
static void
lay_out (VsBlockBands *r)
{
  gint64 *stack = g_new0 (gint64, r->n_columns);
  guint n = 0;

  for (guint i = 0; i < r->bands->len; i++)
    {
      VsBand *band = &g_array_index (r->bands, VsBand, i);
      guint c = 0;

      while (c < r->n_columns && !live_at (&band->block, column_centre (r, c)))
        c++;
      band->first_column = c;
      band->offset = n;
      while (c < r->n_columns && live_at (&band->block, column_centre (r, c)))
        {
          g_array_append_val (r->bottoms, stack[c]);
          stack[c] += band->block.bytes;
          n++;
          c++;
        }
      band->n_columns = n - band->offset;
    }
  for (guint c = 0; c < r->n_columns; c++)
    g_array_index (r->banded, gint64, c) = stack[c];
  g_free (stack);
}

/* The shortest lifetime, in replay steps, of a block drawn as a band:
 * none while the range spans few steps (reading every block is cheap),
 * else about four columns' worth of steps, a power of two 2^k.  *level is
 * the lowest interval bin that can hold a block living longer, k + 1: a
 * block spanning more than 2^k steps fits in no aligned run of 2^k.  The
 * bins from there up hold about N·L/2^k blocks of the range (N blocks of
 * mean lifetime L), so a query reads about the same number of rows at
 * every zoom. */
static gint64
shortest_lifetime (gint64 s0, gint64 s1, guint n_columns, int *level)
{
  gint64 per_column = (s1 - s0) / n_columns;
  int k = 0;

  *level = 0;
  if (s1 - s0 <= EXACT_STEPS)
    return 0;
  while (k < 46 && (G_GINT64_CONSTANT (2) << k) <= 4 * per_column)
    k++;
  *level = k + 1;
  return G_GINT64_CONSTANT (1) << k;
}

/* See vs-block-bands.h. */
VsBlockBands *
vs_block_bands_query (VsTrace *trace, gint64 device_id, gint64 from_ns, gint64 to_ns,
                      guint n_columns, guint max_bands, GError **error)
{
  g_autoptr (VsBlockBands) r = NULL;
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (GArray) buckets = NULL;
  gint64 s0, s1;
  int level;

  g_return_val_if_fail (trace != NULL, NULL);
  g_return_val_if_fail (from_ns < to_ns, NULL);
  g_return_val_if_fail (n_columns >= 1 && n_columns <= 100000, NULL);
  g_return_val_if_fail (max_bands >= 1, NULL);

  s0 = vs_trace_seq_at_time (trace, device_id, 0, from_ns, error);
  if (s0 < 0)
    return NULL;
  s1 = vs_trace_seq_at_time (trace, device_id, 0, to_ns, error);
  if (s1 < 0)
    return NULL;
  r = g_new0 (VsBlockBands, 1);
  r->device_id = device_id;
  r->from_ns = from_ns;
  r->to_ns = to_ns;
  r->n_columns = n_columns;
  r->bands = g_array_new (FALSE, TRUE, sizeof (VsBand));
  r->bottoms = g_array_new (FALSE, TRUE, sizeof (gint64));
  r->banded = g_array_new (FALSE, TRUE, sizeof (gint64));
  g_array_set_size (r->banded, n_columns);
  r->total = g_array_new (FALSE, TRUE, sizeof (gint64));
  g_array_set_size (r->total, n_columns);
  r->min_lifetime = shortest_lifetime (s0, s1, n_columns, &level);

  blocks = read_candidates (trace, device_id, s0, s1, r->min_lifetime, level, error);
  if (blocks == NULL)
    return NULL;
  r->candidates = blocks->len;
  g_array_sort (blocks, by_bytes_desc);
  for (guint i = 0; i < blocks->len && r->bands->len < max_bands; i++)
    {
      VsBand band = { .block = g_array_index (blocks, VsBlock, i) };

      band.stack = vs_stack_get (trace, band.block.stack_id, error);
      if (band.stack == NULL)
        return NULL;
      g_array_append_val (r->bands, band);
    }
  g_array_sort (r->bands, by_allocation);
  lay_out (r);

  buckets = vs_timeline_query (trace, device_id, 0, from_ns, to_ns, n_columns, error);
  if (buckets == NULL)
    return NULL;
  for (guint c = 0; c < n_columns; c++)
    {
      const VsTimelineBucket *bk = &g_array_index (buckets, VsTimelineBucket, c);
      gint64 t = bk->known ? bk->max_allocated : 0;

      /* The bands live at the centre are allocated then: never below them. */
      t = MAX (t, g_array_index (r->banded, gint64, c));
      g_array_index (r->total, gint64, c) = t;
      r->max_total = MAX (r->max_total, t);
    }
  return g_steal_pointer (&r);
}

/* See vs-block-bands.h. */
void
vs_block_bands_free (VsBlockBands *bands)
{
  if (bands == NULL)
    return;
  g_clear_pointer (&bands->bands, g_array_unref);
  g_clear_pointer (&bands->bottoms, g_array_unref);
  g_clear_pointer (&bands->banded, g_array_unref);
  g_clear_pointer (&bands->total, g_array_unref);
  g_free (bands);
}

/* See vs-block-bands.h. */
gint64
vs_block_bands_other (const VsBlockBands *bands, guint column)
{
  g_return_val_if_fail (bands != NULL && column < bands->n_columns, 0);
  return MAX (0, g_array_index (bands->total, gint64, column)
                     - g_array_index (bands->banded, gint64, column));
}

/* See vs-block-bands.h. */
int
vs_block_bands_find (const VsBlockBands *bands, guint column, gint64 bytes)
{
  g_return_val_if_fail (bands != NULL, -1);
  if (column >= bands->n_columns || bytes < 0)
    return -1;
  for (guint i = 0; i < bands->bands->len; i++)
    {
      const VsBand *b = &g_array_index (bands->bands, VsBand, i);
      gint64 bottom;

      if (column < b->first_column || column >= b->first_column + b->n_columns)
        continue;
      bottom = g_array_index (bands->bottoms, gint64, b->offset + column - b->first_column);
      if (bytes >= bottom && bytes < bottom + b->block.bytes)
        return (int)i;
    }
  return -1;
}
