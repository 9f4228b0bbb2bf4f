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
 */
#include "vs-pickle.h"

#include <string.h>

G_DEFINE_QUARK (vs-pickle-error-quark, vs_pickle_error)

#define VS_PICKLE_MEM_FACTOR 40
#define NONE_CHUNK G_MAXUINT32
#define IMM_BIT 0x80000000u
#define IMM_MIN (-(G_GINT64_CONSTANT (1) << 30))
#define IMM_MAX ((G_GINT64_CONSTANT (1) << 30) - 1)
#define MAX_NODES 0x7ffffff0u
#define PROGRESS_STEP (8u << 20)

enum { REF_NONE = 0, REF_FALSE = 1, REF_TRUE = 2 };

typedef struct {
  guint8 type;   /* VsPickleType */
  guint8 multi;  /* containers: children are a chunk list */
  guint16 pad;
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

struct VsPickle {
  GMappedFile *file;
  const guint8 *data;
  gsize size;
  gsize mem, mem_limit;
  Vec nodes;  /* Node */
  Vec pool;   /* guint32 */
  Vec chunks; /* Chunk */
  VsPickleRef root;
};

/* The parser's transient state, freed when parsing ends. */
typedef struct {
  VsPickle *p;
  Vec stack; /* guint32 handles */
  Vec marks; /* gsize stack positions */
  Vec memo;  /* guint32 handles, G_MAXUINT32 = unset */
  GError **error;
} Parser;

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
vec_reserve (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error)
{
  if (v->cap - v->len >= extra)
    return TRUE;
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
  if (r >= p->nodes.len)
    return VS_PICKLE_NONE;
  return NODES (p)[r].type;
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
  ps->stack.len = (gsize) m;
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
  ps->stack.len -= n;
  return push (ps, c);
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
  if (!extend (ps, c, st + from, n))
    return FALSE;
  ps->stack.len = from;
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
  ((guint32 *) ps->memo.data)[idx] = ((guint32 *) ps->stack.data)[ps->stack.len - 1];
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
            ps->stack.len--;
          else
            return malformed (ps, at, "stack underflow");
          break;
        case '1': /* POP_MARK */
          {
            gssize m = top_mark (ps, at);
            if (m < 0)
              return FALSE;
            ps->stack.len = (gsize) m;
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

VsPickle *
vs_pickle_parse (const guint8 *data, gsize len, VsPickleProgress progress,
                 gpointer progress_data, GError **error)
{
  g_return_val_if_fail (data != NULL || len == 0, NULL);

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

  Parser ps = { .p = p, .error = error };
  gboolean ok = TRUE;
  /* The three constants. */
  for (int i = 0; ok && i < 3; i++)
    ok = new_node (&ps, i == 0 ? VS_PICKLE_NONE : VS_PICKLE_BOOL) != G_MAXUINT32;
  if (ok)
    {
      NODES (p)[REF_TRUE].u.i = 1;
      ok = parse (&ps, progress, progress_data);
    }
  g_free (ps.stack.data);
  g_free (ps.marks.data);
  g_free (ps.memo.data);
  p->mem -= (ps.stack.cap * sizeof (guint32) + ps.marks.cap * sizeof (gsize)
             + ps.memo.cap * sizeof (guint32));
  if (!ok)
    {
      vs_pickle_free (p);
      return NULL;
    }
  return p;
}

VsPickle *
vs_pickle_load_file (const char *path, VsPickleProgress progress,
                     gpointer progress_data, GError **error)
{
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
  VsPickle *p = vs_pickle_parse (data ? data : empty, len, progress,
                                 progress_data, error);
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
