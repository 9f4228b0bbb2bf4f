/* SPDX-License-Identifier: MIT */
/* vs-given-coder.c — alloc_event rows coded into chunks as they are
 * written (see vs-given-coder.h).  One chunk's rows are gathered at a
 * time, as the row sink gathers them (vs-trace-compact.c), and coded by
 * the same codec into the same bytes.
 */
#include "vs-given-coder.h"
#include "vs-chunk.h"

#include <stdlib.h>

struct VsGivenCoder
{
  VsChunkCodec *codec;
  VsChunk rows; /* room for VS_CHUNK_ROWS rows; nrows gathered */
};

VsGivenCoder *
vs_given_coder_new (void)
{
  VsGivenCoder *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->codec = vs_chunk_codec_new ();
  c->rows.ncols = VS_ALLOC_EVENT_COLUMNS;
  c->rows.values = malloc ((size_t)VS_ALLOC_EVENT_COLUMNS * VS_CHUNK_ROWS * sizeof (int64_t));
  c->rows.nulls = malloc ((size_t)VS_ALLOC_EVENT_COLUMNS * VS_CHUNK_ROWS);
  if (c->codec == NULL || c->rows.values == NULL || c->rows.nulls == NULL)
    {
      vs_given_coder_free (c);
      return NULL;
    }
  return c;
}

void
vs_given_coder_free (VsGivenCoder *c)
{
  if (c == NULL)
    return;
  vs_chunk_codec_free (c->codec);
  free (c->rows.values);
  free (c->rows.nulls);
  free (c);
}

int
vs_given_coder_row (VsGivenCoder *c, VsFinGiven *g, const int64_t *v, uint32_t nulls)
{
  if (vs_fin_given_rows (g) < 0)
    return -1;
  vs_chunk_set_row (&c->rows, c->rows.nrows, v, nulls);
  if (++c->rows.nrows < VS_CHUNK_ROWS)
    return 0;
  uint8_t *data = NULL, *zone = NULL;
  size_t data_len, zone_len;
  char err[256];
  int rc
      = vs_chunk_encode (c->codec, &c->rows, &data, &data_len, &zone, &zone_len, err, sizeof err);
  c->rows.nrows = 0;
  if (rc < 0)
    {
      free (data);
      free (zone);
      vs_fin_given_drop (g);
      return -1;
    }
  return vs_fin_given_add_chunk (g, VS_CHUNK_ROWS, zone, zone_len, data, data_len);
}
