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
 * number the consumer gave it.  A "shared" token also stands for the
 * container's content: a dict or list made later (`}`/`]`, MEMOIZE, MARK,
 * then filled by one SETITEMS/APPENDS) whose items are the same stable
 * handles reads as that token and is never built (share(); a snapshot
 * repeats a few hundred frames and stacks millions of times).
 *
 * Speed: snapshots are ~140 opcodes per history entry, so the loop keeps
 * the common cases inline (push, memo fetch and store, new nodes) and
 * sends the opcodes that follow one another in snapshots (memo fetches,
 * ints, SETITEMS, the next dict) straight to their case by direct branches
 * ("chain"), rather than all through the switch's one indirect jump.
 * None of this skips a check: each case does what it does when dispatched.
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
  guint serial; /* distinct for every VsPickle made (see VsPickleKeys) */
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

/* A container made by `}` or `]` immediately followed by MEMOIZE (or not)
 * and MARK: while only the stack slot `at` and memo[memo] refer to it, it
 * can still be replaced by a shared token when it is filled (share()). */
typedef struct {
  guint32 c;
  gsize at, mark;  /* stack position; index of its mark */
  guint64 memo;    /* G_MAXUINT64: not memoized */
} Fresh;

#define FRESH_MAX 4
/* Containers of at most this many handles can have shared tokens. */
#define SHARED_MAX 16

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
  /* Containers being filled right after their creation, innermost last
   * (see share()), and the smallest of their handles. */
  Fresh fresh[FRESH_MAX];
  guint nfresh;
  guint32 fresh_min;
  /* Shared tokens (vs_pickle_set_token_shared): records of guint32
   * { type | n << 8, value, handles[n] } in shared, found through an
   * open-addressing index of record offsets + 1 (0: empty). */
  Vec shared;       /* guint32 */
  Vec shared_index; /* guint32 */
  gsize shared_count;
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

static G_NO_INLINE gboolean
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

/* Appends a node and returns its handle, or G_MAXUINT32 on error.  The
 * slow path of new_node(): the node array is full or at its limit. */
static G_NO_INLINE guint32
new_node_slow (Parser *ps, guint8 type)
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

/* Appends a node and returns its handle, or G_MAXUINT32 on error. */
static inline guint32
new_node (Parser *ps, guint8 type)
{
  VsPickle *p = ps->p;
  if (G_UNLIKELY (p->nodes.len >= p->nodes.cap || p->nodes.len >= MAX_NODES))
    return new_node_slow (ps, type);
  Node *n = &NODES (p)[p->nodes.len];
  memset (n, 0, sizeof *n);
  n->type = type;
  return (guint32) p->nodes.len++;
}

/* The slow path of push(): grows the stack. */
static G_NO_INLINE gboolean
push_slow (Parser *ps, guint32 ref)
{
  if (!vec_reserve (ps->p, &ps->stack, sizeof (guint32), 1, ps->error))
    return FALSE;
  ((guint32 *) ps->stack.data)[ps->stack.len++] = ref;
  return TRUE;
}

/* Pushes ref on the value stack; FALSE with error set beyond the memory
 * bound. */
static inline gboolean
push (Parser *ps, guint32 ref)
{
  if (G_UNLIKELY (ps->stack.len >= ps->stack.cap))
    return push_slow (ps, ref);
  ((guint32 *) ps->stack.data)[ps->stack.len++] = ref;
  return TRUE;
}

static inline gboolean
push_new (Parser *ps, guint8 type, Node **out)
{
  guint32 r = new_node (ps, type);
  if (r == G_MAXUINT32 || !push (ps, r))
    return FALSE;
  *out = &NODES (ps->p)[r];
  return TRUE;
}

static inline gboolean
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
  if (n <= 16)
    {
      /* Most containers are small (a frame dict: 6 handles). */
      guint32 *dst = POOL (p) + off;
      for (gsize i = 0; i < n; i++)
        dst[i] = items[i];
    }
  else
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

static inline VsPickleType
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
  /* A fresh container whose slot is dropped may have been moved
   * elsewhere (SETITEM below its mark): it is fresh no more. */
  while (G_UNLIKELY (ps->nfresh && len <= ps->fresh[ps->nfresh - 1].at))
    ps->nfresh--;
  if (ps->nfresh == 0)
    ps->fresh_min = G_MAXUINT32;
}

/* Forgets every fresh container when h, a handle being copied (DUP, memo
 * fetch or store), is one of them: it is then referred to from elsewhere
 * too. */
static inline void
fresh_copied (Parser *ps, guint32 h)
{
  if (G_UNLIKELY (h >= ps->fresh_min && h < ps->p->nodes.len))
    for (guint i = 0; i < ps->nfresh; i++)
      if (ps->fresh[i].c == h)
        {
          ps->nfresh = 0;
          ps->fresh_min = G_MAXUINT32;
          return;
        }
}

/* Records the container on top of the stack, just made, memoized at
 * memo_idx (or not) and followed by a MARK, as fresh. */
static void
fresh_push (Parser *ps, guint64 memo_idx)
{
  if (ps->nfresh == FRESH_MAX)
    {
      memmove (ps->fresh, ps->fresh + 1, (FRESH_MAX - 1) * sizeof (Fresh));
      ps->nfresh--;
    }
  ps->fresh[ps->nfresh++] = (Fresh) {
    .c = ((guint32 *) ps->stack.data)[ps->stack.len - 1],
    .at = ps->stack.len - 1, .mark = ps->marks.len - 1, .memo = memo_idx,
  };
  ps->fresh_min = ps->fresh[0].c;
}

/* Pops the fresh record of mark index m, when there is one, into *out. */
static inline gboolean
fresh_pop (Parser *ps, gsize m, Fresh *out)
{
  if (ps->nfresh == 0 || ps->fresh[ps->nfresh - 1].mark != m)
    return FALSE;
  *out = ps->fresh[--ps->nfresh];
  if (ps->nfresh == 0)
    ps->fresh_min = G_MAXUINT32;
  return TRUE;
}

/* Position of the innermost mark, or -1 with error set; pops it, and its
 * fresh record into *f when there is one (else f->c = G_MAXUINT32). */
static gssize
top_mark_fresh (Parser *ps, gsize at, Fresh *f)
{
  f->c = G_MAXUINT32;
  if (ps->marks.len == 0)
    {
      malformed (ps, at, "no MARK on the stack");
      return -1;
    }
  ps->marks.len--;
  fresh_pop (ps, ps->marks.len, f);
  return (gssize) ((gsize *) ps->marks.data)[ps->marks.len];
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
  Fresh unused;
  fresh_pop (ps, ps->marks.len, &unused);
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
  /* n == 0: the stack may not even be allocated yet. */
  if (n && !extend (ps, c, (guint32 *) ps->stack.data + m, n))
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
static gboolean
share (Parser *ps, const Fresh *f, gsize from, guint8 want)
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
      /* The memo store logged for reclaim() no longer holds a value of
       * the region: drop it when it is the last (it nearly always is). */
      if (ps->memo_log.len
          && ((gsize *) ps->memo_log.data)[ps->memo_log.len - 1] == f->memo)
        ps->memo_log.len--;
    }
  stack_truncate (ps, from);
  return TRUE;
}

/* APPEND(S) and SETITEM(S): items from index `from` of the stack go into
 * the container just below them, which must be of type want. */
static gboolean
add_items (Parser *ps, gsize at, gsize from, guint8 want, const Fresh *f)
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
  if (f && share (ps, f, from, want))
    return TRUE;
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

/* Makes memo index idx exist (unset) when it is new; FALSE with error
 * set when idx is out of range or beyond the memory bound. */
static G_NO_INLINE gboolean
memo_extend (Parser *ps, gsize at, guint64 idx)
{
  VsPickle *p = ps->p;
  /* Picklers number the memo densely; a sparse index may not make the
   * table larger than the input could justify. */
  if (idx >= MAX (p->size, (gsize) 65536))
    return malformed (ps, at, "memo index out of range");
  gsize extra = (gsize) idx + 1 - ps->memo.len;
  if (!vec_reserve (p, &ps->memo, sizeof (guint32), extra, ps->error))
    return FALSE;
  memset ((guint32 *) ps->memo.data + ps->memo.len, 0xff,
          extra * sizeof (guint32));
  ps->memo.len = (gsize) idx + 1;
  return TRUE;
}

/* The memo store of a value of the region while a hook streams: logged
 * for reclaim(). */
static G_NO_INLINE gboolean
memo_log (Parser *ps, guint64 idx)
{
  if (ps->memo_log.len >= MEMO_LOG_MAX)
    {
      ps->log_full = TRUE;
      return TRUE;
    }
  if (!vec_reserve (ps->p, &ps->memo_log, sizeof (gsize), 1, ps->error))
    return FALSE;
  ((gsize *) ps->memo_log.data)[ps->memo_log.len++] = (gsize) idx;
  return TRUE;
}

/* PUT, BINPUT, LONG_BINPUT, MEMOIZE: memo[idx] = top of the stack. */
static inline gboolean
memo_put (Parser *ps, gsize at, guint64 idx)
{
  if (G_UNLIKELY (ps->stack.len == 0))
    return malformed (ps, at, "memo store with an empty stack");
  if (idx == ps->memo.len && ps->memo.len < ps->memo.cap
      && idx < MAX (ps->p->size, (gsize) 65536))
    ((guint32 *) ps->memo.data)[ps->memo.len++] = G_MAXUINT32; /* MEMOIZE */
  else if (idx >= ps->memo.len && !memo_extend (ps, at, idx))
    return FALSE;
  guint32 v = ((guint32 *) ps->stack.data)[ps->stack.len - 1];
  fresh_copied (ps, v);
  ((guint32 *) ps->memo.data)[idx] = v;
  if (ps->hook && !(v & IMM_BIT) && v >= ps->wm_nodes && v < TOKEN_BASE)
    {
      /* The log is usually in order and has room: append inline. */
      if (G_LIKELY (ps->memo_log.len < ps->memo_log.cap
                    && ps->memo_log.len < MEMO_LOG_MAX))
        {
          ((gsize *) ps->memo_log.data)[ps->memo_log.len++] = (gsize) idx;
          return TRUE;
        }
      return memo_log (ps, idx);
    }
  return TRUE;
}

/* GET, BINGET, LONG_BINGET: pushes memo[idx]. */
static inline gboolean
memo_get (Parser *ps, gsize at, guint64 idx)
{
  if (G_UNLIKELY (idx >= ps->memo.len
                  || ((guint32 *) ps->memo.data)[idx] == G_MAXUINT32))
    return malformed (ps, at, "memo index never stored");
  fresh_copied (ps, ((guint32 *) ps->memo.data)[idx]);
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

static inline guint64
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
        op_binint:
          NEED (4);
          if (!push_int (ps, (gint32) (guint32) le (d + pos, 4)))
            return FALSE;
          pos += 4;
          goto chain;
        case 'K':
        op_binint1:
          NEED (1);
          if (!push_int (ps, d[pos]))
            return FALSE;
          pos += 1;
          goto chain;
        case 'M':
        op_binint2:
          NEED (2);
          if (!push_int (ps, (gint64) le (d + pos, 2)))
            return FALSE;
          pos += 2;
          goto chain;
        case 0x8a: /* LONG1 */
        op_long1:
          {
            NEED (1);
            gsize n = d[pos++];
            NEED (n);
            if (!push_long (ps, at, d + pos, n))
              return FALSE;
            pos += n;
          }
          goto chain;
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
            if (pos < len && d[pos] == 0x94) /* MEMOIZE, as its case would */
              {
                if (!memo_put (ps, pos, ps->memo.len))
                  return FALSE;
                pos++;
              }
          }
          goto chain;

        case '}': case ']': case ')':
        op_container:
          {
            Node *n;
            if (!push_new (ps, op == '}' ? VS_PICKLE_DICT
                               : op == ']' ? VS_PICKLE_LIST : VS_PICKLE_TUPLE,
                           &n))
              return FALSE;
            /* A new container is nearly always memoized and filled next:
             * handle MEMOIZE and MARK here, as their own cases would. */
            guint64 memo_idx = G_MAXUINT64;
            if (pos < len && d[pos] == 0x94)
              {
                memo_idx = ps->memo.len;
                if (!memo_put (ps, pos, ps->memo.len))
                  return FALSE;
                pos++;
              }
            if (pos < len && d[pos] == '(')
              {
                if (!vec_reserve (p, &ps->marks, sizeof (gsize), 1, ps->error))
                  return FALSE;
                ((gsize *) ps->marks.data)[ps->marks.len++] = ps->stack.len;
                pos++;
                if (ps->shared_count && op != ')')
                  fresh_push (ps, memo_idx);
              }
          }
          goto chain;
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
                          VS_PICKLE_LIST, NULL))
            return FALSE;
          break;
        case 's': /* SETITEM */
          if (!add_items (ps, at, ps->stack.len >= 2 ? ps->stack.len - 2 : 0,
                          VS_PICKLE_DICT, NULL))
            return FALSE;
          break;
        case 'e': case 'u': /* APPENDS, SETITEMS */
        op_additems:
          {
            Fresh f;
            gssize m = top_mark_fresh (ps, at, &f);
            if (m < 0)
              return FALSE;
            if (!add_items (ps, at, (gsize) m,
                            op == 'e' ? VS_PICKLE_LIST : VS_PICKLE_DICT, &f))
              return FALSE;
          }
          goto chain;
        case '0': /* POP: pops a mark when one is on top */
          if (ps->marks.len
              && ((gsize *) ps->marks.data)[ps->marks.len - 1] == ps->stack.len)
            {
              Fresh unused;
              ps->marks.len--;
              fresh_pop (ps, ps->marks.len, &unused);
            }
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
          fresh_copied (ps, ((guint32 *) ps->stack.data)[ps->stack.len - 1]);
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
        case 'h': case 'j': /* BINGET, LONG_BINGET */
        op_memo_get:
          /* Memo fetches come in runs (a dict's keys and strings): a run
           * of up to 64 is read here, each as its own case would. */
          for (int run = 0;; run++)
            {
              int w = op == 'h' ? 1 : 4;
              NEED (w);
              if (!memo_get (ps, at, le (d + pos, w)))
                return FALSE;
              pos += w;
              if (run == 63 || pos >= len || (d[pos] != 'h' && d[pos] != 'j'))
                goto chain;
              at = pos;
              op = d[pos++];
            }
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
      continue;

    chain:
      /* The opcodes that follow one another in a snapshot (memo fetches,
       * ints, SETITEMS, the next dict) go straight to their case by
       * direct branches, which predict far better than the switch's one
       * shared indirect jump.  Each case behaves as when dispatched; the
       * progress check happens at the next dispatch by the loop. */
      if (pos < len && pos < next_progress)
        {
          at = pos;
          switch (d[pos])
            {
            case 'h': case 'j': op = d[pos++]; goto op_memo_get;
            case 'u': case 'e': op = d[pos++]; goto op_additems;
            case '}': case ']': op = d[pos++]; goto op_container;
            case 'K': op = d[pos++]; goto op_binint1;
            case 'M': op = d[pos++]; goto op_binint2;
            case 'J': op = d[pos++]; goto op_binint;
            case 0x8a: op = d[pos++]; goto op_long1;
            default: break;
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

  static gint serials;
  VsPickle *p = g_new0 (VsPickle, 1);
  do
    p->serial = (guint) g_atomic_int_add (&serials, 1) + 1;
  while (p->serial == 0);
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
                .hook_data = hook_data, .fresh_min = G_MAXUINT32 };
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
  g_free (ps.shared.data);
  g_free (ps.shared_index.data);
  p->mem -= (ps.shared.cap * sizeof (guint32)
             + ps.shared_index.cap * sizeof (guint32));
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
vs_pickle_parse_full (const guint8 *data, gsize len,
                      VsPickleProgress progress, gpointer progress_data,
                      VsPickleAppendHook hook, gpointer hook_data,
                      GError **error)
{
  g_return_val_if_fail (data != NULL || len == 0, NULL);
  return parse_full (data, len, progress, progress_data, hook, hook_data,
                     error);
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

void
vs_pickle_keys_init (VsPickleKeys *keys, const char *const *names, gsize n)
{
  g_return_if_fail (n <= VS_PICKLE_KEYS_MAX);
  memset (keys, 0, sizeof *keys);
  keys->n = n;
  for (gsize i = 0; i < n; i++)
    {
      keys->names[i] = names[i];
      keys->lens[i] = (guint32) strlen (names[i]);
    }
}

/* The index in keys of the str s[0..len), or -1.  Addresses already seen
 * answer without comparing bytes: strs point into the input, which does
 * not change, so an equal address and length is an equal string. */
static inline int
key_index (VsPickleKeys *keys, const char *s, guint32 len)
{
  for (gsize i = 0; i < keys->n; i++)
    if (keys->seen[i] == s && keys->lens[i] == len)
      return (int) i;
  for (gsize i = 0; i < VS_PICKLE_KEYS_MAX; i++)
    if (keys->other[i] == s && keys->other_len[i] == len)
      return -1;
  for (gsize i = 0; i < keys->n; i++)
    if (keys->lens[i] == len && memcmp (keys->names[i], s, len) == 0)
      {
        keys->seen[i] = s;
        return (int) i;
      }
  guint k = keys->next_other++ % VS_PICKLE_KEYS_MAX;
  keys->other[k] = s;
  keys->other_len[k] = len;
  return -1;
}

/* One pair of vs_pickle_dict_fetch. */
static inline void
fetch_pair (const VsPickle *p, VsPickleKeys *keys, VsPickleValue *values,
            VsPickleRef k, VsPickleRef v)
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
    out->i = (gint32) (v << 1) >> 1;
  else if (out->type == VS_PICKLE_INT || out->type == VS_PICKLE_BOOL)
    out->i = nodes[v].u.i;
  else if (out->type == VS_PICKLE_STR || out->type == VS_PICKLE_BYTES)
    {
      out->s = nodes[v].u.s;
      out->len = nodes[v].count;
    }
}

gboolean
vs_pickle_dict_fetch (const VsPickle *p, VsPickleRef dict,
                      VsPickleKeys *keys, VsPickleValue *values)
{
  for (gsize i = 0; i < keys->n; i++)
    values[i] = (VsPickleValue) { .ref = VS_PICKLE_MISSING,
                                  .type = VS_PICKLE_NONE };
  if (keys->serial != p->serial)
    {
      /* Addresses from another input mean nothing here (a new VsPickle
       * may even reuse a freed one's memory, hence the serial). */
      memset (keys->seen, 0, sizeof keys->seen);
      memset (keys->other, 0, sizeof keys->other);
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
