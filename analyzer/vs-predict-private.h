/* SPDX-License-Identifier: MIT */
/* vs-predict-private.h — what the prediction's files share: one run's
 * allocation history read into memory, and the matching of two histories
 * (private to the analyzer). */
#pragma once

#include "vs-predict.h"
#include "vs-trace-private.h"

G_BEGIN_DECLS

/* One allocation request of a run. */
typedef struct
{
  gint64 size;     /* requested bytes */
  gint64 stream;   /* 0 for blocks live before the history began */
  gint64 event_id; /* alloc_event.id */
  guint32 key;     /* the stack, as an index into the keys both runs share */
} VsPredictAlloc;

/* A run's PyTorch allocator history: its allocations, and the order of
 * allocations and frees (events: i >= 0 allocates allocs[i], -(i + 1)
 * frees it). */
typedef struct
{
  VsTrace *trace;
  gint64 allocator_id;
  gint64 device_id;
  GArray *allocs; /* VsPredictAlloc */
  GArray *events; /* gint32 */
  GArray *times;  /* gint64 per event: ns since the trace's start */
} VsPredictHistory;

/* The stack texts both runs' keys index (text → GUINT_TO_POINTER (key + 1)),
 * and the texts by key. */
typedef struct
{
  GHashTable *index;
  GPtrArray *texts;
} VsPredictKeys;

void vs_predict_keys_init (VsPredictKeys *keys);
void vs_predict_keys_clear (VsPredictKeys *keys);

/* Reads allocator_id's allocations and completed frees of trace into *h
 * (zeroed by the caller; released with vs_predict_history_clear).  Returns
 * FALSE with error set when the trace cannot be read or the allocator made
 * no allocation. */
gboolean vs_predict_history_read (VsPredictHistory *h, VsTrace *trace, gint64 allocator_id,
                                  VsPredictKeys *keys, GError **error);
void vs_predict_history_clear (VsPredictHistory *h);

/* Matches the allocations of a (the run of the larger batch) and b (the
 * smaller; ratio = a's batch / b's > 1) in order by stack, and by size
 * for allocations without stack: match[i] is the index in b of a's
 * allocation i, or -1 when it has no partner.  A stretch
 * where they differ is aligned by the longest common subsequence of a
 * window of each.  Returns the number
 * of allocations left without partner in either run, or -1 with error set
 * (naming the first allocation where they differ) when the histories do not
 * align: no resynchronisation within the window, or more unmatched
 * allocations than a few. */
gint64 vs_predict_match (const VsPredictHistory *a, const VsPredictHistory *b, double ratio,
                         const VsPredictKeys *keys, gint64 *match, GError **error);

G_END_DECLS
