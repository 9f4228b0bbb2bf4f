/* SPDX-License-Identifier: MIT */
/* vs-merge-append-private.h — what the files of the round-by-round
 * merge share (vs-merge-append.c, the rounds; vs-merge-append-state.c,
 * what they took, kept in the merged trace).
 */
#pragma once

#include <stdint.h>

#include <sqlite3.h>

#include "vs-merge-append.h"
#include "vs-merge-private.h"

/* The small tables that have id maps: VsMergeTable 0 … N_MAPS - 1. */
#define N_MAPS (VS_MERGE_KERNEL_CONFIG + 1)

/* What was taken from one input. */
typedef struct
{
  char *name;                      /* the file's name in the spool */
  int64_t no;                      /* its number in the state tables */
  int64_t mark[VS_MERGE_N_TABLES]; /* per table the largest id taken */
  VsIdMap maps[N_MAPS];            /* old id → merged id, per small table */
  VsClaims open;                   /* ranges taken while open (old ids) */
} VsAppendInput;

struct VsMergeAppend
{
  char *path;
  VsAppendInput *in;
  size_t n;
  VsClaims claim_process, claim_device;
  /* Per table of the merged trace the largest id ever given (events,
   * ranges, kernels). */
  int64_t live_hi[VS_MERGE_N_TABLES];
  VsMerge m; /* the writer (during a round) and the progress */
};

/* Empties the state kept in memory. */
void vs_merge_append_free_state (VsMergeAppend *a);

/* The input named name, or NULL. */
VsAppendInput *vs_merge_append_find_input (VsMergeAppend *a, const char *name);

/* Adds an input named name, numbered no; NULL when out of memory. */
VsAppendInput *vs_merge_append_add_input (VsMergeAppend *a, const char *name, int64_t no);

/* Creates the state tables in db where absent and loads what they hold
 * into a (empty).  0; -1 (the error in sqlite3_errmsg (db) or out of
 * memory); -2 when the state does not match the seal kept with it: it was
 * changed outside these functions, and continuing it would take rows
 * twice or never. */
int vs_merge_append_load_state (VsMergeAppend *a, sqlite3 *db);

/* Writes the state of input in (its rows (lo, hi] newly mapped), the
 * claims and the merged trace's largest ids, on the writer's connection
 * (the input attached as src) inside the round's transaction.  0 or -1. */
int vs_merge_append_save_state (VsMergeAppend *a, VsAppendInput *in, const int64_t *lo,
                                const int64_t *hi);

/* Drops the state tables from db (the last round).  0 or -1. */
int vs_merge_append_drop_state (sqlite3 *db);

/* Runs sql on db with the integers v[0..n-1] bound; 0 or -1. */
int vs_merge_exec_ints (sqlite3 *db, const char *sql, const int64_t *v, int n);
