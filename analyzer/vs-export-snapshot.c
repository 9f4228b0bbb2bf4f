/* SPDX-License-Identifier: MIT */
/* vs-export-snapshot.c — the PyTorch allocator level of a trace as a
 * PyTorch memory snapshot pickle (torch.cuda.memory._dump_snapshot()).
 *
 * The snapshot is a dict:
 *   segments       the segments live at the end, each with its blocks
 *                  tiling it (active_allocated, or inactive for the gaps);
 *   device_traces  per device index, every allocator event in replay order
 *                  (alloc, free_requested, free_completed, segment_alloc,
 *                  segment_free, segment_map, segment_unmap, oom) with
 *                  addr, size, stream, time_us and frames;
 *   allocator_settings  {'expandable_segments': bool}.
 * Sizes are requested sizes, as PyTorch's history records them; time_us is
 * the trace's clock in microseconds, rounded down.  Frames are dicts
 * {filename, line, name}, innermost first; each distinct frames list is
 * written once and referenced through the pickle memo afterwards, as
 * strings used as keys are.
 *
 * The pickle uses protocol 2 opcodes only, written by hand: Python's
 * pickle.load, memory_viz and `vramscope import` read it.
 */
#include "vs-export.h"

#include <string.h>

#include "vs-stack.h"
#include "vs-trace-private.h"

/* Pickle opcodes (protocol 2). */
#define OP_PROTO '\x80'
#define OP_STOP '.'
#define OP_MARK '('
#define OP_EMPTY_DICT '}'
#define OP_EMPTY_LIST ']'
#define OP_SETITEMS 'u'
#define OP_APPENDS 'e'
#define OP_TUPLE2 '\x86'
#define OP_TRUE '\x88'
#define OP_FALSE '\x89'
#define OP_BININT1 'K'
#define OP_BININT2 'M'
#define OP_BININT 'J'
#define OP_LONG1 '\x8a'
#define OP_BINUNICODE 'X'
#define OP_BINPUT 'q'
#define OP_LONG_BINPUT 'r'
#define OP_BINGET 'h'
#define OP_LONG_BINGET 'j'

/* Items per APPENDS, as Python's pickler batches them: the reader's mark
 * stack then stays small however long a list is. */
#define BATCH 1000

typedef struct
{
  VsTrace *trace;
  FILE *out;
  guint32 memo_next;
  GHashTable *strings; /* interned key → memo index + 1 */
  GHashTable *stacks;  /* stack id → memo index + 1 of its frames list */
} Pickler;

static void
put_u32 (FILE *out, guint32 v)
{
  unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
  fwrite (b, 1, 4, out);
}

/* A signed integer in the smallest opcode that holds it. */
static void
put_int (FILE *out, gint64 v)
{
  if (v >= 0 && v < 256)
    {
      fputc (OP_BININT1, out);
      fputc ((int)v, out);
    }
  else if (v >= 0 && v < 65536)
    {
      fputc (OP_BININT2, out);
      fputc ((int)(v & 0xff), out);
      fputc ((int)(v >> 8), out);
    }
  else if (v >= G_MININT32 && v <= G_MAXINT32)
    {
      fputc (OP_BININT, out);
      put_u32 (out, (guint32)(gint32)v);
    }
  else
    {
      guint64 u = (guint64)v;
      fputc (OP_LONG1, out);
      fputc (8, out);
      for (int i = 0; i < 8; i++)
        fputc ((int)((u >> (8 * i)) & 0xff), out);
    }
}

/* An address: the trace stores the bit pattern as a signed integer, the
 * snapshot an unsigned one. */
static void
put_address (FILE *out, gint64 address)
{
  if (address >= 0)
    {
      put_int (out, address);
      return;
    }
  guint64 u = (guint64)address;
  fputc (OP_LONG1, out);
  fputc (9, out); /* a ninth, zero byte keeps the value positive */
  for (int i = 0; i < 8; i++)
    fputc ((int)((u >> (8 * i)) & 0xff), out);
  fputc (0, out);
}

static void
put_str (FILE *out, const char *s)
{
  g_autofree char *valid = g_utf8_make_valid (s ? s : "", -1);
  gsize len = strlen (valid);
  fputc (OP_BINUNICODE, out);
  put_u32 (out, (guint32)len);
  fwrite (valid, 1, len, out);
}

static void
put_bool (FILE *out, gboolean b)
{
  fputc (b ? OP_TRUE : OP_FALSE, out);
}

/* Stores the object just written in the memo; returns its index + 1.
 * The one-byte forms for the first 256, as Python's pickler writes them. */
static guint32
memo_put (Pickler *pk)
{
  if (pk->memo_next < 256)
    {
      fputc (OP_BINPUT, pk->out);
      fputc ((int)pk->memo_next, pk->out);
    }
  else
    {
      fputc (OP_LONG_BINPUT, pk->out);
      put_u32 (pk->out, pk->memo_next);
    }
  return ++pk->memo_next;
}

static void
memo_get (Pickler *pk, guint32 index_plus_1)
{
  guint32 index = index_plus_1 - 1;
  if (index < 256)
    {
      fputc (OP_BINGET, pk->out);
      fputc ((int)index, pk->out);
    }
  else
    {
      fputc (OP_LONG_BINGET, pk->out);
      put_u32 (pk->out, index);
    }
}

/* A string written once and then referenced: dict keys, actions, states. */
static void
put_key (Pickler *pk, const char *s)
{
  guint32 m = GPOINTER_TO_UINT (g_hash_table_lookup (pk->strings, s));
  if (m != 0)
    {
      memo_get (pk, m);
      return;
    }
  put_str (pk->out, s);
  g_hash_table_insert (pk->strings, g_strdup (s), GUINT_TO_POINTER (memo_put (pk)));
}

/* A dict item of an integer value: key, then v. */
static void
put_int_item (Pickler *pk, const char *key, gint64 v)
{
  put_key (pk, key);
  put_int (pk->out, v);
}

/* The frames list of stack_id: [{filename, line, name}, …] innermost
 * first, memoized per stack. */
static gboolean
put_frames (Pickler *pk, gint64 stack_id, GError **error)
{
  if (stack_id == VS_UNKNOWN)
    stack_id = 0;
  guint32 m = GPOINTER_TO_UINT (g_hash_table_lookup (pk->stacks, &stack_id));
  if (m != 0)
    {
      memo_get (pk, m);
      return TRUE;
    }
  const VsStackInfo *st = vs_stack_get (pk->trace, stack_id, error);
  if (st == NULL)
    return FALSE;
  fputc (OP_EMPTY_LIST, pk->out);
  guint32 list_memo = memo_put (pk);
  guint i = 0;
  for (const VsStackInfo *n = st; n != NULL && n->frame != NULL; n = n->parent, i++)
    {
      const VsFrameInfo *f = n->frame;
      if (i % BATCH == 0)
        fputc (OP_MARK, pk->out);
      fputc (OP_EMPTY_DICT, pk->out);
      fputc (OP_MARK, pk->out);
      put_key (pk, "filename");
      put_str (pk->out, f->file ? f->file : f->module ? f->module : "");
      put_int_item (pk, "line", f->line == VS_UNKNOWN ? 0 : f->line);
      put_key (pk, "name");
      put_str (pk->out, f->function ? f->function : f->text);
      fputc (OP_SETITEMS, pk->out);
      if (i % BATCH == BATCH - 1 || i + 1 == st->depth)
        fputc (OP_APPENDS, pk->out);
    }
  gint64 *key = g_new (gint64, 1);
  *key = stack_id;
  g_hash_table_insert (pk->stacks, key, GUINT_TO_POINTER (list_memo));
  return TRUE;
}

static const char *const action_names[] = {
  [VS_ALLOC_OP_ALLOC] = "alloc",
  [VS_ALLOC_OP_FREE_REQUESTED] = "free_requested",
  [VS_ALLOC_OP_FREE_COMPLETED] = "free_completed",
  [VS_ALLOC_OP_SEGMENT_ALLOC] = "segment_alloc",
  [VS_ALLOC_OP_SEGMENT_FREE] = "segment_free",
  [VS_ALLOC_OP_SEGMENT_MAP] = "segment_map",
  [VS_ALLOC_OP_SEGMENT_UNMAP] = "segment_unmap",
};

/* The allocator's events and its failures, in time order (failures after
 * the events of the same instant, as the replay orders them).  Memory
 * recreated as live before the trace (alloc_event.before_trace, schema
 * version 2) is no event of the history: a reader of the snapshot finds it
 * again from the segments, as the import did. */
#define ENTRIES_SQL(cond)                                                                          \
  "SELECT 0, ts, op, address, requested_bytes, stream, stack_id, NULL, id"                         \
  " FROM alloc_event WHERE allocator_id = ?1" cond " UNION ALL"                                    \
  " SELECT 1, ts, 0, NULL, requested_bytes, NULL, stack_id, device_free_bytes, id"                 \
  " FROM failed_alloc WHERE allocator_id = ?1"                                                     \
  " ORDER BY 2, 1, 9"
static const char *entries_sql = ENTRIES_SQL (" AND before_trace IS NULL");
static const char *entries_v1_sql = ENTRIES_SQL ("");

/* The device_traces list of one allocator. */
static gboolean
put_history (Pickler *pk, gint64 allocator_id, GError **error)
{
  sqlite3_stmt *st = vs_trace_statement (pk->trace, entries_sql, NULL);
  if (st == NULL)
    st = vs_trace_statement (pk->trace, entries_v1_sql, error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, allocator_id);
  fputc (OP_EMPTY_LIST, pk->out);
  guint64 n = 0;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gboolean oom = sqlite3_column_int (st, 0) == 1;
      gint64 op = sqlite3_column_int64 (st, 2);
      if (!oom && (op < VS_ALLOC_OP_ALLOC || op > VS_ALLOC_OP_SEGMENT_UNMAP))
        continue; /* an operation no snapshot has */
      gint64 ts = sqlite3_column_int64 (st, 1), size = vs_column_int (st, 4);
      gint64 stream = vs_column_int (st, 5), stack_id = vs_column_int (st, 6);
      if (n % BATCH == 0)
        fputc (OP_MARK, pk->out);
      fputc (OP_EMPTY_DICT, pk->out);
      fputc (OP_MARK, pk->out);
      put_key (pk, "action");
      put_key (pk, oom ? "oom" : action_names[op]);
      if (!oom)
        {
          put_key (pk, "addr");
          put_address (pk->out, sqlite3_column_int64 (st, 3));
        }
      else
        {
          put_int_item (pk, "device_free", MAX (vs_column_int (st, 7), 0));
        }
      put_int_item (pk, "size", size == VS_UNKNOWN ? 0 : size);
      put_int_item (pk, "stream", stream == VS_UNKNOWN ? 0 : stream);
      put_int_item (pk, "time_us", ts >= 0 ? ts / 1000 : -((-ts + 999) / 1000));
      put_key (pk, "frames");
      if (!put_frames (pk, stack_id, error))
        return FALSE;
      fputc (OP_SETITEMS, pk->out);
      if (++n % BATCH == 0)
        fputc (OP_APPENDS, pk->out);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (pk->trace, error);
  if (n % BATCH != 0)
    fputc (OP_APPENDS, pk->out);
  return TRUE;
}

static const char *segments_sql
    = "SELECT address, bytes, stack_id FROM block"
      " WHERE level = 3 AND allocator_id = ?1 AND free_seq IS NULL ORDER BY address";
static const char *blocks_sql
    = "SELECT address, bytes, block_bytes, stack_id FROM block"
      " WHERE level = 2 AND allocator_id = ?1 AND free_seq IS NULL ORDER BY address";

typedef struct
{
  gint64 address, bytes, block_bytes, stack_id;
} LiveBlock;

/* One block dict of a segment. */
static gboolean
put_block (Pickler *pk, gint64 address, gint64 size, gint64 requested, const char *state,
           gint64 stack_id, GError **error)
{
  fputc (OP_EMPTY_DICT, pk->out);
  fputc (OP_MARK, pk->out);
  put_key (pk, "address");
  put_address (pk->out, address);
  put_int_item (pk, "size", size);
  put_int_item (pk, "requested_size", requested);
  put_key (pk, "state");
  put_key (pk, state);
  put_key (pk, "frames");
  if (!put_frames (pk, stack_id, error))
    return FALSE;
  fputc (OP_SETITEMS, pk->out);
  return TRUE;
}

/* Appends the segments of one allocator (items of the open `segments`
 * list, each in its own MARK … APPENDS). */
static gboolean
put_segments (Pickler *pk, gint64 device_idx, gint64 allocator_id, gboolean expandable,
              GError **error)
{
  g_autoptr (GArray) blocks = g_array_new (FALSE, FALSE, sizeof (LiveBlock));
  sqlite3_stmt *st = vs_trace_statement (pk->trace, blocks_sql, error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, allocator_id);
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      LiveBlock b = { sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1),
                      vs_column_int (st, 2), vs_column_int (st, 3) };
      if (b.block_bytes == VS_UNKNOWN || b.block_bytes < b.bytes)
        b.block_bytes = b.bytes;
      g_array_append_val (blocks, b);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (pk->trace, error);

  g_autoptr (GArray) segments = g_array_new (FALSE, FALSE, sizeof (LiveBlock));
  st = vs_trace_statement (pk->trace, segments_sql, error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, allocator_id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      LiveBlock s = { sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1), VS_UNKNOWN,
                      vs_column_int (st, 2) };
      g_array_append_val (segments, s);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (pk->trace, error);

  guint b = 0;
  for (guint i = 0; i < segments->len; i++)
    {
      const LiveBlock *s = &g_array_index (segments, LiveBlock, i);
      gint64 end = s->address + s->bytes;
      /* Blocks below this segment belong to none still live: skipped. */
      while (b < blocks->len && g_array_index (blocks, LiveBlock, b).address < s->address)
        b++;
      guint first = b;
      gint64 allocated = 0, requested = 0;
      for (guint j = first; j < blocks->len && g_array_index (blocks, LiveBlock, j).address < end;
           j++)
        {
          allocated += g_array_index (blocks, LiveBlock, j).block_bytes;
          requested += g_array_index (blocks, LiveBlock, j).bytes;
        }
      fputc (OP_MARK, pk->out);
      fputc (OP_EMPTY_DICT, pk->out);
      fputc (OP_MARK, pk->out);
      put_int_item (pk, "device", device_idx);
      put_key (pk, "address");
      put_address (pk->out, s->address);
      put_int_item (pk, "total_size", s->bytes);
      put_int_item (pk, "allocated_size", allocated);
      put_int_item (pk, "active_size", allocated);
      put_int_item (pk, "requested_size", requested);
      put_int_item (pk, "stream", 0);
      put_key (pk, "segment_type");
      /* PyTorch's small pool allocates segments of exactly 2 MiB. */
      put_key (pk, s->bytes == 2 * 1024 * 1024 && !expandable ? "small" : "large");
      put_int_item (pk, "segment_pool_id", 0);
      put_int (pk->out, 0);
      fputc (OP_TUPLE2, pk->out);
      put_key (pk, "is_expandable");
      put_bool (pk->out, expandable);
      put_key (pk, "frames");
      if (!put_frames (pk, s->stack_id, error))
        return FALSE;
      put_key (pk, "blocks");
      fputc (OP_EMPTY_LIST, pk->out);
      fputc (OP_MARK, pk->out);
      gint64 at = s->address;
      for (; b < blocks->len && g_array_index (blocks, LiveBlock, b).address < end; b++)
        {
          const LiveBlock *lb = &g_array_index (blocks, LiveBlock, b);
          if (lb->address > at
              && !put_block (pk, at, lb->address - at, 0, "inactive", VS_UNKNOWN, error))
            return FALSE;
          if (!put_block (pk, lb->address, lb->block_bytes, lb->bytes, "active_allocated",
                          lb->stack_id, error))
            return FALSE;
          at = MAX (at, lb->address + lb->block_bytes);
        }
      if (at < end && !put_block (pk, at, end - at, 0, "inactive", VS_UNKNOWN, error))
        return FALSE;
      fputc (OP_APPENDS, pk->out); /* the blocks */
      fputc (OP_SETITEMS, pk->out);
      fputc (OP_APPENDS, pk->out); /* the segment */
    }
  return TRUE;
}

static const char *expandable_sql
    = "SELECT EXISTS (SELECT 1 FROM alloc_event WHERE allocator_id = ?1 AND op IN (6, 7))";

gboolean
vs_export_snapshot (VsTrace *trace, gint64 device_id, FILE *out, GError **error)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* The PyTorch allocators to export, and the device index of each. */
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  g_autoptr (GPtrArray) chosen = g_ptr_array_new ();
  gint64 max_idx = -1;
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, a->device_id);
      if (g_strcmp0 (a->kind, "pytorch") != 0 || d == NULL
          || (device_id != 0 && a->device_id != device_id))
        continue;
      for (guint j = 0; j < chosen->len; j++)
        if (((const VsAllocatorInfo *)g_ptr_array_index (chosen, j))->device_id == a->device_id)
          {
            g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                         "%s has several PyTorch allocators on device %" G_GINT64_FORMAT
                         " (several processes): choose one device of one process",
                         vs_trace_get_path (trace), d->idx);
            return FALSE;
          }
      g_ptr_array_add (chosen, (gpointer)a);
      max_idx = MAX (max_idx, d->idx);
    }
  if (chosen->len == 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no PyTorch allocator%s", vs_trace_get_path (trace),
                   device_id != 0 ? " on that device" : "");
      return FALSE;
    }
  if (max_idx > 65535)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s: device index %" G_GINT64_FORMAT " is too large for a snapshot",
                   vs_trace_get_path (trace), max_idx);
      return FALSE;
    }

  g_autoptr (GHashTable) strings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  Pickler pk = { .trace = trace, .out = out, .strings = strings, .stacks = stacks };
  gboolean any_expandable = FALSE;

  fputc (OP_PROTO, out);
  fputc (2, out);
  fputc (OP_EMPTY_DICT, out);
  fputc (OP_MARK, out);

  put_key (&pk, "segments");
  fputc (OP_EMPTY_LIST, out);
  for (guint j = 0; j < chosen->len; j++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (chosen, j);
      gint64 expandable = 0;
      sqlite3_stmt *st = vs_trace_statement (trace, expandable_sql, error);
      if (st == NULL)
        return FALSE;
      sqlite3_bind_int64 (st, 1, a->id);
      if (sqlite3_step (st) != SQLITE_ROW)
        return vs_trace_sql_error (trace, error);
      expandable = sqlite3_column_int64 (st, 0);
      sqlite3_reset (st);
      any_expandable |= expandable != 0;
      if (!put_segments (&pk, vs_trace_lookup_device (trace, a->device_id)->idx, a->id,
                         expandable != 0, error))
        return FALSE;
    }

  put_key (&pk, "device_traces");
  fputc (OP_EMPTY_LIST, out);
  fputc (OP_MARK, out);
  for (gint64 idx = 0; idx <= max_idx; idx++)
    {
      const VsAllocatorInfo *a = NULL;
      for (guint j = 0; j < chosen->len && a == NULL; j++)
        {
          const VsAllocatorInfo *c = g_ptr_array_index (chosen, j);
          if (vs_trace_lookup_device (trace, c->device_id)->idx == idx)
            a = c;
        }
      if (a == NULL)
        fputc (OP_EMPTY_LIST, out);
      else if (!put_history (&pk, a->id, error))
        return FALSE;
    }
  fputc (OP_APPENDS, out);

  put_key (&pk, "allocator_settings");
  fputc (OP_EMPTY_DICT, out);
  fputc (OP_MARK, out);
  put_key (&pk, "expandable_segments");
  put_bool (out, any_expandable);
  fputc (OP_SETITEMS, out);

  fputc (OP_SETITEMS, out);
  fputc (OP_STOP, out);
  return TRUE;
}
