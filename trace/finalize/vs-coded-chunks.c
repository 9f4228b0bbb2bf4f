/* SPDX-License-Identifier: MIT */
/* vs-coded-chunks.c — chunks coded ahead of the trace they go into (see
 * vs-coded-chunks.h). */
#include "vs-coded-chunks.h"

#include <assert.h>
#include <stdlib.h>

int
vs_coded_chunks_take (VsCodedChunks *l, int nrows, uint8_t *zone, size_t zone_len, uint8_t *data,
                      size_t data_len)
{
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 64;
      VsCodedChunk *c = realloc (l->chunk, cap * sizeof *c);
      if (c == NULL)
        {
          free (zone);
          free (data);
          return -1;
        }
      l->chunk = c;
      l->cap = cap;
    }
  assert (nrows > 0 && data != NULL && data_len > 0);
  l->chunk[l->n++] = (VsCodedChunk){ nrows, zone, data, zone_len, data_len };
  l->rows += nrows;
  l->bytes += zone_len + data_len;
  return 0;
}

void
vs_coded_chunks_truncate (VsCodedChunks *l, size_t n)
{
  for (size_t k = n; k < l->n; k++)
    {
      l->rows -= l->chunk[k].nrows;
      l->bytes -= l->chunk[k].zone_len + l->chunk[k].data_len;
      free (l->chunk[k].zone);
      free (l->chunk[k].data);
    }
  if (n < l->n)
    l->n = n;
  /* what is left adds up to the chunks kept (none: nothing) */
  assert (l->rows >= 0 && (l->n > 0 || (l->rows == 0 && l->bytes == 0)));
}

void
vs_coded_chunks_clear (VsCodedChunks *l)
{
  vs_coded_chunks_truncate (l, 0);
  free (l->chunk);
  *l = (VsCodedChunks){ 0 };
}
