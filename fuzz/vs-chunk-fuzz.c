/* SPDX-License-Identifier: MIT */
/* vs-chunk-fuzz.c — libFuzzer entry point for the chunk codec of compacted
 * traces (trace/chunk/vs-chunk.h), the decoder every reader of a compacted
 * trace runs on bytes a file holds.
 *
 * The first four bytes choose the chunk's shape and what the rest is:
 *   byte 0  columns (1..VS_CHUNK_MAX_COLUMNS)
 *   byte 1, 2  rows (1..VS_CHUNK_ROWS; 1..16 when byte 3 has bit 2)
 *   byte 3  bits 0-1: 0 the rest is a chunk as stored (a zstd frame);
 *                     1 the rest is a payload, compressed here first so
 *                       that the column decoders see it, not only zstd;
 *                     2 the rest is a zone map;
 *                     3 the rest gives values and NULLs that are encoded,
 *                       decoded and must come back exactly (and the zone
 *                       map must bound them);
 *           bits 3-7: which columns a first partial decode asks for.
 * Decoding must refuse what it cannot read with an error, never read or
 * write out of bounds, and never ask for more than VS_CHUNK_MAX_PAYLOAD.
 * Built with clang -fsanitize=fuzzer,address,undefined by
 * fuzz/run-chunk-fuzzer.sh, and linked with vs-fuzz-driver.c into a plain
 * program for the bounded run of the test suite.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "vs-chunk.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static VsChunkCodec *
codec (void)
{
  static VsChunkCodec *c;
  if (c == NULL && (c = vs_chunk_codec_new ()) == NULL)
    abort ();
  return c;
}

/* Opens data as a chunk, decodes the columns of mask, then all of them,
 * and reads every value decoded. */
static void
decode (const uint8_t *data, size_t len, int ncols, int nrows, uint32_t mask)
{
  VsChunk ch;
  char err[256];
  volatile uint64_t sink = 0;

  if (vs_chunk_open (codec (), data, len, ncols, nrows, &ch, err, sizeof err) != 0)
    return;
  if (vs_chunk_columns (&ch, mask, err, sizeof err) == 0
      && vs_chunk_columns (&ch, UINT32_MAX, err, sizeof err) == 0)
    for (size_t k = 0; k < (size_t)ncols * (size_t)nrows; k++)
      sink += (uint64_t)ch.values[k] + ch.nulls[k];
  (void)sink;
  vs_chunk_clear (&ch);
}

/* The rest as a payload, compressed as a chunk is. */
static void
decode_payload (const uint8_t *data, size_t len, int ncols, int nrows, uint32_t mask)
{
  size_t bound = ZSTD_compressBound (len);
  uint8_t *frame = malloc (bound ? bound : 1);
  if (frame == NULL)
    abort ();
  size_t got = ZSTD_compress (frame, bound, data, len, 1);
  if (!ZSTD_isError (got))
    decode (frame, got, ncols, nrows, mask);
  free (frame);
}

/* Values and NULLs from the rest, encoded then decoded: they must come
 * back exactly, within the zone map's bounds. */
static void
round_trip (const uint8_t *data, size_t len, int ncols, int nrows)
{
  size_t n = (size_t)ncols * (size_t)nrows;
  VsChunk in = { .ncols = ncols, .nrows = nrows };
  in.values = calloc (n, sizeof *in.values);
  in.nulls = calloc (n, 1);
  if (in.values == NULL || in.nulls == NULL)
    abort ();
  for (size_t k = 0; len > 0 && k < n; k++)
    {
      uint64_t v = 0;
      for (int b = 0; b < 8; b++)
        v = v << 8 | data[(k * 9 + (size_t)b) % len];
      /* small deltas as often as large values: both codings get used */
      if (data[(k * 9 + 8) % len] & 2)
        v = (uint64_t)(k > 0 ? in.values[k - 1] : 0) + (v & 0xff);
      in.nulls[k] = (data[(k * 9 + 8) % len] & 0x31) == 0x31;
      in.values[k] = in.nulls[k] ? 0 : (int64_t)v;
    }
  uint8_t *frame = NULL, *zone = NULL;
  size_t frame_len = 0, zone_len = 0;
  char err[256];
  if (vs_chunk_encode (codec (), &in, &frame, &frame_len, &zone, &zone_len, err, sizeof err) != 0)
    abort ();
  VsChunk out;
  if (vs_chunk_decode (codec (), frame, frame_len, ncols, nrows, &out, err, sizeof err) != 0)
    abort ();
  VsChunkZone zones[VS_CHUNK_MAX_COLUMNS];
  if (vs_chunk_zone_decode (zone, zone_len, ncols, zones) != 0)
    abort ();
  for (int c = 0; c < ncols; c++)
    for (int i = 0; i < nrows; i++)
      {
        size_t k = (size_t)c * (size_t)nrows + (size_t)i;
        if (out.values[k] != in.values[k] || out.nulls[k] != in.nulls[k])
          abort ();
        if (in.nulls[k]
                ? !zones[c].has_null
                : !zones[c].has_value || in.values[k] < zones[c].min || in.values[k] > zones[c].max)
          abort ();
      }
  vs_chunk_clear (&out);
  free (frame);
  free (zone);
  free (in.values);
  free (in.nulls);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 4)
    return 0;
  int ncols = 1 + data[0] % VS_CHUNK_MAX_COLUMNS;
  int nrows = (data[3] & 4) ? 1 + data[1] % 16
                            : 1 + (int)((data[1] | (unsigned)data[2] << 8) % VS_CHUNK_ROWS);
  uint32_t mask = (uint32_t)(data[3] >> 3) * 0x8421u;
  const uint8_t *rest = data + 4;
  size_t len = size - 4;
  VsChunkZone zones[VS_CHUNK_MAX_COLUMNS];

  switch (data[3] & 3)
    {
    case 0:
      decode (rest, len, ncols, nrows, mask);
      break;
    case 1:
      decode_payload (rest, len, ncols, nrows, mask);
      break;
    case 2:
      vs_chunk_zone_decode (rest, len, ncols, zones);
      break;
    default:
      round_trip (rest, len, ncols, (data[3] & 4) ? nrows : 1 + nrows % 300);
      break;
    }
  return 0;
}
