/* SPDX-License-Identifier: MIT */
/* vs-blocks.c — the allocated blocks live at a replay step, leaks, and
 * their attribution to stacks and sites (vs-tree.c builds trees of them).
 *
 * Live blocks are found through the finalizer's interval bins over
 * [alloc_seq, free_seq) (block.span_bin, see schemas/README.md), so a point
 * query reads only candidate bins rather than every earlier block; the
 * plain indexed query is kept for positions outside the binned range.  A
 * compacted trace has no index: its block table answers "live after step
 * S" itself (block.live_seq).
 */
#include "vs-blocks.h"
#include "vs-blocks-private.h"
#include "vs-framework-pools.h"
#include "vs-trace-private.h"

#include <string.h>

static const char *live_bins_sql
    = "WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv WHERE l < 47)"
      " SELECT " VS_BLOCK_COLUMNS_SQL " FROM lv JOIN block b INDEXED BY block_bin"
      " ON b.device_id = ?1 AND b.span_bin = (lv.l << 48) | (?3 >> lv.l)"
      " WHERE b.level IN (1, 2) AND b.alloc_seq <= ?3"
      " AND (b.free_seq IS NULL OR b.free_seq > ?3)"
      " AND " VS_ALLOCATED_BLOCK_SQL " ORDER BY b.bytes DESC, b.id";

static const char *live_plain_sql
    = "SELECT " VS_BLOCK_COLUMNS_SQL " FROM block b"
      " WHERE b.device_id = ?1 AND b.level IN (1, 2) AND b.alloc_seq <= ?3"
      " AND (b.free_seq IS NULL OR b.free_seq > ?3)"
      " AND " VS_ALLOCATED_BLOCK_SQL " ORDER BY b.bytes DESC, b.id";

/* A compacted trace (schema 5): block is a virtual table whose hidden
 * column live_seq selects the blocks live after a step, pruning chunks by
 * their alloc_seq and free_seq ranges (vs-chunk-vtab.h). */
static const char *live_chunked_sql
    = "SELECT " VS_BLOCK_COLUMNS_SQL " FROM block b"
      " WHERE b.live_seq = ?3 AND b.device_id = ?1 AND b.level IN (1, 2)"
      " AND " VS_ALLOCATED_BLOCK_SQL " ORDER BY b.bytes DESC, b.id";

static const char *leaked_sql
    = "SELECT " VS_BLOCK_COLUMNS_SQL " FROM block b"
      " WHERE b.device_id IS NOT NULL AND (?1 = 0 OR b.device_id = ?1)"
      " AND b.free_seq IS NULL AND " VS_ALLOCATED_BLOCK_SQL " ORDER BY b.alloc_seq, b.id";

void
vs_block_read (VsTrace *trace, sqlite3_stmt *stmt, VsBlock *b)
{
  b->id = sqlite3_column_int64 (stmt, 0);
  b->level = sqlite3_column_int (stmt, 1);
  b->device_id = vs_column_int (stmt, 2);
  b->allocator_id = sqlite3_column_int64 (stmt, 3);
  b->process_id = vs_column_int (stmt, 4);
  b->kind = sqlite3_column_int (stmt, 5);
  b->address = sqlite3_column_int64 (stmt, 6);
  b->bytes = sqlite3_column_int64 (stmt, 7);
  b->block_bytes = vs_column_int (stmt, 8);
  b->alloc_seq = vs_column_int (stmt, 9);
  if (b->alloc_seq == 0)
    b->alloc_seq = VS_UNKNOWN; /* live since before the trace */
  b->free_seq = vs_column_int (stmt, 10);
  b->alloc_time_ns = vs_trace_rel (trace, vs_column_int (stmt, 11));
  b->free_time_ns = vs_trace_rel (trace, vs_column_int (stmt, 12));
  b->stack_id = sqlite3_column_int64 (stmt, 13);
  b->owner_id = vs_column_int (stmt, 14);
}

sqlite3_stmt *
vs_blocks_live_statement (VsTrace *trace, const char *sql, gint64 device_id, gint64 allocator_id,
                          gint64 seq, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, seq);
  return stmt;
}

static GArray *
run_block_query (VsTrace *trace, sqlite3_stmt *stmt, GError **error)
{
  g_autoptr (GArray) blocks = g_array_new (FALSE, TRUE, sizeof (VsBlock));
  gint64 total = 0;
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsBlock b;

      vs_block_read (trace, stmt, &b);
      /* Every sum callers make (groups, tree nodes, totals) adds up some of
       * these: with the total in range, none of them can overflow. */
      if (b.bytes < 0 || (b.block_bytes != VS_UNKNOWN && b.block_bytes < 0)
          || __builtin_add_overflow (total, b.bytes, &total)
          || (b.block_bytes > 0 && __builtin_add_overflow (total, b.block_bytes, &total)))
        {
          vs_trace_corrupt_error (trace, stmt, error,
                                  "its blocks have negative sizes or sizes that add"
                                  " up to more than 2^63 bytes");
          return NULL;
        }
      g_array_append_val (blocks, b);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&blocks);
}

GArray *
vs_live_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq, GError **error)
{
  sqlite3_stmt *stmt;
  GArray *blocks;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_blocks_live_statement (trace,
                                   vs_trace_is_compacted (trace)        ? live_chunked_sql
                                   : vs_trace_can_use_bins (trace, seq) ? live_bins_sql
                                                                        : live_plain_sql,
                                   device_id, allocator_id, seq, error);
  if (stmt == NULL)
    return NULL;
  blocks = run_block_query (trace, stmt, error);
  /* A pool's segments seen from the device level are reserved only. */
  if (blocks != NULL && allocator_id == 0)
    vs_framework_pools_filter_blocks (trace, blocks);
  return blocks;
}

GArray *
vs_leaked_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  sqlite3_stmt *stmt;
  GArray *blocks;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, leaked_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  blocks = run_block_query (trace, stmt, error);
  /* What a pool still holds at the end is never a leak. */
  if (blocks != NULL)
    vs_framework_pools_filter_blocks (trace, blocks);
  return blocks;
}

/* --------------------------------------------------------------- groups */

static void
group_add_block (VsGroup *g, const VsBlock *b)
{
  g->bytes += b->bytes;
  g->count++;
  if (b->alloc_time_ns == VS_UNKNOWN)
    g->first_alloc_time_ns = VS_UNKNOWN;
  else
    {
      if (g->count == 1
          || (g->first_alloc_time_ns != VS_UNKNOWN && b->alloc_time_ns < g->first_alloc_time_ns))
        g->first_alloc_time_ns = b->alloc_time_ns;
      if (g->last_alloc_time_ns == VS_UNKNOWN || b->alloc_time_ns > g->last_alloc_time_ns)
        g->last_alloc_time_ns = b->alloc_time_ns;
    }
}

static gint64
device_rank (VsTrace *trace, gint64 device_id)
{
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, device_id);

  return d != NULL ? d->idx : device_id;
}

static gint
group_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const VsGroup *a = pa, *b = pb;
  VsTrace *trace = data;
  gint64 da = device_rank (trace, a->device_id), db = device_rank (trace, b->device_id);
  int c;

  if (da != db)
    return da < db ? -1 : 1;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  if ((c = strcmp (a->site, b->site)) != 0)
    return c;
  if ((c = vs_stack_text_cmp (a->stack, b->stack)) != 0)
    return c;
  return a->stack_id < b->stack_id ? -1 : a->stack_id > b->stack_id;
}

GArray *
vs_group_blocks (VsTrace *trace, GArray *blocks, VsGroupBy by, GError **error)
{
  g_autoptr (GHashTable) index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GArray) groups = g_array_new (FALSE, TRUE, sizeof (VsGroup));
  g_autoptr (GArray) by_site = NULL;

  g_return_val_if_fail (trace != NULL && blocks != NULL, NULL);

  /* By stack first; sites are then merged from the stack groups so each
   * site can name its largest stack. */
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      g_autofree char *key
          = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, b->device_id, b->stack_id);
      gpointer pos;

      if (!g_hash_table_lookup_extended (index, key, NULL, &pos))
        {
          const VsStackInfo *s = vs_stack_get (trace, b->stack_id, error);
          VsGroup g = { 0 };

          if (s == NULL)
            return NULL;
          g.device_id = b->device_id;
          g.stack_id = s->stack_id;
          g.site = s->site;
          g.top_frame = s->top_frame;
          g.stack = s;
          g.first_alloc_time_ns = VS_UNKNOWN;
          g.last_alloc_time_ns = VS_UNKNOWN;
          pos = GUINT_TO_POINTER (groups->len);
          g_array_append_val (groups, g);
          g_hash_table_insert (index, g_steal_pointer (&key), pos);
        }
      group_add_block (&g_array_index (groups, VsGroup, GPOINTER_TO_UINT (pos)), b);
    }
  g_array_sort_with_data (groups, group_cmp, trace);
  if (by == VS_GROUP_BY_STACK)
    return g_steal_pointer (&groups);

  g_hash_table_remove_all (index);
  by_site = g_array_new (FALSE, TRUE, sizeof (VsGroup));
  /* groups is sorted largest first, so the first stack seen for a site is
   * its largest. */
  for (guint i = 0; i < groups->len; i++)
    {
      const VsGroup *g = &g_array_index (groups, VsGroup, i);
      g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT "/%s", g->device_id, g->site);
      gpointer pos;
      VsGroup *s;

      if (!g_hash_table_lookup_extended (index, key, NULL, &pos))
        {
          pos = GUINT_TO_POINTER (by_site->len);
          g_array_append_val (by_site, *g);
          g_hash_table_insert (index, g_steal_pointer (&key), pos);
          continue;
        }
      s = &g_array_index (by_site, VsGroup, GPOINTER_TO_UINT (pos));
      s->bytes += g->bytes;
      s->count += g->count;
      if (s->first_alloc_time_ns != VS_UNKNOWN
          && (g->first_alloc_time_ns == VS_UNKNOWN
              || g->first_alloc_time_ns < s->first_alloc_time_ns))
        s->first_alloc_time_ns = g->first_alloc_time_ns;
      if (g->last_alloc_time_ns != VS_UNKNOWN
          && (s->last_alloc_time_ns == VS_UNKNOWN || g->last_alloc_time_ns > s->last_alloc_time_ns))
        s->last_alloc_time_ns = g->last_alloc_time_ns;
    }
  g_array_sort_with_data (by_site, group_cmp, trace);
  return g_steal_pointer (&by_site);
}
