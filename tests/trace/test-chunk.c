/* SPDX-License-Identifier: MIT */
/* test-chunk.c — the chunk codec of compacted traces (trace/chunk/vs-chunk.c):
 * every value comes back, NULLs included, whatever coding the encoder
 * picks; the zone map says each column's range, NULLs and order; damaged
 * frames are refused. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "vs-chunk.h"

/* A chunk of nrows rows and ncols columns, all zero and not NULL. */
static VsChunk
chunk_new (int ncols, int nrows)
{
  VsChunk ch = { 0 };

  ch.ncols = ncols;
  ch.nrows = nrows;
  ch.values = g_new0 (int64_t, (gsize)ncols * nrows);
  ch.nulls = g_new0 (uint8_t, (gsize)ncols * nrows);
  return ch;
}

static void
chunk_free (VsChunk *ch)
{
  g_free (ch->values);
  g_free (ch->nulls);
}

/* Encodes ch, decodes it and checks every value and NULL. */
static void
round_trip (VsChunkCodec *codec, const VsChunk *ch)
{
  uint8_t *data, *zone;
  size_t data_len, zone_len;
  char err[256] = "";
  VsChunk back;
  VsChunkZone zones[VS_CHUNK_MAX_COLUMNS];

  g_assert_cmpint (vs_chunk_encode (codec, ch, &data, &data_len, &zone, &zone_len, err, sizeof err),
                   ==, 0);
  g_assert_cmpint (
      vs_chunk_decode (codec, data, data_len, ch->ncols, ch->nrows, &back, err, sizeof err), ==, 0);
  for (int c = 0; c < ch->ncols; c++)
    for (int i = 0; i < ch->nrows; i++)
      {
        size_t at = (size_t)c * ch->nrows + i;
        g_assert_cmpint (back.nulls[at], ==, ch->nulls[at]);
        if (!ch->nulls[at])
          g_assert_cmpint (back.values[at], ==, ch->values[at]);
      }
  vs_chunk_clear (&back);

  /* The zone map: each column's range, NULLs, and order. */
  g_assert_cmpint (vs_chunk_zone_decode (zone, zone_len, ch->ncols, zones), ==, 0);
  for (int c = 0; c < ch->ncols; c++)
    {
      gboolean has_null = FALSE, has_value = FALSE, sorted = TRUE;
      int64_t lo = 0, hi = 0, prev = 0;
      for (int i = 0; i < ch->nrows; i++)
        {
          size_t at = (size_t)c * ch->nrows + i;
          int64_t v = ch->values[at];
          if (ch->nulls[at])
            {
              has_null = TRUE;
              continue;
            }
          if (has_value && v < prev)
            sorted = FALSE;
          lo = has_value && lo < v ? lo : v;
          hi = has_value && hi > v ? hi : v;
          prev = v;
          has_value = TRUE;
        }
      g_assert_cmpint (zones[c].has_null, ==, has_null);
      g_assert_cmpint (zones[c].has_value, ==, has_value);
      g_assert_cmpint (zones[c].sorted, ==, sorted && !has_null);
      if (has_value)
        {
          g_assert_cmpint (zones[c].min, ==, lo);
          g_assert_cmpint (zones[c].max, ==, hi);
        }
    }
  /* One column decoded alone, the one it is coded relative to with it. */
  g_assert_cmpint (
      vs_chunk_open (codec, data, data_len, ch->ncols, ch->nrows, &back, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_chunk_columns (&back, 1u << (ch->ncols - 1), err, sizeof err), ==, 0);
  g_assert_true (back.decoded & (1u << (ch->ncols - 1)));
  for (int i = 0; i < ch->nrows; i++)
    {
      size_t at = (size_t)(ch->ncols - 1) * ch->nrows + i;
      if (!ch->nulls[at])
        g_assert_cmpint (back.values[at], ==, ch->values[at]);
    }
  vs_chunk_clear (&back);
  free (data);
  free (zone);
}

/* Edge values (the ends of 64 bits, wrapping differences), NULLs in
 * every pattern, columns equal to, offset from or unrelated to others. */
static void
test_round_trip (void)
{
  static const int64_t edges[]
      = { 0,   1,   -1,  INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
          127, 128, -64, -65,       1LL << 62 };
  VsChunkCodec *codec = vs_chunk_codec_new ();
  GRand *rand = g_rand_new_with_seed (14);

  g_assert_nonnull (codec);
  for (int round = 0; round < 30; round++)
    {
      int ncols = g_rand_int_range (rand, 1, VS_CHUNK_MAX_COLUMNS + 1);
      int nrows = round == 0 ? 1 : g_rand_int_range (rand, 1, VS_CHUNK_ROWS + 1);
      VsChunk ch = chunk_new (ncols, nrows);

      for (int c = 0; c < ncols; c++)
        {
          int shape = g_rand_int_range (rand, 0, 6);
          int64_t acc = (int64_t)g_rand_int (rand) << 20;
          for (int i = 0; i < nrows; i++)
            {
              size_t at = (size_t)c * nrows + i;
              int64_t v;
              switch (shape)
                {
                case 0: /* ids and times: growing */
                  v = acc += g_rand_int_range (rand, 0, 1000);
                  break;
                case 1: /* edges */
                  v = edges[g_rand_int_range (rand, 0, G_N_ELEMENTS (edges))];
                  break;
                case 2: /* another column plus a little */
                  v = c > 0 ? (int64_t)((uint64_t)ch.values[(size_t)(c - 1) * nrows + i]
                                        + (uint64_t)g_rand_int_range (rand, 0, 50))
                            : 7;
                  break;
                case 3: /* random 64 bits */
                  v = (int64_t)(((uint64_t)g_rand_int (rand) << 32) | g_rand_int (rand));
                  break;
                case 4: /* a few repeated values */
                  v = g_rand_int_range (rand, 0, 4) * 65536;
                  break;
                default: /* constant */
                  v = 42;
                  break;
                }
              ch.values[at] = v;
              /* NULLs: none, some or all, by column. */
              ch.nulls[at] = (c % 3 == 1 && g_rand_int_range (rand, 0, 4) == 0)
                             || (c % 7 == 6 && round % 2 == 0);
              if (ch.nulls[at])
                ch.values[at] = 0;
            }
        }
      round_trip (codec, &ch);
      chunk_free (&ch);
    }
  g_rand_free (rand);
  vs_chunk_codec_free (codec);
}

/* A frame that is damaged, cut short or read with another row count is
 * refused, never read past its end. */
static void
test_damage (void)
{
  VsChunkCodec *codec = vs_chunk_codec_new ();
  VsChunk ch = chunk_new (3, 1000), back;
  uint8_t *data, *zone;
  size_t data_len, zone_len;
  char err[256];

  for (int i = 0; i < 1000; i++)
    {
      ch.values[i] = i * 3;
      ch.values[1000 + i] = i % 7;
      ch.values[2000 + i] = (int64_t)i << 40;
    }
  g_assert_cmpint (
      vs_chunk_encode (codec, &ch, &data, &data_len, &zone, &zone_len, err, sizeof err), ==, 0);
  g_assert_cmpint (vs_chunk_decode (codec, data, data_len, 3, 999, &back, err, sizeof err), ==, -1);
  g_assert_cmpint (vs_chunk_decode (codec, data, data_len, 3, 1001, &back, err, sizeof err), ==,
                   -1);
  g_assert_cmpint (vs_chunk_decode (codec, data, data_len, 2, 1000, &back, err, sizeof err), ==,
                   -1);
  for (size_t cut = 0; cut < data_len; cut++)
    g_assert_cmpint (vs_chunk_decode (codec, data, cut, 3, 1000, &back, err, sizeof err), ==, -1);
  /* Any byte changed: refused, or (a bit the frame does not use) the
   * same values — never other values. */
  for (size_t k = 0; k < data_len; k++)
    {
      uint8_t *copy = g_memdup2 (data, data_len);
      copy[k] ^= 0x5a;
      if (vs_chunk_decode (codec, copy, data_len, 3, 1000, &back, err, sizeof err) == 0)
        {
          g_assert_cmpmem (back.values, 3000 * sizeof (int64_t), ch.values,
                           3000 * sizeof (int64_t));
          vs_chunk_clear (&back);
        }
      g_free (copy);
    }
  VsChunkZone zones[3];
  for (size_t cut = 0; cut < zone_len; cut++)
    g_assert_cmpint (vs_chunk_zone_decode (zone, cut, 3, zones), ==, -1);
  g_assert_cmpint (vs_chunk_zone_decode (zone, zone_len, 3, zones), ==, 0);
  free (data);
  free (zone);
  chunk_free (&ch);
  vs_chunk_codec_free (codec);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/chunk/round-trip", test_round_trip);
  g_test_add_func ("/chunk/damage", test_damage);
  return g_test_run ();
}
