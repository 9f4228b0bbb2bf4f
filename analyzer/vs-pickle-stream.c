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
 * The parser's loop (vs-pickle.c) calls in here once per taken append and
 * once per filled fresh container; nothing here runs per opcode.
 */
#include "vs-pickle-private.h"

#include <stdlib.h>
#include <string.h>

/* TRUE for the types a token can stand for. */
static gboolean
is_container (guint8 type)
{
  return type == VS_PICKLE_LIST || type == VS_PICKLE_TUPLE
         || type == VS_PICKLE_DICT;
}

/* qsort() and bsearch() order of guint32 and of gsize. */
static int
cmp_u32 (const void *a, const void *b)
{
  guint32 x = *(const guint32 *) a, y = *(const guint32 *) b;
  return x < y ? -1 : x > y;
}

static int
cmp_gsize (const void *a, const void *b)
{
  gsize x = *(const gsize *) a, y = *(const gsize *) b;
  return x < y ? -1 : x > y;
}

/* Sorts a vector of n-byte elements and drops repeats; returns the new
 * length.  Vectors already in order (the usual case) are not sorted. */
static gsize
sort_unique (gpointer data, gsize len, gsize elt,
             int (*cmp) (const void *, const void *))
{
  if (len < 2)
    return len;
  gsize i = 1;
  while (i < len && cmp ((char *) data + (i - 1) * elt, (char *) data + i * elt) < 0)
    i++;
  if (i == len)
    return len;
  qsort (data, len, elt, cmp);
  gsize k = 1;
  for (i = 1; i < len; i++)
    if (cmp ((char *) data + i * elt, (char *) data + (k - 1) * elt) != 0)
      memmove ((char *) data + k++ * elt, (char *) data + i * elt, elt);
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
  return ps->wm_nodes + (guint32) (f - live);
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
          const Token *t = (const Token *) ps->tokens.data + i;
          tokmap[t->ref - ps->wm_nodes] = t->value;
        }
    }
  ps->memo_log.len = sort_unique (ps->memo_log.data, ps->memo_log.len,
                                  sizeof (gsize), cmp_gsize);
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
              guint32 t = pass == 0 && tokmap ? tokmap[h - ps->wm_nodes]
                                              : G_MAXUINT32;
              if (t != G_MAXUINT32)
                *slot = TOKEN_BASE + t;
              else
                ok = FALSE;
              continue;
            }
          if (!vec_reserve (p, &ps->live, sizeof (guint32), 1, ps->error))
            return FALSE;
          ((guint32 *) ps->live.data)[ps->live.len++] = h;
        }
    }
  if (ok)
    {
      ps->live.len = sort_unique (ps->live.data, ps->live.len,
                                  sizeof (guint32), cmp_u32);
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
  ps->wm_nodes = (guint32) p->nodes.len;
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
  /* Runs for every fresh container filled, so it mixes only four items
   * (those after the first key, in dicts: values) with independent
   * products; equal hashes are told apart by comparing all items. */
  G_STATIC_ASSERT (SHARED_MAX >= 4);
  guint64 h = (guint64) type * 0x9e3779b97f4a7c15u + n;
  h += (guint64) items[n > 1] * 0xff51afd7ed558ccdu;
  h += (guint64) items[n > 3 ? 3 : 0] * 0xc2b2ae3d27d4eb4fu;
  h += (guint64) items[n / 2] * 0x165667b19e3779f9u;
  h += (guint64) items[n - 1] * 0x27d4eb2f165667c5u;
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53u;
  return (guint32) (h ^ (h >> 32));
}

/* The index slot for (type, items[0..n)) with hash h: the one holding
 * its record or the empty one where it belongs.  A slot is two guint32,
 * the hash and the record's offset + 1 (0: empty).  The index must exist
 * and is kept at most a quarter full, so a lookup nearly always ends at
 * its first slot. */
static guint32 *
shared_slot (const Parser *ps, guint32 h, guint8 type, gsize n,
             const guint32 *items)
{
  const guint32 *rec = ps->shared.data;
  guint32 *index = ps->shared_index.data;
  gsize mask = ps->shared_index.len / 2 - 1;
  for (gsize i = h & mask;; i = (i + 1) & mask)
    {
      guint32 *slot = index + 2 * i;
      if (slot[1] == 0)
        return slot;
      if (slot[0] != h)
        continue;
      const guint32 *r = rec + slot[1] - 1;
      if (r[0] != (type | (guint32) n << 8))
        continue;
      gsize k = 0;
      while (k < n && r[2 + k] == items[k])
        k++;
      if (k == n)
        return slot;
    }
}

/* Remembers that containers of type with items[0..n) (all stable) read as
 * token value.  FALSE when over the memory bound (nothing is recorded). */
static gboolean
shared_add (Parser *ps, guint8 type, gsize n, const guint32 *items,
            guint32 value)
{
  VsPickle *p = ps->p;
  /* slots = shared_index.len / 2, at most a quarter of them used */
  if ((ps->shared_count + 1) * 8 > ps->shared_index.len)
    {
      gsize cap = ps->shared_index.len ? ps->shared_index.len * 2 : 2048;
      if (!vec_reserve (p, &ps->shared_index, sizeof (guint32),
                        cap - ps->shared_index.len, NULL))
        return FALSE;
      ps->shared_index.len = cap;
      memset (ps->shared_index.data, 0, cap * sizeof (guint32));
      const guint32 *rec = ps->shared.data;
      for (gsize off = 0; off < ps->shared.len; off += 2 + (rec[off] >> 8))
        {
          guint8 t = rec[off] & 0xff;
          gsize m = rec[off] >> 8;
          guint32 h = shared_hash (t, m, rec + off + 2);
          guint32 *slot = shared_slot (ps, h, t, m, rec + off + 2);
          slot[0] = h;
          slot[1] = (guint32) off + 1;
        }
    }
  guint32 h = shared_hash (type, n, items);
  guint32 *slot = shared_slot (ps, h, type, n, items);
  if (slot[1] != 0)
    return TRUE;
  if (ps->shared.len + 2 + n >= G_MAXUINT32
      || !vec_reserve (p, &ps->shared, sizeof (guint32), 2 + n, NULL))
    return FALSE;
  guint32 *rec = (guint32 *) ps->shared.data + ps->shared.len;
  rec[0] = type | (guint32) n << 8;
  rec[1] = value;
  memcpy (rec + 2, items, n * sizeof (guint32));
  slot[0] = h;
  slot[1] = (guint32) ps->shared.len + 1;
  ps->shared.len += 2 + n;
  ps->shared_count++;
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
  if (f->c == G_MAXUINT32 || f->at + 1 != from || st[f->at] != f->c
      || n == 0 || n > SHARED_MAX || ps->shared_count == 0)
    return FALSE;
  const Node *node = &NODES (p)[f->c];
  if (node->type != want || node->count != 0 || node->multi)
    return FALSE;
  const guint32 *items = st + from;
  for (gsize i = 0; i < n; i++)
    if (!((items[i] & IMM_BIT) || items[i] >= TOKEN_BASE
          || items[i] < ps->wm_nodes))
      return FALSE;
  guint32 r = shared_slot (ps, shared_hash (want, n, items), want, n,
                          items)[1];
  if (r == 0)
    return FALSE;
  guint32 tok = TOKEN_BASE + ((const guint32 *) ps->shared.data)[r];
  st[f->at] = tok;
  guint32 *memo = ps->memo.data;
  if (f->memo < ps->memo.len && memo[f->memo] == f->c)
    {
      memo[f->memo] = tok;
      /* The memo store logged for vs_pickle_reclaim() no longer holds a
       * value of the region: drop it when it is the last (it nearly
       * always is). */
      if (ps->memo_log.len
          && ((gsize *) ps->memo_log.data)[ps->memo_log.len - 1] == f->memo)
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
  ((Token *) ps->tokens.data)[ps->tokens.len++] = (Token) { v, value };
  return TRUE;
}

gboolean
vs_pickle_set_token_shared (VsPickle *p, VsPickleRef v, guint32 value)
{
  if (!vs_pickle_set_token (p, v, value))
    return FALSE;
  Parser *ps = p->ps;
  const Node *node = &NODES (p)[v];
  if ((node->type != VS_PICKLE_DICT && node->type != VS_PICKLE_LIST)
      || node->multi || node->count == 0 || node->count > SHARED_MAX)
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
