/* SPDX-License-Identifier: MIT */
/* vs-chunk.h — the column chunks of a compacted trace (schema version 5).
 *
 * In a compacted trace the big tables (alloc_event, mem_event, kernel_exec,
 * series, block) are not SQLite tables: each is stored in a table
 * <name>_chunk (seq, row_count, zone, data) whose rows hold up to
 * VS_CHUNK_ROWS consecutive rows of the table in its natural order (its
 * primary key order; block's by device and lifetime class, each group's
 * rows in that order, vs_chunk_block_class), every column coded on its own and the whole chunk
 * compressed with zstd.  `zone` holds each column's minimum, maximum and
 * whether it has NULLs, so a reader skips the chunks a condition excludes.
 * The byte format is documented in schemas/README.md ("Compacted traces").
 *
 * This file declares the tables' shapes and the codec; vs-chunk-vtab.c
 * presents the chunks under the tables' old names as SQLite virtual
 * tables, vs-trace-compact.c writes them.  Plain C, no GLib: the codec runs
 * in `vramscope record` on GPU servers and in the loadable SQLite extension.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VS_CHUNK_ROWS 4096
#define VS_CHUNK_MAX_COLUMNS 24
/* block's rows are chunked by device and lifetime class
 * (vs_chunk_block_class): a table's chunks form at most this many runs,
 * each in key order.  Devices beyond VS_CHUNK_BLOCK_DEVICES share the last
 * one's chunks. */
#define VS_CHUNK_BLOCK_CLASSES 17
#define VS_CHUNK_BLOCK_DEVICES 30
#define VS_CHUNK_MAX_RUNS 512

/* A chunk's decoded payload is refused above this size (a damaged
 * length would otherwise ask for any amount of memory). */
#define VS_CHUNK_MAX_PAYLOAD (64u << 20)

/* How a column's values are coded in a chunk (low bits of its mode byte). */
typedef enum
{
  VS_CHUNK_PLAIN = 0,    /* the value itself */
  VS_CHUNK_DELTA = 1,    /* minus the column's previous non-NULL value (0 first) */
  VS_CHUNK_RELATIVE = 2, /* minus another, earlier column's value in the row (0 if NULL) */
} VsChunkCoding;

#define VS_CHUNK_HAS_NULLS 0x80

/* One chunked table: its columns in the order of schemas/trace.sql and its
 * natural order (the column indices of its primary key). */
typedef struct
{
  const char *name;
  const char *const *columns;
  int ncols;
  int key[4];
  int nkey;
  int id_col;    /* the INTEGER PRIMARY KEY (the rowid), -1 for none */
  bool live_seq; /* has the hidden column live_seq (block) */
} VsChunkTable;

/* The chunked tables, in the order they are compacted. */
extern const VsChunkTable vs_chunk_tables[];
extern const size_t vs_chunk_n_tables;

/* The table named name, or NULL. */
const VsChunkTable *vs_chunk_table_find (const char *name);

/* Writes the message fmt into err (errlen bytes, NULL: none): how the
 * chunk code reports what went wrong. */
void vs_chunk_error (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The lifetime class of a block row (v[] and nulls as a VsRowSink row):
 * the bit length of free_seq - alloc_seq in groups of four bits, 0..15,
 * and 16 for a block never freed (or of unknown steps).  Blocks of one
 * class share chunks, so a chunk's [min alloc_seq, max free_seq] stays
 * close to the steps its blocks span and "live at step S" reads few. */
int vs_chunk_block_class (const int64_t *v, uint32_t nulls);

/* One chunk's rows: values column-major, value of row i in column c at
 * values[c * nrows + i]; nulls likewise (1 = NULL, the value then 0).  A
 * chunk being read holds its decompressed payload and decodes its columns
 * when asked (vs_chunk_columns): bit c of decoded says column c is. */
typedef struct
{
  int ncols;
  int nrows;
  int64_t *values;
  uint8_t *nulls;
  uint8_t *payload;
  size_t off[VS_CHUNK_MAX_COLUMNS], len[VS_CHUNK_MAX_COLUMNS];
  uint32_t decoded;
} VsChunk;

/* One column's zone: has_null, has_value, and min/max of the values;
 * sorted: no NULL, each value at least the one before. */
typedef struct
{
  bool has_null;
  bool has_value;
  bool sorted;
  int64_t min, max;
} VsChunkZone;

/* What coding and decoding chunks reuse from one chunk to the next (zstd's
 * contexts, a buffer); one per thread. */
typedef struct VsChunkCodec VsChunkCodec;

/* A new codec, or NULL when out of memory. */
VsChunkCodec *vs_chunk_codec_new (void);

/* Frees codec (NULL: nothing). */
void vs_chunk_codec_free (VsChunkCodec *codec);

/* Encodes nrows rows of ncols columns (values/nulls as in VsChunk) into
 * *data (zstd frame of the coded columns) and *zone (the zone map), both
 * malloc'ed and owned by the caller.  Returns 0, or -1 with err set. */
int vs_chunk_encode (VsChunkCodec *codec, const VsChunk *chunk, uint8_t **data, size_t *data_len,
                     uint8_t **zone, size_t *zone_len, char *err, size_t errlen);

/* Opens data (data_len bytes) holding nrows rows of ncols columns as
 * *chunk: decompresses it and reads where each column lies, decoding
 * none (vs_chunk_clear frees what it allocates).  A frame that does not
 * decompress or whose columns do not fill it exactly is an error: -1 with
 * err set, *chunk left empty. */
int vs_chunk_open (VsChunkCodec *codec, const uint8_t *data, size_t data_len, int ncols, int nrows,
                   VsChunk *chunk, char *err, size_t errlen);

/* Decodes the columns of mask (bit c: column c) not decoded yet, and the
 * columns they are coded relative to.  A column that holds other than
 * nrows values, or does not end where its bytes end, is an error: -1 with
 * err set. */
int vs_chunk_columns (VsChunk *chunk, uint32_t mask, char *err, size_t errlen);

/* vs_chunk_open() and every column decoded. */
int vs_chunk_decode (VsChunkCodec *codec, const uint8_t *data, size_t data_len, int ncols,
                     int nrows, VsChunk *chunk, char *err, size_t errlen);

/* Reads a zone map of ncols columns into zones[0..ncols).  Returns 0, or
 * -1 when the blob is not one. */
int vs_chunk_zone_decode (const uint8_t *zone, size_t zone_len, int ncols, VsChunkZone *zones);

/* Frees a chunk's arrays and empties it. */
void vs_chunk_clear (VsChunk *chunk);

/* A chunk being gathered keeps room for VS_CHUNK_ROWS rows per column
 * (value of row i in column c at values[c * VS_CHUNK_ROWS + i]).  Row i of
 * such a chunk is set from v[] (its ncols columns; bit c of nulls: column
 * c is NULL, its value then 0). */
void vs_chunk_set_row (VsChunk *chunk, int i, const int64_t *v, uint32_t nulls);

/* Packs the first n rows of a chunk being gathered into an ordinary
 * chunk of n rows (in place: nrows becomes n), as vs_chunk_encode() takes
 * it. */
void vs_chunk_pack (VsChunk *chunk, int n);
