/* SPDX-License-Identifier: MIT */
/* vs-pickle-private.h — what the files of the pickle reader share.
 *
 * The reader is split into vs-pickle-load.c (entry points, setting the
 * memory bound, freeing), vs-pickle-mem.c (the error domain, charging the
 * memory bound, giving back parsed input), vs-pickle.c (the opcode loop
 * and the values it builds), vs-pickle-stream.c (append hooks: reclaiming
 * taken values, tokens and shared tokens, and replaying spans of input
 * that made shared tokens), vs-pickle-read.c (the value access API) and
 * vs-pickle-opcodes.c (opcode names).  Nothing here is for use outside
 * those files.
 *
 * Values live in flat arrays owned by VsPickle:
 *
 *   nodes   16 bytes per value that needs storage (str, bytes, big int,
 *           float, containers); None, False and True are nodes 0, 1, 2 and
 *           ints in [-2^30, 2^30) are stored in the handle itself.
 *   pool    container children as 4-byte handles; a container's children
 *           form one run in the pool, or, when a list grows in several
 *           APPENDS batches with other values built in between, a linked
 *           list of runs ("chunks").
 *   memo    the pickle memo, handle per index (in Parser: parsing only).
 *
 * Handles >= TOKEN_BASE (and without IMM_BIT) are tokens an append hook
 * gave taken containers.
 */
#pragma once

#include <string.h>

#include "vs-pickle.h"

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

enum
{
  REF_NONE = 0,
  REF_FALSE = 1,
  REF_TRUE = 2
};

typedef struct
{
  guint8 type;  /* VsPickleType */
  guint8 multi; /* containers: children are a chunk list */
  guint8 taken; /* lists: an append hook took items */
  guint8 pad;
  guint32 count; /* str/bytes: length; containers: number of handles */
  union
  {
    gint64 i;
    double f;
    const char *s;
    struct
    {
      guint32 off, unused;
    } one; /* single run in the pool */
    struct
    {
      guint32 first, last;
    } chunks;
  } u;
} Node;

G_STATIC_ASSERT (sizeof (Node) == 16);

typedef struct
{
  guint32 off, n, next;
} Chunk;

typedef struct
{
  gpointer data;
  gsize len, cap;
} Vec;

typedef struct Parser Parser;

struct VsPickle
{
  Parser *ps;   /* while parsing */
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

typedef struct
{
  guint32 ref, value;
} Token;

/* A container made by `}` or `]` immediately followed by MEMOIZE (or not)
 * and MARK: while only the stack slot `at` and memo[memo] refer to it, it
 * can still be replaced by a shared token when it is filled
 * (vs_pickle_share()). */
typedef struct
{
  guint32 c;
  gsize at, mark;   /* stack position; index of its mark */
  guint64 memo;     /* G_MAXUINT64: not memoized */
  gsize start;      /* input offset of its `}` or `]` */
  gsize memo_start; /* memo length before it */
} Fresh;

#define FRESH_MAX 4
/* Containers of at most this many handles can have shared tokens.  At
 * most SHARED_CHAIN_MAX of their records share a hash, which bounds the
 * records compared per lookup whatever the input. */
#define SHARED_MAX 16
#define SHARED_CHAIN_MAX 16

/* A span of input that made a shared token (see vs_pickle_span_record()):
 * the same bytes met again are replayed instead of parsed. */
typedef struct
{
  gsize off;      /* input offset of the span */
  guint32 len;    /* its bytes */
  guint32 nmemo;  /* memo entries it appends */
  guint32 values; /* index of their values in Parser.span_values */
  guint32 top;    /* the token it leaves on the stack */
} Span;

/* Spans are found by a hash of their first SPAN_KEY_LONG bytes, or of
 * their first SPAN_KEY_SHORT when shorter; shorter spans are not kept.
 * At most SPAN_CHAIN_MAX spans share a key hash, and spans are at most
 * SPAN_MAX_LEN bytes, which bounds the bytes compared per lookup. */
#define SPAN_KEY_SHORT 16
#define SPAN_KEY_LONG 32
#define SPAN_CHAIN_MAX 16
#define SPAN_MAX_LEN 4096
/* Bits of the filter of kept spans' first 8 bytes (see span_filter_bit),
 * which answers most lookups of containers that are no span (a
 * snapshot's history entries) without hashing their keys. */
#define SPAN_FILTER_BITS 16

/* n zeroed bytes, charged to p's memory bound; NULL when that would pass
 * the bound (nothing charged).  (vs-pickle-mem.c) */
gpointer vs_pickle_mem_alloc0 (VsPickle *p, gsize n);

/* Frees mem, n bytes from vs_pickle_mem_alloc0(), and takes it off p's
 * memory bound.  (vs-pickle-mem.c) */
void vs_pickle_mem_free (VsPickle *p, gpointer mem, gsize n);

/* An entry of the parser's two indexes (common/vs-hash-table.h, memory
 * charged to the bound): the key's hash and where the key is, + 1 (0:
 * empty; G_MAXUINT32 until the caller sets it). */
typedef struct
{
  guint32 hash, ref;
} IndexSlot;

/* A shared-token record looked up (see Parser.shared): its first word
 * (type | n << 8), its handles, the records and the key's hash. */
typedef struct
{
  guint32 hash, head;
  const guint32 *items, *records;
} SharedKey;

/* TRUE when e refers to the record of k (e.ref: its offset + 1). */
static inline gboolean
shared_slot_matches (const IndexSlot *e, const SharedKey *k)
{
  if (e->hash != k->hash)
    return FALSE;
  const guint32 *r = k->records + e->ref - 1;
  if (r[0] != k->head)
    return FALSE;
  /* A loop, not memcmp: entries of equal hash mostly differ early. */
  gsize n = k->head >> 8, i = 0;
  while (i < n && r[2 + i] == k->items[i])
    i++;
  return i == n;
}

/* Kept at most a quarter full, so a lookup nearly always ends at its
 * first slot: it runs for every fresh container filled. */
#define VS_HT_TYPE SharedIndex
#define VS_HT_FN(n) shared_index_##n
#define VS_HT_ENTRY IndexSlot
#define VS_HT_KEY_TYPE const SharedKey *
#define VS_HT_SET_KEY(e, k) ((e)->hash = (k)->hash, (e)->ref = G_MAXUINT32)
#define VS_HT_HASH(k) ((k)->hash)
#define VS_HT_MATCH(e, k) shared_slot_matches (e, k)
#define VS_HT_ENTRY_HASH(e) ((e)->hash)
#define VS_HT_IS_EMPTY(e) ((e)->ref == 0)
#define VS_HT_CHAIN_MAX SHARED_CHAIN_MAX
#define VS_HT_LOAD_SHIFT 2
#define VS_HT_OWNER VsPickle *
#define VS_HT_ALLOC(t, bytes) vs_pickle_mem_alloc0 ((t)->owner, bytes)
#define VS_HT_FREE(t, mem, bytes) vs_pickle_mem_free ((t)->owner, mem, bytes)
#include "vs-hash-table.h"

/* Input looked up among the kept spans: the bytes at data + at, left of
 * them to the end, the spans and the hash of the key bytes. */
typedef struct
{
  guint32 hash;
  const guint8 *data;
  gsize at, left;
  const Span *spans;
} SpanKey;

/* TRUE when e refers to a span (e.ref: its index + 1) of k's hash whose
 * bytes are those at k's offset.  Spans of one key hash are told apart by
 * their bytes, so one key may have several, up to SPAN_CHAIN_MAX; the
 * oldest that matches is found first. */
static inline gboolean
span_slot_matches (const IndexSlot *e, const SpanKey *k)
{
  if (e->hash != k->hash)
    return FALSE;
  const Span *sp = &k->spans[e->ref - 1];
  return sp->len <= k->left && memcmp (k->data + k->at, k->data + sp->off, sp->len) == 0;
}

#define VS_HT_TYPE SpanIndex
#define VS_HT_FN(n) span_index_##n
#define VS_HT_ENTRY IndexSlot
#define VS_HT_KEY_TYPE const SpanKey *
#define VS_HT_SET_KEY(e, k) ((e)->hash = (k)->hash, (e)->ref = G_MAXUINT32)
#define VS_HT_HASH(k) ((k)->hash)
#define VS_HT_MATCH(e, k) span_slot_matches (e, k)
#define VS_HT_ENTRY_HASH(e) ((e)->hash)
#define VS_HT_IS_EMPTY(e) ((e)->ref == 0)
#define VS_HT_CHAIN_MAX SPAN_CHAIN_MAX
#define VS_HT_OWNER VsPickle *
#define VS_HT_ALLOC(t, bytes) vs_pickle_mem_alloc0 ((t)->owner, bytes)
#define VS_HT_FREE(t, mem, bytes) vs_pickle_mem_free ((t)->owner, mem, bytes)
#include "vs-hash-table.h"

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
struct Parser
{
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
  Vec live;     /* guint32 handles, scratch of vs_pickle_reclaim() */
  Vec tokmap;   /* guint32 token by handle - wm_nodes, scratch of
                 * vs_pickle_reclaim() */
  /* Containers being filled right after their creation, innermost last
   * (see vs_pickle_share()), and the smallest of their handles. */
  Fresh fresh[FRESH_MAX];
  guint nfresh;
  guint32 fresh_min;
  /* Shared tokens (vs_pickle_set_token_shared): records of guint32
   * { type | n << 8, value, handles[n] } in shared, found through an
   * index of (hash, record offset + 1). */
  Vec shared; /* guint32 */
  SharedIndex shared_index;
  /* Spans of input that made shared tokens (vs_pickle_span_record()),
   * found through an index of (key hash, span index + 1).  Replaying one
   * relies on memo entries never changing once set, so spans_off turns
   * them off for good when a PUT overwrites one. */
  gboolean spans_off;
  guint64 span_filter[(1u << SPAN_FILTER_BITS) / 64];
  Vec spans;       /* Span */
  Vec span_values; /* guint32 */
  SpanIndex span_index;
  /* The input is a mapping of our own whose pages already parsed may be
   * given back (vs_pickle_release_input()); bytes before `released` are. */
  gboolean release_input;
  gsize released;
};

#define NODES(p) ((Node *)(p)->nodes.data)
#define POOL(p) ((guint32 *)(p)->pool.data)
#define CHUNKS(p) ((Chunk *)(p)->chunks.data)

/* Makes room for extra more elements of elt bytes in v, charging the growth
 * to p's memory bound.  Returns FALSE with error set when over the bound.
 * (vs-pickle-mem.c) */
gboolean vs_pickle_vec_grow (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error);

/* Makes room for extra more elements of elt bytes in v as
 * vs_pickle_vec_grow does, inline when there is room already (the parser's
 * loop runs it per opcode). */
static inline gboolean
vec_reserve (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error)
{
  if (G_LIKELY (v->cap - v->len >= extra))
    return TRUE;
  return vs_pickle_vec_grow (p, v, elt, extra, error);
}

/* The type of handle r: immediates are ints, tokens are tokens, anything
 * else out of range reads as None. */
static inline VsPickleType
ref_type (const VsPickle *p, VsPickleRef r)
{
  if (r & IMM_BIT)
    return VS_PICKLE_INT;
  if (r >= TOKEN_BASE)
    return r <= TOKEN_BASE + VS_PICKLE_TOKEN_MAX ? VS_PICKLE_TOKEN : VS_PICKLE_NONE;
  if (r >= p->nodes.len)
    return VS_PICKLE_NONE;
  return NODES (p)[r].type;
}

/* Drops the stack above len, keeping track of the lowest level reached
 * since the watermark.  Inline: the parser's loop runs it for every filled
 * container. */
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

/* The little-endian unsigned integer of the n (<= 8) bytes at b. */
static inline guint64
read_le (const guint8 *b, gsize n)
{
  guint64 v = 0;
  for (gsize i = 0; i < n; i++)
    v |= (guint64)b[i] << (8 * i);
  return v;
}

/* The bit of Parser.span_filter for a span starting with the 8 bytes at
 * b: set for every kept span. */
static inline guint32
span_filter_bit (const guint8 *b)
{
  guint64 w;
  memcpy (&w, b, sizeof w);
  return (guint32)((w * 0x9e3779b97f4a7c15u) >> (64 - SPAN_FILTER_BITS));
}

/* Runs the opcode loop over p's input with ps set up by the caller (see
 * vs-pickle-load.c): makes the three constant nodes, then parses up to
 * STOP.  Returns FALSE with ps->error set on malformed or refused input,
 * beyond the memory bound or when cancelled.  (vs-pickle.c) */
gboolean vs_pickle_parser_run (Parser *ps, VsPickleProgress progress, gpointer progress_data);

/* Gives back to the system the pages of mapped input that parsing has
 * passed, up to some distance before offset at, so that memory does not
 * grow with the input: they stay valid and are read again from the file
 * should a value that points into them be read.  (vs-pickle-mem.c) */
void vs_pickle_release_input (Parser *ps, gsize at);

/* Called after an append hook took items: applies the hook's tokens to the
 * memo, frees the values built for the items when nothing else can reach
 * them, and starts a new region.  Returns FALSE with ps->error set only
 * when out of the memory bound.  (vs-pickle-stream.c) */
gboolean vs_pickle_reclaim (Parser *ps);

/* APPENDS or SETITEMS filling fresh container f (f->c G_MAXUINT32: none)
 * from stack index `from`, of type want: when its items are all stable and
 * equal to those of a container given a shared token, replaces the
 * container by that token on the stack and in the memo and returns TRUE;
 * else changes nothing and returns FALSE.  (vs-pickle-stream.c) */
gboolean vs_pickle_share (Parser *ps, const Fresh *f, gsize from, guint8 want);

/* After vs_pickle_share() replaced fresh container f, whose closing
 * SETITEMS or APPENDS ends at input offset end, by a shared token: keeps
 * the span of input f was made from when it can be replayed, that is when
 * it holds only the container, memo fetches of entries older than it,
 * small ints, None and bools, and dicts of those, each memoized (or not)
 * and filled by one SETITEMS, and everything it memoized became a token.
 * Parsed again in the same state, such a span would leave the same token
 * on the stack and memoize the same tokens, since memo entries do not
 * change once set (spans_off otherwise) and shared tokens are never
 * forgotten.  Keeps nothing when out of the memory bound.
 * (vs-pickle-stream.c) */
void vs_pickle_span_record (Parser *ps, const Fresh *f, gsize end);

/* The kept span whose bytes are those at input offset at, or NULL.
 * (vs-pickle-stream.c) */
const Span *vs_pickle_span_find (const Parser *ps, gsize at);
