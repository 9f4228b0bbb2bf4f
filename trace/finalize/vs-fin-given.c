/* SPDX-License-Identifier: MIT */
/* vs-fin-given.c — allocator events handed to the finalizer as they are
 * written (see vs-fin-given.h).
 *
 * The events are kept as the finalizer's own records (VsFinTrace, filled
 * by vs_fin_add_alloc_event as the writer's bulk mode fills it); the
 * chunks as the bytes the codec made of them.  The finalizer's side is
 * vs_fin_given_take() (vs-trace-finalize-private.h).
 */
#include "vs-fin-given.h"
#include "vs-trace-finalize-private.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct VsFinGiven
{
  VsFinTrace t;         /* the events of rows 1..t.n */
  bool dropped;         /* given up: holds nothing */
  bool taken;           /* a finalizer took the events */
  VsCodedChunks chunks; /* chunk k: rows k * VS_CHUNK_ROWS + 1 .. */
};

/* alloc_event chunks hold this many rows (vs-chunk.h, not included:
 * vstrace has no codec). */
enum
{
  GIVEN_CHUNK_ROWS = 4096
};

VsFinGiven *
vs_fin_given_new (void)
{
  return calloc (1, sizeof (VsFinGiven));
}

void
vs_fin_given_drop (VsFinGiven *g)
{
  if (g == NULL)
    return;
  vs_coded_chunks_clear (&g->chunks);
  free (g->t.ev);
  free (g->t.bl);
  memset (&g->t, 0, sizeof g->t);
  g->dropped = true;
}

void
vs_fin_given_free (VsFinGiven *g)
{
  if (g == NULL)
    return;
  vs_fin_given_drop (g);
  free (g);
}

int
vs_fin_given_add_alloc (VsFinGiven *g, int64_t id, const VsAllocEvent *e)
{
  if (g->dropped)
    return -1;
  if (g->taken || id != (int64_t)g->t.n + 1 || vs_fin_add_alloc_event (&g->t, id, e) < 0)
    {
      vs_fin_given_drop (g);
      return -1;
    }
  return 0;
}

int
vs_fin_given_add_chunk (VsFinGiven *g, int nrows, uint8_t *zone, size_t zone_len, uint8_t *data,
                        size_t data_len)
{
  /* Only whole chunks, each of rows already given. */
  if (g->dropped || g->taken || nrows != GIVEN_CHUNK_ROWS
      || g->chunks.rows + nrows > (int64_t)g->t.n)
    {
      free (zone);
      free (data);
      vs_fin_given_drop (g);
      return -1;
    }
  if (vs_coded_chunks_take (&g->chunks, nrows, zone, zone_len, data, data_len) < 0)
    {
      vs_fin_given_drop (g);
      return -1;
    }
  return 0;
}

void
vs_fin_given_cut (VsFinGiven *g, int64_t rows)
{
  if (g->dropped || rows >= (int64_t)g->t.n)
    return;
  if (rows < 0)
    rows = 0;
  g->t.n = (size_t)rows;
  vs_coded_chunks_truncate (&g->chunks, (size_t)(rows / GIVEN_CHUNK_ROWS));
  assert (g->chunks.rows <= rows);
}

int64_t
vs_fin_given_rows (const VsFinGiven *g)
{
  return g->dropped ? -1 : (int64_t)g->t.n;
}

int64_t
vs_fin_given_coded_rows (const VsFinGiven *g)
{
  return g->dropped ? 0 : g->chunks.rows;
}

size_t
vs_fin_given_bytes (const VsFinGiven *g)
{
  return g->t.cap * sizeof *g->t.ev + g->chunks.cap * sizeof *g->chunks.chunk + g->chunks.bytes;
}

bool
vs_fin_given_taken (const VsFinGiven *g)
{
  return g != NULL && g->taken && !g->dropped;
}

const VsCodedChunks *
vs_fin_given_chunks (const VsFinGiven *g)
{
  return &g->chunks;
}

int
vs_fin_given_take (VsFinGiven *g, VsFinTrace *t, int64_t *rows, int64_t *coded_rows)
{
  if (g == NULL || g->dropped || g->taken)
    return -1;
  t->ev = g->t.ev;
  t->n = g->t.n;
  t->cap = g->t.cap;
  *rows = (int64_t)g->t.n;
  *coded_rows = g->chunks.rows;
  assert (*coded_rows >= 0 && *coded_rows <= *rows);
  free (g->t.bl);
  memset (&g->t, 0, sizeof g->t);
  g->taken = true;
  return 0;
}
