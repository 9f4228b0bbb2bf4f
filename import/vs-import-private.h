/* SPDX-License-Identifier: MIT */
/* vs-import-private.h — what the files of the snapshot import share.
 *
 * The import is split into vs-import.c (the entry point and the trace's
 * process, devices, allocators and meta), vs-import-snapshot.c (decoding
 * history entries while the pickle is read, and the final segments),
 * vs-import-stacks.c (interning frames and stacks), vs-import-replay.c (the
 * backward replay and the events written per device) and
 * vs-import-ranges.c (sets of address ranges).  Nothing here is for use
 * outside those files.
 */
#pragma once

#include <glib.h>
#include <string.h>

#include "vs-import.h"
#include "vs-pickle.h"
#include "vs-trace-writer.h"

/* The label of allocations made before the recorded history. */
#define BEFORE_HISTORY_LABEL "allocated before the recorded history"

/* A history entry takes at least this many bytes of a real pickle (its
 * dict alone: six keys and values, a mark and a SETITEMS); a file yielding
 * more entries than its size allows shares them through the memo, and is
 * refused so that a trace stays within a stated multiple of its snapshot
 * (docs/import.md). */
#define VS_IMPORT_MIN_ENTRY_BYTES 8

typedef enum
{
  ACT_OTHER = 0,
  ACT_ALLOC,
  ACT_FREE_REQUESTED,
  ACT_FREE_COMPLETED,
  ACT_SEGMENT_ALLOC,
  ACT_SEGMENT_FREE,
  ACT_SEGMENT_MAP,
  ACT_SEGMENT_UNMAP,
  ACT_OOM,
  ACT_SNAPSHOT, /* a marker: a snapshot was taken then */
} Action;

/* The time_us of an entry that has none (older PyTorch): the trace's
 * time axis is then the order of events. */
#define NO_TIME (-1)

/* One decoded history entry, 48 bytes: millions of them are kept. */
typedef struct
{
  gint64 addr, size, stream, time_us; /* time_us NO_TIME: none */
  /* oom: device_free; alloc: the rounded size when the block survives to
   * the end (set by the backward pass); else VS_UNKNOWN */
  gint64 extra;
  gint32 stack; /* stack id, or -1 for none */
  guint8 action;
} Entry;

/* A device_traces list whose entries were decoded while the pickle was
 * read (see vs_import_on_append): the entries, and the first problem
 * found, reported only if the list turns out to be a device's history. */
typedef struct
{
  GArray *entries; /* Entry */
  gsize count;     /* items seen */
  const char *why; /* first invalid item, see read_entry */
  gint64 first_time_us;
  gboolean has_first_time;
  gsize missing_time;   /* entries without time_us */
  gsize memory_entries; /* entries that change memory (not markers) */
  GError *error;
  gsize error_idx;
} Stream;

/* Kinds of tokens the import gives taken values (low 2 bits). */
enum
{
  TOKEN_ENTRY = 1,
  TOKEN_FRAME = 2,
  TOKEN_STACK = 3
};

/* A block live at the end of the history (from `segments`). */
typedef struct
{
  gint64 requested, block_bytes; /* block_bytes -1: re-created by a free */
  VsPickleRef frames;
} LiveBlock;

/* Blocks by address (common/vs-hash-table.h), looked up for every alloc
 * and free of the history.  The home slot is the high bits of a
 * multiplicative hash, as block addresses differ mostly in their middle
 * bits. */
typedef struct
{
  gint64 addr;
  LiveBlock b;
  gboolean used;
} BlockSlot;

static inline guint64
vs_import_addr_hash (gint64 addr)
{
  guint64 h = (guint64)addr * 0x9e3779b97f4a7c15u;
  return h ^ (h >> 32);
}

#define VS_HT_TYPE BlockMap
#define VS_HT_FN(n) block_map_##n
#define VS_HT_ENTRY BlockSlot
#define VS_HT_KEY_TYPE gint64
#define VS_HT_KEY(e) ((e)->addr)
#define VS_HT_SET_KEY(e, k) ((e)->addr = (k), (e)->used = TRUE)
#define VS_HT_HASH(k) vs_import_addr_hash (k)
#define VS_HT_EQUAL(a, b) ((a) == (b))
#define VS_HT_IS_EMPTY(e) (!(e)->used)
#include "vs-hash-table.h"

typedef struct
{
  const char *file, *name;
  gsize file_len, name_len;
  gint64 line;
} FrameKey;

/* Frame ids by the addresses of their strings: a pickler writes each
 * distinct string once and refers back to it, so equal frames nearly
 * always share addresses and need no hashing of their text.  Looked up for
 * every frame of every entry, so an open-addressing table probed inline
 * (linear probing, at most half full) rather than a GHashTable. */
typedef struct
{
  FrameKey key;
  gint64 id; /* 0: empty slot (frame ids start at 1) */
} FrameSlot;

static inline guint64
vs_import_frame_ptr_hash (const FrameKey *k)
{
  guint64 h = (guint64)(gsize)k->file * 0x9e3779b97f4a7c15u
              ^ (guint64)(gsize)k->name * 0xc2b2ae3d27d4eb4fu
              ^ (guint64)k->line * 0x165667b19e3779f9u;
  return h ^ (h >> 29);
}

static inline gboolean
vs_import_frame_ptr_equal (const FrameKey *x, const FrameKey *y)
{
  return x->file == y->file && x->name == y->name && x->line == y->line
         && x->file_len == y->file_len && x->name_len == y->name_len;
}

/* A new entry's id is -1 until its caller sets it. */
#define VS_HT_TYPE FrameTable
#define VS_HT_FN(n) frame_table_##n
#define VS_HT_ENTRY FrameSlot
#define VS_HT_KEY_TYPE const FrameKey *
#define VS_HT_KEY(e) (&(e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = *(k), (e)->id = -1)
#define VS_HT_HASH(k) vs_import_frame_ptr_hash (k)
#define VS_HT_EQUAL(a, b) vs_import_frame_ptr_equal (a, b)
#define VS_HT_IS_EMPTY(e) ((e)->id == 0)
#include "vs-hash-table.h"

/* Frame ids by the six handles of a frame dict's keys and values, when
 * all are stable (vs_pickle_stable): a frame that repeats with its
 * strings fetched from the memo has the same handles every time, and is
 * then recognised without reading the dict. */
typedef struct
{
  VsPickleRef h[6];
  gint64 id; /* 0: empty slot */
} HandleSlot;

static inline guint64
vs_import_handles_hash (const VsPickleRef *h)
{
  /* Three independent products, not a chain: this runs for every frame. */
  guint64 x = (((guint64)h[1] << 32) | h[0]) * 0x9e3779b97f4a7c15u
              ^ (((guint64)h[3] << 32) | h[2]) * 0xc2b2ae3d27d4eb4fu
              ^ (((guint64)h[5] << 32) | h[4]) * 0x165667b19e3779f9u;
  return x ^ (x >> 29);
}

#define VS_HT_TYPE HandleTable
#define VS_HT_FN(n) handle_table_##n
#define VS_HT_ENTRY HandleSlot
#define VS_HT_KEY_TYPE const VsPickleRef *
#define VS_HT_KEY(e) ((const VsPickleRef *)(e)->h)
#define VS_HT_SET_KEY(e, k) (memcpy ((e)->h, (k), sizeof (e)->h), (e)->id = -1)
#define VS_HT_HASH(k) vs_import_handles_hash (k)
#define VS_HT_EQUAL(a, b) (memcmp ((a), (b), 6 * sizeof (VsPickleRef)) == 0)
#define VS_HT_IS_EMPTY(e) ((e)->id == 0)
#include "vs-hash-table.h"

/* A stack's frame ids (outermost first); stored keys hold ids after
 * themselves. */
typedef struct
{
  guint hash;
  guint n;
  const gint64 *ids;
} StackKey;

typedef struct
{
  VsPickle *p;
  VsWriter *w;
  GError **error;
  gint64 process_id;
  GHashTable *frames;        /* FrameKey* by content → frame id */
  FrameTable frame_ptrs;     /* frame ids by string address */
  HandleTable frame_handles; /* frame ids by stable handles */
  VsPickleKeys entry_keys, frame_keys, action_key;
  GHashTable *stacks;  /* StackKey* → stack id */
  GHashTable *streams; /* list handle → Stream* */
  GArray *scratch;     /* gint64 frame ids */
  gint64 label_stack;
  VsImportProgress progress;
  gpointer progress_data;
  guint64 total_entries, done_entries;
  VsImportStats stats;
  gint64 inconsistencies;
  gboolean expandable;
  gboolean order_axis;  /* some entry has no time_us: ts = event number */
  GHashTable *skipped;  /* action name → count of entries not imported */
  gint64 skipped_total; /* entries and annotations not imported */
  GHashTable *markers;  /* times (gint64*) of snapshot markers written */
} Ctx;

/* ------------------------------------------------------------------------
 * vs-import.c */

/* Sets c->error to VS_IMPORT_ERROR_NOT_SNAPSHOT with the printf-style
 * message after "not a valid PyTorch memory snapshot: "; returns FALSE. */
gboolean vs_import_not_snapshot (Ctx *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Sets c->error to VS_IMPORT_ERROR_WRITE with the writer's last error;
 * returns FALSE. */
gboolean vs_import_write_failed (Ctx *c);

/* Reports progress to the caller's callback: TRUE to go on, FALSE with
 * c->error set (VS_IMPORT_ERROR_CANCELLED) when the caller cancelled. */
gboolean vs_import_report (Ctx *c, const char *stage, double fraction);

/* ------------------------------------------------------------------------
 * vs-import-ranges.c: disjoint address ranges [start, end) in a GTree
 * keyed by start, the start and end stored as pointers; blocks by
 * address in a BlockMap (zero-initialized: empty). */

#define KEY(x) GSIZE_TO_POINTER ((gsize)(x))
#define VAL(p) ((gint64)GPOINTER_TO_SIZE (p))

/* A new, empty set of ranges (free with g_tree_unref). */
GTree *vs_import_ranges_new (void);

/* Removes [a, a+n) from t; returns the number of bytes that were in t. */
gint64 vs_import_ranges_sub (GTree *t, gint64 a, gint64 n);

/* Adds [a, a+n) to t; returns the bytes of it that were already there. */
gint64 vs_import_ranges_add (GTree *t, gint64 a, gint64 n);

/* The start of the range holding addr, or VS_UNKNOWN. */
gint64 vs_import_ranges_find (GTree *t, gint64 addr);

/* Frees what m holds; m is then empty and may be used again. */
void vs_import_blocks_clear (BlockMap *m);

/* The block at addr in m, or NULL. */
LiveBlock *vs_import_blocks_get (const BlockMap *m, gint64 addr);

/* The block at addr in m, added (contents undefined) when absent; *added
 * says which. */
LiveBlock *vs_import_blocks_put (BlockMap *m, gint64 addr, gboolean *added);

/* Removes the block at addr from m, if any. */
void vs_import_blocks_remove (BlockMap *m, gint64 addr);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BlockMap, vs_import_blocks_clear)

/* ------------------------------------------------------------------------
 * vs-import-stacks.c */

/* GHashTable functions of FrameKey* (by content) and StackKey*. */
guint vs_import_frame_key_hash (gconstpointer p);
gboolean vs_import_frame_key_equal (gconstpointer a, gconstpointer b);
guint vs_import_stack_key_hash (gconstpointer p);
gboolean vs_import_stack_key_equal (gconstpointer a, gconstpointer b);

/* Marks a value the pickle reader is handing over (see
 * vs_import_on_append) so that a later reference to it reads as id, a
 * token of kind (TOKEN_*); a no-op for other values. */
void vs_import_give_token (Ctx *c, VsPickleRef v, gint64 id, guint kind);

/* The stack id of a snapshot frames list (innermost first), VS_UNKNOWN for
 * an empty or absent list, or -1 with c->error set on error. */
gint64 vs_import_stack_id (Ctx *c, VsPickleRef frames);

/* The stack of memory live before the history (a single label frame),
 * made on first use; -1 with c->error set when writing failed. */
gint64 vs_import_label_stack (Ctx *c);

/* ------------------------------------------------------------------------
 * vs-import-snapshot.c */

/* A new, empty Stream, and its GDestroyNotify. */
Stream *vs_import_stream_new (void);
void vs_import_stream_free (gpointer data);

/* Adds history item v to s.  After the first invalid item, items are only
 * counted: the problem is reported if s turns out to be a device's history.
 * Returns FALSE with *fatal set only when writing the trace failed. */
gboolean vs_import_stream_item (Ctx *c, Stream *s, VsPickleRef v, const char **why, GError **fatal);

/* The pickle reader's append hook (VsPickleAppendHook, data a Ctx*): takes
 * the items of lists of history entries, decoded into Streams in
 * c->streams by list handle. */
VsPickleAppend vs_import_on_append (VsPickle *p, VsPickleRef list, const VsPickleRef *items,
                                    gsize n, gpointer data, GError **error);

/* Counts one entry or annotation not imported, under name. */
void vs_import_skip (Ctx *c, const char *name, gsize len);

/* Reads the segments of device dev: reserved ranges into ranges and live
 * blocks into blocks.  FALSE with c->error set when the segments are not
 * valid. */
gboolean vs_import_read_segments (Ctx *c, VsPickleRef segments, gint64 dev, GTree *ranges,
                                  BlockMap *blocks);

/* ------------------------------------------------------------------------
 * vs-import-annotations.c */

/* Writes a snapshot marker at ts as a range of no length, once per time
 * (PyTorch puts the marker in every device's history).  FALSE with
 * c->error set when writing failed. */
gboolean vs_import_write_marker (Ctx *c, gint64 ts);

/* Writes the snapshot's external_annotations (list, or VS_PICKLE_MISSING)
 * as ranges; what cannot be placed is counted with vs_import_skip.  FALSE
 * with c->error set when writing failed. */
gboolean vs_import_annotations (Ctx *c, VsPickleRef list);

/* ------------------------------------------------------------------------
 * vs-import-replay.c */

/* The trace time of entry i (0-based) of a device's history: time_us in
 * ns, or with c->order_axis the event number i + 1 (0 is the state before
 * the history). */
gint64 vs_import_entry_time (const Ctx *c, const Entry *e, gsize i);

/* Imports one device's history (hist) and final state (its segments),
 * writing the device's events for allocator_id; history times before
 * start_ns are moved to it.  FALSE with c->error set on invalid input,
 * failed writes or cancellation. */
gboolean vs_import_device (Ctx *c, gint64 dev, Stream *hist, VsPickleRef segments, gint64 start_ns,
                           gint64 device_id, gint64 allocator_id);
