/* vs-import.c — PyTorch memory snapshot to vramscope trace (see vs-import.h).
 *
 * Workload: snapshots from a few KiB to several GiB with millions of
 * history entries.  The pickle is parsed once (vs-pickle.c); then, per
 * device:
 *
 *   1. the history entries are decoded into a compact array;
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

typedef struct {
  gint64 addr, size, stream, time_us, device_free;
  gint64 block_bytes; /* rounded size when this block survives to the end */
  VsPickleRef frames;
  guint8 action;
} Entry;

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

typedef struct {
  const VsPickle *p;
  VsWriter *w;
  GError **error;
  gint64 process_id;
  GHashTable *frames; /* FrameKey* → frame id */
  GHashTable *stacks; /* GBytes of frame ids → stack id */
  GArray *scratch;    /* gint64 frame ids */
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

/* The frame id of one snapshot frame dict {filename, line, name}. */
static gint64
frame_id (Ctx *c, VsPickleRef f)
{
  FrameKey k = { "", "", 0, 0, VS_UNKNOWN };
  VsPickleRef key, val;
  VsPickleIter it;
  if (vs_pickle_type (c->p, f) != VS_PICKLE_DICT)
    {
      not_snapshot (c, "a stack frame is not a dict");
      return -1;
    }
  vs_pickle_iter_init (&it, c->p, f);
  while (vs_pickle_iter_next_pair (&it, &key, &val))
    {
      gsize kl, sl;
      const char *ks = vs_pickle_get_str (c->p, key, &kl), *s;
      if (ks == NULL)
        continue;
      if (key_is (ks, kl, "filename") && (s = vs_pickle_get_str (c->p, val, &sl)))
        k.file = s, k.file_len = sl;
      else if (key_is (ks, kl, "name") && (s = vs_pickle_get_str (c->p, val, &sl)))
        k.name = s, k.name_len = sl;
      else if (key_is (ks, kl, "line"))
        vs_pickle_get_int (c->p, val, &k.line);
    }
  gpointer found = g_hash_table_lookup (c->frames, &k);
  if (found)
    return (gint64) GPOINTER_TO_SIZE (found);

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
  return id;
}

/* The stack id of a snapshot frames list (innermost first), VS_UNKNOWN for
 * an empty or absent list, or -1 on error. */
static gint64
stack_id (Ctx *c, VsPickleRef frames)
{
  gsize n = vs_pickle_len (c->p, frames);
  if (vs_pickle_type (c->p, frames) != VS_PICKLE_LIST
      && vs_pickle_type (c->p, frames) != VS_PICKLE_TUPLE)
    return VS_UNKNOWN;
  if (n == 0)
    return VS_UNKNOWN;
  g_array_set_size (c->scratch, n);
  gint64 *ids = (gint64 *) (gpointer) c->scratch->data;
  VsPickleIter it;
  VsPickleRef f;
  gsize i = n;
  vs_pickle_iter_init (&it, c->p, frames);
  while (i > 0 && vs_pickle_iter_next (&it, &f))
    {
      gint64 id = frame_id (c, f);
      if (id < 0)
        return -1;
      ids[--i] = id; /* the writer wants the outermost first */
    }
  g_autoptr (GBytes) probe = g_bytes_new_static (ids, n * sizeof (gint64));
  gpointer found = g_hash_table_lookup (c->stacks, probe);
  if (found)
    return (gint64) GPOINTER_TO_SIZE (found);
  gint64 sid = vs_writer_add_stack (c->w, ids, n);
  if (sid < 0)
    {
      write_failed (c);
      return -1;
    }
  g_hash_table_insert (c->stacks, g_bytes_new (ids, n * sizeof (gint64)),
                       GSIZE_TO_POINTER ((gsize) sid));
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

/* Decodes one history entry dict into e. */
static gboolean
read_entry (Ctx *c, guint dev, gsize idx, VsPickleRef v, Entry *e)
{
  VsPickleRef key, val;
  VsPickleIter it;
  gboolean has_addr = FALSE, has_size = FALSE, has_time = FALSE;
  memset (e, 0, sizeof *e);
  e->frames = VS_PICKLE_MISSING;
  e->stream = VS_UNKNOWN;
  e->device_free = VS_UNKNOWN;
  e->block_bytes = VS_UNKNOWN;
  if (vs_pickle_type (c->p, v) != VS_PICKLE_DICT)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "] is not a dict",
                         dev, idx);
  vs_pickle_iter_init (&it, c->p, v);
  while (vs_pickle_iter_next_pair (&it, &key, &val))
    {
      gsize kl, sl;
      const char *k = vs_pickle_get_str (c->p, key, &kl), *s;
      if (k == NULL)
        continue;
      switch (k[0])
        {
        case 'a':
          if (key_is (k, kl, "action") && (s = vs_pickle_get_str (c->p, val, &sl)))
            e->action = parse_action (s, sl);
          else if (key_is (k, kl, "addr"))
            has_addr = vs_pickle_get_int (c->p, val, &e->addr);
          break;
        case 's':
          if (key_is (k, kl, "size"))
            has_size = vs_pickle_get_int (c->p, val, &e->size);
          else if (key_is (k, kl, "stream") && !vs_pickle_get_int (c->p, val, &e->stream))
            e->stream = VS_UNKNOWN;
          break;
        case 't':
          if (key_is (k, kl, "time_us"))
            has_time = vs_pickle_get_int (c->p, val, &e->time_us);
          break;
        case 'f':
          if (key_is (k, kl, "frames"))
            e->frames = val;
          break;
        case 'd':
          if (key_is (k, kl, "device_free")
              && !vs_pickle_get_int (c->p, val, &e->device_free))
            e->device_free = VS_UNKNOWN;
          break;
        default:
          break;
        }
    }
  if (e->action == ACT_OTHER)
    return TRUE;
  if (!has_size || e->size < 0)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]: 'size' "
                         "missing or not a size", dev, idx);
  if (e->action != ACT_OOM && !has_addr)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]: 'addr' "
                         "missing or not an integer", dev, idx);
  if (!has_time || e->time_us < 0 || e->time_us > G_MAXINT64 / 1000)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]: "
                         "'time_us' missing or out of range", dev, idx);
  if (e->addr > G_MAXINT64 - e->size)
    return not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]: address "
                         "range out of bounds", dev, idx);
  return TRUE;
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
import_device (Ctx *c, gint64 dev, VsPickleRef trace, VsPickleRef segments,
               gint64 start_ns, gint64 device_id, gint64 allocator_id)
{
  gsize n = vs_pickle_len (c->p, trace);
  g_autofree Entry *ev = g_new (Entry, MAX (n, (gsize) 1));
  g_autoptr (GTree) ranges = ranges_new ();
  g_autoptr (GHashTable) blocks
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  VsPickleIter it;
  VsPickleRef v;
  gsize m = 0;

  /* 1. decode */
  vs_pickle_iter_init (&it, c->p, trace);
  for (gsize i = 0; vs_pickle_iter_next (&it, &v); i++)
    {
      if (!read_entry (c, (guint) dev, i, v, &ev[m]))
        return FALSE;
      if (ev[m].action != ACT_OTHER)
        m++;
    }

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
                e->block_bytes = lb->block_bytes; /* survives to the end */
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
      gint64 sid = stack_id (c, e->frames);
      if (sid == -1)
        return FALSE;
      if (e->action == ACT_OOM)
        {
          VsFailedAlloc fa = {
            .ts = t, .process_id = c->process_id, .tid = VS_UNKNOWN,
            .device_id = device_id, .allocator_id = allocator_id,
            .api = "pytorch", .requested_bytes = e->size,
            .error = VS_UNKNOWN, .error_name = "OutOfMemoryError",
            .device_free_bytes = e->device_free,
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
          ae.block_bytes = e->block_bytes;
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
history_start (const VsPickle *p, VsPickleRef traces)
{
  gint64 start = G_MAXINT64, t;
  VsPickleIter it, eit;
  VsPickleRef dev, e;
  vs_pickle_iter_init (&it, p, traces);
  while (vs_pickle_iter_next (&it, &dev))
    {
      vs_pickle_iter_init (&eit, p, dev);
      if (vs_pickle_iter_next (&eit, &e)
          && vs_pickle_get_int (p, vs_pickle_dict_get (p, e, "time_us"), &t)
          && t >= 0 && t <= G_MAXINT64 / 1000)
        start = MIN (start, t * 1000);
    }
  return start == G_MAXINT64 ? 0 : start;
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
  g_autoptr (GArray) dev_traces = g_array_new (FALSE, TRUE, sizeof (VsPickleRef));
  VsPickleIter it;
  VsPickleRef v;
  vs_pickle_iter_init (&it, p, traces);
  while (vs_pickle_iter_next (&it, &v))
    {
      if (vs_pickle_type (p, v) != VS_PICKLE_LIST && vs_pickle_type (p, v) != VS_PICKLE_TUPLE)
        return not_snapshot (c, "device_traces[%u] is not a list", dev_traces->len);
      g_array_append_val (dev_traces, v);
      c->total_entries += vs_pickle_len (p, v);
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

  gint64 start_ns = history_start (p, traces);
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
      VsPickleRef tr = d < (gint64) dev_traces->len
                           ? g_array_index (dev_traces, VsPickleRef, d)
                           : VS_PICKLE_MISSING;
      if (vs_pickle_len (p, tr) == 0 && !g_hash_table_contains (seg_devs, &d))
        continue;
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
  VsPickle *p = vs_pickle_load_file (pickle_path, pickle_progress, &c, error);
  if (p == NULL)
    return FALSE;
  c.p = p;
  gint64 t1 = g_get_monotonic_time ();
  c.stats.reading_us = t1 - t0;

  char err[512] = "";
  c.w = vs_writer_create (trace_path, err, sizeof err);
  /* The trace is a temporary file, removed unless the import completes. */
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
      vs_pickle_free (p);
      return FALSE;
    }
  c.frames = g_hash_table_new_full (frame_key_hash, frame_key_equal, g_free, NULL);
  c.stacks = g_hash_table_new_full ((GHashFunc) g_bytes_hash, g_bytes_equal,
                                    (GDestroyNotify) g_bytes_unref, NULL);
  c.scratch = g_array_new (FALSE, FALSE, sizeof (gint64));

  gboolean ok = import_all (&c, pickle_path);
  /* Frames point into the pickle: drop the caches before it. */
  g_hash_table_destroy (c.frames);
  g_hash_table_destroy (c.stacks);
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
