/* SPDX-License-Identifier: MIT */
/* vs-import-replay.c — one device of a snapshot import: the backward
 * replay of its history and the events written for it.
 *
 * From the state at the end (live blocks and reserved ranges, read from
 * `segments`), the history is replayed backwards: an alloc removes its
 * block, a free_completed brings it back, a segment_alloc or segment_map
 * removes its range, a segment_free or segment_unmap brings it back.  What
 * remains was live before the first entry; it is written as synthetic
 * segment and block events at the first entry's time, then every entry is
 * written in order (see vs-import.c for why the trace's peaks then match
 * memory_stats()).
 */
#include "vs-import-private.h"
#include "vs-torch-oom.h"

/* The trace's alloc_event.op of each history action that writes one
 * (0 for the others). */
static const VsAllocOp op_of_action[ACT_SNAPSHOT + 1] = {
  [ACT_ALLOC] = VS_ALLOC_OP_ALLOC,
  [ACT_FREE_REQUESTED] = VS_ALLOC_OP_FREE_REQUESTED,
  [ACT_FREE_COMPLETED] = VS_ALLOC_OP_FREE_COMPLETED,
  [ACT_SEGMENT_ALLOC] = VS_ALLOC_OP_SEGMENT_ALLOC,
  [ACT_SEGMENT_FREE] = VS_ALLOC_OP_SEGMENT_FREE,
  [ACT_SEGMENT_MAP] = VS_ALLOC_OP_SEGMENT_MAP,
  [ACT_SEGMENT_UNMAP] = VS_ALLOC_OP_SEGMENT_UNMAP,
};

/* g_array_sort order of BlockSlot by address. */
/* Writes ae, memory recreated as live before the history began, at ts on
 * the device and allocator given: the fields common to every such event
 * are set here.  FALSE with c->error set when the write failed. */
static gboolean
write_before_trace (Ctx *c, VsAllocEvent *ae, gint64 ts, gint64 device_id, gint64 allocator_id)
{
  ae->ts = ts;
  ae->process_id = c->process_id;
  ae->tid = VS_UNKNOWN;
  ae->device_id = device_id;
  ae->allocator_id = allocator_id;
  ae->before_trace = 1;
  ae->stream = VS_UNKNOWN;
  ae->range_id = VS_UNKNOWN;
  if (vs_writer_alloc_event (c->w, ae) < 0)
    return vs_import_write_failed (c);
  c->stats.synthetic_events++;
  return TRUE;
}

static gint
cmp_slot_addr (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const BlockSlot *)a)->addr, y = ((const BlockSlot *)b)->addr;
  return x < y ? -1 : x > y;
}

/* See vs-import-private.h. */
gint64
vs_import_entry_time (const Ctx *c, const Entry *e, gsize i)
{
  return c->order_axis ? (gint64)i + 1 : e->time_us * 1000;
}

/* Imports one device's history and final state. */
gboolean
vs_import_device (Ctx *c, gint64 dev, Stream *hist, VsPickleRef segments, gint64 start_ns,
                  gint64 device_id, gint64 allocator_id)
{
  g_autoptr (GTree) ranges = vs_import_ranges_new ();
  g_auto (BlockMap) blocks = { 0 };

  /* 1. the decoded history */
  if (hist->why)
    return vs_import_not_snapshot (c, "device_traces[%u][%" G_GSIZE_FORMAT "]%s", (guint)dev,
                                   hist->error_idx, hist->why);
  if (hist->error)
    {
      g_propagate_error (c->error, g_steal_pointer (&hist->error));
      return FALSE;
    }
  Entry *ev = (Entry *)(gpointer)hist->entries->data;
  gsize m = hist->entries->len;

  /* 2. the state at the end */
  if (!vs_import_read_segments (c, segments, dev, ranges, &blocks))
    return FALSE;

  /* 3. backwards to the state before the first entry */
  for (gsize i = m; i-- > 0;)
    {
      Entry *e = &ev[i];
      LiveBlock *lb;
      gboolean added;
      switch (e->action)
        {
        case ACT_ALLOC:
          lb = vs_import_blocks_get (&blocks, e->addr);
          if (lb == NULL)
            c->inconsistencies++;
          else
            {
              if (lb->block_bytes >= 0)
                {
                  e->extra = lb->block_bytes; /* survives to the end */
                  /* context="state" records stacks on live blocks only:
                   * the block's stack is its allocation's. */
                  if (e->stack < 0)
                    {
                      gint64 sid = vs_import_stack_id (c, lb->frames);
                      if (sid == -1)
                        return FALSE;
                      if (sid != VS_UNKNOWN && sid <= G_MAXINT32)
                        e->stack = (gint32)sid;
                    }
                }
              vs_import_blocks_remove (&blocks, e->addr);
            }
          break;
        case ACT_FREE_COMPLETED:
          lb = vs_import_blocks_put (&blocks, e->addr, &added);
          if (!added)
            c->inconsistencies++;
          lb->requested = e->size;
          lb->block_bytes = -1;
          lb->frames = VS_PICKLE_MISSING;
          break;
        case ACT_SEGMENT_ALLOC:
        case ACT_SEGMENT_MAP:
          if (vs_import_ranges_sub (ranges, e->addr, e->size) != e->size)
            c->inconsistencies++;
          break;
        case ACT_SEGMENT_FREE:
        case ACT_SEGMENT_UNMAP:
          if (vs_import_ranges_add (ranges, e->addr, e->size) != 0)
            c->inconsistencies++;
          break;
        default:
          break;
        }
    }

  /* 4. what was live before the first entry, at its time */
  gint64 ts = c->order_axis ? 0
              : m           ? MAX (vs_import_entry_time (c, &ev[0], 0), start_ns)
                            : start_ns;
  GTreeNode *rn;
  for (rn = g_tree_node_first (ranges); rn; rn = g_tree_node_next (rn))
    {
      gint64 s = VAL (g_tree_node_key (rn)), e = VAL (g_tree_node_value (rn));
      gint64 sid = vs_import_label_stack (c);
      if (sid < 0)
        return FALSE;
      VsAllocEvent ae = {
        .op = c->expandable ? VS_ALLOC_OP_SEGMENT_MAP : VS_ALLOC_OP_SEGMENT_ALLOC,
        .address = s,
        .requested_bytes = e - s,
        .block_bytes = VS_UNKNOWN,
        .segment_address = VS_UNKNOWN,
        .stack_id = sid,
      };
      if (!write_before_trace (c, &ae, ts, device_id, allocator_id))
        return FALSE;
    }
  /* Blocks in address order, so that the trace is reproducible. */
  g_autoptr (GArray) pre = g_array_new (FALSE, FALSE, sizeof (BlockSlot));
  for (gsize i = 0; i < blocks.cap; i++)
    if (blocks.entries[i].used)
      g_array_append_val (pre, blocks.entries[i]);
  vs_import_blocks_clear (&blocks);
  g_array_sort (pre, cmp_slot_addr);
  for (guint i = 0; i < pre->len; i++)
    {
      gint64 addr = g_array_index (pre, BlockSlot, i).addr;
      const LiveBlock *lb = &g_array_index (pre, BlockSlot, i).b;
      gint64 sid = lb->block_bytes >= 0 ? vs_import_stack_id (c, lb->frames) : VS_UNKNOWN;
      if (sid == -1)
        return FALSE;
      if (sid == VS_UNKNOWN && (sid = vs_import_label_stack (c)) < 0)
        return FALSE;
      VsAllocEvent ae = {
        .op = VS_ALLOC_OP_ALLOC,
        .address = addr,
        .requested_bytes = lb->requested,
        .block_bytes = lb->block_bytes >= 0 ? lb->block_bytes : VS_UNKNOWN,
        .segment_address = vs_import_ranges_find (ranges, addr),
        .stack_id = sid,
      };
      if (!write_before_trace (c, &ae, ts, device_id, allocator_id))
        return FALSE;
    }

  /* 5. the history, forwards.  `ranges` now tracks what is reserved (for
   * the segment of each block); `born` what the history itself created, to
   * detect frees of memory from before it. */
  g_autoptr (GTree) born = vs_import_ranges_new ();
  g_auto (BlockMap) born_blocks = { 0 };
  gint64 prev = ts;
  for (gsize i = 0; i < m; i++)
    {
      Entry *e = &ev[i];
      gint64 t = MAX (vs_import_entry_time (c, e, i), prev);
      gboolean added;
      prev = t;
      gint64 sid = e->stack >= 0 ? e->stack : VS_UNKNOWN;
      if (e->action == ACT_SNAPSHOT)
        {
          if (!vs_import_write_marker (c, t))
            return FALSE;
          continue;
        }
      VsAllocEvent ae = {
        .ts = t,
        .process_id = c->process_id,
        .tid = VS_UNKNOWN,
        .device_id = device_id,
        .allocator_id = allocator_id,
        .op = op_of_action[e->action],
        .address = e->addr,
        .requested_bytes = e->size,
        .block_bytes = VS_UNKNOWN,
        .segment_address = VS_UNKNOWN,
        .stream = e->stream,
        .stack_id = sid,
        .range_id = VS_UNKNOWN,
      };
      if (e->action == ACT_OOM)
        {
          VsFailedAlloc fa = vs_torch_oom_row (&ae, e->extra);
          if (vs_writer_failed_alloc (c->w, &fa) < 0)
            return vs_import_write_failed (c);
          continue;
        }
      switch (e->action)
        {
        case ACT_ALLOC:
          ae.block_bytes = e->extra;
          ae.segment_address = vs_import_ranges_find (ranges, e->addr);
          vs_import_blocks_put (&born_blocks, e->addr, &added);
          break;
        case ACT_FREE_REQUESTED:
        case ACT_FREE_COMPLETED:
          ae.segment_address = vs_import_ranges_find (ranges, e->addr);
          if (vs_import_blocks_get (&born_blocks, e->addr) == NULL)
            c->stats.history_overflow = TRUE;
          if (e->action == ACT_FREE_COMPLETED)
            vs_import_blocks_remove (&born_blocks, e->addr);
          break;
        case ACT_SEGMENT_ALLOC:
        case ACT_SEGMENT_MAP:
          ae.segment_address = e->addr;
          vs_import_ranges_add (ranges, e->addr, e->size);
          vs_import_ranges_add (born, e->addr, e->size);
          break;
        case ACT_SEGMENT_FREE:
        case ACT_SEGMENT_UNMAP:
          ae.segment_address = e->addr;
          vs_import_ranges_sub (ranges, e->addr, e->size);
          if (vs_import_ranges_sub (born, e->addr, e->size) != e->size)
            c->stats.history_overflow = TRUE;
          break;
        default:
          g_assert_not_reached ();
        }
      if (vs_writer_alloc_event (c->w, &ae) < 0)
        return vs_import_write_failed (c);
      if ((++c->done_entries & 0xffff) == 0
          && !vs_import_report (
              c, "importing",
              0.4 + 0.4 * (double)c->done_entries / (double)MAX (c->total_entries, 1)))
        return FALSE;
    }
  c->stats.entries += hist->memory_entries;
  return TRUE;
}
