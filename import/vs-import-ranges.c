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

/* The home slot of addr: the high bits of a multiplicative hash, as block
 * addresses differ mostly in their middle bits. */
static inline gsize
block_home (const BlockMap *m, gint64 addr)
{
  guint64 h = (guint64)addr * 0x9e3779b97f4a7c15u;
  return (gsize)(h ^ (h >> 32)) & m->mask;
}

void
vs_import_blocks_clear (BlockMap *m)
{
  g_free (m->slots);
  memset (m, 0, sizeof *m);
}

LiveBlock *
vs_import_blocks_get (const BlockMap *m, gint64 addr)
{
  if (m->slots == NULL)
    return NULL;
  for (gsize i = block_home (m, addr);; i = (i + 1) & m->mask)
    {
      BlockSlot *s = &m->slots[i];
      if (!s->used)
        return NULL;
      if (s->addr == addr)
        return &s->b;
    }
}

LiveBlock *
vs_import_blocks_put (BlockMap *m, gint64 addr, gboolean *added)
{
  if (m->slots == NULL || (m->used + 1) * 2 > m->mask + 1)
    {
      BlockMap old = *m;
      gsize cap = old.slots ? (old.mask + 1) * 2 : 1024;
      m->slots = g_new0 (BlockSlot, cap);
      m->mask = cap - 1;
      for (gsize i = 0; old.slots && i <= old.mask; i++)
        if (old.slots[i].used)
          {
            gsize j = block_home (m, old.slots[i].addr);
            while (m->slots[j].used)
              j = (j + 1) & m->mask;
            m->slots[j] = old.slots[i];
          }
      g_free (old.slots);
    }
  gsize i = block_home (m, addr);
  for (; m->slots[i].used; i = (i + 1) & m->mask)
    if (m->slots[i].addr == addr)
      {
        *added = FALSE;
        return &m->slots[i].b;
      }
  m->slots[i].used = TRUE;
  m->slots[i].addr = addr;
  m->used++;
  *added = TRUE;
  return &m->slots[i].b;
}

void
vs_import_blocks_remove (BlockMap *m, gint64 addr)
{
  if (m->slots == NULL)
    return;
  gsize i = block_home (m, addr);
  for (;; i = (i + 1) & m->mask)
    {
      if (!m->slots[i].used)
        return;
      if (m->slots[i].addr == addr)
        break;
    }
  /* Backward-shift deletion: move up every later slot of the run that
   * may sit in the hole, so that lookups need no tombstones. */
  for (gsize j = (i + 1) & m->mask; m->slots[j].used; j = (j + 1) & m->mask)
    {
      gsize home = block_home (m, m->slots[j].addr);
      /* j's home lies cyclically in (i, j]: it stays */
      if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
        continue;
      m->slots[i] = m->slots[j];
      i = j;
    }
  m->slots[i].used = FALSE;
  m->used--;
}
