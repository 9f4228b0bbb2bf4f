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

/* Decoded chunks kept per table, in bytes: reports ask "what was live at
 * step S" at several steps, each a scan of block. */
#define CACHE_BYTES (512u << 20)

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
} VsChunkCached;

/* A table of the module: its chunks' row counts and zone maps, read
 * when it is connected, and the decoded chunks. */
typedef struct
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
  uint32_t sorted;    /* columns in order across the whole table: the key's first, and
                         those every chunk's zone says are sorted, their ranges in turn */
  sqlite3_stmt *read;
  VsChunkCodec *codec;
  VsChunkCached **cache; /* per chunk, NULL when not decoded */
  int *cached;           /* the indices of the chunks cached, in no order */
  int ncached;
  size_t cache_bytes; /* what the cached chunks hold */
  uint64_t rng;       /* the state of cache_trim's draws */
} VsChunkVtab;

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
