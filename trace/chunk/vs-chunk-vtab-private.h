/* SPDX-License-Identifier: MIT */
/* vs-chunk-vtab-private.h — a chunked table held open by the module
 * vs_chunk (vs-chunk-vtab.c): its zone maps and its cache of decoded
 * chunks (vs-chunk-store.c).  Plain C; compiled into the readers and the
 * loadable extension alike (VS_SQLITE_EXTENSION).
 */
#pragma once

#ifdef VS_SQLITE_EXTENSION
#include <sqlite3ext.h>
#else
#include <sqlite3.h>
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-chunk.h"

/* Decoded chunks kept per connection, in bytes, all chunked tables
 * together (docs/performance.md, "Schema 5", measured it). */
#define CACHE_BYTES (64u << 20)

/* One decoded chunk, shared by the cache and the cursors on it. */
typedef struct
{
  int64_t seq; /* the chunk's position */
  VsChunk chunk;
  int ci;           /* its index in the vtab's arrays */
  int slot;         /* its place in the vtab's list of cached chunks */
  uint32_t checked; /* columns found to agree with the zone map */
  size_t bytes;     /* payload and decoded columns */
  int refs;         /* the cache's and each cursor's */
  uint64_t used;    /* when it was last asked for (the budget's clock) */
} VsChunkCached;

typedef struct VsChunkVtab VsChunkVtab;

/* What the tables of one connection may cache together: the module's
 * client data, referenced by the module and each table. */
typedef struct
{
  size_t limit, bytes;
  uint64_t clock;
  int refs;
  VsChunkVtab *tables; /* the tables connected, through their next */
} VsChunkBudget;

/* A table of the module: its chunks' row counts and zone maps, read
 * when it is connected, and the decoded chunks. */
struct VsChunkVtab
{
  sqlite3_vtab base;
  sqlite3 *db;
  const VsChunkTable *t;
  int nchunks;
  int64_t *seqs;
  int *rows;
  int64_t *first_row; /* rows before each chunk */
  int64_t total_rows;
  VsChunkZone *zones; /* nchunks × ncols */
  /* The runs of chunks in key order (block's lifetime classes; one for
   * the other tables): run r is chunks [run_start[r], run_start[r + 1]). */
  int nruns;
  int run_start[VS_CHUNK_MAX_RUNS + 1];
  uint32_t sorted; /* columns in order within every run: the key's first, and
                      those every chunk's zone says are sorted, their ranges in turn */
  sqlite3_stmt *read;
  VsChunkCodec *codec;
  VsChunkCached **cache; /* per chunk, NULL when not decoded */
  int *cached;           /* the indices of the chunks cached, in no order */
  int ncached;
  size_t cache_bytes;    /* what the cached chunks hold */
  VsChunkBudget *budget; /* the connection's */
  VsChunkVtab *next;     /* the budget's next table */
};

/* A new budget of limit bytes with one reference, or NULL. */
VsChunkBudget *vs_chunk_budget_new (size_t limit);

/* Drops a reference to budget (a void * for sqlite3_create_module_v2). */
void vs_chunk_budget_unref (void *budget);

/* Counts vt in budget (a reference) and its cached chunks in its bytes. */
void vs_chunk_vtab_join (VsChunkVtab *vt, VsChunkBudget *budget);

/* Reads every chunk's row count and zone map of vt->t into vt, checking
 * them (row counts in range, the first key column in order across
 * chunks), and which columns are in order across the table (vt->sorted).
 * Returns an SQLite result code, with *pzErr set on failure. */
int vs_chunk_vtab_load_zones (VsChunkVtab *vt, char **pzErr);

/* Chunk ci with at least the columns of need decoded, into *out with a
 * reference the caller drops with vs_chunk_cached_unref(): from the cache,
 * or read, decoded and cached.  A damaged chunk is SQLITE_ERROR with
 * vt->base.zErrMsg set. */
int vs_chunk_vtab_get (VsChunkVtab *vt, int ci, uint32_t need, VsChunkCached **out);

/* Decodes the columns of need in c not decoded yet and checks each
 * against the chunk's zone map.  SQLITE_OK, or SQLITE_ERROR with
 * vt->base.zErrMsg set. */
int vs_chunk_vtab_ensure (VsChunkVtab *vt, VsChunkCached *c, uint32_t need);

/* Drops a reference to c (NULL: nothing). */
void vs_chunk_cached_unref (VsChunkCached *c);

/* Frees vt with its cache and statements. */
void vs_chunk_vtab_free (VsChunkVtab *vt);
