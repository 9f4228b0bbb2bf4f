/* SPDX-License-Identifier: MIT */
/* vs-merge-private.h — what the files of the merge (vs-merge.c, the
 * copy; vs-merge-adopt.c, the trace written into an input;
 * vs-merge-append.c, the rows inputs gain appended round after round)
 * share.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vs-merge-idmap.h"
#include "vs-merge-meta.h"
#include "vs-merge.h"

/* The tables of a trace a merge copies, in the order copied. */
typedef enum
{
  VS_MERGE_PROCESS,
  VS_MERGE_DEVICE,
  VS_MERGE_ALLOCATOR,
  VS_MERGE_MODULE,
  VS_MERGE_FRAME,
  VS_MERGE_STACK,
  VS_MERGE_RANGE,
  VS_MERGE_KERNEL_CONFIG,
  VS_MERGE_MEM_EVENT,
  VS_MERGE_POOL_EVENT,
  VS_MERGE_ALLOC_EVENT,
  VS_MERGE_FAILED_ALLOC,
  VS_MERGE_MEMCPY,
  VS_MERGE_MEMSET,
  VS_MERGE_KERNEL_EXEC,
  VS_MERGE_N_TABLES
} VsMergeTable;

/* Their names in the schema. */
extern const char *const vs_merge_table_names[VS_MERGE_N_TABLES];

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
  /* Where rows are appended (vs-merge-append.c): the rows an import adds
   * for its process and GPUs are claimed (claim_process, claim_device) for
   * the collector's rows merged later; event_ids[table] is the last id
   * given in each event table (vs_event_id()), NULL: the table's own. */
  bool claim_new;
  int64_t *event_ids;
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

/* Adds id to c.  0, or -1 when out of memory. */
int vs_merge_claims_add (VsClaims *c, int64_t id);

/* Opens the process trace at path read-write (a WAL to recover) with a
 * busy timeout; NULL with err filled when it is no trace. */
sqlite3 *vs_merge_open_input (const char *path, char *err, size_t errlen);

/* True when the input's meta key has this value (compared as text). */
bool vs_merge_input_meta_is (sqlite3 *db, const char *key, const char *value);

/* A count, positive when the input stores kernels as kernel_config +
 * kernel_exec (schema 3 on). */
extern const char *const vs_merge_kernels_v3_sql;

/* Copies the small tables' rows of the input (m->db) whose ids are in
 * (lo[table], hi[table]] through the writer, filling m's maps; kernel
 * configurations, or whole kernel rows of an input before schema 3.  0 or
 * -1 with the error set. */
int vs_merge_copy_small (VsMerge *m, const int64_t *lo, const int64_t *hi);

/* Registers the SQL functions the event copies use (vs_map, vs_kernel_id,
 * vs_event_id) on m's writer connection.  0 or -1 with the error set. */
int vs_merge_sql_functions (VsMerge *m);

/* Copies the event rows of the input attached as `src` to m's writer
 * connection whose ids are in (lo[table], hi[table]], ids mapped (m's maps
 * filled), inside the caller's transaction; cancellable through m's
 * progress.  0 or -1 with the error set. */
int vs_merge_copy_event_rows (VsMerge *m, const int64_t *lo, const int64_t *hi);

/* vs_merge_end_process() for every process m's map names (pend: the
 * input's end). */
void vs_merge_end_processes (VsMerge *m, int64_t pend, const VsMergeRun *run);
