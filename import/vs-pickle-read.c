/* SPDX-License-Identifier: MIT */
/* vs-pickle-read.c — reading parsed values: types, numbers, strings,
 * iteration over containers and dict lookups (see vs-pickle.h).
 *
 * Workload: an importer decoding millions of small dicts, so
 * vs_pickle_dict_fetch() reads all wanted keys of a dict in one pass and
 * matches keys by their address in the input before comparing bytes.
 * Nothing here allocates or changes the VsPickle (VsPickleKeys holds the
 * key cache).
 */
#include "vs-pickle-private.h"

#include <string.h>

VsPickleType
vs_pickle_type (const VsPickle *p, VsPickleRef v)
{
  return ref_type (p, v);
}

gboolean
vs_pickle_get_int (const VsPickle *p, VsPickleRef v, gint64 *out)
{
  if (v & IMM_BIT)
    {
      *out = (gint32)(v << 1) >> 1;
      return TRUE;
    }
  if (v >= p->nodes.len)
    return FALSE;
  const Node *n = &NODES (p)[v];
  if (n->type != VS_PICKLE_INT && n->type != VS_PICKLE_BOOL)
    return FALSE;
  *out = n->u.i;
  return TRUE;
}

gboolean
vs_pickle_get_uint64 (const VsPickle *p, VsPickleRef v, guint64 *out)
{
  gint64 i;
  if (vs_pickle_get_int (p, v, &i))
    {
      *out = (guint64)i;
      return i >= 0;
    }
  if (ref_type (p, v) != VS_PICKLE_UINT64)
    return FALSE;
  *out = (guint64)NODES (p)[v].u.i;
  return TRUE;
}

gboolean
vs_pickle_get_double (const VsPickle *p, VsPickleRef v, double *out)
{
  gint64 i;
  guint64 u;
  if (vs_pickle_get_int (p, v, &i))
    {
      *out = (double)i;
      return TRUE;
    }
  if (vs_pickle_get_uint64 (p, v, &u))
    {
      *out = (double)u;
      return TRUE;
    }
  if (ref_type (p, v) != VS_PICKLE_FLOAT)
    return FALSE;
  *out = NODES (p)[v].u.f;
  return TRUE;
}

const char *
vs_pickle_get_str (const VsPickle *p, VsPickleRef v, gsize *len)
{
  VsPickleType t = ref_type (p, v);
  if (t != VS_PICKLE_STR && t != VS_PICKLE_BYTES)
    return NULL;
  const Node *n = &NODES (p)[v];
  *len = n->count;
  return n->u.s;
}

gboolean
vs_pickle_str_equal (const VsPickle *p, VsPickleRef v, const char *s)
{
  if (ref_type (p, v) != VS_PICKLE_STR)
    return FALSE;
  const Node *n = &NODES (p)[v];
  gsize sl = strlen (s);
  return n->count == sl && memcmp (n->u.s, s, sl) == 0;
}

gsize
vs_pickle_len (const VsPickle *p, VsPickleRef v)
{
  VsPickleType t = ref_type (p, v);
  if (t == VS_PICKLE_LIST || t == VS_PICKLE_TUPLE)
    return NODES (p)[v].count;
  if (t == VS_PICKLE_DICT)
    return NODES (p)[v].count / 2;
  return 0;
}

void
vs_pickle_iter_init (VsPickleIter *it, const VsPickle *p, VsPickleRef v)
{
  memset (it, 0, sizeof *it);
  it->p = p;
  it->chunk = NONE_CHUNK;
  VsPickleType t = ref_type (p, v);
  if (t != VS_PICKLE_LIST && t != VS_PICKLE_TUPLE && t != VS_PICKLE_DICT)
    return;
  const Node *n = &NODES (p)[v];
  it->remaining = n->count;
  if (n->multi)
    {
      const Chunk *c = &CHUNKS (p)[n->u.chunks.first];
      it->chunk = n->u.chunks.first;
      it->pos = c->off;
      it->left = c->n;
    }
  else
    {
      it->pos = n->u.one.off;
      it->left = n->count;
    }
}

gboolean
vs_pickle_iter_next (VsPickleIter *it, VsPickleRef *item)
{
  if (it->remaining == 0)
    return FALSE;
  while (it->left == 0)
    {
      if (it->chunk == NONE_CHUNK)
        return FALSE;
      it->chunk = CHUNKS (it->p)[it->chunk].next;
      if (it->chunk == NONE_CHUNK)
        return FALSE;
      it->pos = CHUNKS (it->p)[it->chunk].off;
      it->left = CHUNKS (it->p)[it->chunk].n;
    }
  *item = POOL (it->p)[it->pos++];
  it->left--;
  it->remaining--;
  return TRUE;
}

gboolean
vs_pickle_iter_next_pair (VsPickleIter *it, VsPickleRef *key, VsPickleRef *value)
{
  return vs_pickle_iter_next (it, key) && vs_pickle_iter_next (it, value);
}

VsPickleRef
vs_pickle_dict_get (const VsPickle *p, VsPickleRef dict, const char *key)
{
  VsPickleRef found = VS_PICKLE_MISSING, k, v;
  VsPickleIter it;
  if (ref_type (p, dict) != VS_PICKLE_DICT)
    return VS_PICKLE_MISSING;
  vs_pickle_iter_init (&it, p, dict);
  while (vs_pickle_iter_next_pair (&it, &k, &v))
    if (vs_pickle_str_equal (p, k, key))
      found = v;
  return found;
}

void
vs_pickle_keys_init (VsPickleKeys *keys, const char *const *names, gsize n)
{
  g_return_if_fail (n <= VS_PICKLE_KEYS_MAX);
  memset (keys, 0, sizeof *keys);
  keys->n = n;
  for (gsize i = 0; i < n; i++)
    {
      keys->names[i] = names[i];
      keys->lens[i] = (guint32)strlen (names[i]);
    }
}

/* The index in keys of the str s[0..len), or -1.  Addresses already seen
 * answer without comparing bytes: strs point into the input, which does
 * not change, so an equal address and length is an equal string.  The key
 * after the last one found is tried first. */
static inline int
key_index (VsPickleKeys *keys, const char *s, guint32 len)
{
  guint g = keys->guess;
  if (keys->seen[g] == s && keys->lens[g] == len)
    {
      keys->guess = g + 1 < keys->n ? g + 1 : 0;
      return (int)g;
    }
  for (gsize i = 0; i < keys->n; i++)
    if (keys->seen[i] == s && keys->lens[i] == len)
      {
        keys->guess = i + 1 < keys->n ? (guint)i + 1 : 0;
        return (int)i;
      }
  for (gsize i = 0; i < VS_PICKLE_KEYS_MAX; i++)
    if (keys->other[i] == s && keys->other_len[i] == len)
      return -1;
  for (gsize i = 0; i < keys->n; i++)
    if (keys->lens[i] == len && memcmp (keys->names[i], s, len) == 0)
      {
        keys->seen[i] = s;
        keys->guess = i + 1 < keys->n ? (guint)i + 1 : 0;
        return (int)i;
      }
  guint k = keys->next_other++ % VS_PICKLE_KEYS_MAX;
  keys->other[k] = s;
  keys->other_len[k] = len;
  return -1;
}

/* One pair of vs_pickle_dict_fetch. */
static inline void
fetch_pair (const VsPickle *p, VsPickleKeys *keys, VsPickleValue *values, VsPickleRef k,
            VsPickleRef v)
{
  if (ref_type (p, k) != VS_PICKLE_STR)
    return;
  const Node *nodes = NODES (p);
  int i = key_index (keys, nodes[k].u.s, nodes[k].count);
  if (i < 0)
    return;
  VsPickleValue *out = &values[i];
  out->ref = v;
  out->type = ref_type (p, v);
  out->len = 0;
  out->s = NULL;
  out->i = 0;
  if (v & IMM_BIT)
    out->i = (gint32)(v << 1) >> 1;
  else if (out->type == VS_PICKLE_INT || out->type == VS_PICKLE_BOOL
           || out->type == VS_PICKLE_UINT64)
    out->i = nodes[v].u.i;
  else if (out->type == VS_PICKLE_STR || out->type == VS_PICKLE_BYTES)
    {
      out->s = nodes[v].u.s;
      out->len = nodes[v].count;
    }
}

gboolean
vs_pickle_dict_fetch (const VsPickle *p, VsPickleRef dict, VsPickleKeys *keys,
                      VsPickleValue *values)
{
  for (gsize i = 0; i < keys->n; i++)
    values[i] = (VsPickleValue){ .ref = VS_PICKLE_MISSING, .type = VS_PICKLE_NONE };
  if (keys->serial != p->serial)
    {
      /* Addresses from another input mean nothing here (a new VsPickle
       * may even reuse a freed one's memory, hence the serial). */
      memset (keys->seen, 0, sizeof keys->seen);
      memset (keys->other, 0, sizeof keys->other);
      keys->guess = 0;
      keys->serial = p->serial;
    }
  if (ref_type (p, dict) != VS_PICKLE_DICT)
    return FALSE;
  const Node *d = &NODES (p)[dict];
  if (d->count == 0)
    return TRUE;
  if (!d->multi)
    {
      /* One run (always so for a dict built by one SETITEMS). */
      const guint32 *items = POOL (p) + d->u.one.off;
      for (guint32 j = 0; j + 1 < d->count; j += 2)
        fetch_pair (p, keys, values, items[j], items[j + 1]);
      return TRUE;
    }
  VsPickleIter it;
  VsPickleRef k, v;
  vs_pickle_iter_init (&it, p, dict);
  while (vs_pickle_iter_next_pair (&it, &k, &v))
    fetch_pair (p, keys, values, k, v);
  return TRUE;
}

const VsPickleRef *
vs_pickle_items (const VsPickle *p, VsPickleRef v, gsize *n)
{
  VsPickleType t = ref_type (p, v);
  *n = 0;
  if (t != VS_PICKLE_LIST && t != VS_PICKLE_TUPLE && t != VS_PICKLE_DICT)
    return NULL;
  const Node *node = &NODES (p)[v];
  if (node->multi)
    return NULL;
  static const VsPickleRef none[1];
  *n = node->count;
  return node->count ? POOL (p) + node->u.one.off : none;
}
