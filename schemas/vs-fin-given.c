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

#include <stdlib.h>
#include <string.h>

typedef struct
{
  int nrows;
  uint8_t *zone, *data;
  size_t zone_len, data_len;
} VsGivenChunk;

struct VsFinGiven
{
  VsFinTrace t;        /* the events of rows 1..t.n */
  bool dropped;        /* given up: holds nothing */
  bool taken;          /* a finalizer took the events */
  VsGivenChunk *chunk; /* chunk k: rows k * VS_CHUNK_ROWS + 1 .. */
  size_t nchunks, capchunks;
  int64_t coded_rows;
  size_t chunk_bytes;
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

static void
free_chunks (VsFinGiven *g, size_t from)
{
  for (size_t k = from; k < g->nchunks; k++)
    {
      g->chunk_bytes -= g->chunk[k].zone_len + g->chunk[k].data_len;
      g->coded_rows -= g->chunk[k].nrows;
      free (g->chunk[k].zone);
      free (g->chunk[k].data);
    }
  g->nchunks = from < g->nchunks ? from : g->nchunks;
}

void
vs_fin_given_drop (VsFinGiven *g)
{
  if (g == NULL)
    return;
  free_chunks (g, 0);
  free (g->chunk);
  free (g->t.ev);
  free (g->t.bl);
  memset (&g->t, 0, sizeof g->t);
  g->chunk = NULL;
  g->capchunks = 0;
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
vs_fin_given_add_chunk (VsFinGiven *g, int nrows, const uint8_t *zone, size_t zone_len,
                        const uint8_t *data, size_t data_len)
{
  if (g->dropped)
    return -1;
  /* Only whole chunks, each of rows already given. */
  if (g->taken || nrows != GIVEN_CHUNK_ROWS || g->coded_rows + nrows > (int64_t)g->t.n)
    {
      vs_fin_given_drop (g);
      return -1;
    }
  if (g->nchunks == g->capchunks)
    {
      size_t cap = g->capchunks ? g->capchunks * 2 : 64;
      VsGivenChunk *c = realloc (g->chunk, cap * sizeof *c);
      if (c == NULL)
        {
          vs_fin_given_drop (g);
          return -1;
        }
      g->chunk = c;
      g->capchunks = cap;
    }
  VsGivenChunk *c = &g->chunk[g->nchunks];
  c->nrows = nrows;
  c->zone = malloc (zone_len ? zone_len : 1);
  c->data = malloc (data_len ? data_len : 1);
  if (c->zone == NULL || c->data == NULL)
    {
      free (c->zone);
      free (c->data);
      vs_fin_given_drop (g);
      return -1;
    }
  memcpy (c->zone, zone, zone_len);
  memcpy (c->data, data, data_len);
  c->zone_len = zone_len;
  c->data_len = data_len;
  g->nchunks++;
  g->coded_rows += nrows;
  g->chunk_bytes += zone_len + data_len;
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
  free_chunks (g, (size_t)(rows / GIVEN_CHUNK_ROWS));
}

int64_t
vs_fin_given_rows (const VsFinGiven *g)
{
  return g->dropped ? -1 : (int64_t)g->t.n;
}

int64_t
vs_fin_given_coded_rows (const VsFinGiven *g)
{
  return g->dropped ? 0 : g->coded_rows;
}

size_t
vs_fin_given_bytes (const VsFinGiven *g)
{
  return g->t.cap * sizeof *g->t.ev + g->capchunks * sizeof *g->chunk + g->chunk_bytes;
}

static _Thread_local VsFinGiven *active_given;

VsFinGiven *
vs_fin_given_set_active (VsFinGiven *g)
{
  VsFinGiven *old = active_given;
  active_given = g;
  return old;
}

VsFinGiven *
vs_fin_given_active (void)
{
  return active_given;
}

bool
vs_fin_given_taken (const VsFinGiven *g)
{
  return g != NULL && g->taken && !g->dropped;
}

size_t
vs_fin_given_n_chunks (const VsFinGiven *g)
{
  return g->dropped ? 0 : g->nchunks;
}

void
vs_fin_given_chunk (const VsFinGiven *g, size_t k, int *nrows, const uint8_t **zone,
                    size_t *zone_len, const uint8_t **data, size_t *data_len)
{
  const VsGivenChunk *c = &g->chunk[k];
  *nrows = c->nrows;
  *zone = c->zone;
  *zone_len = c->zone_len;
  *data = c->data;
  *data_len = c->data_len;
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
  *coded_rows = g->coded_rows;
  free (g->t.bl);
  memset (&g->t, 0, sizeof g->t);
  g->taken = true;
  return 0;
}
