/* SPDX-License-Identifier: MIT */
/* vs-import-ranges.c — the address bookkeeping of the snapshot import:
 * sets of disjoint address ranges (the reserved memory of a device) and
 * maps of blocks by address (its live blocks), kept while its final
 * segments are read (vs-import-snapshot.c) and its history is replayed
 * (vs-import-replay.c).
 *
 * A set of ranges is a GTree of [start, end) keyed by start; a snapshot
 * holds at most a few thousand segments, so each operation is a few tree
 * steps.  A block map is an open-addressing table probed inline: it is
 * read for every alloc and free of the history, millions of times.
 */
#include "vs-import-private.h"

#include <string.h>

/* GTree order of addresses stored as pointers. */
static gint
cmp_addr (gconstpointer a, gconstpointer b, gpointer unused)
{
  gint64 x = (gint64)GPOINTER_TO_SIZE (a), y = (gint64)GPOINTER_TO_SIZE (b);
  return x < y ? -1 : x > y;
}

GTree *
vs_import_ranges_new (void)
{
  return g_tree_new_full (cmp_addr, NULL, NULL, NULL);
}

/* The node of the range with the greatest start <= addr, or NULL. */
static GTreeNode *
ranges_floor (GTree *t, gint64 addr)
{
  GTreeNode *n = g_tree_upper_bound (t, KEY (addr));
  return n ? g_tree_node_previous (n) : g_tree_node_last (t);
}

/* Removes [a, a+n) from t; returns the number of bytes that were in t. */
gint64
vs_import_ranges_sub (GTree *t, gint64 a, gint64 n)
{
  gint64 b = a + n, removed = 0;
  gint64 cut[16][2];
  GTreeNode *node = ranges_floor (t, a);
  if (node == NULL)
    node = g_tree_node_first (t);
  while (node)
    {
      int k = 0;
      /* Collect a batch of overlapping ranges, then edit the tree. */
      for (; node && k < 16; node = g_tree_node_next (node))
        {
          gint64 s = VAL (g_tree_node_key (node)), e = VAL (g_tree_node_value (node));
          if (s >= b)
            {
              node = NULL;
              break;
            }
          if (e <= a)
            continue;
          cut[k][0] = s;
          cut[k][1] = e;
          k++;
        }
      for (int i = 0; i < k; i++)
        {
          gint64 s = cut[i][0], e = cut[i][1];
          g_tree_remove (t, KEY (s));
          removed += MIN (e, b) - MAX (s, a);
          if (s < a)
            g_tree_insert (t, KEY (s), KEY (a));
          if (e > b)
            g_tree_insert (t, KEY (b), KEY (e));
        }
      if (k < 16)
        break;
      node = ranges_floor (t, a);
      if (node == NULL)
        node = g_tree_node_first (t);
    }
  return removed;
}

/* Adds [a, a+n) to t; returns the bytes of it that were already there. */
gint64
vs_import_ranges_add (GTree *t, gint64 a, gint64 n)
{
  gint64 had = vs_import_ranges_sub (t, a, n);
  g_tree_insert (t, KEY (a), KEY (a + n));
  return had;
}

/* The start of the range holding addr, or VS_UNKNOWN. */
gint64
vs_import_ranges_find (GTree *t, gint64 addr)
{
  GTreeNode *n = ranges_floor (t, addr);
  if (n && VAL (g_tree_node_value (n)) > addr)
    return VAL (g_tree_node_key (n));
  return VS_UNKNOWN;
}

/* ------------------------------------------------------------- blocks -- */

void
vs_import_blocks_clear (BlockMap *m)
{
  block_map_clear (m);
}

LiveBlock *
vs_import_blocks_get (const BlockMap *m, gint64 addr)
{
  BlockSlot *s = block_map_find (m, addr);
  return s != NULL ? &s->b : NULL;
}

LiveBlock *
vs_import_blocks_put (BlockMap *m, gint64 addr, gboolean *added)
{
  bool fresh = false;
  BlockSlot *s = block_map_insert (m, addr, &fresh);
  if (s == NULL)
    g_error ("out of memory");
  *added = fresh;
  return &s->b;
}

void
vs_import_blocks_remove (BlockMap *m, gint64 addr)
{
  BlockSlot *s = block_map_find (m, addr);
  if (s != NULL)
    block_map_remove (m, s);
}
