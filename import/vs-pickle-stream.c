/* SPDX-License-Identifier: MIT */
/* vs-pickle-stream.c — append hooks: streaming a long list through the
 * reader (see vs_pickle_load_file_full in vs-pickle.h).
 *
 * An append hook lets a consumer take the items of a long list as they are
 * appended (a snapshot's history: millions of entry dicts).  The values
 * built for them are then freed (vs_pickle_reclaim()), so the graph stays
 * small; the hook may leave tokens in the memo in place of the containers
 * it took, so that a later reference to a shared value (a stack frame)
 * reads as the number the consumer gave it.  A "shared" token also stands
 * for the container's content: a dict or list made later (`}`/`]`,
 * MEMOIZE, MARK, then filled by one SETITEMS/APPENDS) whose items are the
 * same stable handles reads as that token and is never built
 * (vs_pickle_share(); a snapshot repeats a few hundred frames and stacks
 * millions of times).
 *
 * Repeats are commonly repeats byte for byte too (a pickler writes a
 * repeated stack's frames list the same way each time, only the memo
 * indexes its MEMOIZE opcodes store to differ, and those are implicit), so
 * the span of input that made a shared token is kept and the same bytes
 * met again are replayed: the token pushed and the tokens memoized, as
 * parsing them would do, without parsing (vs_pickle_span_record(),
 * vs_pickle_span_find()).
 *
 * The parser's loop (vs-pickle.c) calls in here once per taken append,
 * once per filled fresh container and once per new dict or list; nothing
 * here runs per opcode.
 */
#include "vs-pickle-private.h"

#include <stdlib.h>
#include <string.h>

/* TRUE for the types a token can stand for. */
static gboolean
is_container (guint8 type)
{
  return type == VS_PICKLE_LIST || type == VS_PICKLE_TUPLE || type == VS_PICKLE_DICT;
}

/* qsort() and bsearch() order of guint32 and of gsize. */
static int
cmp_u32 (const void *a, const void *b)
{
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return x < y ? -1 : x > y;
}

static int
cmp_gsize (const void *a, const void *b)
{
  gsize x = *(const gsize *)a, y = *(const gsize *)b;
  return x < y ? -1 : x > y;
}

/* Sorts a vector of n-byte elements and drops repeats; returns the new
 * length.  Vectors already in order (the usual case) are not sorted. */
static gsize
sort_unique (gpointer data, gsize len, gsize elt, int (*cmp) (const void *, const void *))
{
  if (len < 2)
    return len;
  gsize i = 1;
  while (i < len && cmp ((char *)data + (i - 1) * elt, (char *)data + i * elt) < 0)
    i++;
  if (i == len)
    return len;
  qsort (data, len, elt, cmp);
  gsize k = 1;
  for (i = 1; i < len; i++)
    if (cmp ((char *)data + i * elt, (char *)data + (k - 1) * elt) != 0)
      memmove ((char *)data + k++ * elt, (char *)data + i * elt, elt);
  return k;
}

/* A handle of the region that vs_pickle_reclaim() may free: a node built
 * since the watermark. */
static gboolean
in_region (const Parser *ps, guint32 h)
{
  return !(h & IMM_BIT) && h < TOKEN_BASE && h >= ps->wm_nodes;
}

/* The region's new handle for old handle h, a kept string or number. */
static guint32
moved (const Parser *ps, guint32 h)
{
  const guint32 *live = ps->live.data;
  const guint32 *f = bsearch (&h, live, ps->live.len, sizeof (guint32), cmp_u32);
  g_assert (f != NULL);
  return ps->wm_nodes + (guint32)(f - live);
}

/* Called after an append hook took items (see Parser): applies the hook's
 * tokens to the memo, frees the region when nothing outside it needs more
 * than its strings and numbers, and starts a new region.  Returns FALSE
 * with error set only when out of the memory bound (vs-pickle-private.h). */
gboolean
vs_pickle_reclaim (Parser *ps)
{
  VsPickle *p = ps->p;
  guint32 *memo = ps->memo.data, *st = ps->stack.data;
  gboolean ok = !ps->dirty && !ps->log_full;

  /* The tokens by handle, over the region. */
  gsize region = p->nodes.len - ps->wm_nodes;
  guint32 *tokmap = NULL;
  if (ps->tokens.len)
    {
      if (!vec_reserve (p, &ps->tokmap, sizeof (guint32), region, ps->error))
        return FALSE;
      tokmap = ps->tokmap.data;
      memset (tokmap, 0xff, region * sizeof (guint32));
      for (gsize i = 0; i < ps->tokens.len; i++)
        {
          const Token *t = (const Token *)ps->tokens.data + i;
          tokmap[t->ref - ps->wm_nodes] = t->value;
        }
    }
  ps->memo_log.len = sort_unique (ps->memo_log.data, ps->memo_log.len, sizeof (gsize), cmp_gsize);
  const gsize *log = ps->memo_log.data;
  ps->live.len = 0;
  for (gsize pass = 0; pass < 2; pass++)
    {
      gsize n = pass == 0 ? ps->memo_log.len : ps->stack.len - ps->stack_low;
      for (gsize i = 0; i < n; i++)
        {
          guint32 *slot = pass == 0 ? &memo[log[i]] : &st[ps->stack_low + i];
          guint32 h = *slot;
          if (!in_region (ps, h))
            continue;
          if (is_container (NODES (p)[h].type))
            {
              guint32 t = pass == 0 && tokmap ? tokmap[h - ps->wm_nodes] : G_MAXUINT32;
              if (t != G_MAXUINT32)
                *slot = TOKEN_BASE + t;
              else
                ok = FALSE;
              continue;
            }
          if (!vec_reserve (p, &ps->live, sizeof (guint32), 1, ps->error))
            return FALSE;
          ((guint32 *)ps->live.data)[ps->live.len++] = h;
        }
    }
  if (ok)
    {
      ps->live.len = sort_unique (ps->live.data, ps->live.len, sizeof (guint32), cmp_u32);
      const guint32 *live = ps->live.data;
      /* Ascending and unique, so live[j] >= wm + j: moving down never
       * overwrites a node still to be moved. */
      for (gsize j = 0; j < ps->live.len; j++)
        NODES (p)[ps->wm_nodes + j] = NODES (p)[live[j]];
      for (gsize i = 0; i < ps->memo_log.len; i++)
        if (in_region (ps, memo[log[i]]))
          memo[log[i]] = moved (ps, memo[log[i]]);
      for (gsize i = ps->stack_low; i < ps->stack.len; i++)
        if (in_region (ps, st[i]))
          st[i] = moved (ps, st[i]);
      p->nodes.len = ps->wm_nodes + ps->live.len;
      p->pool.len = ps->wm_pool;
      p->chunks.len = ps->wm_chunks;
    }
  ps->wm_nodes = (guint32)p->nodes.len;
  ps->wm_pool = p->pool.len;
  ps->wm_chunks = p->chunks.len;
  ps->stack_low = ps->stack.len;
  ps->dirty = ps->log_full = FALSE;
  ps->memo_log.len = ps->tokens.len = 0;
  /* Handles of the region may be reused from here on. */
  ps->nfresh = 0;
  ps->fresh_min = G_MAXUINT32;
  return TRUE;
}

static inline guint32
shared_hash (guint8 type, gsize n, const guint32 *items)
{
  /* Every item, two to a 64-bit word, each word times its own odd
   * constant: the products are independent, so they overlap (this runs
   * for every fresh container filled).  A sample of the items was not
   * enough: real stacks that agreed on it made chains of equal hashes,
   * and a hostile file could make them as long as it liked. */
  static const guint64 mult[SHARED_MAX / 2] = {
    0xff51afd7ed558ccdu, 0xc2b2ae3d27d4eb4fu, 0x165667b19e3779f9u, 0x27d4eb2f165667c5u,
    0x85ebca77c2b2ae63u, 0x94d049bb133111ebu, 0xbf58476d1ce4e5b9u, 0xd6e8feb86659fd93u,
  };
  g_assert (n <= SHARED_MAX);
  guint64 h = (guint64)type * 0x9e3779b97f4a7c15u + n;
  gsize i = 0;
  for (; i + 1 < n; i += 2)
    h += ((guint64)items[i] | (guint64)items[i + 1] << 32) * mult[i / 2];
  if (i < n)
    h += (guint64)items[i] * mult[i / 2];
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53u;
  return (guint32)(h ^ (h >> 32));
}

/* The shared index's key for (type, items[0..n)). */
static inline SharedKey
shared_key (const Parser *ps, guint8 type, gsize n, const guint32 *items)
{
  return (SharedKey){ .hash = shared_hash (type, n, items),
                      .head = type | (guint32)n << 8,
                      .items = items,
                      .records = ps->shared.data };
}

/* Remembers that containers of type with items[0..n) (all stable) read as
 * token value.  FALSE, with nothing recorded, when over the memory bound
 * or when SHARED_CHAIN_MAX records have its hash already. */
static gboolean
shared_add (Parser *ps, guint8 type, gsize n, const guint32 *items, guint32 value)
{
  VsPickle *p = ps->p;
  SharedKey k = shared_key (ps, type, n, items);
  bool added;
  IndexSlot *e = shared_index_insert (&ps->shared_index, &k, &added);
  if (e == NULL)
    return FALSE;
  if (!added)
    return TRUE;
  if (ps->shared.len + 2 + n >= G_MAXUINT32
      || !vec_reserve (p, &ps->shared, sizeof (guint32), 2 + n, NULL))
    {
      shared_index_remove (&ps->shared_index, e);
      return FALSE;
    }
  guint32 *rec = (guint32 *)ps->shared.data + ps->shared.len;
  rec[0] = k.head;
  rec[1] = value;
  memcpy (rec + 2, items, n * sizeof (guint32));
  e->ref = (guint32)ps->shared.len + 1;
  ps->shared.len += 2 + n;
  return TRUE;
}

/* APPENDS or SETITEMS filling fresh container f from stack index `from`:
 * when its items are all stable and equal to those of a container given a
 * shared token, the container is replaced by that token on the stack and
 * in the memo (nothing else refers to it: see Fresh), as if the pickle had
 * referred to the first through its memo.  Returns TRUE when done so. */
gboolean
vs_pickle_share (Parser *ps, const Fresh *f, gsize from, guint8 want)
{
  VsPickle *p = ps->p;
  guint32 *st = ps->stack.data;
  gsize n = ps->stack.len - from;
  if (f->c == G_MAXUINT32 || f->at + 1 != from || st[f->at] != f->c || n == 0 || n > SHARED_MAX
      || shared_index_count (&ps->shared_index) == 0)
    return FALSE;
  const Node *node = &NODES (p)[f->c];
  if (node->type != want || node->count != 0 || node->multi)
    return FALSE;
  const guint32 *items = st + from;
  for (gsize i = 0; i < n; i++)
    if (!((items[i] & IMM_BIT) || items[i] >= TOKEN_BASE || items[i] < ps->wm_nodes))
      return FALSE;
  SharedKey k = shared_key (ps, want, n, items);
  const IndexSlot *e = shared_index_find (&ps->shared_index, &k);
  if (e == NULL)
    return FALSE;
  /* The record's value, after its first word. */
  guint32 tok = TOKEN_BASE + k.records[e->ref];
  st[f->at] = tok;
  guint32 *memo = ps->memo.data;
  if (f->memo < ps->memo.len && memo[f->memo] == f->c)
    {
      memo[f->memo] = tok;
      /* The memo store logged for vs_pickle_reclaim() no longer holds a
       * value of the region: drop it when it is the last (it nearly
       * always is). */
      if (ps->memo_log.len && ((gsize *)ps->memo_log.data)[ps->memo_log.len - 1] == f->memo)
        ps->memo_log.len--;
    }
  stack_truncate (ps, from);
  return TRUE;
}

gboolean
vs_pickle_set_token (VsPickle *p, VsPickleRef v, guint32 value)
{
  Parser *ps = p->ps;
  if (ps == NULL || !in_region (ps, v) || !is_container (NODES (p)[v].type)
      || value > VS_PICKLE_TOKEN_MAX)
    return FALSE;
  if (!vec_reserve (p, &ps->tokens, sizeof (Token), 1, NULL))
    return FALSE;
  ((Token *)ps->tokens.data)[ps->tokens.len++] = (Token){ v, value };
  return TRUE;
}

gboolean
vs_pickle_set_token_shared (VsPickle *p, VsPickleRef v, guint32 value)
{
  if (!vs_pickle_set_token (p, v, value))
    return FALSE;
  Parser *ps = p->ps;
  const Node *node = &NODES (p)[v];
  if ((node->type != VS_PICKLE_DICT && node->type != VS_PICKLE_LIST) || node->multi
      || node->count == 0 || node->count > SHARED_MAX)
    return TRUE;
  const guint32 *items = POOL (p) + node->u.one.off;
  if (vs_pickle_stable (p, items, node->count))
    shared_add (ps, node->type, node->count, items, value);
  return TRUE;
}

gboolean
vs_pickle_get_token (const VsPickle *p, VsPickleRef v, guint32 *value)
{
  if (ref_type (p, v) != VS_PICKLE_TOKEN)
    return FALSE;
  *value = v - TOKEN_BASE;
  return TRUE;
}

gboolean
vs_pickle_list_taken (const VsPickle *p, VsPickleRef v)
{
  return ref_type (p, v) == VS_PICKLE_LIST && NODES (p)[v].taken;
}

gboolean
vs_pickle_stable (const VsPickle *p, const VsPickleRef *v, gsize n)
{
  if (p->ps == NULL)
    return TRUE;
  /* Below the watermark nothing is moved or freed; immediates and tokens
   * carry their value in the handle. */
  guint32 wm = p->ps->wm_nodes;
  for (gsize i = 0; i < n; i++)
    if (!((v[i] & IMM_BIT) || v[i] >= TOKEN_BASE || v[i] < wm))
      return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------- spans -- */

/* The hash of the klen bytes at b (klen SPAN_KEY_SHORT or SPAN_KEY_LONG);
 * never 0. */
static inline guint32
span_hash (const guint8 *b, gsize klen)
{
  guint64 w[SPAN_KEY_LONG / 8];
  memcpy (w, b, klen);
  guint64 h = (guint64)klen * 0x9e3779b97f4a7c15u;
  h += w[0] * 0xff51afd7ed558ccdu + w[1] * 0xc2b2ae3d27d4eb4fu;
  if (klen == SPAN_KEY_LONG)
    h += w[2] * 0x165667b19e3779f9u + w[3] * 0x27d4eb2f165667c5u;
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53u;
  guint32 r = (guint32)(h ^ (h >> 32));
  return r ? r : 1;
}

/* The span index's key for the bytes at input offset at, hashed over
 * their first klen (at least that many must be left). */
static inline SpanKey
span_key (const Parser *ps, gsize at, gsize klen)
{
  const VsPickle *p = ps->p;
  return (SpanKey){ .hash = span_hash (p->data + at, klen),
                    .data = p->data,
                    .at = at,
                    .left = p->size - at,
                    .spans = ps->spans.data };
}

const Span *
vs_pickle_span_find (const Parser *ps, gsize at)
{
  gsize left = ps->p->size - at;
  const guint8 *b = ps->p->data + at;
  const IndexSlot *e = NULL;
  if (left < SPAN_KEY_SHORT)
    return NULL;
  guint32 bit = span_filter_bit (b);
  if (!(ps->span_filter[bit / 64] & (G_GUINT64_CONSTANT (1) << (bit % 64))))
    return NULL;
  if (left >= SPAN_KEY_LONG)
    {
      SpanKey k = span_key (ps, at, SPAN_KEY_LONG);
      e = span_index_find (&ps->span_index, &k);
    }
  if (e == NULL)
    {
      SpanKey k = span_key (ps, at, SPAN_KEY_SHORT);
      e = span_index_find (&ps->span_index, &k);
    }
  return e != NULL ? (const Span *)ps->spans.data + e->ref - 1 : NULL;
}

/* The number of memo entries the span d[0..len) stores, or -1 when it is
 * not one that can be replayed (see vs_pickle_span_record()): one dict or
 * list, memoized or not, filled by one SETITEMS or APPENDS with memo
 * fetches of entries below memo_start, ints that are immediates, None,
 * bools and dicts of those. */
static gssize
span_memo_count (const guint8 *d, gsize len, gsize memo_start)
{
  gsize pos = 0, nmemo = 0;
  int depth = 0;
  guint8 outer = d[pos++];
  if (outer != '}' && outer != ']')
    return -1;
  for (;;)
    {
      /* after `}` or `]`: MEMOIZE, then MARK */
      if (pos < len && d[pos] == 0x94)
        pos++, nmemo++;
      if (pos >= len || d[pos++] != '(')
        return -1;
      for (;;)
        {
          if (pos >= len)
            return -1;
          guint8 op = d[pos++];
          gsize w = op == 'h' || op == 'K' ? 1 : op == 'M' ? 2 : op == 'j' || op == 'J' ? 4 : 0;
          if (len - pos < w)
            return -1;
          if (op == 'h' || op == 'j')
            {
              if (read_le (d + pos, w) >= memo_start)
                return -1;
            }
          else if (op == 'J')
            {
              gint64 v = (gint32)(guint32)read_le (d + pos, 4);
              if (v < IMM_MIN || v > IMM_MAX)
                return -1;
            }
          else if (op == '}' && depth == 0)
            {
              depth = 1;
              break; /* its MEMOIZE and MARK */
            }
          else if (op == 'u' && depth == 1)
            depth = 0;
          else if (depth == 0 && ((op == 'u' && outer == '}') || (op == 'e' && outer == ']')))
            return pos == len ? (gssize)nmemo : -1;
          else if (op != 'K' && op != 'M' && op != 'N' && op != 0x88 && op != 0x89)
            return -1;
          pos += w;
        }
    }
}

/* Why a replay gives what parsing would: the span's bytes are the same,
 * so are its opcodes and operands.  Its memo fetches read entries that
 * were set before it was first parsed and have not changed since (nothing
 * but a PUT over a set entry changes one, and that sets spans_off: a
 * reclaim rewrites only entries holding values of its region, which no
 * fetch in a kept span read, since they were all items of containers that
 * got shared tokens and so stable).  Its dicts, each filled with those
 * values, get the shared tokens they got then (shared tokens are never
 * forgotten), and so does the container itself; the tokens it memoized
 * are what its MEMOIZE opcodes store again, in order.  What parsing would
 * do besides is invisible: nodes made and dropped, and fresh records of
 * enclosing containers forgotten, which only costs them a chance to be
 * shared. */
void
vs_pickle_span_record (Parser *ps, const Fresh *f, gsize end)
{
  VsPickle *p = ps->p;
  const guint32 *memo = ps->memo.data;
  gsize len = end - f->start;
  if (ps->spans_off || len < SPAN_KEY_SHORT || len > SPAN_MAX_LEN
      || ps->spans.len >= G_MAXUINT32 - 1)
    return;
  gssize nmemo = span_memo_count (p->data + f->start, len, f->memo_start);
  if (nmemo < 0 || f->memo_start + (gsize)nmemo != ps->memo.len)
    return;
  /* Everything it memoized, and what it leaves, must be tokens: values
   * that mean the same for the rest of the parse. */
  guint32 top = ((const guint32 *)ps->stack.data)[f->at];
  if (ref_type (p, top) != VS_PICKLE_TOKEN)
    return;
  for (gsize i = f->memo_start; i < ps->memo.len; i++)
    if (ref_type (p, memo[i]) != VS_PICKLE_TOKEN)
      return;
  /* Not added when the same bytes are kept already, when SPAN_CHAIN_MAX
   * spans have its key hash or when over the memory bound. */
  SpanKey k = span_key (ps, f->start, len >= SPAN_KEY_LONG ? SPAN_KEY_LONG : SPAN_KEY_SHORT);
  bool added;
  IndexSlot *e = span_index_insert (&ps->span_index, &k, &added);
  if (e == NULL || !added)
    return;
  if (ps->span_values.len + (gsize)nmemo >= G_MAXUINT32
      || !vec_reserve (p, &ps->spans, sizeof (Span), 1, NULL)
      || !vec_reserve (p, &ps->span_values, sizeof (guint32), (gsize)nmemo, NULL))
    {
      span_index_remove (&ps->span_index, e);
      return;
    }
  if (nmemo)
    memcpy ((guint32 *)ps->span_values.data + ps->span_values.len, memo + f->memo_start,
            (gsize)nmemo * sizeof (guint32));
  ((Span *)ps->spans.data)[ps->spans.len] = (Span){
    .off = f->start,
    .len = (guint32)len,
    .nmemo = (guint32)nmemo,
    .values = (guint32)ps->span_values.len,
    .top = top,
  };
  ps->span_values.len += (gsize)nmemo;
  ps->spans.len++;
  guint32 bit = span_filter_bit (p->data + f->start);
  ps->span_filter[bit / 64] |= G_GUINT64_CONSTANT (1) << (bit % 64);
  e->ref = (guint32)ps->spans.len;
}
