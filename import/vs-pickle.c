/* SPDX-License-Identifier: MIT */
/* vs-pickle.c — the pickle reader's opcode loop (see vs-pickle.h).
 *
 * Workload: PyTorch memory snapshots, from a few KiB to several GiB, read
 * once from a read-only mapping.  The reader is a single loop over the
 * opcodes with an explicit value stack and mark stack, building values in
 * the flat arrays described in vs-pickle-private.h.
 *
 * Each opcode adds at most one node and each handle in the pool was pushed
 * by an opcode of at least one input byte, so memory is linear in the input;
 * a hard bound (VS_PICKLE_MEM_FACTOR × input + 64 MiB) turns anything beyond
 * that into an error instead of exhausting the machine.  Strings point into
 * the input: nothing is copied.  Appends to a list go through the append
 * hook when there is one; what follows from a hook taking them (reclaiming,
 * tokens, shared tokens) is in vs-pickle-stream.c.
 *
 * Speed: snapshots are ~140 opcodes per history entry, so the loop keeps
 * the common cases inline (push, memo fetch and store, new nodes) and
 * sends the opcodes that follow one another in snapshots (memo fetches,
 * ints, SETITEMS, the next dict) straight to their case by direct branches
 * ("chain"), rather than all through the switch's one indirect jump.
 * None of this skips a check: each case does what it does when dispatched.
 * The loop and every helper it calls per opcode are in this file, so that
 * they stay inlinable.  What is not parsed at all is a span of input equal,
 * byte for byte, to one already parsed into a shared token: it is replayed
 * (see vs_pickle_span_record() for when that gives what parsing would).
 */
#include "vs-pickle-private.h"

#include <string.h>

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

/* Appends a zeroed node of that type to the node array, which has room
 * for it, and returns its handle. */
G_ALWAYS_INLINE static inline guint32
append_node (VsPickle *p, guint8 type)
{
  Node *n = &NODES (p)[p->nodes.len];
  memset (n, 0, sizeof *n);
  n->type = type;
  return (guint32)p->nodes.len++;
}

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
  return append_node (p, type);
}

/* Appends a node and returns its handle, or G_MAXUINT32 on error. */
static inline guint32
new_node (Parser *ps, guint8 type)
{
  VsPickle *p = ps->p;
  if (G_UNLIKELY (p->nodes.len >= p->nodes.cap || p->nodes.len >= MAX_NODES))
    return new_node_slow (ps, type);
  return append_node (p, type);
}

/* The slow path of push(): grows the stack. */
static G_NO_INLINE gboolean
push_slow (Parser *ps, guint32 ref)
{
  if (!vec_reserve (ps->p, &ps->stack, sizeof (guint32), 1, ps->error))
    return FALSE;
  ((guint32 *)ps->stack.data)[ps->stack.len++] = ref;
  return TRUE;
}

/* Pushes ref on the value stack; FALSE with error set beyond the memory
 * bound. */
static inline gboolean
push (Parser *ps, guint32 ref)
{
  if (G_UNLIKELY (ps->stack.len >= ps->stack.cap))
    return push_slow (ps, ref);
  ((guint32 *)ps->stack.data)[ps->stack.len++] = ref;
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
    return push (ps, IMM_BIT | ((guint32)v & 0x7fffffffu));
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
  guint32 off = (guint32)p->pool.len;
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
          guint32 first = (guint32)p->chunks.len++;
          ch[first] = (Chunk){ node->u.one.off, node->count, NONE_CHUNK };
          node->u.chunks.first = node->u.chunks.last = first;
          node->multi = 1;
        }
      guint32 k = (guint32)p->chunks.len++;
      ch[k] = (Chunk){ off, (guint32)n, NONE_CHUNK };
      ch[node->u.chunks.last].next = k;
      node->u.chunks.last = k;
    }
  node->count += (guint32)n;
  return TRUE;
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

/* Records the container on top of the stack, just made by the opcode at
 * input offset start when the memo held memo_start entries, memoized at
 * memo_idx (or not) and followed by a MARK, as fresh. */
static void
fresh_push (Parser *ps, guint64 memo_idx, gsize start, gsize memo_start)
{
  if (ps->nfresh == FRESH_MAX)
    {
      memmove (ps->fresh, ps->fresh + 1, (FRESH_MAX - 1) * sizeof (Fresh));
      ps->nfresh--;
    }
  ps->fresh[ps->nfresh++] = (Fresh){
    .c = ((guint32 *)ps->stack.data)[ps->stack.len - 1],
    .at = ps->stack.len - 1,
    .mark = ps->marks.len - 1,
    .memo = memo_idx,
    .start = start,
    .memo_start = memo_start,
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
  return (gssize)((gsize *)ps->marks.data)[ps->marks.len];
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
  return (gssize)((gsize *)ps->marks.data)[ps->marks.len];
}

/* Pops the items above the innermost mark into a new container of type. */
static gboolean
build_from_mark (Parser *ps, gsize at, guint8 type)
{
  gssize m = top_mark (ps, at);
  if (m < 0)
    return FALSE;
  gsize n = ps->stack.len - (gsize)m;
  if (type == VS_PICKLE_DICT && n % 2)
    return malformed (ps, at, "odd number of items for a dict");
  guint32 c = new_node (ps, type);
  if (c == G_MAXUINT32)
    return FALSE;
  /* n == 0: the stack may not even be allocated yet. */
  if (n && !extend (ps, c, (guint32 *)ps->stack.data + m, n))
    return FALSE;
  stack_truncate (ps, (gsize)m);
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
  if (!extend (ps, c, (guint32 *)ps->stack.data + ps->stack.len - n, n))
    return FALSE;
  stack_truncate (ps, ps->stack.len - n);
  return push (ps, c);
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
    return malformed (ps, at,
                      want == VS_PICKLE_LIST ? "items appended to something not a list"
                                             : "items set on something not a dict");
  gsize n = ps->stack.len - from;
  if (want == VS_PICKLE_DICT && n % 2)
    return malformed (ps, at, "odd number of items for a dict");
  if (f && vs_pickle_share (ps, f, from, want))
    {
      vs_pickle_span_record (ps, f, at + 1);
      return TRUE;
    }
  if (want == VS_PICKLE_LIST && ps->hook && n > 0)
    {
      VsPickleAppend r = ps->hook (ps->p, c, st + from, n, ps->hook_data, ps->error);
      if (r == VS_PICKLE_APPEND_ERROR)
        return FALSE;
      if (r == VS_PICKLE_APPEND_TAKEN)
        {
          NODES (ps->p)[c].taken = 1;
          stack_truncate (ps, from);
          return vs_pickle_reclaim (ps);
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
  if (idx >= MAX (p->size, (gsize)65536))
    return malformed (ps, at, "memo index out of range");
  gsize extra = (gsize)idx + 1 - ps->memo.len;
  if (!vec_reserve (p, &ps->memo, sizeof (guint32), extra, ps->error))
    return FALSE;
  memset ((guint32 *)ps->memo.data + ps->memo.len, 0xff, extra * sizeof (guint32));
  ps->memo.len = (gsize)idx + 1;
  return TRUE;
}

/* The memo store of a value of the region while a hook streams: logged
 * for vs_pickle_reclaim(). */
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
  ((gsize *)ps->memo_log.data)[ps->memo_log.len++] = (gsize)idx;
  return TRUE;
}

/* PUT, BINPUT, LONG_BINPUT, MEMOIZE: memo[idx] = top of the stack. */
static inline gboolean
memo_put (Parser *ps, gsize at, guint64 idx)
{
  if (G_UNLIKELY (ps->stack.len == 0))
    return malformed (ps, at, "memo store with an empty stack");
  if (idx == ps->memo.len && ps->memo.len < ps->memo.cap && idx < MAX (ps->p->size, (gsize)65536))
    ((guint32 *)ps->memo.data)[ps->memo.len++] = G_MAXUINT32; /* MEMOIZE */
  else if (idx >= ps->memo.len && !memo_extend (ps, at, idx))
    return FALSE;
  guint32 v = ((guint32 *)ps->stack.data)[ps->stack.len - 1];
  fresh_copied (ps, v);
  ((guint32 *)ps->memo.data)[idx] = v;
  if (ps->hook && !(v & IMM_BIT) && v >= ps->wm_nodes && v < TOKEN_BASE)
    {
      /* The log is usually in order and has room: append inline. */
      if (G_LIKELY (ps->memo_log.len < ps->memo_log.cap && ps->memo_log.len < MEMO_LOG_MAX))
        {
          ((gsize *)ps->memo_log.data)[ps->memo_log.len++] = (gsize)idx;
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
  if (G_UNLIKELY (idx >= ps->memo.len || ((guint32 *)ps->memo.data)[idx] == G_MAXUINT32))
    return malformed (ps, at, "memo index never stored");
  fresh_copied (ps, ((guint32 *)ps->memo.data)[idx]);
  return push (ps, ((guint32 *)ps->memo.data)[idx]);
}

/* Little-endian two's complement integer of n bytes, which must fit 64
 * bits signed, or 64 bits unsigned when it is not negative (PyTorch writes
 * values up to 2^64-1): the slow path of push_long(), for 0 or more than 8
 * bytes. */
static G_NO_INLINE gboolean
push_long_wide (Parser *ps, gsize at, const guint8 *b, gsize n)
{
  guint64 v = 0;
  if (n == 0)
    return push_int (ps, 0);
  gboolean neg = (b[n - 1] & 0x80) != 0;
  for (gsize i = n; i > 8; i--)
    if (b[i - 1] != (neg ? 0xff : 0x00))
      return malformed (ps, at, "integer wider than 64 bits");
  gsize k = MIN (n, (gsize)8);
  for (gsize i = 0; i < k; i++)
    v |= (guint64)b[i] << (8 * i);
  if (k < 8 && neg)
    v |= ~G_GUINT64_CONSTANT (0) << (8 * k);
  if (!neg && (v >> 63) != 0)
    {
      /* In [2^63, 2^64): only an unsigned reading holds it. */
      Node *node;
      if (!push_new (ps, VS_PICKLE_UINT64, &node))
        return FALSE;
      node->u.i = (gint64)v;
      return TRUE;
    }
  /* The 64 kept bits must carry the right sign. */
  if (((v >> 63) != 0) != neg)
    return malformed (ps, at, "integer wider than 64 bits");
  return push_int (ps, (gint64)v);
}

/* Little-endian two's complement integer of n bytes, which must fit 64
 * bits.  Inline for 1 to 8 bytes (a snapshot's addresses and times), which
 * always fit. */
G_ALWAYS_INLINE static inline gboolean
push_long (Parser *ps, gsize at, const guint8 *b, gsize n)
{
  if (G_UNLIKELY (n == 0 || n > 8))
    return push_long_wide (ps, at, b, n);
  guint64 v = read_le (b, n);
  if (n < 8 && (b[n - 1] & 0x80))
    v |= ~G_GUINT64_CONSTANT (0) << (8 * n); /* sign extension */
  return push_int (ps, (gint64)v);
}

static gboolean
push_str (Parser *ps, guint8 type, const guint8 *s, guint64 len)
{
  if (len > G_MAXUINT32)
    {
      g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
                   "pickle string of %" G_GUINT64_FORMAT " bytes is larger "
                   "than the reader accepts",
                   len);
      return FALSE;
    }
  Node *n;
  if (!push_new (ps, type, &n))
    return FALSE;
  n->count = (guint32)len;
  n->u.s = (const char *)s;
  return TRUE;
}

/* ------------------------------------------------------------- parser -- */

/* The opcode loop, from the start of the input to STOP: leaves the root
 * in ps->p->root and returns TRUE, or returns FALSE with ps->error set. */
static gboolean
parse (Parser *ps, VsPickleProgress progress, gpointer progress_data)
{
  VsPickle *p = ps->p;
  const guint8 *d = p->data;
  const gsize len = p->size;
  gsize pos = 0, next_progress = PROGRESS_STEP;

#define NEED(n)                                                                                    \
  do                                                                                               \
    {                                                                                              \
      if ((guint64)(len - pos) < (guint64)(n))                                                     \
        return malformed (ps, at, "truncated");                                                    \
    }                                                                                              \
  while (0)

  while (pos < len)
    {
      gsize at = pos;
      guint8 op = d[pos++];

      if (G_UNLIKELY (pos >= next_progress))
        {
          next_progress = pos + PROGRESS_STEP;
          if (ps->release_input)
            vs_pickle_release_input (ps, at);
          if (progress && !progress (pos, len, progress_data))
            {
              g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_CANCELLED, "cancelled");
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
          if (read_le (d + pos, 8) > len - pos - 8)
            return malformed (ps, at, "frame longer than the file");
          pos += 8;
          break;
        case '.': /* STOP */
          if (ps->stack.len == 0)
            return malformed (ps, at, "STOP with an empty stack");
          p->root = ((guint32 *)ps->stack.data)[ps->stack.len - 1];
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
          if (!push_int (ps, (gint32)(guint32)read_le (d + pos, 4)))
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
          if (!push_int (ps, (gint64)read_le (d + pos, 2)))
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
            gint32 n = (gint32)(guint32)read_le (d + pos, 4);
            pos += 4;
            if (n < 0)
              return malformed (ps, at, "negative length");
            NEED ((gsize)n);
            if (!push_long (ps, at, d + pos, (gsize)n))
              return FALSE;
            pos += (gsize)n;
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

        case 0x8c:
        case 'C':
        case 'U': /* 1-byte length */
        case 'X':
        case 'B':
        case 'T': /* 4-byte length */
        case 0x8d:
        case 0x8e:
        case 0x96: /* 8-byte length */
          {
            int w = (op == 0x8c || op == 'C' || op == 'U')  ? 1
                    : (op == 'X' || op == 'B' || op == 'T') ? 4
                                                            : 8;
            NEED (w);
            guint64 n = read_le (d + pos, w);
            if (op == 'T' && (gint32)n < 0)
              return malformed (ps, at, "negative length");
            pos += w;
            NEED (n);
            guint8 type = (op == 'C' || op == 'B' || op == 0x8e || op == 0x96) ? VS_PICKLE_BYTES
                                                                               : VS_PICKLE_STR;
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

        case '}':
        case ']':
        case ')':
        op_container:
          {
            /* The bytes of a kept span (see vs_pickle_span_record()):
             * its token and memo entries, as parsing them would give. */
            const Span *sp;
            if (ps->spans.len && !ps->spans_off && op != ')'
                && (sp = vs_pickle_span_find (ps, at)) != NULL
                && ps->memo.len + sp->nmemo <= MAX (p->size, (gsize)65536)
                && vec_reserve (p, &ps->memo, sizeof (guint32), sp->nmemo, NULL))
              {
                if (!push (ps, sp->top))
                  return FALSE;
                if (sp->nmemo)
                  memcpy ((guint32 *)ps->memo.data + ps->memo.len,
                          (const guint32 *)ps->span_values.data + sp->values,
                          sp->nmemo * sizeof (guint32));
                ps->memo.len += sp->nmemo;
                pos = at + sp->len;
                goto chain;
              }
            Node *n;
            gsize memo_start = ps->memo.len;
            if (!push_new (ps,
                           op == '}'   ? VS_PICKLE_DICT
                           : op == ']' ? VS_PICKLE_LIST
                                       : VS_PICKLE_TUPLE,
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
                ((gsize *)ps->marks.data)[ps->marks.len++] = ps->stack.len;
                pos++;
                if (shared_index_count (&ps->shared_index) && op != ')')
                  fresh_push (ps, memo_idx, at, memo_start);
              }
          }
          goto chain;
        case '(': /* MARK */
          if (!vec_reserve (p, &ps->marks, sizeof (gsize), 1, ps->error))
            return FALSE;
          ((gsize *)ps->marks.data)[ps->marks.len++] = ps->stack.len;
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
        case 0x85:
        case 0x86:
        case 0x87:
          if (!build_tuple_n (ps, at, op - 0x84))
            return FALSE;
          break;
        case 'a': /* APPEND */
          if (!add_items (ps, at, ps->stack.len ? ps->stack.len - 1 : 0, VS_PICKLE_LIST, NULL))
            return FALSE;
          break;
        case 's': /* SETITEM */
          if (!add_items (ps, at, ps->stack.len >= 2 ? ps->stack.len - 2 : 0, VS_PICKLE_DICT, NULL))
            return FALSE;
          break;
        case 'e':
        case 'u': /* APPENDS, SETITEMS */
        op_additems:
          {
            Fresh f;
            gssize m = top_mark_fresh (ps, at, &f);
            if (m < 0)
              return FALSE;
            if (!add_items (ps, at, (gsize)m, op == 'e' ? VS_PICKLE_LIST : VS_PICKLE_DICT, &f))
              return FALSE;
          }
          goto chain;
        case '0': /* POP: pops a mark when one is on top */
          if (ps->marks.len && ((gsize *)ps->marks.data)[ps->marks.len - 1] == ps->stack.len)
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
            stack_truncate (ps, (gsize)m);
          }
          break;
        case '2': /* DUP */
          if (ps->stack.len == 0)
            return malformed (ps, at, "stack underflow");
          fresh_copied (ps, ((guint32 *)ps->stack.data)[ps->stack.len - 1]);
          if (!push (ps, ((guint32 *)ps->stack.data)[ps->stack.len - 1]))
            return FALSE;
          break;

        case 'q':
        case 'r': /* BINPUT, LONG_BINPUT */
          {
            int w = op == 'q' ? 1 : 4;
            NEED (w);
            guint64 idx = read_le (d + pos, w);
            /* Overwriting an entry: kept spans may have read it. */
            if (idx < ps->memo.len)
              ps->spans_off = TRUE;
            if (!memo_put (ps, at, idx))
              return FALSE;
            pos += w;
          }
          break;
        case 0x94: /* MEMOIZE */
          if (!memo_put (ps, at, ps->memo.len))
            return FALSE;
          break;
        case 'h':
        case 'j': /* BINGET, LONG_BINGET */
        op_memo_get:
          /* Memo fetches come in runs (a dict's keys and strings): a run
           * of up to 64 is read here, each as its own case would. */
          for (int run = 0;; run++)
            {
              int w = op == 'h' ? 1 : 4;
              NEED (w);
              if (!memo_get (ps, at, read_le (d + pos, w)))
                return FALSE;
              pos += w;
              if (run == 63 || pos >= len || (d[pos] != 'h' && d[pos] != 'j'))
                goto chain;
              at = pos;
              op = d[pos++];
            }
          break;

        case 'c':
        case 0x93:
        case 'R':
        case 'b':
        case 'i':
        case 'o':
        case 0x81:
        case 0x92:
        case 'P':
        case 'Q':
        case 0x82:
        case 0x83:
        case 0x84:
          g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_REFUSED,
                       "pickle opcode %s at offset %" G_GSIZE_FORMAT " would "
                       "import or call Python code; refused (only plain data "
                       "is read)",
                       vs_pickle_opcode_name (op), at);
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
            case 'h':
            case 'j':
              op = d[pos++];
              goto op_memo_get;
            case 'u':
            case 'e':
              op = d[pos++];
              goto op_additems;
            case '}':
            case ']':
              op = d[pos++];
              goto op_container;
            case 'K':
              op = d[pos++];
              goto op_binint1;
            case 'M':
              op = d[pos++];
              goto op_binint2;
            case 'J':
              op = d[pos++];
              goto op_binint;
            case 0x8a:
              op = d[pos++];
              goto op_long1;
            default:
              break;
            }
        }
    }
#undef NEED
  g_set_error (ps->error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
               "malformed pickle: truncated at offset %" G_GSIZE_FORMAT " (no STOP opcode)", len);
  return FALSE;
}

gboolean
vs_pickle_parser_run (Parser *ps, VsPickleProgress progress, gpointer progress_data)
{
  VsPickle *p = ps->p;
  /* The three constants. */
  for (int i = 0; i < 3; i++)
    if (new_node (ps, i == 0 ? VS_PICKLE_NONE : VS_PICKLE_BOOL) == G_MAXUINT32)
      return FALSE;
  NODES (p)[REF_TRUE].u.i = 1;
  ps->wm_nodes = (guint32)p->nodes.len;
  p->ps = ps;
  gboolean ok = parse (ps, progress, progress_data);
  p->ps = NULL;
  return ok;
}
