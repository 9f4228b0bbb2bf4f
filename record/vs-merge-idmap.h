/* SPDX-License-Identifier: MIT */
/* vs-merge-idmap.h — the merge's map from an input's ids to the merged
 * trace's ids, one per small table (processes, devices, allocators,
 * frames, stacks, …).
 *
 * The collector numbers rows from 1 without gaps, so most ids go into a
 * dense array indexed by the old id.  An id far past the ids mapped so
 * far (a damaged or hostile input: 2^29, 2^62) goes into a hash table
 * instead, so that memory stays proportional to the number of ids
 * mapped, never to their values: the array grows to hold an id only while
 * its length stays within 4 × (ids mapped) + 2 × VS_IDMAP_DENSE_SLACK.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* One old → new pair of the sparse part. */
typedef struct
{
  int64_t old; /* > 0; 0: an empty entry */
  int64_t new_id;
} VsIdMapEntry;

#define VS_HT_TYPE VsIdMapSparse
#define VS_HT_FN(n) vs_idmap_sparse_##n
#define VS_HT_ENTRY VsIdMapEntry
#define VS_HT_KEY_TYPE int64_t
#define VS_HTI_KEY old
#include "vs-hash-table-int.h"

/* Ids up to this are always kept in the array. */
#define VS_IDMAP_DENSE_SLACK 1024

/* Zero-initialised: empty.  Movable by struct assignment. */
typedef struct
{
  int64_t *ids; /* ids[old]: the new id, 0 when unset; old < cap */
  int64_t cap;
  int64_t count; /* ids set in the array */
  VsIdMapSparse sparse;
} VsIdMap;

/* Sets old's new id (new_id != 0) in m; old <= 0 is ignored.  0, or -1
 * when out of memory. */
int vs_merge_idmap_set (VsIdMap *m, int64_t old, int64_t new_id);

/* The merged id of old: VS_UNKNOWN for NULL, unknown or unmapped ids (as
 * the SQL function vs_map() answers NULL). */
int64_t vs_merge_idmap_get (const VsIdMap *m, int64_t old);

/* Calls func (old, new_id, data) for every old id in (lo, hi] that m maps,
 * in no particular order, until func returns non-zero; returns that value,
 * or 0.  Time proportional to the ids mapped, not to hi - lo. */
int vs_merge_idmap_foreach (const VsIdMap *m, int64_t lo, int64_t hi,
                            int (*func) (int64_t old, int64_t new_id, void *data), void *data);

/* A copy of from in to (empty before).  0, or -1 when out of memory (to
 * then empty). */
int vs_merge_idmap_copy (VsIdMap *to, const VsIdMap *from);

/* Frees m's memory and empties it. */
void vs_merge_idmap_clear (VsIdMap *m);
