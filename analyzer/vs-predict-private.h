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
  GMutex lock; /* two histories may be read at once */
} VsPredictKeys;

void vs_predict_keys_init (VsPredictKeys *keys);
void vs_predict_keys_clear (VsPredictKeys *keys);

/* One row of an allocator's history: an allocation (op
 * VS_ALLOC_OP_ALLOC) or a completed free. */
typedef struct
{
  gint64 id, address, size, stream, stack_id, ts; /* stream VS_UNKNOWN when NULL */
  int op;
} VsPredictRow;

typedef gboolean (*VsPredictRowFunc) (const VsPredictRow *row, gpointer data, GError **error);

/* Calls func on each allocation and completed free of allocator_id of
 * trace in id order, stopping at the first that returns FALSE (with error
 * set).  Large histories of traces on disk are decoded by several threads
 * (vs-predict-rows.c); func runs on the caller's.  Returns FALSE with
 * error set when reading fails or func did. */
gboolean vs_predict_rows_read (VsTrace *trace, gint64 allocator_id, VsPredictRowFunc func,
                               gpointer data, GError **error);

/* For tests: ids per range of the threads that decode a history
 * (131072), and their number (0: the processors', at most 8); and how
 * many histories were decoded by threads. */
void vs_predict_rows_set_parallel (gint64 ids, guint workers);
guint vs_predict_rows_get_parallel_reads (void);

/* Reads allocator_id's allocations and completed frees of trace into *h
 * (zeroed by the caller; released with vs_predict_history_clear).  Returns
 * FALSE with error set when the trace cannot be read or the allocator made
 * no allocation. */
gboolean vs_predict_history_read (VsPredictHistory *h, VsTrace *trace, gint64 allocator_id,
                                  VsPredictKeys *keys, GError **error);
void vs_predict_history_clear (VsPredictHistory *h);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsPredictHistory, vs_predict_history_clear)

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

/* The roles of one run's blocks read on a thread and a connection of
 * their own while its history is read on the trace's: vs_predict_roles_start
 * returns NULL when that cannot be (a trace in memory or being recorded, no
 * thread); vs_predict_roles_free waits for the thread. */
typedef struct _VsPredictRoles VsPredictRoles;
VsPredictRoles *vs_predict_roles_start (VsTrace *trace, gint64 allocator_id);
void vs_predict_roles_free (VsPredictRoles *roles);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsPredictRoles, vs_predict_roles_free)

/* One run at batch: slope[i] (bytes per unit of batch) of each allocation
 * of h, size / batch for the activations that scale with the batch and 0
 * for the others (vs-predict-one.c says which), and how many scale into
 * *n_varying.  pending (may be NULL): the roles started with
 * vs_predict_roles_start on h's trace, read here when it has none.
 * empty_key is the key of an allocation without stack (G_MAXUINT32 when
 * none has).  Returns FALSE with error set when the roles cannot be read. */
gboolean vs_predict_one_run_slopes (const VsPredictHistory *h, VsPredictRoles *pending,
                                    guint32 empty_key, gint64 batch, double *slope,
                                    gint64 *n_varying, GError **error);

G_END_DECLS
