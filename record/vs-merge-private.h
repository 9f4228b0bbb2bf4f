/* vs-merge-private.h — what the files of the merge (vs-merge.c, the
 * copy; vs-merge-adopt.c, the trace written into an input) share.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vs-merge-meta.h"
#include "vs-merge.h"

/* A dense old id → new id table for one input's small tables. */
typedef struct
{
  int64_t *ids;
  int64_t cap;
} VsIdMap;

/* Ids of the adopted trace's rows not taken over yet. */
typedef struct
{
  int64_t *ids;
  size_t n;
} VsClaims;

/* One merge: the output's writer, the input being merged (db) and its id
 * maps, the progress so far. */
typedef struct
{
  sqlite3 *db;
  VsWriter *w;
  VsIdMap process, device, allocator, range, module, frame, stack, kernel_config;
  bool imported; /* the input is an imported PyTorch snapshot */
  /* Rows of the adopted trace (vs_merge_traces' adopt) that the first
   * collector input of the same process or GPU takes over: its values
   * replace the import's, as if it had been merged first. */
  VsClaims claim_process, claim_device;
  bool kernels_v3;    /* the input stores kernels as kernel_config + kernel_exec */
  bool kernels_aside; /* its kernel_exec is coded aside (vs-merge-kernels.c), not copied */
  uint64_t done, total;
  VsProgressFunc progress;
  void *progress_data;
  char *err;
  size_t errlen;
} VsMerge;

/* The kernel executions of one input coded into kernel_exec chunks on a
 * thread of their own (vs-merge-kernels.c). */
typedef struct VsKernelsAside VsKernelsAside;

/* Starts coding the count executions of the input at path, m's maps of
 * that input filled: they take the next count kernel ids of m's writer.
 * NULL when it cannot start (out of memory, no thread): the caller then
 * copies them as usual (their ids come after the ones taken). */
VsKernelsAside *vs_merge_kernels_start (VsMerge *m, const char *path, int64_t count);

/* VsRowSinkBeside for the finalizer: waits for the thread and writes its
 * chunks into main.kernel_exec_chunk and the latest end into meta end_ns. */
int vs_merge_kernels_write (sqlite3 *db, void *data, char *err, size_t errlen);

/* Waits for the thread if needed and frees a (NULL: nothing). */
void vs_merge_kernels_free (VsKernelsAside *a);

/* Sets old's new id in m.  0, or -1 when out of memory. */
int vs_merge_idmap_set (VsIdMap *m, int64_t old, int64_t new_id);
/* The merged id of old: VS_UNKNOWN for NULL, unknown or unmapped ids (as
 * the SQL function vs_map() answers NULL). */
int64_t vs_merge_idmap_get (const VsIdMap *m, int64_t old);

/* Frees the input's maps and empties them. */
void vs_merge_free_maps (VsMerge *m);

/* Sets m's error to "what: why"; returns -1. */
int vs_merge_fail (VsMerge *m, const char *what, const char *why);

/* Whether the count query sql gives more than 0 on db. */
bool vs_merge_count_is_positive (sqlite3 *db, const char *sql);

/* Takes id out of c; true when it was there. */
bool vs_merge_claim (VsClaims *c, int64_t id);

/* Sets the merged row id of a table to the input row s's columns 1..n,
 * bound in order to the UPDATE sql (whose last parameter, n + 1, is the
 * id).  0 or -1. */
int vs_merge_take_over (VsMerge *m, const char *sql, sqlite3_stmt *s, int n, int64_t id);

/* The adopted trace (the output itself, m->w) taken as merged first: every
 * row keeps its id, its processes and GPUs wait for the collector's rows
 * of the same (m->claim_process, m->claim_device), and its meta is set
 * aside (for vs_merge_adopted_meta()) and replaced by the run's.  *procs
 * gets its processes, whose end is set once every input is merged, as
 * when it was merged after them.  0 or -1 with the error set. */
int vs_merge_adopt_rows (VsMerge *m, VsClaims *procs);

/* The adopted trace's meta, set aside by vs_merge_adopt_rows(), read as
 * an input's into rm: called where the adopted trace comes in the inputs'
 * order, so that the keys kept from the first input that has them are the
 * ones a copy keeps.  *pend gets its end (VS_UNKNOWN: none).  0 or -1 with
 * the error set. */
int vs_merge_adopted_meta (VsMerge *m, VsMergeMeta *rm, int64_t *pend);
