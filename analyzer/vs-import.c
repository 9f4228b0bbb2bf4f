/* vs-import.c — PyTorch memory snapshot to vramscope trace (see vs-import.h).
 *
 * Workload: snapshots from a few KiB to several GiB with millions of
 * history entries.  The pickle is parsed once (vs-pickle.c); history
 * entries are decoded while it is read (on_append), into 48-byte records
 * with their stacks already interned, and the reader frees their values, so
 * memory stays near the file's size.  Frames and stacks shared through the
 * pickle memo are recognised by identity (tokens), not rehashed; frames and
 * stacks repeated as new dicts and lists of the same memoized strings get
 * shared tokens, so the reader hands over the token instead of building
 * them again (vs_pickle_set_token_shared); the rest are matched by the
 * addresses of their keys and strings (VsPickleKeys, FrameTable,
 * HandleTable) before any text is hashed.  Then, per device:
 *
 *   1. the history entries are those decoded records;
 *   2. the state at the end — live blocks (active_allocated and
 *      active_pending_free, at their requested size) and reserved address
 *      ranges — is read from `segments`;
 *   3. the history is replayed backwards from that state: an alloc removes
 *      its block, a free_completed brings it back, a segment_alloc or
 *      segment_map removes its range, a segment_free or segment_unmap brings
 *      it back.  What remains was live before the first entry;
 *   4. that remainder is written as synthetic segment and block events at
 *      the first entry's time, then every entry is written in order.
 *
 * PyTorch's stats change exactly at these entries: requested_bytes rises at
 * alloc and falls at free_completed, reserved_bytes rises at segment_alloc /
 * segment_map and falls at segment_free / segment_unmap.  So the finalized
 * trace's peaks and finals equal memory_stats()' requested_bytes and
 * reserved_bytes whenever the history holds the peak.  When the ring buffer
 * overflowed (or recording started late) the trace says so in meta
 * 'history_overflow'.
 */
#include "vs-import.h"

#include <math.h>
#include <string.h>

#include "vs-config.h"
#include "vs-pickle.h"
#include "vs-trace-writer.h"

G_DEFINE_QUARK (vs-import-error-quark, vs_import_error)

/* The label of allocations made before the recorded history. */
#define BEFORE_HISTORY_LABEL "allocated before the recorded history"

typedef enum {
  ACT_OTHER = 0,
  ACT_ALLOC,
  ACT_FREE_REQUESTED,
  ACT_FREE_COMPLETED,
  ACT_SEGMENT_ALLOC,
  ACT_SEGMENT_FREE,
  ACT_SEGMENT_MAP,
  ACT_SEGMENT_UNMAP,
  ACT_OOM,
} Action;

/* One decoded history entry, 48 bytes: millions of them are kept. */
typedef struct {
  gint64 addr, size, stream, time_us;
  /* oom: device_free; alloc: the rounded size when the block survives to
   * the end (set by the backward pass); else VS_UNKNOWN */
  gint64 extra;
  gint32 stack;   /* stack id, or -1 for none */
  guint8 action;
} Entry;

/* A device_traces list whose entries were decoded while the pickle was
 * read (see on_append): the entries, and the first problem found, reported
 * only if the list turns out to be a device's history. */
typedef struct {
  GArray *entries; /* Entry */
  gsize count;     /* items seen */
  const char *why; /* first invalid item, see read_entry */
  gint64 first_time_us;
  gboolean has_first_time;
  GError *error;
  gsize error_idx;
} Stream;

/* Kinds of tokens the import gives taken values (low 2 bits). */
enum { TOKEN_ENTRY = 1, TOKEN_FRAME = 2, TOKEN_STACK = 3 };

/* A block live at the end of the history (from `segments`). */
typedef struct {
  gint64 requested, block_bytes; /* block_bytes -1: re-created by a free */
  VsPickleRef frames;
} LiveBlock;

typedef struct {
  const char *file, *name;
  gsize file_len, name_len;
  gint64 line;
} FrameKey;

/* Frame ids by the addresses of their strings: a pickler writes each
 * distinct string once and refers back to it, so equal frames nearly
 * always share addresses and need no hashing of their text.  Looked up for
 * every frame of every entry, so an open-addressing table probed inline
 * (linear probing, at most half full) rather than a GHashTable. */
typedef struct {
  FrameKey key;
  gint64 id; /* 0: empty slot (frame ids start at 1) */
} FrameSlot;

typedef struct {
  FrameSlot *slots;
  gsize mask, used;
} FrameTable;

/* Frame ids by the six handles of a frame dict's keys and values, when
 * all are stable (vs_pickle_stable): a frame that repeats with its
 * strings fetched from the memo has the same handles every time, and is
 * then recognised without reading the dict. */
typedef struct {
  VsPickleRef h[6];
  gint64 id; /* 0: empty slot */
} HandleSlot;

typedef struct {
  HandleSlot *slots;
  gsize mask, used;
} HandleTable;

/* A stack's frame ids (outermost first); stored keys hold ids after
 * themselves. */
typedef struct {
  guint hash;
  guint n;
  const gint64 *ids;
} StackKey;

typedef struct {
  VsPickle *p;
  VsWriter *w;
  GError **error;
  gint64 process_id;
  GHashTable *frames;     /* FrameKey* by content → frame id */
  FrameTable frame_ptrs;  /* frame ids by string address */
  HandleTable frame_handles; /* frame ids by stable handles */
  VsPickleKeys entry_keys, frame_keys, action_key;
  GHashTable *stacks;     /* StackKey* → stack id */
  GHashTable *streams;    /* list handle → Stream* */
  GArray *scratch;        /* gint64 frame ids */
  gint64 label_stack;
  VsImportProgress progress;
  gpointer progress_data;
  guint64 total_entries, done_entries;
  VsImportStats stats;
  gint64 inconsistencies;
  gboolean expandable;
} Ctx;

/* ----------------------------------------------------- address ranges -- */

/* Disjoint address ranges [start, end) in a GTree keyed by start. */

static gint
cmp_addr (gconstpointer a, gconstpointer b, gpointer unused)
{
  gint64 x = (gint64) GPOINTER_TO_SIZE (a), y = (gint64) GPOINTER_TO_SIZE (b);
  return x < y ? -1 : x > y;
}

static GTree *
ranges_new (void)
{
  return g_tree_new_full (cmp_addr, NULL, NULL, NULL);
}

static gint
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

#define KEY(x) GSIZE_TO_POINTER ((gsize) (x))
#define VAL(p) ((gint64) GPOINTER_TO_SIZE (p))

/* The node of the range with the greatest start <= addr, or NULL. */
static GTreeNode *
ranges_floor (GTree *t, gint64 addr)
{
  GTreeNode *n = g_tree_upper_bound (t, KEY (addr));
  return n ? g_tree_node_previous (n) : g_tree_node_last (t);
}

/* Removes [a, a+n) from t; returns the number of bytes that were in t. */
static gint64
ranges_sub (GTree *t, gint64 a, gint64 n)
{
  gint64 b = a + n, removed = 0;
  gint64 cut[16][2];
  GTreeNode *node = ranges_floor (t, a);
  if (node == NULL)
    node = g_tree_node_first (t);
  while (node)
    {
      int k = 0;
      /* Collect a batch of overlapping ranges, then edit the tree. */
      for (; node && k < 16; node = g_tree_node_next (node))
        {
          gint64 s = VAL (g_tree_node_key (node)), e = VAL (g_tree_node_value (node));
          if (s >= b)
            {
              node = NULL;
              break;
            }
          if (e <= a)
            continue;
          cut[k][0] = s;
          cut[k][1] = e;
          k++;
        }
      for (int i = 0; i < k; i++)
        {
          gint64 s = cut[i][0], e = cut[i][1];
          g_tree_remove (t, KEY (s));
          removed += MIN (e, b) - MAX (s, a);
          if (s < a)
            g_tree_insert (t, KEY (s), KEY (a));
          if (e > b)
            g_tree_insert (t, KEY (b), KEY (e));
        }
      if (k < 16)
        break;
      node = ranges_floor (t, a);
      if (node == NULL)
        node = g_tree_node_first (t);
    }
  return removed;
}

/* Adds [a, a+n) to t; returns the bytes of it that were already there. */
static gint64
ranges_add (GTree *t, gint64 a, gint64 n)
{
  gint64 had = ranges_sub (t, a, n);
  g_tree_insert (t, KEY (a), KEY (a + n));
  return had;
}

/* The start of the range holding addr, or VS_UNKNOWN. */
static gint64
ranges_find (GTree *t, gint64 addr)
{
  GTreeNode *n = ranges_floor (t, addr);
  if (n && VAL (g_tree_node_value (n)) > addr)
    return VAL (g_tree_node_key (n));
  return VS_UNKNOWN;
}

/* --------------------------------------------------------------- util -- */

static gboolean
not_snapshot (Ctx *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
not_snapshot (Ctx *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (c->error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_NOT_SNAPSHOT,
               "not a valid PyTorch memory snapshot: %s", msg);
  return FALSE;
}

static gboolean
write_failed (Ctx *c)
{
  g_set_error (c->error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE,
               "cannot write the trace: %s", vs_writer_errmsg (c->w));
  return FALSE;
}

/* A NUL-terminated, valid UTF-8 copy of s[0..len). */
static char *
utf8_dup (const char *s, gsize len)
{
  return g_utf8_make_valid (s, (gssize) len);
}

static gboolean
key_is (const char *k, gsize kl, const char *s)
{
  gsize sl = strlen (s);
  return kl == sl && memcmp (k, s, sl) == 0;
}

static Action
parse_action (const char *s, gsize len)
{
  static const struct { const char *name; Action a; } names[] = {
    { "alloc", ACT_ALLOC }, { "free_requested", ACT_FREE_REQUESTED },
    { "free_completed", ACT_FREE_COMPLETED },
    { "segment_alloc", ACT_SEGMENT_ALLOC }, { "segment_free", ACT_SEGMENT_FREE },
    { "segment_map", ACT_SEGMENT_MAP }, { "segment_unmap", ACT_SEGMENT_UNMAP },
    { "oom", ACT_OOM },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (key_is (s, len, names[i].name))
      return names[i].a;
  return ACT_OTHER; /* 'snapshot' markers and actions of newer versions */
}

static gboolean
report (Ctx *c, const char *stage, double fraction)
{
  if (c->progress && !c->progress (stage, fraction, c->progress_data))
    {
      g_set_error_literal (c->error, VS_IMPORT_ERROR,
                           VS_IMPORT_ERROR_CANCELLED, "cancelled");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------- stacks -- */

static guint
frame_key_hash (gconstpointer p)
{
  const FrameKey *k = p;
  guint h = (guint) k->line * 2654435761u;
  for (gsize i = 0; i < k->file_len; i++)
    h = h * 31 + (guchar) k->file[i];
  for (gsize i = 0; i < k->name_len; i++)
    h = h * 31 + (guchar) k->name[i];
  return h;
}

static gboolean
frame_key_equal (gconstpointer a, gconstpointer b)
{
  const FrameKey *x = a, *y = b;
  return x->line == y->line && x->file_len == y->file_len
         && x->name_len == y->name_len
         && memcmp (x->file, y->file, x->file_len) == 0
         && memcmp (x->name, y->name, x->name_len) == 0;
}

static inline gsize
frame_ptr_hash (const FrameKey *k)
{
  guint64 h = (guint64) (gsize) k->file * 0x9e3779b97f4a7c15u
              ^ (guint64) (gsize) k->name * 0xc2b2ae3d27d4eb4fu
              ^ (guint64) k->line * 0x165667b19e3779f9u;
  return (gsize) (h ^ (h >> 29));
}

static inline gboolean
frame_ptr_equal (const FrameKey *x, const FrameKey *y)
{
  return x->file == y->file && x->name == y->name && x->line == y->line
         && x->file_len == y->file_len && x->name_len == y->name_len;
}

/* The slot of k in t: the one holding it, or the empty one where it
 * belongs.  t must have room (frame_table_add keeps it half empty). */
static inline FrameSlot *
frame_table_slot (const FrameTable *t, const FrameKey *k)
{
  gsize i = frame_ptr_hash (k) & t->mask;
  while (t->slots[i].id != 0 && !frame_ptr_equal (&t->slots[i].key, k))
    i = (i + 1) & t->mask;
  return &t->slots[i];
}

/* The frame id of k, or 0. */
static inline gint64
frame_table_get (const FrameTable *t, const FrameKey *k)
{
  return t->slots ? frame_table_slot (t, k)->id : 0;
}

/* Records k → id (id >= 1), growing t to stay at most half full. */
static void
frame_table_add (FrameTable *t, const FrameKey *k, gint64 id)
{
  if (t->slots == NULL || (t->used + 1) * 2 > t->mask + 1)
    {
      FrameTable old = *t;
      gsize cap = old.slots ? (old.mask + 1) * 2 : 1024;
      t->slots = g_new0 (FrameSlot, cap);
      t->mask = cap - 1;
      for (gsize i = 0; old.slots && i <= old.mask; i++)
        if (old.slots[i].id != 0)
          *frame_table_slot (t, &old.slots[i].key) = old.slots[i];
      g_free (old.slots);
    }
  FrameSlot *slot = frame_table_slot (t, k);
  if (slot->id == 0)
    t->used++;
  slot->key = *k;
  slot->id = id;
}

static inline HandleSlot *
handle_table_slot (const HandleTable *t, const VsPickleRef *h)
{
  /* Three independent products, not a chain: this runs for every frame. */
  guint64 x = (((guint64) h[1] << 32) | h[0]) * 0x9e3779b97f4a7c15u
              ^ (((guint64) h[3] << 32) | h[2]) * 0xc2b2ae3d27d4eb4fu
              ^ (((guint64) h[5] << 32) | h[4]) * 0x165667b19e3779f9u;
  gsize i = (gsize) (x ^ (x >> 29)) & t->mask;
  while (t->slots[i].id != 0 && memcmp (t->slots[i].h, h, sizeof t->slots[i].h) != 0)
    i = (i + 1) & t->mask;
  return &t->slots[i];
}

/* Records h → id (id >= 1), growing t to stay at most half full. */
static void
handle_table_add (HandleTable *t, const VsPickleRef *h, gint64 id)
{
  if (t->slots == NULL || (t->used + 1) * 2 > t->mask + 1)
    {
      HandleTable old = *t;
      gsize cap = old.slots ? (old.mask + 1) * 2 : 1024;
      t->slots = g_new0 (HandleSlot, cap);
      t->mask = cap - 1;
      for (gsize i = 0; old.slots && i <= old.mask; i++)
        if (old.slots[i].id != 0)
          *handle_table_slot (t, old.slots[i].h) = old.slots[i];
      g_free (old.slots);
    }
  HandleSlot *slot = handle_table_slot (t, h);
  if (slot->id == 0)
    t->used++;
  memcpy (slot->h, h, sizeof slot->h);
  slot->id = id;
}

static guint
stack_key_hash (gconstpointer p)
{
  return ((const StackKey *) p)->hash;
}

static gboolean
stack_key_equal (gconstpointer a, gconstpointer b)
{
  const StackKey *x = a, *y = b;
  return x->hash == y->hash && x->n == y->n
         && memcmp (x->ids, y->ids, x->n * sizeof (gint64)) == 0;
}

/* Marks a value the pickle reader is handing over (see on_append) so that
 * a later reference to it reads as id; a no-op for other values. */
static void
give_token (Ctx *c, VsPickleRef v, gint64 id, guint kind)
{
  if (id < 0 || id > (gint64) (VS_PICKLE_TOKEN_MAX >> 2))
    return;
  /* A frame or stack token stands for the value's content: later equal
   * frame dicts and frames lists then read as it while parsing. */
  if (kind == TOKEN_FRAME || kind == TOKEN_STACK)
    vs_pickle_set_token_shared (c->p, v, (guint32) (id << 2) | kind);
  else
    vs_pickle_set_token (c->p, v, (guint32) (id << 2) | kind);
}

/* The id a token of kind holds, or -1 when v is no such token. */
static gint64
token_id (Ctx *c, VsPickleRef v, guint kind)
{
  guint32 t;
  if (vs_pickle_get_token (c->p, v, &t) && (t & 3) == kind)
    return t >> 2;
  return -1;
}

/* The frame id of one snapshot frame dict {filename, line, name}. */
static gint64
frame_id (Ctx *c, VsPickleRef f)
{
  FrameKey k = { "", "", 0, 0, VS_UNKNOWN };
  VsPickleValue fv[3]; /* filename, name, line: see vs_import_snapshot */
  gint64 known = token_id (c, f, TOKEN_FRAME);
  if (known >= 0)
    return known;
  gsize nh = 0;
  const VsPickleRef *h = vs_pickle_type (c->p, f) == VS_PICKLE_DICT
                             ? vs_pickle_items (c->p, f, &nh) : NULL;
  gboolean stable = h != NULL && nh == 6 && vs_pickle_stable (c->p, h, 6);
  if (stable && c->frame_handles.slots)
    {
      known = handle_table_slot (&c->frame_handles, h)->id;
      if (known > 0)
        {
          give_token (c, f, known, TOKEN_FRAME);
          return known;
        }
    }
  if (!vs_pickle_dict_fetch (c->p, f, &c->frame_keys, fv))
    {
      not_snapshot (c, "a stack frame is not a dict");
      return -1;
    }
  if (fv[0].s)
    k.file = fv[0].s, k.file_len = fv[0].len;
  if (fv[1].s)
    k.name = fv[1].s, k.name_len = fv[1].len;
  if (fv[2].type == VS_PICKLE_INT || fv[2].type == VS_PICKLE_BOOL)
    k.line = fv[2].i;
  gint64 found = frame_table_get (&c->frame_ptrs, &k);
  if (found == 0)
    {
      found = (gint64) GPOINTER_TO_SIZE (g_hash_table_lookup (c->frames, &k));
      if (found)
        frame_table_add (&c->frame_ptrs, &k, found);
    }
  if (found)
    {
      if (stable)
        handle_table_add (&c->frame_handles, h, found);
      give_token (c, f, found, TOKEN_FRAME);
      return found;
    }

  g_autofree char *file = utf8_dup (k.file, k.file_len);
  g_autofree char *name = utf8_dup (k.name, k.name_len);
  gboolean python = g_str_has_suffix (file, ".py") || file[0] == '<';
  VsFrame vf = {
    .kind = python ? VS_FRAME_PYTHON : VS_FRAME_NATIVE,
    .module_id = VS_UNKNOWN,
    .address = VS_UNKNOWN,
    .function = name[0] ? name : NULL,
    .file = file[0] ? file : NULL,
    .line = k.line,
  };
  gint64 id = vs_writer_add_frame (c->w, &vf);
  if (id < 0)
    {
      write_failed (c);
      return -1;
    }
  g_hash_table_insert (c->frames, g_memdup2 (&k, sizeof k),
                       GSIZE_TO_POINTER ((gsize) id));
  frame_table_add (&c->frame_ptrs, &k, id);
  if (stable)
    handle_table_add (&c->frame_handles, h, id);
  give_token (c, f, id, TOKEN_FRAME);
  return id;
}

/* The stack id of a snapshot frames list (innermost first), VS_UNKNOWN for
 * an empty or absent list, or -1 on error. */
static gint64
stack_id (Ctx *c, VsPickleRef frames)
{
  gint64 known = token_id (c, frames, TOKEN_STACK);
  if (known >= 0)
    return known;
  gsize n = vs_pickle_len (c->p, frames);
  if (vs_pickle_type (c->p, frames) != VS_PICKLE_LIST
      && vs_pickle_type (c->p, frames) != VS_PICKLE_TUPLE)
    return VS_UNKNOWN;
  if (n == 0)
    return VS_UNKNOWN;
  g_array_set_size (c->scratch, n);
  gint64 *ids = (gint64 *) (gpointer) c->scratch->data;
  gsize run;
  const VsPickleRef *items = vs_pickle_items (c->p, frames, &run);
  if (items != NULL)
    {
      for (gsize i = 0; i < n; i++)
        {
          gint64 id = frame_id (c, items[i]);
          if (id < 0)
            return -1;
          ids[n - 1 - i] = id; /* the writer wants the outermost first */
        }
    }
  else
    {
      VsPickleIter it;
      VsPickleRef f;
      gsize i = n;
      vs_pickle_iter_init (&it, c->p, frames);
      while (i > 0 && vs_pickle_iter_next (&it, &f))
        {
          gint64 id = frame_id (c, f);
          if (id < 0)
            return -1;
          ids[--i] = id;
        }
    }
  if (n > G_MAXUINT)
    {
      not_snapshot (c, "a stack is too deep");
      return -1;
    }
  guint64 h = 14695981039346656037u;
  for (gsize j = 0; j < n; j++)
    h = (h ^ (guint64) ids[j]) * 1099511628211u;
  StackKey probe = { (guint) (h ^ (h >> 32)), (guint) n, ids };
  gpointer found = g_hash_table_lookup (c->stacks, &probe);
  gint64 sid;
  if (found)
    sid = (gint64) GPOINTER_TO_SIZE (found);
  else
    {
      if ((sid = vs_writer_add_stack (c->w, ids, n)) < 0)
        {
          write_failed (c);
          return -1;
        }
      StackKey *key = g_malloc (sizeof (StackKey) + n * sizeof (gint64));
      *key = probe;
      key->ids = memcpy (key + 1, ids, n * sizeof (gint64));
      g_hash_table_insert (c->stacks, key, GSIZE_TO_POINTER ((gsize) sid));
    }
  give_token (c, frames, sid, TOKEN_STACK);
  return sid;
}

/* The stack of memory live before the history: a single label frame. */
static gint64
label_stack (Ctx *c)
{
  if (c->label_stack > 0)
    return c->label_stack;
  VsFrame vf = { .kind = VS_FRAME_LABEL, .module_id = VS_UNKNOWN,
                 .address = VS_UNKNOWN, .function = BEFORE_HISTORY_LABEL,
                 .line = VS_UNKNOWN };
  gint64 f = vs_writer_add_frame (c->w, &vf);
  if (f < 0 || (c->label_stack = vs_writer_add_stack (c->w, &f, 1)) < 0)
    {
      write_failed (c);
      return -1;
    }
  return c->label_stack;
}

/* ------------------------------------------------------- the snapshot -- */

/* Decodes history item v into *e and resolves its stack.  Returns FALSE
 * with *why set to a phrase that follows "device_traces[D][I]" when v is
 * not a valid entry, or with *why NULL and c->error set when its frames are
 * not valid or writing failed. */
static gboolean
read_entry (Ctx *c, VsPickleRef v, Entry *e, const char **why)
{
  /* action, addr, size, stream, time_us, frames, device_free: see
   * vs_import_snapshot */
  VsPickleValue ev[7];
  memset (e, 0, sizeof *e);
  e->stream = VS_UNKNOWN;
  e->extra = VS_UNKNOWN;
  e->stack = -1;
  *why = NULL;
  if (!vs_pickle_dict_fetch (c->p, v, &c->entry_keys, ev))
    return *why = " is not a dict", FALSE;
#define IS_INT(x) ((x).type == VS_PICKLE_INT || (x).type == VS_PICKLE_BOOL)
  if (ev[0].s)
    e->action = parse_action (ev[0].s, ev[0].len);
  gboolean has_addr = IS_INT (ev[1]), has_size = IS_INT (ev[2]);
  gboolean has_time = IS_INT (ev[4]);
  e->addr = has_addr ? ev[1].i : 0;
  e->size = has_size ? ev[2].i : 0;
  e->stream = IS_INT (ev[3]) ? ev[3].i : VS_UNKNOWN;
  e->time_us = has_time ? ev[4].i : 0;
  VsPickleRef frames = ev[5].ref;
  e->extra = IS_INT (ev[6]) ? ev[6].i : VS_UNKNOWN;
#undef IS_INT
  if (e->action == ACT_OTHER)
    return TRUE;
  if (e->action != ACT_OOM)
    e->extra = VS_UNKNOWN;
  if (!has_size || e->size < 0)
    return *why = ": 'size' missing or not a size", FALSE;
  if (e->action != ACT_OOM && !has_addr)
    return *why = ": 'addr' missing or not an integer", FALSE;
  if (!has_time || e->time_us < 0 || e->time_us > G_MAXINT64 / 1000)
    return *why = ": 'time_us' missing or out of range", FALSE;
  if (e->addr > G_MAXINT64 - e->size)
    return *why = ": address range out of bounds", FALSE;
  gint64 sid = stack_id (c, frames);
  if (sid == -1)
    return FALSE;
  if (sid > G_MAXINT32)
    return *why = ": more distinct stacks than the import handles", FALSE;
  e->stack = sid == VS_UNKNOWN ? -1 : (gint32) sid;
  return TRUE;
}

static Stream *
stream_new (void)
{
  Stream *s = g_new0 (Stream, 1);
  s->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  return s;
}

static void
stream_free (gpointer data)
{
  Stream *s = data;
  g_array_free (s->entries, TRUE);
  g_clear_error (&s->error);
  g_free (s);
}

/* Adds history item v to s.  After the first invalid item, items are only
 * counted: the problem is reported if s turns out to be a device's history.
 * Returns FALSE with *fatal set only when writing the trace failed. */
static gboolean
stream_item (Ctx *c, Stream *s, VsPickleRef v, const char **why,
             GError **fatal)
{
  if (s->count == 0)
    s->has_first_time = vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, v, "time_us"),
                                           &s->first_time_us);
  if (*why == NULL && s->error == NULL)
    {
      GError *local = NULL, **saved = c->error;
      Entry e;
      c->error = &local;
      gboolean ok = read_entry (c, v, &e, why);
      c->error = saved;
      if (ok && e.action != ACT_OTHER)
        g_array_append_val (s->entries, e);
      else if (!ok && *why)
        s->error_idx = s->count;
      else if (!ok && g_error_matches (local, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE))
        {
          g_propagate_error (fatal, local);
          return FALSE;
        }
      else if (!ok)
        {
          s->error = local;
          s->error_idx = s->count;
        }
    }
  give_token (c, v, 0, TOKEN_ENTRY);
  s->count++;
  return TRUE;
}

/* The pickle reader's append hook: the items of a list of history entries
 * (dicts with an 'action') are decoded as they are read and not kept, so
 * memory stays near the size of the decoded entries. */
static VsPickleAppend
on_append (VsPickle *p, VsPickleRef list, const VsPickleRef *items, gsize n,
           gpointer data, GError **error)
{
  Ctx *c = data;
  c->p = p;
  /* Every list this hook took is a stream, and no other: most lists seen
   * here (each entry's frames) are neither, and are kept without a table
   * lookup. */
  Stream *s = NULL;
  if (vs_pickle_list_taken (p, list))
    s = g_hash_table_lookup (c->streams, GUINT_TO_POINTER (list));
  if (s == NULL)
    {
      VsPickleValue action;
      if (vs_pickle_len (p, list) > 0
          || !vs_pickle_dict_fetch (p, items[0], &c->action_key, &action)
          || action.type != VS_PICKLE_STR)
        return VS_PICKLE_APPEND_KEEP;
      s = stream_new ();
      g_hash_table_insert (c->streams, GUINT_TO_POINTER (list), s);
    }
  for (gsize i = 0; i < n; i++)
    if (!stream_item (c, s, items[i], &s->why, error))
      return VS_PICKLE_APPEND_ERROR;
  return VS_PICKLE_APPEND_TAKEN;
}

/* Reads the segments of device dev: reserved ranges into ranges and live
 * blocks into blocks (address → LiveBlock*). */
static gboolean
read_segments (Ctx *c, VsPickleRef segments, gint64 dev, GTree *ranges,
               GHashTable *blocks)
{
  VsPickleIter it, bit;
  VsPickleRef seg, b;
  gsize i = 0;
  vs_pickle_iter_init (&it, c->p, segments);
  for (; vs_pickle_iter_next (&it, &seg); i++)
    {
      gint64 d = 0, addr, size, x;
      if (vs_pickle_type (c->p, seg) != VS_PICKLE_DICT)
        return not_snapshot (c, "segments[%" G_GSIZE_FORMAT "] is not a dict", i);
      if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "device"), &d))
        d = 0;
      if (d != dev)
        continue;
      if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "address"), &addr)
          || !vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "total_size"), &size)
          || size < 0 || addr > G_MAXINT64 - size)
        return not_snapshot (c, "segments[%" G_GSIZE_FORMAT "]: 'address' or "
                             "'total_size' missing or invalid", i);
      if (vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "is_expandable"), &x) && x)
        c->expandable = TRUE;
      if (ranges_add (ranges, addr, size) != 0)
        c->inconsistencies++;
      gsize j = 0;
      vs_pickle_iter_init (&bit, c->p, vs_pickle_dict_get (c->p, seg, "blocks"));
      for (; vs_pickle_iter_next (&bit, &b); j++)
        {
          gint64 baddr, bsize, req;
          if (vs_pickle_type (c->p, b) != VS_PICKLE_DICT)
            return not_snapshot (c, "segments[%" G_GSIZE_FORMAT "].blocks[%"
                                 G_GSIZE_FORMAT "] is not a dict", i, j);
          VsPickleRef st = vs_pickle_dict_get (c->p, b, "state");
          if (!vs_pickle_str_equal (c->p, st, "active_allocated")
              && !vs_pickle_str_equal (c->p, st, "active_pending_free"))
            continue;
          if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, b, "address"), &baddr)
              || !vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, b, "size"), &bsize)
              || !vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, b, "requested_size"), &req)
              || req < 0 || bsize < 0)
            return not_snapshot (c, "segments[%" G_GSIZE_FORMAT "].blocks[%"
                                 G_GSIZE_FORMAT "]: 'address', 'size' or "
                                 "'requested_size' missing or invalid", i, j);
          LiveBlock *lb = g_new (LiveBlock, 1);
          lb->requested = req;
          lb->block_bytes = bsize;
          lb->frames = vs_pickle_dict_get (c->p, b, "frames");
          if (g_hash_table_contains (blocks, &baddr))
            c->inconsistencies++;
          g_hash_table_insert (blocks, g_memdup2 (&baddr, sizeof baddr), lb);
        }
    }
  return TRUE;
}

static gint64
entry_ts (const Entry *e, gint64 prev)
{
  return MAX (e->time_us * 1000, prev);
}

/* Imports one device's history and final state. */
static gboolean
import_device (Ctx *c, gint64 dev, Stream *hist, VsPickleRef segments,
               gint64 start_ns, gint64 device_id, gint64 allocator_id)
{
  g_autoptr (GTree) ranges = ranges_new ();
  g_autoptr (GHashTable) blocks
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

  /* 1. the decoded history */
  if (hist->why)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]%s",
                         (guint) dev, hist->error_idx, hist->why);
  if (hist->error)
    {
      g_propagate_error (c->error, g_steal_pointer (&hist->error));
      return FALSE;
    }
  Entry *ev = (Entry *) (gpointer) hist->entries->data;
  gsize m = hist->entries->len;

  /* 2. the state at the end */
  if (!read_segments (c, segments, dev, ranges, blocks))
    return FALSE;

  /* 3. backwards to the state before the first entry */
  for (gsize i = m; i-- > 0;)
    {
      Entry *e = &ev[i];
      LiveBlock *lb;
      switch (e->action)
        {
        case ACT_ALLOC:
          lb = g_hash_table_lookup (blocks, &e->addr);
          if (lb == NULL)
            c->inconsistencies++;
          else
            {
              if (lb->block_bytes >= 0)
                e->extra = lb->block_bytes; /* survives to the end */
              g_hash_table_remove (blocks, &e->addr);
            }
          break;
        case ACT_FREE_COMPLETED:
          if (g_hash_table_contains (blocks, &e->addr))
            c->inconsistencies++;
          lb = g_new (LiveBlock, 1);
          lb->requested = e->size;
          lb->block_bytes = -1;
          lb->frames = VS_PICKLE_MISSING;
          g_hash_table_insert (blocks, g_memdup2 (&e->addr, sizeof e->addr), lb);
          break;
        case ACT_SEGMENT_ALLOC:
        case ACT_SEGMENT_MAP:
          if (ranges_sub (ranges, e->addr, e->size) != e->size)
            c->inconsistencies++;
          break;
        case ACT_SEGMENT_FREE:
        case ACT_SEGMENT_UNMAP:
          if (ranges_add (ranges, e->addr, e->size) != 0)
            c->inconsistencies++;
          break;
        default:
          break;
        }
    }

  /* 4. what was live before the first entry, at its time */
  gint64 ts = m ? MAX (ev[0].time_us * 1000, start_ns) : start_ns;
  GTreeNode *rn;
  for (rn = g_tree_node_first (ranges); rn; rn = g_tree_node_next (rn))
    {
      gint64 s = VAL (g_tree_node_key (rn)), e = VAL (g_tree_node_value (rn));
      gint64 sid = label_stack (c);
      if (sid < 0)
        return FALSE;
      VsAllocEvent ae = {
        .ts = ts, .process_id = c->process_id, .tid = VS_UNKNOWN,
        .device_id = device_id, .allocator_id = allocator_id,
        .op = c->expandable ? VS_ALLOC_OP_SEGMENT_MAP : VS_ALLOC_OP_SEGMENT_ALLOC,
        .address = s, .requested_bytes = e - s, .block_bytes = VS_UNKNOWN,
        .segment_address = VS_UNKNOWN, .stream = VS_UNKNOWN,
        .stack_id = sid, .range_id = VS_UNKNOWN,
      };
      if (vs_writer_alloc_event (c->w, &ae) < 0)
        return write_failed (c);
      c->stats.synthetic_events++;
    }
  /* Blocks in address order, so that the trace is reproducible. */
  g_autoptr (GArray) pre = g_array_new (FALSE, FALSE, sizeof (gint64));
  GHashTableIter hi;
  gpointer hk, hv;
  g_hash_table_iter_init (&hi, blocks);
  while (g_hash_table_iter_next (&hi, &hk, &hv))
    g_array_append_val (pre, *(gint64 *) hk);
  g_array_sort (pre, cmp_i64);
  for (guint i = 0; i < pre->len; i++)
    {
      gint64 addr = g_array_index (pre, gint64, i);
      LiveBlock *lb = g_hash_table_lookup (blocks, &addr);
      gint64 sid = lb->block_bytes >= 0 ? stack_id (c, lb->frames) : VS_UNKNOWN;
      if (sid == -1)
        return FALSE;
      if (sid == VS_UNKNOWN && (sid = label_stack (c)) < 0)
        return FALSE;
      VsAllocEvent ae = {
        .ts = ts, .process_id = c->process_id, .tid = VS_UNKNOWN,
        .device_id = device_id, .allocator_id = allocator_id,
        .op = VS_ALLOC_OP_ALLOC, .address = addr,
        .requested_bytes = lb->requested,
        .block_bytes = lb->block_bytes >= 0 ? lb->block_bytes : VS_UNKNOWN,
        .segment_address = ranges_find (ranges, addr),
        .stream = VS_UNKNOWN, .stack_id = sid, .range_id = VS_UNKNOWN,
      };
      if (vs_writer_alloc_event (c->w, &ae) < 0)
        return write_failed (c);
      c->stats.synthetic_events++;
    }

  /* 5. the history, forwards.  `ranges` now tracks what is reserved (for
   * the segment of each block); `born` what the history itself created, to
   * detect frees of memory from before it. */
  g_autoptr (GTree) born = ranges_new ();
  g_autoptr (GHashTable) born_blocks = g_hash_table_new_full (g_int64_hash, g_int64_equal,
                                                              g_free, NULL);
  gint64 prev = ts;
  for (gsize i = 0; i < m; i++)
    {
      Entry *e = &ev[i];
      gint64 t = entry_ts (e, prev);
      prev = t;
      gint64 sid = e->stack >= 0 ? e->stack : VS_UNKNOWN;
      if (e->action == ACT_OOM)
        {
          VsFailedAlloc fa = {
            .ts = t, .process_id = c->process_id, .tid = VS_UNKNOWN,
            .device_id = device_id, .allocator_id = allocator_id,
            .api = "pytorch", .requested_bytes = e->size,
            .error = VS_UNKNOWN, .error_name = "OutOfMemoryError",
            .device_free_bytes = e->extra,
            .device_total_bytes = VS_UNKNOWN, .correlation = VS_UNKNOWN,
            .stack_id = sid, .range_id = VS_UNKNOWN,
          };
          if (vs_writer_failed_alloc (c->w, &fa) < 0)
            return write_failed (c);
          continue;
        }
      VsAllocEvent ae = {
        .ts = t, .process_id = c->process_id, .tid = VS_UNKNOWN,
        .device_id = device_id, .allocator_id = allocator_id,
        .address = e->addr, .requested_bytes = e->size,
        .block_bytes = VS_UNKNOWN, .segment_address = VS_UNKNOWN,
        .stream = e->stream, .stack_id = sid, .range_id = VS_UNKNOWN,
      };
      switch (e->action)
        {
        case ACT_ALLOC:
          ae.op = VS_ALLOC_OP_ALLOC;
          ae.block_bytes = e->extra;
          ae.segment_address = ranges_find (ranges, e->addr);
          g_hash_table_add (born_blocks, g_memdup2 (&e->addr, sizeof e->addr));
          break;
        case ACT_FREE_REQUESTED:
        case ACT_FREE_COMPLETED:
          ae.op = e->action == ACT_FREE_REQUESTED ? VS_ALLOC_OP_FREE_REQUESTED
                                                  : VS_ALLOC_OP_FREE_COMPLETED;
          ae.segment_address = ranges_find (ranges, e->addr);
          if (!g_hash_table_contains (born_blocks, &e->addr))
            c->stats.history_overflow = TRUE;
          if (e->action == ACT_FREE_COMPLETED)
            g_hash_table_remove (born_blocks, &e->addr);
          break;
        case ACT_SEGMENT_ALLOC:
        case ACT_SEGMENT_MAP:
          ae.op = e->action == ACT_SEGMENT_ALLOC ? VS_ALLOC_OP_SEGMENT_ALLOC
                                                 : VS_ALLOC_OP_SEGMENT_MAP;
          ae.segment_address = e->addr;
          ranges_add (ranges, e->addr, e->size);
          ranges_add (born, e->addr, e->size);
          break;
        case ACT_SEGMENT_FREE:
        case ACT_SEGMENT_UNMAP:
          ae.op = e->action == ACT_SEGMENT_FREE ? VS_ALLOC_OP_SEGMENT_FREE
                                                : VS_ALLOC_OP_SEGMENT_UNMAP;
          ae.segment_address = e->addr;
          ranges_sub (ranges, e->addr, e->size);
          if (ranges_sub (born, e->addr, e->size) != e->size)
            c->stats.history_overflow = TRUE;
          break;
        default:
          g_assert_not_reached ();
        }
      if (vs_writer_alloc_event (c->w, &ae) < 0)
        return write_failed (c);
      if ((++c->done_entries & 0xffff) == 0
          && !report (c, "importing",
                      0.4 + 0.4 * (double) c->done_entries / (double) MAX (c->total_entries, 1)))
        return FALSE;
    }
  c->stats.entries += m;
  return TRUE;
}

/* Writes allocator_settings as compact JSON.  Depth-limited: settings are
 * a flat dict with one level of nesting; anything deeper is written null. */
static void
settings_json (const VsPickle *p, VsPickleRef v, GString *out, int depth)
{
  gint64 i;
  double f;
  gsize len;
  const char *s;
  VsPickleIter it;
  VsPickleRef k, x;
  if (out->len > 65536 || depth > 4)
    {
      g_string_append (out, "null");
      return;
    }
  switch (vs_pickle_type (p, v))
    {
    case VS_PICKLE_BOOL:
      vs_pickle_get_int (p, v, &i);
      g_string_append (out, i ? "true" : "false");
      break;
    case VS_PICKLE_INT:
      vs_pickle_get_int (p, v, &i);
      g_string_append_printf (out, "%" G_GINT64_FORMAT, i);
      break;
    case VS_PICKLE_FLOAT:
      vs_pickle_get_double (p, v, &f);
      if (isfinite (f))
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_string_append (out, g_ascii_dtostr (buf, sizeof buf, f));
        }
      else
        g_string_append (out, "null");
      break;
    case VS_PICKLE_STR:
    case VS_PICKLE_BYTES:
      {
        s = vs_pickle_get_str (p, v, &len);
        g_autofree char *u = g_utf8_make_valid (s, (gssize) len);
        g_string_append_c (out, '"');
        for (const char *q = u; *q; q++)
          {
            if (*q == '"' || *q == '\\')
              g_string_append_printf (out, "\\%c", *q);
            else if ((guchar) *q < 0x20)
              g_string_append_printf (out, "\\u%04x", (guchar) *q);
            else
              g_string_append_c (out, *q);
          }
        g_string_append_c (out, '"');
      }
      break;
    case VS_PICKLE_LIST:
    case VS_PICKLE_TUPLE:
      g_string_append_c (out, '[');
      vs_pickle_iter_init (&it, p, v);
      for (int n = 0; vs_pickle_iter_next (&it, &x); n++)
        {
          if (n)
            g_string_append_c (out, ',');
          settings_json (p, x, out, depth + 1);
        }
      g_string_append_c (out, ']');
      break;
    case VS_PICKLE_DICT:
      g_string_append_c (out, '{');
      vs_pickle_iter_init (&it, p, v);
      for (int n = 0; vs_pickle_iter_next_pair (&it, &k, &x); n++)
        {
          if (n)
            g_string_append_c (out, ',');
          if (vs_pickle_type (p, k) == VS_PICKLE_STR)
            settings_json (p, k, out, depth + 1);
          else
            {
              g_string_append_c (out, '"');
              settings_json (p, k, out, depth + 1);
              g_string_append_c (out, '"');
            }
          g_string_append_c (out, ':');
          settings_json (p, x, out, depth + 1);
        }
      g_string_append_c (out, '}');
      break;
    default:
      g_string_append (out, "null");
      break;
    }
}

static gboolean
pickle_progress (guint64 done, guint64 total, gpointer data)
{
  Ctx *c = data;
  return !c->progress
         || c->progress ("reading", 0.4 * (double) done / (double) MAX (total, 1),
                         c->progress_data);
}

static bool
finalize_progress (uint64_t done, uint64_t total, void *data)
{
  Ctx *c = data;
  return !c->progress
         || c->progress ("finalizing",
                         0.8 + 0.2 * (double) done / (double) MAX (total, 1),
                         c->progress_data);
}

/* The time of the earliest first entry over all devices, or 0. */
static gint64
history_start (GPtrArray *hists)
{
  gint64 start = G_MAXINT64;
  for (guint i = 0; i < hists->len; i++)
    {
      const Stream *s = g_ptr_array_index (hists, i);
      gint64 t = s->first_time_us;
      if (s->count && s->has_first_time && t >= 0 && t <= G_MAXINT64 / 1000)
        start = MIN (start, t * 1000);
    }
  return start == G_MAXINT64 ? 0 : start;
}

/* The history of one device_traces list: the entries decoded while
 * reading when the list was taken (on_append), else decoded now.  The
 * result belongs to *owned when made here.  NULL with c->error set when
 * writing failed. */
static Stream *
device_history (Ctx *c, VsPickleRef list, GPtrArray *owned)
{
  Stream *s = g_hash_table_lookup (c->streams, GUINT_TO_POINTER (list));
  if (s && vs_pickle_list_taken (c->p, list) && vs_pickle_len (c->p, list) == 0)
    return s;
  s = stream_new ();
  g_ptr_array_add (owned, s);
  VsPickleIter it;
  VsPickleRef v;
  vs_pickle_iter_init (&it, c->p, list);
  while (vs_pickle_iter_next (&it, &v))
    if (!stream_item (c, s, v, &s->why, c->error))
      return NULL;
  return s;
}

static gboolean
import_all (Ctx *c, const char *pickle_path)
{
  const VsPickle *p = c->p;
  VsPickleRef root = vs_pickle_root (p);
  if (vs_pickle_type (p, root) != VS_PICKLE_DICT)
    return not_snapshot (c, "the pickle's top level is not a dict");
  VsPickleRef segments = vs_pickle_dict_get (p, root, "segments");
  VsPickleRef traces = vs_pickle_dict_get (p, root, "device_traces");
  VsPickleRef settings = vs_pickle_dict_get (p, root, "allocator_settings");
  VsPickleType st = vs_pickle_type (p, segments);
  if (st != VS_PICKLE_LIST && st != VS_PICKLE_TUPLE)
    return not_snapshot (c, "no 'segments' list");
  if (traces != VS_PICKLE_MISSING && vs_pickle_type (p, traces) != VS_PICKLE_LIST
      && vs_pickle_type (p, traces) != VS_PICKLE_TUPLE)
    return not_snapshot (c, "'device_traces' is not a list");

  /* Devices: every index of device_traces with entries, and every device
   * holding a segment. */
  gint64 ndev = (gint64) vs_pickle_len (p, traces);
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (stream_free);
  g_autoptr (GPtrArray) dev_traces = g_ptr_array_new ();
  VsPickleIter it;
  VsPickleRef v;
  vs_pickle_iter_init (&it, p, traces);
  while (vs_pickle_iter_next (&it, &v))
    {
      if (vs_pickle_type (p, v) != VS_PICKLE_LIST && vs_pickle_type (p, v) != VS_PICKLE_TUPLE)
        return not_snapshot (c, "device_traces[%u] is not a list", dev_traces->len);
      Stream *s = device_history (c, v, owned);
      if (s == NULL)
        return FALSE;
      g_ptr_array_add (dev_traces, s);
      c->total_entries += s->count;
    }
  g_autoptr (GHashTable) seg_devs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  vs_pickle_iter_init (&it, p, segments);
  while (vs_pickle_iter_next (&it, &v))
    {
      gint64 d = 0;
      if (vs_pickle_type (p, v) != VS_PICKLE_DICT)
        return not_snapshot (c, "a segment is not a dict");
      if (!vs_pickle_get_int (p, vs_pickle_dict_get (p, v, "device"), &d))
        d = 0;
      if (d < 0 || d > 65535)
        return not_snapshot (c, "segment device index %" G_GINT64_FORMAT " out of range", d);
      g_hash_table_add (seg_devs, g_memdup2 (&d, sizeof d));
      ndev = MAX (ndev, d + 1);
    }

  gint64 start_ns = history_start (dev_traces);
  g_autofree char *base = g_path_get_basename (pickle_path);
  GString *js = g_string_new (NULL);
  if (settings != VS_PICKLE_MISSING)
    settings_json (p, settings, js, 0);
  g_autofree char *settings_str = g_string_free (js, FALSE);

  if (vs_writer_set_meta (c->w, "source", "import") < 0
      || vs_writer_set_meta (c->w, "clock", "snapshot time_us") < 0
      || vs_writer_set_meta_int (c->w, "start_ns", start_ns) < 0
      || vs_writer_set_meta (c->w, "import_file", base) < 0
      || vs_writer_set_meta (c->w, "tool_version", VS_VERSION) < 0)
    return write_failed (c);

  VsProcess proc = {
    .pid = 0, .ppid = VS_UNKNOWN, .rank = VS_UNKNOWN, .local_rank = VS_UNKNOWN,
    .world_size = VS_UNKNOWN, .start_ns = start_ns, .end_ns = VS_UNKNOWN,
    .exit_status = VS_UNKNOWN,
  };
  if ((c->process_id = vs_writer_add_process (c->w, &proc)) < 0)
    return write_failed (c);

  for (gint64 d = 0; d < ndev; d++)
    {
      Stream none = { 0 };
      Stream *tr = d < (gint64) dev_traces->len
                       ? g_ptr_array_index (dev_traces, d) : &none;
      if (tr->count == 0 && !g_hash_table_contains (seg_devs, &d))
        continue;
      if (tr == &none)
        tr->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
      g_autoptr (GArray) none_entries = none.entries;
      VsDevice dv = { .idx = d, .uuid = NULL, .name = NULL,
                      .total_bytes = VS_UNKNOWN };
      gint64 device_id = vs_writer_add_device (c->w, &dv);
      if (device_id < 0)
        return write_failed (c);
      VsAllocator al = { .device_id = device_id, .process_id = c->process_id,
                         .kind = "pytorch", .name = "pytorch",
                         .handle = VS_UNKNOWN,
                         .settings = settings_str[0] ? settings_str : NULL };
      gint64 allocator_id = vs_writer_add_allocator (c->w, &al);
      if (allocator_id < 0)
        return write_failed (c);
      c->expandable = FALSE;
      if (settings != VS_PICKLE_MISSING)
        {
          gint64 x;
          if (vs_pickle_get_int (p, vs_pickle_dict_get (p, settings, "expandable_segments"), &x) && x)
            c->expandable = TRUE;
        }
      if (!import_device (c, d, tr, segments, start_ns, device_id, allocator_id))
        return FALSE;
      c->stats.devices++;
    }

  if (vs_writer_set_meta (c->w, "history_reconstructed",
                          c->stats.synthetic_events ? "1" : "0") < 0
      || vs_writer_set_meta (c->w, "history_overflow",
                             c->stats.history_overflow ? "1" : "0") < 0
      || vs_writer_set_meta_int (c->w, "history_entries", (gint64) c->stats.entries) < 0
      || (c->inconsistencies
          && vs_writer_set_meta_int (c->w, "import_inconsistencies", c->inconsistencies) < 0))
    return write_failed (c);
  return TRUE;
}

gboolean
vs_import_snapshot (const char *pickle_path, const char *trace_path,
                    VsImportProgress progress, gpointer progress_data,
                    VsImportStats *stats, GError **error)
{
  g_return_val_if_fail (pickle_path != NULL && trace_path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  Ctx c = { .error = error, .progress = progress,
            .progress_data = progress_data };
  gint64 t0 = g_get_monotonic_time ();
  char err[512] = "";
  /* The writer comes first: history entries are decoded, their stacks
   * written, while the pickle is read.  The trace is a temporary file,
   * removed by the caller unless the import completes. */
  c.w = vs_writer_create (trace_path, err, sizeof err);
  if (c.w != NULL && vs_writer_set_bulk (c.w) < 0)
    {
      g_strlcpy (err, vs_writer_errmsg (c.w), sizeof err);
      vs_writer_close (c.w, false, NULL, NULL, NULL, 0);
      c.w = NULL;
    }
  if (c.w == NULL)
    {
      g_set_error (error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE,
                   "cannot create the trace: %s", err);
      return FALSE;
    }
  c.frames = g_hash_table_new_full (frame_key_hash, frame_key_equal, g_free, NULL);
  static const char *const entry_keys[] = {
    "action", "addr", "size", "stream", "time_us", "frames", "device_free",
  };
  static const char *const frame_keys[] = { "filename", "name", "line" };
  vs_pickle_keys_init (&c.entry_keys, entry_keys, G_N_ELEMENTS (entry_keys));
  vs_pickle_keys_init (&c.frame_keys, frame_keys, G_N_ELEMENTS (frame_keys));
  vs_pickle_keys_init (&c.action_key, entry_keys, 1);
  c.stacks = g_hash_table_new_full (stack_key_hash, stack_key_equal, g_free, NULL);
  c.streams = g_hash_table_new_full (NULL, NULL, NULL, stream_free);
  c.scratch = g_array_new (FALSE, FALSE, sizeof (gint64));

  VsPickle *p = vs_pickle_load_file_full (pickle_path, pickle_progress, &c,
                                          on_append, &c, error);
  gint64 t1 = g_get_monotonic_time ();
  c.stats.reading_us = t1 - t0;
  gboolean ok = p != NULL;
  if (ok)
    {
      c.p = p;
      ok = import_all (&c, pickle_path);
    }
  /* Frames point into the pickle: drop the caches before it. */
  g_hash_table_destroy (c.frames);
  g_free (c.frame_ptrs.slots);
  g_free (c.frame_handles.slots);
  g_hash_table_destroy (c.stacks);
  g_hash_table_destroy (c.streams);
  g_array_free (c.scratch, TRUE);
  vs_pickle_free (p);
  gint64 t2 = g_get_monotonic_time ();
  c.stats.importing_us = t2 - t1;

  if (ok)
    {
      ok = vs_writer_close (c.w, true, finalize_progress, &c, err, sizeof err) == 0;
      if (!ok)
        {
          gboolean cancelled = strstr (err, "cancelled") != NULL;
          g_set_error (error, VS_IMPORT_ERROR,
                       cancelled ? VS_IMPORT_ERROR_CANCELLED : VS_IMPORT_ERROR_WRITE,
                       cancelled ? "cancelled" : "cannot finalize the trace: %s", err);
        }
    }
  else
    vs_writer_close (c.w, false, NULL, NULL, err, sizeof err);
  c.stats.finalizing_us = g_get_monotonic_time () - t2;
  if (ok && stats)
    *stats = c.stats;
  return ok;
}
