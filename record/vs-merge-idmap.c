/* SPDX-License-Identifier: MIT */
/* vs-merge-idmap.c — the merge's id maps: a dense array for the ids the
 * collector hands out, a hash table for ids far past them (see
 * vs-merge-idmap.h).
 */
#include "vs-merge-idmap.h"

#include <stdlib.h>
#include <string.h>

#include "vs-trace-writer.h"

/* Whether the array may grow to hold old: its new length (the power of
 * two above old) stays within 4 × (ids mapped) + 2 × the slack. */
static bool
dense_fits (const VsIdMap *m, int64_t old)
{
  int64_t mapped = m->count + (int64_t)vs_idmap_sparse_count (&m->sparse);
  return old <= VS_IDMAP_DENSE_SLACK || old <= 2 * mapped + VS_IDMAP_DENSE_SLACK;
}

static int
dense_grow (VsIdMap *m, int64_t old)
{
  int64_t cap = m->cap ? m->cap : 64;
  /* old <= 2 × mapped + slack, far below 2^62: doubling cannot overflow */
  while (cap <= old)
    cap *= 2;
  int64_t *ids = realloc (m->ids, (size_t)cap * sizeof *ids);
  if (ids == NULL)
    return -1;
  memset (ids + m->cap, 0, (size_t)(cap - m->cap) * sizeof *ids);
  m->ids = ids;
  m->cap = cap;
  return 0;
}

int
vs_merge_idmap_set (VsIdMap *m, int64_t old, int64_t new_id)
{
  if (old <= 0)
    return 0;
  if (old >= m->cap && dense_fits (m, old) && dense_grow (m, old) != 0)
    return -1;
  if (old < m->cap)
    {
      m->count += m->ids[old] == 0;
      m->ids[old] = new_id;
      /* an entry of the sparse part for the same id, set before the
       * array reached it, is shadowed: get() reads the array first */
      return 0;
    }
  VsIdMapEntry *e = vs_idmap_sparse_insert (&m->sparse, old, NULL);
  if (e == NULL)
    return -1;
  e->new_id = new_id;
  return 0;
}

int64_t
vs_merge_idmap_get (const VsIdMap *m, int64_t old)
{
  if (old == VS_UNKNOWN || old <= 0)
    return VS_UNKNOWN;
  if (old < m->cap && m->ids[old] != 0)
    return m->ids[old];
  if (vs_idmap_sparse_count (&m->sparse) == 0)
    return VS_UNKNOWN;
  const VsIdMapEntry *e = vs_idmap_sparse_find (&m->sparse, old);
  return e != NULL && e->new_id != 0 ? e->new_id : VS_UNKNOWN;
}

int
vs_merge_idmap_foreach (const VsIdMap *m, int64_t lo, int64_t hi,
                        int (*func) (int64_t old, int64_t new_id, void *data), void *data)
{
  int rc = 0;
  int64_t from = lo < 0 ? 1 : lo + (lo < INT64_MAX);
  for (int64_t old = from; old <= hi && old < m->cap && rc == 0; old++)
    if (m->ids[old] != 0)
      rc = func (old, m->ids[old], data);
  for (size_t i = 0; i < m->sparse.cap && rc == 0; i++)
    {
      const VsIdMapEntry *e = &m->sparse.entries[i];
      /* skip entries the array shadows */
      if (e->old != 0 && e->old > lo && e->old <= hi && e->new_id != 0
          && !(e->old < m->cap && m->ids[e->old] != 0))
        rc = func (e->old, e->new_id, data);
    }
  return rc;
}

static int
copy_one (int64_t old, int64_t new_id, void *data)
{
  return vs_merge_idmap_set (data, old, new_id);
}

int
vs_merge_idmap_copy (VsIdMap *to, const VsIdMap *from)
{
  *to = (VsIdMap){ 0 };
  if (from->cap && (to->ids = calloc ((size_t)from->cap, sizeof *to->ids)) == NULL)
    return -1;
  to->cap = from->cap;
  if (vs_merge_idmap_foreach (from, 0, INT64_MAX, copy_one, to) != 0)
    {
      vs_merge_idmap_clear (to);
      return -1;
    }
  return 0;
}

void
vs_merge_idmap_clear (VsIdMap *m)
{
  free (m->ids);
  vs_idmap_sparse_clear (&m->sparse);
  *m = (VsIdMap){ 0 };
}
