/* vs-pickle.c — the restricted pickle reader (see vs-pickle.h).
 *
 * Workload: PyTorch memory snapshots, from a few KiB to several GiB, read
 * once from a read-only mapping.  The reader is a single loop over the
 * opcodes with an explicit value stack and mark stack.  Values live in flat
 * arrays:
 *
 *   nodes   16 bytes per value that needs storage (str, bytes, big int,
 *           float, containers); None, False and True are nodes 0, 1, 2 and
 *           ints in [-2^30, 2^30) are stored in the handle itself.
 *   pool    container children as 4-byte handles; a container's children
 *           form one run in the pool, or, when a list grows in several
 *           APPENDS batches with other values built in between, a linked
 *           list of runs ("chunks").
 *   memo    the pickle memo, handle per index.
 *
 * Each opcode adds at most one node and each handle in the pool was pushed
 * by an opcode of at least one input byte, so memory is linear in the input;
 * a hard bound (VS_PICKLE_MEM_FACTOR × input + 64 MiB) turns anything beyond
 * that into an error instead of exhausting the machine.  Strings point into
 * the input: nothing is copied.
 *
 * An append hook lets a consumer take the items of a long list as they are
 * appended (a snapshot's history: millions of entry dicts).  The values
 * built for them are then freed (reclaim()), so the graph stays small; the
 * hook may leave tokens in the memo in place of the containers it took, so
 * that a later reference to a shared value (a stack frame) reads as the
 * number the consumer gave it.
 */
#include "vs-pickle.h"

#include <string.h>

G_DEFINE_QUARK (vs-pickle-error-quark, vs_pickle_error)

#define VS_PICKLE_MEM_FACTOR 40
#define NONE_CHUNK G_MAXUINT32
#define IMM_BIT 0x80000000u
#define IMM_MIN (-(G_GINT64_CONSTANT (1) << 30))
#define IMM_MAX ((G_GINT64_CONSTANT (1) << 30) - 1)
#define MAX_NODES 0x3ffffff0u
#define TOKEN_BASE 0x40000000u
/* Memo stores logged between two taken appends; beyond it nothing is
 * reclaimed until the next one (bounds the log). */
#define MEMO_LOG_MAX (1u << 20)
#define PROGRESS_STEP (8u << 20)

enum { REF_NONE = 0, REF_FALSE = 1, REF_TRUE = 2 };

typedef struct {
  guint8 type;   /* VsPickleType */
  guint8 multi;  /* containers: children are a chunk list */
  guint8 taken;  /* lists: an append hook took items */
  guint8 pad;
  guint32 count; /* str/bytes: length; containers: number of handles */
  union {
    gint64 i;
    double f;
    const char *s;
    struct { guint32 off, unused; } one;   /* single run in the pool */
    struct { guint32 first, last; } chunks;
  } u;
} Node;

G_STATIC_ASSERT (sizeof (Node) == 16);

typedef struct {
  guint32 off, n, next;
} Chunk;

typedef struct {
  gpointer data;
  gsize len, cap;
} Vec;

typedef struct Parser Parser;

struct VsPickle {
  Parser *ps; /* while parsing */
  GMappedFile *file;
  const guint8 *data;
  gsize size;
  gsize mem, mem_limit;
  Vec nodes;  /* Node */
  Vec pool;   /* guint32 */
  Vec chunks; /* Chunk */
  VsPickleRef root;
};

typedef struct {
  guint32 ref, value;
} Token;

/* The parser's transient state, freed when parsing ends.
 *
 * With an append hook, values built since the last taken append (handles
 * >= wm_nodes, pool from wm_pool, chunks from wm_chunks) are freed after the
 * next one when nothing else can reach them: reachable are the stack below
 * the taken items and the memo.  Memo stores since the watermark are
 * logged; a stored container either got a token from the hook or keeps the
 * whole region alive, as does a container on the stack or any append to an
 * older container ("dirty").  Strings and numbers still reachable are moved
 * down to the watermark. */
struct Parser {
  VsPickle *p;
  Vec stack; /* guint32 handles */
  Vec marks; /* gsize stack positions */
  Vec memo;  /* guint32 handles, G_MAXUINT32 = unset */
  GError **error;
  VsPickleAppendHook hook;
  gpointer hook_data;
  guint32 wm_nodes;
  gsize wm_pool, wm_chunks, stack_low;
  gboolean dirty, log_full;
  Vec memo_log; /* gsize memo indexes stored since the watermark */
  Vec tokens;   /* Token */
  Vec live;     /* guint32 handles, scratch of reclaim() */
  Vec tokmap;   /* guint32 token by handle - wm_nodes, scratch of reclaim() */
};

#define NODES(p) ((Node *) (p)->nodes.data)
#define POOL(p) ((guint32 *) (p)->pool.data)
#define CHUNKS(p) ((Chunk *) (p)->chunks.data)

static const struct {
  guint8 op;
  const char *name;
} opcode_names[] = {
  { '(', "MARK" }, { '.', "STOP" }, { '0', "POP" }, { '1', "POP_MARK" },
  { '2', "DUP" }, { 'F', "FLOAT" }, { 'I', "INT" }, { 'J', "BININT" },
  { 'K', "BININT1" }, { 'L', "LONG" }, { 'M', "BININT2" }, { 'N', "NONE" },
  { 'P', "PERSID" }, { 'Q', "BINPERSID" }, { 'R', "REDUCE" },
  { 'S', "STRING" }, { 'T', "BINSTRING" }, { 'U', "SHORT_BINSTRING" },
  { 'V', "UNICODE" }, { 'X', "BINUNICODE" }, { 'a', "APPEND" },
  { 'b', "BUILD" }, { 'c', "GLOBAL" }, { 'd', "DICT" }, { '}', "EMPTY_DICT" },
  { 'e', "APPENDS" }, { 'g', "GET" }, { 'h', "BINGET" }, { 'i', "INST" },
  { 'j', "LONG_BINGET" }, { 'l', "LIST" }, { ']', "EMPTY_LIST" },
  { 'o', "OBJ" }, { 'p', "PUT" }, { 'q', "BINPUT" }, { 'r', "LONG_BINPUT" },
  { 's', "SETITEM" }, { 't', "TUPLE" }, { ')', "EMPTY_TUPLE" },
  { 'u', "SETITEMS" }, { 'G', "BINFLOAT" }, { 0x80, "PROTO" },
  { 0x81, "NEWOBJ" }, { 0x82, "EXT1" }, { 0x83, "EXT2" }, { 0x84, "EXT4" },
  { 0x85, "TUPLE1" }, { 0x86, "TUPLE2" }, { 0x87, "TUPLE3" },
  { 0x88, "NEWTRUE" }, { 0x89, "NEWFALSE" }, { 0x8a, "LONG1" },
  { 0x8b, "LONG4" }, { 'B', "BINBYTES" }, { 'C', "SHORT_BINBYTES" },
  { 0x8c, "SHORT_BINUNICODE" }, { 0x8d, "BINUNICODE8" },
  { 0x8e, "BINBYTES8" }, { 0x8f, "EMPTY_SET" }, { 0x90, "ADDITEMS" },
  { 0x91, "FROZENSET" }, { 0x92, "NEWOBJ_EX" }, { 0x93, "STACK_GLOBAL" },
  { 0x94, "MEMOIZE" }, { 0x95, "FRAME" }, { 0x96, "BYTEARRAY8" },
  { 0x97, "NEXT_BUFFER" }, { 0x98, "READONLY_BUFFER" },
};

/* Returns the opcode's name as pickletools spells it, or NULL. */
const char *
vs_pickle_opcode_name (guint8 op)
{
  for (gsize i = 0; i < G_N_ELEMENTS (opcode_names); i++)
    if (opcode_names[i].op == op)
      return opcode_names[i].name;
  return NULL;
}

/* ------------------------------------------------------------ vectors -- */

/* Makes room for extra more elements of elt bytes in v, charging the growth
 * to p's memory bound.  Returns FALSE with error set when over the bound. */
static gboolean
vec_grow (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error)
{
  gsize need = v->len + extra;
  if (need < v->len || need > G_MAXSIZE / elt / 2)
    goto over;
  gsize cap = v->cap ? v->cap : 256;
  while (cap < need)
    cap *= 2;
  gsize grow = (cap - v->cap) * elt;
  if (p->mem + grow > p->mem_limit)
    goto over;
  gpointer data = g_try_realloc (v->data, cap * elt);
  if (data == NULL)
    goto over;
  v->data = data;
  p->mem += grow;
  v->cap = cap;
  return TRUE;

over:
  g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
               "pickle needs more memory than the reader allows for a "
               "%" G_GSIZE_FORMAT "-byte file", p->size);
  return FALSE;
}

static inline gboolean
vec_reserve (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error)
{
  if (G_LIKELY (v->cap - v->len >= extra))
    return TRUE;
  return vec_grow (p, v, elt, extra, error);
}

/* ------------------------------------------------------------- errors -- */

static gboolean
malformed (Parser *ps, gsize at, const char *what)
{
  guint8 op = ps->p->data[at];
  const char *name = vs_pickle_opcode_name (op);
  g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
               "malformed pickle at offset %" G_GSIZE_FORMAT " (%s): %s", at,
               name ? name : "unknown opcode", what);
  return FALSE;
}

/* ------------------------------------------------------------- values -- */

/* Appends a node and returns its handle, or G_MAXUINT32 on error. */
static guint32
new_node (Parser *ps, guint8 type)
{
  VsPickle *p = ps->p;
  if (p->nodes.len >= MAX_NODES)
    {
      g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
                   "pickle holds more values than the reader accepts");
      return G_MAXUINT32;
    }
  if (!vec_reserve (p, &p->nodes, sizeof (Node), 1, ps->error))
    return G_MAXUINT32;
  Node *n = &NODES (p)[p->nodes.len];
  memset (n, 0, sizeof *n);
  n->type = type;
  return (guint32) p->nodes.len++;
}

static gboolean
push (Parser *ps, guint32 ref)
{
  if (!vec_reserve (ps->p, &ps->stack, sizeof (guint32), 1, ps->error))
    return FALSE;
  ((guint32 *) ps->stack.data)[ps->stack.len++] = ref;
  return TRUE;
}

static gboolean
push_new (Parser *ps, guint8 type, Node **out)
{
  guint32 r = new_node (ps, type);
  if (r == G_MAXUINT32 || !push (ps, r))
    return FALSE;
  *out = &NODES (ps->p)[r];
  return TRUE;
}

static gboolean
push_int (Parser *ps, gint64 v)
{
  if (v >= IMM_MIN && v <= IMM_MAX)
    return push (ps, IMM_BIT | ((guint32) v & 0x7fffffffu));
  Node *n;
  if (!push_new (ps, VS_PICKLE_INT, &n))
    return FALSE;
  n->u.i = v;
  return TRUE;
}

/* Appends n handles to container c's children. */
static gboolean
extend (Parser *ps, guint32 c, const guint32 *items, gsize n)
{
  VsPickle *p = ps->p;
  if (n == 0)
    return TRUE;
  Node *node = &NODES (p)[c];
  if (c < ps->wm_nodes)
    ps->dirty = TRUE;
  if (n > G_MAXUINT32 - node->count || p->pool.len + n > G_MAXUINT32)
    {
      g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
                   "pickle container too large for the reader");
      return FALSE;
    }
  /* Copy first: items may point into the stack, which reserve may move. */
  if (!vec_reserve (p, &p->pool, sizeof (guint32), n, ps->error))
    return FALSE;
  guint32 off = (guint32) p->pool.len;
  memcpy (POOL (p) + off, items, n * sizeof (guint32));
  p->pool.len += n;
  node = &NODES (p)[c];
  if (!node->multi && node->count == 0)
    node->u.one.off = off;
  else if (!node->multi && node->u.one.off + node->count == off)
    ; /* contiguous with the run it already has */
  else
    {
      if (!vec_reserve (p, &p->chunks, sizeof (Chunk), 2, ps->error))
        return FALSE;
      Chunk *ch = CHUNKS (p);
      if (!node->multi)
        {
          guint32 first = (guint32) p->chunks.len++;
          ch[first] = (Chunk) { node->u.one.off, node->count, NONE_CHUNK };
          node->u.chunks.first = node->u.chunks.last = first;
          node->multi = 1;
        }
      guint32 k = (guint32) p->chunks.len++;
      ch[k] = (Chunk) { off, (guint32) n, NONE_CHUNK };
      ch[node->u.chunks.last].next = k;
      node->u.chunks.last = k;
    }
  node->count += (guint32) n;
  return TRUE;
}

static VsPickleType
ref_type (const VsPickle *p, VsPickleRef r)
{
  if (r & IMM_BIT)
    return VS_PICKLE_INT;
  if (r >= TOKEN_BASE)
    return r <= TOKEN_BASE + VS_PICKLE_TOKEN_MAX ? VS_PICKLE_TOKEN
                                                 : VS_PICKLE_NONE;
  if (r >= p->nodes.len)
    return VS_PICKLE_NONE;
  return NODES (p)[r].type;
}

/* Drops the stack above len, keeping track of the lowest level reached
 * since the watermark. */
static inline void
stack_truncate (Parser *ps, gsize len)
{
  ps->stack.len = len;
  if (len < ps->stack_low)
    ps->stack_low = len;
}

/* Position of the innermost mark, or -1 with error set. */
static gssize
top_mark (Parser *ps, gsize at)
{
  if (ps->marks.len == 0)
    {
      malformed (ps, at, "no MARK on the stack");
      return -1;
    }
  ps->marks.len--;
  return (gssize) ((gsize *) ps->marks.data)[ps->marks.len];
}

/* Pops the items above the innermost mark into a new container of type. */
static gboolean
build_from_mark (Parser *ps, gsize at, guint8 type)
{
  gssize m = top_mark (ps, at);
  if (m < 0)
    return FALSE;
  gsize n = ps->stack.len - (gsize) m;
  if (type == VS_PICKLE_DICT && n % 2)
    return malformed (ps, at, "odd number of items for a dict");
  guint32 c = new_node (ps, type);
  if (c == G_MAXUINT32)
    return FALSE;
  if (!extend (ps, c, (guint32 *) ps->stack.data + m, n))
    return FALSE;
  stack_truncate (ps, (gsize) m);
  return push (ps, c);
}

static gboolean
build_tuple_n (Parser *ps, gsize at, gsize n)
{
  if (ps->stack.len < n)
    return malformed (ps, at, "stack underflow");
  guint32 c = new_node (ps, VS_PICKLE_TUPLE);
  if (c == G_MAXUINT32)
    return FALSE;
  if (!extend (ps, c, (guint32 *) ps->stack.data + ps->stack.len - n, n))
    return FALSE;
  stack_truncate (ps, ps->stack.len - n);
  return push (ps, c);
}

static gboolean
is_container (guint8 type)
{
  return type == VS_PICKLE_LIST || type == VS_PICKLE_TUPLE
         || type == VS_PICKLE_DICT;
}

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

/* A handle of the region that reclaim() may free: a node built since the
 * watermark. */
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
 * with error set only when out of the memory bound. */
static gboolean
reclaim (Parser *ps)
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
  return TRUE;
}

/* APPEND(S) and SETITEM(S): items from index `from` of the stack go into
 * the container just below them, which must be of type want. */
static gboolean
add_items (Parser *ps, gsize at, gsize from, guint8 want)
{
  if (from == 0 || from > ps->stack.len)
    return malformed (ps, at, "stack underflow");
  guint32 *st = ps->stack.data;
  guint32 c = st[from - 1];
  if (ref_type (ps->p, c) != want)
    return malformed (ps, at, want == VS_PICKLE_LIST
                                  ? "items appended to something not a list"
                                  : "items set on something not a dict");
  gsize n = ps->stack.len - from;
  if (want == VS_PICKLE_DICT && n % 2)
    return malformed (ps, at, "odd number of items for a dict");
  if (want == VS_PICKLE_LIST && ps->hook && n > 0)
    {
      VsPickleAppend r = ps->hook (ps->p, c, st + from, n, ps->hook_data,
                                   ps->error);
      if (r == VS_PICKLE_APPEND_ERROR)
        return FALSE;
      if (r == VS_PICKLE_APPEND_TAKEN)
        {
          NODES (ps->p)[c].taken = 1;
          stack_truncate (ps, from);
          return reclaim (ps);
        }
    }
  if (!extend (ps, c, st + from, n))
    return FALSE;
  stack_truncate (ps, from);
  return TRUE;
}

static gboolean
memo_put (Parser *ps, gsize at, guint64 idx)
{
  VsPickle *p = ps->p;
  if (ps->stack.len == 0)
    return malformed (ps, at, "memo store with an empty stack");
  /* Picklers number the memo densely; a sparse index may not make the
   * table larger than the input could justify. */
  if (idx >= MAX (p->size, (gsize) 65536))
    return malformed (ps, at, "memo index out of range");
  if (idx >= ps->memo.len)
    {
      gsize extra = (gsize) idx + 1 - ps->memo.len;
      if (!vec_reserve (p, &ps->memo, sizeof (guint32), extra, ps->error))
        return FALSE;
      memset ((guint32 *) ps->memo.data + ps->memo.len, 0xff,
              extra * sizeof (guint32));
      ps->memo.len = (gsize) idx + 1;
    }
  guint32 v = ((guint32 *) ps->stack.data)[ps->stack.len - 1];
  ((guint32 *) ps->memo.data)[idx] = v;
  if (ps->hook && !(v & IMM_BIT) && v >= ps->wm_nodes && v < TOKEN_BASE)
    {
      if (ps->memo_log.len >= MEMO_LOG_MAX)
        ps->log_full = TRUE;
      else
        {
          if (!vec_reserve (p, &ps->memo_log, sizeof (gsize), 1, ps->error))
            return FALSE;
          ((gsize *) ps->memo_log.data)[ps->memo_log.len++] = (gsize) idx;
        }
    }
  return TRUE;
}

static gboolean
memo_get (Parser *ps, gsize at, guint64 idx)
{
  if (idx >= ps->memo.len || ((guint32 *) ps->memo.data)[idx] == G_MAXUINT32)
    return malformed (ps, at, "memo index never stored");
  return push (ps, ((guint32 *) ps->memo.data)[idx]);
}

/* Little-endian two's complement integer of n bytes, which must fit 64
 * bits. */
static gboolean
push_long (Parser *ps, gsize at, const guint8 *b, gsize n)
{
  guint64 v = 0;
  if (n == 0)
    return push_int (ps, 0);
  gboolean neg = (b[n - 1] & 0x80) != 0;
  for (gsize i = n; i > 8; i--)
    if (b[i - 1] != (neg ? 0xff : 0x00))
      return malformed (ps, at, "integer wider than 64 bits");
  gsize k = MIN (n, (gsize) 8);
  for (gsize i = 0; i < k; i++)
    v |= (guint64) b[i] << (8 * i);
  if (k < 8 && neg)
    v |= ~G_GUINT64_CONSTANT (0) << (8 * k);
  /* The 64 kept bits must carry the right sign. */
  if (((v >> 63) != 0) != neg)
    return malformed (ps, at, "integer wider than 64 bits");
  return push_int (ps, (gint64) v);
}

static gboolean
push_str (Parser *ps, guint8 type, const guint8 *s, guint64 len)
{
  if (len > G_MAXUINT32)
    {
      g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
                   "pickle string of %" G_GUINT64_FORMAT " bytes is larger "
                   "than the reader accepts", len);
      return FALSE;
    }
  Node *n;
  if (!push_new (ps, type, &n))
    return FALSE;
  n->count = (guint32) len;
  n->u.s = (const char *) s;
  return TRUE;
}

static guint64
le (const guint8 *b, int n)
{
  guint64 v = 0;
  for (int i = 0; i < n; i++)
    v |= (guint64) b[i] << (8 * i);
  return v;
}

/* ------------------------------------------------------------- parser -- */

static gboolean
parse (Parser *ps, VsPickleProgress progress, gpointer progress_data)
{
  VsPickle *p = ps->p;
  const guint8 *d = p->data;
  const gsize len = p->size;
  gsize pos = 0, next_progress = PROGRESS_STEP;

#define NEED(n)                                                            \
  do {                                                                     \
    if ((guint64) (len - pos) < (guint64) (n))                             \
      return malformed (ps, at, "truncated");                             \
  } while (0)

  while (pos < len)
    {
      gsize at = pos;
      guint8 op = d[pos++];

      if (G_UNLIKELY (pos >= next_progress) && progress)
        {
          next_progress = pos + PROGRESS_STEP;
          if (!progress (pos, len, progress_data))
            {
              g_set_error (ps->error, VS_PICKLE_ERROR,
                           VS_PICKLE_ERROR_CANCELLED, "cancelled");
              return FALSE;
            }
        }

      switch (op)
        {
        case 0x80: /* PROTO */
          NEED (1);
          if (d[pos] > 5)
            return malformed (ps, at, "pickle protocol newer than 5");
          pos++;
          break;
        case 0x95: /* FRAME: framing is only a hint for buffered readers */
          NEED (8);
          if (le (d + pos, 8) > len - pos - 8)
            return malformed (ps, at, "frame longer than the file");
          pos += 8;
          break;
        case '.': /* STOP */
          if (ps->stack.len == 0)
            return malformed (ps, at, "STOP with an empty stack");
          p->root = ((guint32 *) ps->stack.data)[ps->stack.len - 1];
          return TRUE;

        case 'N':
          if (!push (ps, REF_NONE))
            return FALSE;
          break;
        case 0x88:
          if (!push (ps, REF_TRUE))
            return FALSE;
          break;
        case 0x89:
          if (!push (ps, REF_FALSE))
            return FALSE;
          break;
        case 'J':
          NEED (4);
          if (!push_int (ps, (gint32) (guint32) le (d + pos, 4)))
            return FALSE;
          pos += 4;
          break;
        case 'K':
          NEED (1);
          if (!push_int (ps, d[pos]))
            return FALSE;
          pos += 1;
          break;
        case 'M':
          NEED (2);
          if (!push_int (ps, (gint64) le (d + pos, 2)))
            return FALSE;
          pos += 2;
          break;
        case 0x8a: /* LONG1 */
          {
            NEED (1);
            gsize n = d[pos++];
            NEED (n);
            if (!push_long (ps, at, d + pos, n))
              return FALSE;
            pos += n;
          }
          break;
        case 0x8b: /* LONG4 */
          {
            NEED (4);
            gint32 n = (gint32) (guint32) le (d + pos, 4);
            pos += 4;
            if (n < 0)
              return malformed (ps, at, "negative length");
            NEED ((gsize) n);
            if (!push_long (ps, at, d + pos, (gsize) n))
              return FALSE;
            pos += (gsize) n;
          }
          break;
        case 'G': /* BINFLOAT, big-endian */
          {
            NEED (8);
            guint64 bits = 0;
            for (int i = 0; i < 8; i++)
              bits = (bits << 8) | d[pos + i];
            pos += 8;
            Node *n;
            if (!push_new (ps, VS_PICKLE_FLOAT, &n))
              return FALSE;
            memcpy (&n->u.f, &bits, sizeof bits);
          }
          break;

        case 0x8c: case 'C': case 'U': /* 1-byte length */
        case 'X': case 'B': case 'T':  /* 4-byte length */
        case 0x8d: case 0x8e: case 0x96: /* 8-byte length */
          {
            int w = (op == 0x8c || op == 'C' || op == 'U') ? 1
                    : (op == 'X' || op == 'B' || op == 'T') ? 4 : 8;
            NEED (w);
            guint64 n = le (d + pos, w);
            if (op == 'T' && (gint32) n < 0)
              return malformed (ps, at, "negative length");
            pos += w;
            NEED (n);
            guint8 type = (op == 'C' || op == 'B' || op == 0x8e || op == 0x96)
                              ? VS_PICKLE_BYTES : VS_PICKLE_STR;
            if (!push_str (ps, type, d + pos, n))
              return FALSE;
            pos += n;
          }
          break;

        case '}': case ']': case ')':
          {
            Node *n;
            if (!push_new (ps, op == '}' ? VS_PICKLE_DICT
                               : op == ']' ? VS_PICKLE_LIST : VS_PICKLE_TUPLE,
                           &n))
              return FALSE;
          }
          break;
        case '(': /* MARK */
          if (!vec_reserve (p, &ps->marks, sizeof (gsize), 1, ps->error))
            return FALSE;
          ((gsize *) ps->marks.data)[ps->marks.len++] = ps->stack.len;
          break;
        case 't':
          if (!build_from_mark (ps, at, VS_PICKLE_TUPLE))
            return FALSE;
          break;
        case 'l':
          if (!build_from_mark (ps, at, VS_PICKLE_LIST))
            return FALSE;
          break;
        case 'd':
          if (!build_from_mark (ps, at, VS_PICKLE_DICT))
            return FALSE;
          break;
        case 0x85: case 0x86: case 0x87:
          if (!build_tuple_n (ps, at, op - 0x84))
            return FALSE;
          break;
        case 'a': /* APPEND */
          if (!add_items (ps, at, ps->stack.len ? ps->stack.len - 1 : 0,
                          VS_PICKLE_LIST))
            return FALSE;
          break;
        case 's': /* SETITEM */
          if (!add_items (ps, at, ps->stack.len >= 2 ? ps->stack.len - 2 : 0,
                          VS_PICKLE_DICT))
            return FALSE;
          break;
        case 'e': case 'u': /* APPENDS, SETITEMS */
          {
            gssize m = top_mark (ps, at);
            if (m < 0)
              return FALSE;
            if (!add_items (ps, at, (gsize) m,
                            op == 'e' ? VS_PICKLE_LIST : VS_PICKLE_DICT))
              return FALSE;
          }
          break;
        case '0': /* POP: pops a mark when one is on top */
          if (ps->marks.len
              && ((gsize *) ps->marks.data)[ps->marks.len - 1] == ps->stack.len)
            ps->marks.len--;
          else if (ps->stack.len)
            stack_truncate (ps, ps->stack.len - 1);
          else
            return malformed (ps, at, "stack underflow");
          break;
        case '1': /* POP_MARK */
          {
            gssize m = top_mark (ps, at);
            if (m < 0)
              return FALSE;
            stack_truncate (ps, (gsize) m);
          }
          break;
        case '2': /* DUP */
          if (ps->stack.len == 0)
            return malformed (ps, at, "stack underflow");
          if (!push (ps, ((guint32 *) ps->stack.data)[ps->stack.len - 1]))
            return FALSE;
          break;

        case 'q':
          NEED (1);
          if (!memo_put (ps, at, d[pos]))
            return FALSE;
          pos += 1;
          break;
        case 'r':
          NEED (4);
          if (!memo_put (ps, at, le (d + pos, 4)))
            return FALSE;
          pos += 4;
          break;
        case 0x94: /* MEMOIZE */
          if (!memo_put (ps, at, ps->memo.len))
            return FALSE;
          break;
        case 'h':
          NEED (1);
          if (!memo_get (ps, at, d[pos]))
            return FALSE;
          pos += 1;
          break;
        case 'j':
          NEED (4);
          if (!memo_get (ps, at, le (d + pos, 4)))
            return FALSE;
          pos += 4;
          break;

        case 'c': case 0x93: case 'R': case 'b': case 'i': case 'o':
        case 0x81: case 0x92: case 'P': case 'Q': case 0x82: case 0x83:
        case 0x84:
          g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_REFUSED,
                       "pickle opcode %s at offset %" G_GSIZE_FORMAT " would "
                       "import or call Python code; refused (only plain data "
                       "is read)", vs_pickle_opcode_name (op), at);
          return FALSE;

        default:
          {
            const char *name = vs_pickle_opcode_name (op);
            g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
                         name ? "malformed pickle at offset %" G_GSIZE_FORMAT
                                ": opcode %s is not supported (protocol 0/1 "
                                "text, sets and out-of-band buffers are not "
                                "read)"
                              : "malformed pickle at offset %" G_GSIZE_FORMAT
                                ": unknown opcode%s 0x%02x",
                         at, name ? name : "", op);
            return FALSE;
          }
        }
    }
#undef NEED
  g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
               "malformed pickle: truncated at offset %" G_GSIZE_FORMAT
               " (no STOP opcode)", len);
  return FALSE;
}

static VsPickle *
parse_full (const guint8 *data, gsize len, VsPickleProgress progress,
            gpointer progress_data, VsPickleAppendHook hook,
            gpointer hook_data, GError **error)
{

  VsPickle *p = g_new0 (VsPickle, 1);
  p->data = data;
  p->size = len;
  p->mem_limit = (gsize) 64 << 20;
  if (len < (G_MAXSIZE - p->mem_limit) / VS_PICKLE_MEM_FACTOR)
    p->mem_limit += len * VS_PICKLE_MEM_FACTOR;
  else
    p->mem_limit = G_MAXSIZE;

  if (len < 2 || data[0] != 0x80 || data[1] < 2 || data[1] > 5)
    {
      if (len >= 2 && data[0] == 0x80)
        g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
                     "unsupported pickle protocol %d (2 to 5 are read)",
                     data[1]);
      else
        g_set_error_literal (error, VS_PICKLE_ERROR,
                             VS_PICKLE_ERROR_MALFORMED,
                             "not a pickle of protocol 2 to 5");
      vs_pickle_free (p);
      return NULL;
    }

  Parser ps = { .p = p, .error = error, .hook = hook,
                .hook_data = hook_data };
  gboolean ok = TRUE;
  /* The three constants. */
  for (int i = 0; ok && i < 3; i++)
    ok = new_node (&ps, i == 0 ? VS_PICKLE_NONE : VS_PICKLE_BOOL) != G_MAXUINT32;
  if (ok)
    {
      NODES (p)[REF_TRUE].u.i = 1;
      ps.wm_nodes = (guint32) p->nodes.len;
      p->ps = &ps;
      ok = parse (&ps, progress, progress_data);
      p->ps = NULL;
    }
  g_free (ps.stack.data);
  g_free (ps.marks.data);
  g_free (ps.memo.data);
  g_free (ps.memo_log.data);
  g_free (ps.tokens.data);
  g_free (ps.live.data);
  g_free (ps.tokmap.data);
  p->mem -= (ps.stack.cap * sizeof (guint32) + ps.marks.cap * sizeof (gsize)
             + ps.memo.cap * sizeof (guint32) + ps.memo_log.cap * sizeof (gsize)
             + ps.tokens.cap * sizeof (Token) + ps.live.cap * sizeof (guint32)
             + ps.tokmap.cap * sizeof (guint32));
  if (!ok)
    {
      vs_pickle_free (p);
      return NULL;
    }
  return p;
}

VsPickle *
vs_pickle_parse (const guint8 *data, gsize len, VsPickleProgress progress,
                 gpointer progress_data, GError **error)
{
  g_return_val_if_fail (data != NULL || len == 0, NULL);
  return parse_full (data, len, progress, progress_data, NULL, NULL, error);
}

VsPickle *
vs_pickle_load_file (const char *path, VsPickleProgress progress,
                     gpointer progress_data, GError **error)
{
  return vs_pickle_load_file_full (path, progress, progress_data, NULL, NULL,
                                   error);
}

VsPickle *
vs_pickle_load_file_full (const char *path, VsPickleProgress progress,
                          gpointer progress_data, VsPickleAppendHook hook,
                          gpointer hook_data, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  GError *local = NULL;
  GMappedFile *f = g_mapped_file_new (path, FALSE, &local);
  if (f == NULL)
    {
      g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_IO, "%s",
                   local->message);
      g_error_free (local);
      return NULL;
    }
  const guint8 *data = (const guint8 *) g_mapped_file_get_contents (f);
  gsize len = g_mapped_file_get_length (f);
  static const guint8 empty[1];
  VsPickle *p = parse_full (data ? data : empty, len, progress,
                            progress_data, hook, hook_data, error);
  if (p == NULL)
    {
      g_mapped_file_unref (f);
      return NULL;
    }
  p->file = f;
  return p;
}

void
vs_pickle_free (VsPickle *p)
{
  if (p == NULL)
    return;
  g_free (p->nodes.data);
  g_free (p->pool.data);
  g_free (p->chunks.data);
  if (p->file)
    g_mapped_file_unref (p->file);
  g_free (p);
}

/* ------------------------------------------------------------ readers -- */

VsPickleRef
vs_pickle_root (const VsPickle *p)
{
  return p->root;
}

gsize
vs_pickle_input_size (const VsPickle *p)
{
  return p->size;
}

gsize
vs_pickle_memory_size (const VsPickle *p)
{
  return p->mem + sizeof *p;
}

VsPickleType
vs_pickle_type (const VsPickle *p, VsPickleRef v)
{
  return ref_type (p, v);
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
vs_pickle_get_int (const VsPickle *p, VsPickleRef v, gint64 *out)
{
  if (v & IMM_BIT)
    {
      *out = (gint32) (v << 1) >> 1;
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
vs_pickle_get_double (const VsPickle *p, VsPickleRef v, double *out)
{
  gint64 i;
  if (vs_pickle_get_int (p, v, &i))
    {
      *out = (double) i;
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
vs_pickle_iter_next_pair (VsPickleIter *it, VsPickleRef *key,
                          VsPickleRef *value)
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
