/* SPDX-License-Identifier: MIT */
/* vs-chunk.c — the chunk codec of compacted traces (vs-chunk.h).
 *
 * A chunk's payload is its columns one after the other.  Each column is a
 * mode byte (VsChunkCoding in the low bits, VS_CHUNK_HAS_NULLS), for
 * VS_CHUNK_RELATIVE one byte naming the reference column, for a column
 * with NULLs a bitmap of nrows bits (bit i of byte i/8, least significant
 * first, set for NULL), then one LEB128 varint per non-NULL row of the
 * zigzag-coded difference between the value and its reference (two's
 * complement, wrapping).  The payload is one zstd frame that records its
 * size.  The encoder picks, per column and chunk, the coding whose varints
 * are shortest; zstd then removes the repetition training loops have.
 */
#include "vs-chunk.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#define ZSTD_LEVEL 3

static const char *const alloc_event_columns[]
    = { "id",       "ts",       "process_id",      "tid",         "device_id",       "allocator_id",
        "op",       "address",  "requested_bytes", "block_bytes", "segment_address", "stream",
        "stack_id", "range_id", "before_trace" };
static const char *const mem_event_columns[]
    = { "id",          "ts",       "process_id", "tid",   "device_id", "context",   "stream",
        "kind",        "op",       "address",    "bytes", "pool_id",   "pool_size", "pool_utilized",
        "correlation", "stack_id", "range_id" };
static const char *const kernel_exec_columns[]
    = { "start_ns", "id",     "duration_ns", "process_id", "device_id",
        "context",  "stream", "correlation", "config_id" };
static const char *const series_columns[] = { "seq",          "device_id",      "allocator_id",
                                              "ts",           "reserved_bytes", "allocated_bytes",
                                              "device_bytes", "static_bytes",   "pinned_bytes",
                                              "managed_bytes" };
static const char *const series_level_columns[]
    = { "shift",         "device_id",      "allocator_id",  "bucket",
        "min_reserved",  "max_reserved",   "last_reserved", "min_allocated",
        "max_allocated", "last_allocated", "max_device" };
static const char *const block_columns[]
    = { "id",       "level",         "device_id", "allocator_id",   "process_id",
        "kind",     "address",       "bytes",     "block_bytes",    "alloc_seq",
        "free_seq", "alloc_ts",      "free_ts",   "alloc_event_id", "free_event_id",
        "stack_id", "free_stack_id", "range_id",  "owner_id",       "span_bin" };

#define N(a) ((int)(sizeof (a) / sizeof (a)[0]))

/* A column's bit in a 32-bit mask (VsChunk.decoded, vs_chunk_columns),
 * its coding in a mode byte beside VS_CHUNK_HAS_NULLS, its number in the
 * reference byte, and a chunk's row count in an int. */
static_assert (VS_CHUNK_MAX_COLUMNS <= 32, "columns must fit a 32-bit mask");
static_assert (VS_CHUNK_RELATIVE < VS_CHUNK_HAS_NULLS, "the coding must fit the mode's low bits");
static_assert (VS_CHUNK_MAX_COLUMNS < 256, "a reference column must fit a byte");
static_assert (VS_CHUNK_ROWS % 8 == 0, "a NULL bitmap holds whole bytes of a full chunk");
static_assert (VS_CHUNK_BLOCK_CLASSES >= 2, "blocks need a class for unknown lifetimes");
static_assert (N (alloc_event_columns) <= VS_CHUNK_MAX_COLUMNS, "alloc_event's columns");
static_assert (N (mem_event_columns) <= VS_CHUNK_MAX_COLUMNS, "mem_event's columns");
static_assert (N (kernel_exec_columns) <= VS_CHUNK_MAX_COLUMNS, "kernel_exec's columns");
static_assert (N (series_columns) <= VS_CHUNK_MAX_COLUMNS, "series' columns");
static_assert (N (series_level_columns) <= VS_CHUNK_MAX_COLUMNS, "series_level's columns");
static_assert (N (block_columns) <= VS_CHUNK_MAX_COLUMNS, "block's columns");

const VsChunkTable vs_chunk_tables[] = {
  { "alloc_event", alloc_event_columns, N (alloc_event_columns), { 0 }, 1, 0, false },
  { "mem_event", mem_event_columns, N (mem_event_columns), { 0 }, 1, 0, false },
  { "kernel_exec", kernel_exec_columns, N (kernel_exec_columns), { 0, 1 }, 2, -1, false },
  { "series", series_columns, N (series_columns), { 1, 2, 3, 0 }, 4, -1, false },
  { "series_level", series_level_columns, N (series_level_columns), { 1, 2, 0, 3 }, 4, -1, false },
  { "block", block_columns, N (block_columns), { 0 }, 1, 0, true },
};
const size_t vs_chunk_n_tables = sizeof vs_chunk_tables / sizeof vs_chunk_tables[0];

const VsChunkTable *
vs_chunk_table_find (const char *name)
{
  for (size_t i = 0; i < vs_chunk_n_tables; i++)
    if (strcmp (vs_chunk_tables[i].name, name) == 0)
      return &vs_chunk_tables[i];
  return NULL;
}

int
vs_chunk_block_class (const int64_t *v, uint32_t nulls)
{
  enum
  {
    ALLOC_SEQ = 9,
    FREE_SEQ = 10
  };
  if ((nulls >> ALLOC_SEQ) & 1 || (nulls >> FREE_SEQ) & 1 || v[FREE_SEQ] < v[ALLOC_SEQ])
    return VS_CHUNK_BLOCK_CLASSES - 1;
  uint64_t life = (uint64_t)v[FREE_SEQ] - (uint64_t)v[ALLOC_SEQ];
  int bits = life == 0 ? 0 : 64 - __builtin_clzll (life);
  static_assert (64 / 4 < VS_CHUNK_BLOCK_CLASSES, "every lifetime has a class");
  return bits / 4 < VS_CHUNK_BLOCK_CLASSES - 1 ? bits / 4 : VS_CHUNK_BLOCK_CLASSES - 2;
}

void
vs_chunk_error (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL || errlen == 0)
    return;
  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
}

static uint64_t
zigzag (int64_t v)
{
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
unzigzag (uint64_t u)
{
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static int
varint_len (uint64_t u)
{
  return 1 + (63 - __builtin_clzll (u | 1)) / 7;
}

/* A growing byte buffer. */
typedef struct
{
  uint8_t *p;
  size_t len, cap;
  bool oom;
} Buf;

struct VsChunkCodec
{
  ZSTD_CCtx *cctx;
  ZSTD_DCtx *dctx;
  Buf payload; /* the coded columns of the chunk being encoded */
};

VsChunkCodec *
vs_chunk_codec_new (void)
{
  VsChunkCodec *c = calloc (1, sizeof *c);

  if (c == NULL)
    return NULL;
  c->cctx = ZSTD_createCCtx ();
  c->dctx = ZSTD_createDCtx ();
  /* A frame carries a checksum of its content: a damaged chunk that
   * still decompresses is found too. */
  if (c->cctx == NULL || c->dctx == NULL
      || ZSTD_isError (ZSTD_CCtx_setParameter (c->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL))
      || ZSTD_isError (ZSTD_CCtx_setParameter (c->cctx, ZSTD_c_checksumFlag, 1)))
    {
      vs_chunk_codec_free (c);
      return NULL;
    }
  return c;
}

void
vs_chunk_codec_free (VsChunkCodec *c)
{
  if (c == NULL)
    return;
  ZSTD_freeCCtx (c->cctx);
  ZSTD_freeDCtx (c->dctx);
  free (c->payload.p);
  free (c);
}

static void
buf_reserve (Buf *b, size_t more)
{
  if (b->oom || b->len + more <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more)
    cap *= 2;
  uint8_t *p = realloc (b->p, cap);
  if (p == NULL)
    {
      b->oom = true;
      return;
    }
  b->p = p;
  b->cap = cap;
}

static void
buf_byte (Buf *b, uint8_t v)
{
  buf_reserve (b, 1);
  if (!b->oom)
    b->p[b->len++] = v;
}

static void
buf_varint (Buf *b, uint64_t u)
{
  buf_reserve (b, 10);
  if (b->oom)
    return;
  while (u >= 0x80)
    {
      b->p[b->len++] = (uint8_t)(u | 0x80);
      u >>= 7;
    }
  b->p[b->len++] = (uint8_t)u;
}

/* The reference of row i of column c under coding (ref: the reference
 * column for VS_CHUNK_RELATIVE); *prev carries the previous non-NULL
 * value for VS_CHUNK_DELTA. */
static int64_t
reference (const VsChunk *ch, int coding, int ref, int i, int64_t prev)
{
  if (coding == VS_CHUNK_DELTA)
    return prev;
  if (coding == VS_CHUNK_RELATIVE)
    return ch->nulls[(size_t)ref * ch->nrows + i] ? 0 : ch->values[(size_t)ref * ch->nrows + i];
  return 0;
}

/* The varint bytes column c takes under coding over its first n rows. */
static size_t
coded_size (const VsChunk *ch, int c, int coding, int ref, int n)
{
  const int64_t *v = ch->values + (size_t)c * ch->nrows;
  const uint8_t *nl = ch->nulls + (size_t)c * ch->nrows;
  int64_t prev = 0;
  size_t total = 0;

  for (int i = 0; i < n; i++)
    {
      if (nl[i])
        continue;
      int64_t r = reference (ch, coding, ref, i, prev);
      total += varint_len (zigzag ((int64_t)((uint64_t)v[i] - (uint64_t)r)));
      prev = v[i];
    }
  return total;
}

/* Chooses column c's coding: plain, delta, or relative to the earlier
 * column that does best on a sample of the first rows. */
static void
choose_coding (const VsChunk *ch, int c, int *coding, int *ref)
{
  int sample = ch->nrows < 256 ? ch->nrows : 256;
  size_t best_rel = SIZE_MAX;
  int best_ref = -1;

  for (int r = 0; r < c; r++)
    {
      size_t s = coded_size (ch, c, VS_CHUNK_RELATIVE, r, sample);
      if (s < best_rel)
        {
          best_rel = s;
          best_ref = r;
        }
    }
  size_t plain = 0, delta = 0;
  {
    const int64_t *v = ch->values + (size_t)c * ch->nrows;
    const uint8_t *nl = ch->nulls + (size_t)c * ch->nrows;
    int64_t prev = 0;

    for (int i = 0; i < ch->nrows; i++)
      if (!nl[i])
        {
          plain += varint_len (zigzag (v[i]));
          delta += varint_len (zigzag ((int64_t)((uint64_t)v[i] - (uint64_t)prev)));
          prev = v[i];
        }
  }
  size_t rel
      = best_ref >= 0 ? coded_size (ch, c, VS_CHUNK_RELATIVE, best_ref, ch->nrows) : SIZE_MAX;
  assert (best_ref < c && (c == 0 || best_ref >= 0));

  *coding = VS_CHUNK_PLAIN;
  *ref = 0;
  if (delta < plain)
    *coding = VS_CHUNK_DELTA;
  if (rel < (delta < plain ? delta : plain))
    {
      *coding = VS_CHUNK_RELATIVE;
      *ref = best_ref;
    }
  assert (*coding <= VS_CHUNK_RELATIVE);
  assert (*coding != VS_CHUNK_RELATIVE || (*ref >= 0 && *ref < c));
}

int
vs_chunk_encode (VsChunkCodec *codec, const VsChunk *ch, uint8_t **data, size_t *data_len,
                 uint8_t **zone, size_t *zone_len, char *err, size_t errlen)
{
  Buf payload = codec->payload, zb = { 0 };
  int n = ch->nrows;

  payload.len = 0;
  payload.oom = false;

  *data = *zone = NULL;
  *data_len = *zone_len = 0;
  if (ch->ncols <= 0 || ch->ncols > VS_CHUNK_MAX_COLUMNS || n <= 0)
    {
      vs_chunk_error (err, errlen, "a chunk of %d columns and %d rows cannot be coded", ch->ncols,
                      n);
      return -1;
    }
  size_t section[VS_CHUNK_MAX_COLUMNS];
  for (int c = 0; c < ch->ncols; c++)
    {
      const int64_t *v = ch->values + (size_t)c * n;
      const uint8_t *nl = ch->nulls + (size_t)c * n;
      bool has_null = false, has_value = false, sorted = true;
      int64_t lo = 0, hi = 0, prev = 0;
      size_t start = payload.len;
      int coding, ref;

      for (int i = 0; i < n; i++)
        if (nl[i])
          has_null = true;
        else
          {
            if (has_value && v[i] < prev)
              sorted = false;
            if (!has_value || v[i] < lo)
              lo = v[i];
            if (!has_value || v[i] > hi)
              hi = v[i];
            has_value = true;
            prev = v[i];
          }
      prev = 0;
      sorted = sorted && !has_null;
      /* every row is NULL or a value; a sorted column has no NULL */
      assert (has_null || has_value);
      assert (!sorted || (has_value && !has_null));
      buf_byte (&zb, (uint8_t)((has_null ? 1 : 0) | (has_value ? 2 : 0) | (sorted ? 4 : 0)));
      if (has_value)
        {
          buf_varint (&zb, zigzag (lo));
          buf_varint (&zb, zigzag (hi));
        }

      choose_coding (ch, c, &coding, &ref);
      buf_byte (&payload, (uint8_t)(coding | (has_null ? VS_CHUNK_HAS_NULLS : 0)));
      if (coding == VS_CHUNK_RELATIVE)
        buf_byte (&payload, (uint8_t)ref);
      if (has_null)
        {
          size_t nb = ((size_t)n + 7) / 8;
          buf_reserve (&payload, nb);
          if (!payload.oom)
            {
              memset (payload.p + payload.len, 0, nb);
              for (int i = 0; i < n; i++)
                if (nl[i])
                  payload.p[payload.len + i / 8] |= (uint8_t)(1u << (i % 8));
              payload.len += nb;
            }
        }
      for (int i = 0; i < n; i++)
        {
          if (nl[i])
            continue;
          int64_t r = reference (ch, coding, ref, i, prev);
          buf_varint (&payload, zigzag ((int64_t)((uint64_t)v[i] - (uint64_t)r)));
          prev = v[i];
        }
      section[c] = payload.len - start;
      assert (payload.oom || section[c] >= 1); /* at least the mode byte */
    }
  /* The directory in front: each column's length in bytes, so a reader
   * decodes only the columns it needs. */
  {
    uint8_t dir[VS_CHUNK_MAX_COLUMNS * 10];
    Buf db = { dir, 0, sizeof dir, false };
    for (int c = 0; c < ch->ncols; c++)
      buf_varint (&db, section[c]);
    assert (!db.oom && db.len <= sizeof dir);
    buf_reserve (&payload, db.len);
    if (!payload.oom)
      {
        memmove (payload.p + db.len, payload.p, payload.len);
        memcpy (payload.p, dir, db.len);
        payload.len += db.len;
      }
  }
  codec->payload = payload;
  if (payload.oom || zb.oom)
    {
      free (zb.p);
      vs_chunk_error (err, errlen, "out of memory coding a chunk");
      return -1;
    }

  size_t bound = ZSTD_compressBound (payload.len);
  uint8_t *out = malloc (bound);
  size_t got = out ? ZSTD_compress2 (codec->cctx, out, bound, payload.p, payload.len) : 0;
  if (out == NULL || ZSTD_isError (got))
    {
      free (out);
      free (zb.p);
      vs_chunk_error (err, errlen, "cannot compress a chunk: %s",
                      out ? ZSTD_getErrorName (got) : "out of memory");
      return -1;
    }
  assert (got > 0 && got <= bound);
  assert (zb.len >= (size_t)ch->ncols); /* a flags byte per column */
  *data = out;
  *data_len = got;
  *zone = zb.p;
  *zone_len = zb.len;
  return 0;
}

/* Reads one varint at *p (before end) into *u; false past the end or on
 * a varint longer than 64 bits. */
static bool
read_varint (const uint8_t **p, const uint8_t *end, uint64_t *u)
{
  uint64_t v = 0;
  int shift = 0;

  while (*p < end)
    {
      uint8_t b = *(*p)++;
      if (shift == 63 && (b & 0x7e) != 0)
        return false;
      v |= (uint64_t)(b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        {
          *u = v;
          return true;
        }
      shift += 7;
      if (shift > 63)
        return false;
    }
  return false;
}

void
vs_chunk_clear (VsChunk *chunk)
{
  free (chunk->values);
  free (chunk->nulls);
  free (chunk->payload);
  memset (chunk, 0, sizeof *chunk);
}

void
vs_chunk_set_row (VsChunk *chunk, int i, const int64_t *v, uint32_t nulls)
{
  for (int c = 0; c < chunk->ncols; c++)
    {
      bool null = (nulls >> c) & 1;
      chunk->values[(size_t)c * VS_CHUNK_ROWS + (size_t)i] = null ? 0 : v[c];
      chunk->nulls[(size_t)c * VS_CHUNK_ROWS + (size_t)i] = null;
    }
}

void
vs_chunk_pack (VsChunk *chunk, int n)
{
  assert (n >= 0 && n <= VS_CHUNK_ROWS);
  if (n < VS_CHUNK_ROWS)
    for (int c = 1; c < chunk->ncols; c++)
      {
        memmove (chunk->values + (size_t)c * n, chunk->values + (size_t)c * VS_CHUNK_ROWS,
                 (size_t)n * sizeof *chunk->values);
        memmove (chunk->nulls + (size_t)c * n, chunk->nulls + (size_t)c * VS_CHUNK_ROWS, (size_t)n);
      }
  chunk->nrows = n;
}

int
vs_chunk_open (VsChunkCodec *codec, const uint8_t *data, size_t data_len, int ncols, int nrows,
               VsChunk *ch, char *err, size_t errlen)
{
  memset (ch, 0, sizeof *ch);
  if (ncols <= 0 || ncols > VS_CHUNK_MAX_COLUMNS || nrows <= 0 || nrows > VS_CHUNK_ROWS)
    {
      vs_chunk_error (err, errlen, "a chunk says it holds %d rows (at most %d)", nrows,
                      VS_CHUNK_ROWS);
      return -1;
    }
  unsigned long long size = ZSTD_getFrameContentSize (data, data_len);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN
      || size > VS_CHUNK_MAX_PAYLOAD)
    {
      vs_chunk_error (err, errlen, "a chunk is not a zstd frame of known size");
      return -1;
    }
  ch->payload = malloc (size ? size : 1);
  ch->values = malloc ((size_t)ncols * nrows * sizeof *ch->values);
  ch->nulls = malloc ((size_t)ncols * nrows);
  if (ch->payload == NULL || ch->values == NULL || ch->nulls == NULL)
    {
      vs_chunk_clear (ch);
      vs_chunk_error (err, errlen, "out of memory decoding a chunk");
      return -1;
    }
  size_t got = ZSTD_decompressDCtx (codec->dctx, ch->payload, size, data, data_len);
  if (ZSTD_isError (got) || got != size)
    {
      vs_chunk_clear (ch);
      vs_chunk_error (err, errlen, "a chunk does not decompress: %s",
                      ZSTD_isError (got) ? ZSTD_getErrorName (got) : "short frame");
      return -1;
    }
  ch->ncols = ncols;
  ch->nrows = nrows;

  /* The directory: each column's length; together they fill the rest. */
  const uint8_t *p = ch->payload, *end = ch->payload + size;
  uint64_t total = 0;
  for (int c = 0; c < ncols; c++)
    {
      uint64_t len;
      if (!read_varint (&p, end, &len) || len > size)
        goto bad;
      ch->len[c] = (size_t)len;
      total += len;
    }
  if (total != (uint64_t)(end - p))
    goto bad;
  for (int c = 0; c < ncols; c++)
    {
      ch->off[c] = (size_t)(p - ch->payload);
      p += ch->len[c];
      assert (ch->off[c] + ch->len[c] <= size);
    }
  assert (p == end && ch->decoded == 0);
  return 0;

bad:
  vs_chunk_clear (ch);
  vs_chunk_error (err, errlen, "a chunk's columns do not fill it");
  return -1;
}

/* Decodes column c (its reference first). */
static int
decode_column (VsChunk *ch, int c, int depth)
{
  int nrows = ch->nrows;
  int64_t *v = ch->values + (size_t)c * nrows;
  uint8_t *nl = ch->nulls + (size_t)c * nrows;
  const uint8_t *p = ch->payload + ch->off[c], *end = p + ch->len[c];
  int64_t prev = 0;
  int ref = 0;

  if (ch->decoded & (1u << c))
    return 0;
  if (p >= end || depth > VS_CHUNK_MAX_COLUMNS)
    return -1;
  uint8_t mode = *p++;
  int coding = mode & 0x7f;
  if (coding > VS_CHUNK_RELATIVE)
    return -1;
  if (coding == VS_CHUNK_RELATIVE)
    {
      if (p >= end || *p >= c)
        return -1;
      ref = *p++;
      if (decode_column (ch, ref, depth + 1) < 0)
        return -1;
      assert (ch->decoded & (1u << ref));
    }
  if (mode & VS_CHUNK_HAS_NULLS)
    {
      size_t nb = ((size_t)nrows + 7) / 8;
      if ((size_t)(end - p) < nb)
        return -1;
      for (int i = 0; i < nrows; i++)
        nl[i] = (p[i / 8] >> (i % 8)) & 1;
      p += nb;
    }
  else
    memset (nl, 0, (size_t)nrows);

  /* First the differences, one varint per row that is not NULL (the hot
   * loop: most are one byte), then the references added back. */
  for (int i = 0; i < nrows; i++)
    {
      uint64_t u;
      if (nl[i])
        {
          v[i] = 0;
          continue;
        }
      if (p < end && *p < 0x80)
        u = *p++;
      else if (!read_varint (&p, end, &u))
        return -1;
      v[i] = unzigzag (u);
    }
  if (p != end)
    return -1;
  if (coding == VS_CHUNK_DELTA)
    for (int i = 0; i < nrows; i++)
      {
        if (!nl[i])
          prev = v[i] = (int64_t)((uint64_t)v[i] + (uint64_t)prev);
      }
  else if (coding == VS_CHUNK_RELATIVE)
    {
      const int64_t *rv = ch->values + (size_t)ref * nrows;
      const uint8_t *rn = ch->nulls + (size_t)ref * nrows;
      for (int i = 0; i < nrows; i++)
        if (!nl[i] && !rn[i])
          v[i] = (int64_t)((uint64_t)v[i] + (uint64_t)rv[i]);
    }
  assert (c >= 0 && c < ch->ncols);
  ch->decoded |= 1u << c;
  return 0;
}

int
vs_chunk_columns (VsChunk *ch, uint32_t mask, char *err, size_t errlen)
{
  for (int c = 0; c < ch->ncols; c++)
    if ((mask & (1u << c)) && decode_column (ch, c, 0) < 0)
      {
        vs_chunk_error (err, errlen, "a chunk's columns do not match its row count");
        return -1;
      }
  return 0;
}

int
vs_chunk_decode (VsChunkCodec *codec, const uint8_t *data, size_t data_len, int ncols, int nrows,
                 VsChunk *ch, char *err, size_t errlen)
{
  if (vs_chunk_open (codec, data, data_len, ncols, nrows, ch, err, errlen) < 0)
    return -1;
  if (vs_chunk_columns (ch, UINT32_MAX, err, errlen) < 0)
    {
      vs_chunk_clear (ch);
      return -1;
    }
  /* a decoded chunk: its rows, every column */
  assert (ch->ncols == ncols && ch->nrows == nrows);
  assert (ch->decoded == (ncols == 32 ? UINT32_MAX : (1u << ncols) - 1));
  return 0;
}

int
vs_chunk_zone_decode (const uint8_t *zone, size_t zone_len, int ncols, VsChunkZone *zones)
{
  const uint8_t *p = zone, *end = zone + zone_len;

  for (int c = 0; c < ncols; c++)
    {
      uint64_t lo, hi;

      if (p >= end || (*p & ~7u) != 0 || ((*p & 4) && (*p & 3) != 2))
        return -1;
      zones[c].has_null = (*p & 1) != 0;
      zones[c].has_value = (*p & 2) != 0;
      zones[c].sorted = (*p & 4) != 0;
      p++;
      zones[c].min = zones[c].max = 0;
      if (zones[c].has_value)
        {
          if (!read_varint (&p, end, &lo) || !read_varint (&p, end, &hi))
            return -1;
          zones[c].min = unzigzag (lo);
          zones[c].max = unzigzag (hi);
          if (zones[c].min > zones[c].max)
            return -1;
        }
    }
  return p == end ? 0 : -1;
}
