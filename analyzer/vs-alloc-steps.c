/* SPDX-License-Identifier: MIT */
/* vs-alloc-steps.c — the allocators' state of one device, event by event
 * (see vs-alloc-steps.h).
 *
 * Loading reads two sets of rows of `block` (levels 2 and 3, allocator
 * blocks and segments): those live after the span's first step, and those
 * allocated inside the span.  Each row is a "piece"; its allocation and
 * its release, where they fall inside the span, are events.  Failed
 * requests come from `failed_alloc` by time.  A checkpoint is the sorted
 * list of pieces live before an event; the state after event i is the
 * nearest checkpoint with the events up to i applied (pieces released
 * marked in a bitmap, pieces allocated sorted and merged in), then swept
 * as vs_fragmentation_at() sweeps the trace's rows.
 */
#include "vs-alloc-steps.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

#include <string.h>

typedef struct
{
  gint64 id, allocator_id, address, bytes, block_bytes;
  gint64 alloc_seq, free_seq; /* VS_UNKNOWN: never freed */
  gint64 alloc_ts, free_ts;   /* absolute; VS_UNKNOWN unknown */
  gint64 stack_id, free_stack_id, stream;
  int level, alloc_op, free_op;
} Piece;

/* One piece becoming live or going away.  One recorded event may make
 * several: unmapping part of a mapped piece releases it and maps what
 * remains, at one step. */
typedef struct
{
  guint piece;
  gboolean add;
} Change;

struct _VsAllocSteps
{
  gint64 device_id;
  gint64 from, to;        /* events with from < seq <= to */
  gint64 last_seq;        /* the device's last step */
  GArray *pieces;         /* Piece */
  GArray *steps;          /* VsAllocStep */
  GArray *changes;        /* Change, in step order */
  GArray *step_first;     /* guint per step: its first change (the next step's ends it) */
  GPtrArray *checkpoints; /* GArray of guint piece indices, sorted; [c] is before step c·every */
  guint every;
  VsTrace *trace; /* for vs_trace_rel() only */
};

/* Addresses and sizes the sweep takes: sums of two stay within 63 bits. */
#define RANGE (G_GINT64_CONSTANT (1) << 62)

#define PIECE_COLUMNS                                                                              \
  "b.id, b.level, b.allocator_id, b.address, b.bytes, b.block_bytes, b.alloc_seq,"                 \
  " b.free_seq, b.alloc_ts, b.free_ts, ifnull(b.stack_id, 0), ifnull(b.free_stack_id, 0),"         \
  " CASE WHEN b.level = 3 THEN (SELECT op FROM alloc_event WHERE id = b.alloc_event_id) END,"      \
  " CASE WHEN b.level = 3 AND b.free_event_id IS NOT NULL"                                         \
  "  THEN (SELECT op FROM alloc_event WHERE id = b.free_event_id) END,"                            \
  " CASE WHEN b.level = 2 THEN (SELECT stream FROM alloc_event WHERE id = b.alloc_event_id) END"

#define PIECE_WHERE " b.level IN (2, 3) AND b.allocator_id IS NOT NULL"

static const char *live_chunked_sql = "SELECT " PIECE_COLUMNS " FROM block b"
                                      " WHERE b.live_seq = ?2 AND b.device_id = ?1 AND" PIECE_WHERE;

static const char *live_bins_sql
    = "WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv WHERE l < 47)"
      " SELECT " PIECE_COLUMNS " FROM lv JOIN block b INDEXED BY block_bin"
      " ON b.device_id = ?1 AND b.span_bin = (lv.l << 48) | (?2 >> lv.l)"
      " WHERE" PIECE_WHERE " AND b.alloc_seq <= ?2 AND (b.free_seq IS NULL OR b.free_seq > ?2)";

static const char *live_plain_sql
    = "SELECT " PIECE_COLUMNS " FROM block b WHERE b.device_id = ?1 AND" PIECE_WHERE
      " AND b.alloc_seq <= ?2 AND (b.free_seq IS NULL OR b.free_seq > ?2)";

static const char *span_sql
    = "SELECT " PIECE_COLUMNS " FROM block b WHERE b.device_id = ?1 AND" PIECE_WHERE
      " AND b.alloc_seq > ?2 AND b.alloc_seq <= ?3";

static const char *failures_sql
    = "SELECT id, ts, requested_bytes, allocator_id, ifnull(stack_id, 0) FROM failed_alloc"
      " WHERE device_id = ?1 AND allocator_id IS NOT NULL AND ts > ?2 AND ts <= ?3"
      " ORDER BY ts, id";

void
vs_alloc_state_free (VsAllocState *state)
{
  if (state == NULL)
    return;
  g_clear_pointer (&state->segments, g_array_unref);
  g_clear_pointer (&state->blocks, g_array_unref);
  g_clear_pointer (&state->gaps, g_array_unref);
  g_free (state);
}

void
vs_alloc_steps_free (VsAllocSteps *steps)
{
  if (steps == NULL)
    return;
  g_clear_pointer (&steps->pieces, g_array_unref);
  g_clear_pointer (&steps->steps, g_array_unref);
  g_clear_pointer (&steps->changes, g_array_unref);
  g_clear_pointer (&steps->step_first, g_array_unref);
  g_clear_pointer (&steps->checkpoints, g_ptr_array_unref);
  g_free (steps);
}

/* Appends the rows of stmt (bound by the caller) to pieces; FALSE with
 * error set on a read error or a row no sweep can take. */
static gboolean
read_pieces (VsTrace *trace, sqlite3_stmt *stmt, GArray *pieces, GError **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Piece p;

      p.id = sqlite3_column_int64 (stmt, 0);
      p.level = sqlite3_column_int (stmt, 1);
      p.allocator_id = sqlite3_column_int64 (stmt, 2);
      p.address = sqlite3_column_int64 (stmt, 3);
      p.bytes = sqlite3_column_int64 (stmt, 4);
      p.block_bytes = vs_column_int (stmt, 5);
      p.alloc_seq = sqlite3_column_int64 (stmt, 6);
      p.free_seq = vs_column_int (stmt, 7);
      p.alloc_ts = vs_column_int (stmt, 8);
      p.free_ts = vs_column_int (stmt, 9);
      p.stack_id = sqlite3_column_int64 (stmt, 10);
      p.free_stack_id = sqlite3_column_int64 (stmt, 11);
      p.alloc_op = sqlite3_column_type (stmt, 12) == SQLITE_NULL ? VS_ALLOC_STEP_SEGMENT_ALLOC
                                                                 : sqlite3_column_int (stmt, 12);
      p.free_op = sqlite3_column_type (stmt, 13) == SQLITE_NULL ? VS_ALLOC_STEP_SEGMENT_FREE
                                                                : sqlite3_column_int (stmt, 13);
      p.stream = vs_column_int (stmt, 14);
      if (p.level == 2)
        {
          p.alloc_op = VS_ALLOC_STEP_ALLOC;
          p.free_op = VS_ALLOC_STEP_FREE;
        }
      /* The sweep adds and compares addresses and sizes: keep them in
       * 0..2^62 so that no sum overflows. */
      if (p.address < 0 || p.bytes < 0 || p.address > RANGE || p.bytes > RANGE
          || (p.block_bytes != VS_UNKNOWN && (p.block_bytes < 0 || p.block_bytes > RANGE)))
        {
          vs_trace_corrupt_error (
              trace, stmt, error,
              "block %" G_GINT64_FORMAT " has a negative address or size, or one past 2^62", p.id);
          return FALSE;
        }
      g_array_append_val (pieces, p);
    }
  return vs_trace_step_done (trace, stmt, rc, error);
}

static gboolean
read_failures (VsAllocSteps *self, VsTrace *trace, gint64 ts_lo, gint64 ts_hi, GArray *out,
               GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, failures_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, self->device_id);
  sqlite3_bind_int64 (stmt, 2, ts_lo);
  sqlite3_bind_int64 (stmt, 3, ts_hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsAllocStep s = { 0 };

      s.kind = VS_ALLOC_STEP_FAILURE;
      s.id = sqlite3_column_int64 (stmt, 0);
      s.time_ns = sqlite3_column_int64 (stmt, 1); /* absolute until merged */
      s.bytes = sqlite3_column_int64 (stmt, 2);
      s.allocator_id = sqlite3_column_int64 (stmt, 3);
      s.stack_id = sqlite3_column_int64 (stmt, 4);
      s.address = s.block_bytes = s.stream = VS_UNKNOWN;
      g_array_append_val (out, s);
    }
  return vs_trace_step_done (trace, stmt, rc, error);
}

/* Order of pieces in a state: by allocator, address, id (the order
 * vs_fragmentation_at() sweeps in). */
static int
piece_cmp (const Piece *a, const Piece *b)
{
  if (a->allocator_id != b->allocator_id)
    return a->allocator_id < b->allocator_id ? -1 : 1;
  if (a->address != b->address)
    return a->address < b->address ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

static int
index_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const Piece *pieces = data;
  return piece_cmp (&pieces[*(const guint *)pa], &pieces[*(const guint *)pb]);
}

/* The live pieces after applying steps [first, last] to base (sorted
 * piece indices): base without those released, merged with those
 * allocated and not released, in piece order.  A new sorted GArray. */
static GArray *
apply (const VsAllocSteps *self, const GArray *base, guint first, guint last)
{
  const Piece *pieces = (const Piece *)(gpointer)self->pieces->data;
  guint n = self->pieces->len;
  g_autofree guint8 *gone = g_malloc0 (n / 8 + 1);
  g_autoptr (GArray) added = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *out;
  guint ai = 0, bi = 0;

  guint end = last + 1 < self->step_first->len ? g_array_index (self->step_first, guint, last + 1)
                                               : self->changes->len;

  for (guint i = g_array_index (self->step_first, guint, first); i < end; i++)
    {
      const Change *ch = &g_array_index (self->changes, Change, i);

      if (ch->add)
        g_array_append_val (added, ch->piece);
      else
        gone[ch->piece / 8] |= 1u << (ch->piece % 8);
    }
  g_array_sort_with_data (added, index_cmp, (gpointer)pieces);
  out = g_array_sized_new (FALSE, FALSE, sizeof (guint), base->len + added->len);
  while (bi < base->len || ai < added->len)
    {
      guint p;

      if (ai >= added->len
          || (bi < base->len
              && piece_cmp (&pieces[g_array_index (base, guint, bi)],
                            &pieces[g_array_index (added, guint, ai)])
                     < 0))
        p = g_array_index (base, guint, bi++);
      else
        p = g_array_index (added, guint, ai++);
      if (!(gone[p / 8] & (1u << (p % 8))))
        g_array_append_val (out, p);
    }
  return out;
}

/* What one recorded event did to the pieces: its change, the piece and
 * whether it was added (VsAllocStep.id holds the piece while sorting). */
typedef struct
{
  VsAllocStep step;
  gboolean add;
} Event;

static int
event_cmp (gconstpointer pa, gconstpointer pb)
{
  const Event *a = pa, *b = pb;
  if (a->step.seq != b->step.seq)
    return a->step.seq < b->step.seq ? -1 : 1;
  return (a->add > b->add) - (a->add < b->add); /* releases first */
}

/* The step of the events ev[first, end) of one seq: the first's, except
 * that a piece released and another added by one event (part of a
 * mapping unmapped, or a mapping grown) shows the range that changed. */
static VsAllocStep
group_step (const Piece *pieces, const Event *ev, guint first, guint end)
{
  VsAllocStep s = ev[first].step;

  if (end - first == 2 && !ev[first].add && ev[first + 1].add)
    {
      const Piece *p = &pieces[ev[first].step.id], *q = &pieces[ev[first + 1].step.id];
      const Piece *big = p->bytes >= q->bytes ? p : q, *small = big == p ? q : p;

      s.bytes = big->bytes - small->bytes;
      s.address = small->address == big->address ? small->address + small->bytes : big->address;
    }
  return s;
}

/* The events of the pieces inside the span, one step per seq, with the
 * failures merged in after every event of their time. */
static void
build_steps (VsAllocSteps *self, VsTrace *trace, GArray *failures)
{
  const Piece *pieces = (const Piece *)(gpointer)self->pieces->data;
  g_autoptr (GArray) ev = g_array_new (FALSE, FALSE, sizeof (Event));
  const Event *e;
  guint fi = 0;

  for (guint i = 0; i < self->pieces->len; i++)
    {
      const Piece *p = &pieces[i];
      Event x = { { 0 }, FALSE };

      x.step.allocator_id = p->allocator_id;
      x.step.id = (gint64)i; /* the piece, replaced below */
      x.step.address = p->address;
      x.step.bytes = p->bytes;
      x.step.block_bytes = p->block_bytes;
      x.step.stream = p->stream;
      if (p->alloc_seq > self->from && p->alloc_seq <= self->to)
        {
          x.step.seq = p->alloc_seq;
          x.step.time_ns = p->alloc_ts;
          x.step.kind = p->alloc_op;
          x.step.stack_id = p->stack_id;
          x.add = TRUE;
          g_array_append_val (ev, x);
        }
      if (p->free_seq != VS_UNKNOWN && p->free_seq > self->from && p->free_seq <= self->to)
        {
          x.step.seq = p->free_seq;
          x.step.time_ns = p->free_ts;
          x.step.kind = p->free_op;
          x.step.stack_id = p->free_stack_id != 0 ? p->free_stack_id : p->stack_id;
          x.add = FALSE;
          g_array_append_val (ev, x);
        }
    }
  g_array_sort (ev, event_cmp);
  e = (const Event *)(gpointer)ev->data;
  self->steps = g_array_sized_new (FALSE, FALSE, sizeof (VsAllocStep), ev->len + failures->len);
  self->step_first = g_array_sized_new (FALSE, FALSE, sizeof (guint), ev->len + failures->len);
  self->changes = g_array_sized_new (FALSE, FALSE, sizeof (Change), ev->len);
  for (guint i = 0; i <= ev->len;)
    {
      guint end = i;

      while (end < ev->len && e[end].step.seq == e[i].step.seq)
        end++;
      /* Failures of a time before this event's come first. */
      while (fi < failures->len
             && (i == ev->len || e[i].step.time_ns == VS_UNKNOWN
                 || g_array_index (failures, VsAllocStep, fi).time_ns < e[i].step.time_ns))
        {
          VsAllocStep f = g_array_index (failures, VsAllocStep, fi++);

          f.seq = self->steps->len > 0
                      ? g_array_index (self->steps, VsAllocStep, self->steps->len - 1).seq
                      : self->from;
          f.time_ns = vs_trace_rel (trace, f.time_ns);
          g_array_append_val (self->steps, f);
          g_array_append_val (self->step_first, self->changes->len);
        }
      if (i == ev->len)
        break;
      {
        VsAllocStep s = group_step (pieces, e, i, end);

        s.id = pieces[s.id].id;
        s.time_ns = vs_trace_rel (trace, s.time_ns);
        g_array_append_val (self->steps, s);
        g_array_append_val (self->step_first, self->changes->len);
      }
      for (; i < end; i++)
        {
          Change ch = { (guint)e[i].step.id, e[i].add };
          g_array_append_val (self->changes, ch);
        }
    }
}

/* Checkpoints: the state before the first event, then every `every`
 * events.  A state costs one checkpoint's copy and at most `every`
 * events applied; `every` grows with the live pieces (a 32nd of them,
 * 256 to 4096), so that a state's events cost less than its copy while
 * the checkpoints of a span hold at most 32 · span / 4096 · 4 bytes per
 * live piece (2 MB per 1000 live pieces of a span of 65536 events). */
static void
build_checkpoints (VsAllocSteps *self, GArray *base)
{
  guint n = self->steps->len;

  self->every = CLAMP (base->len / 32, 256, 4096);
  self->checkpoints = g_ptr_array_new_with_free_func ((GDestroyNotify)g_array_unref);
  g_ptr_array_add (self->checkpoints, base);
  for (guint c = 1; (guint64)c * self->every < n; c++)
    {
      GArray *prev = g_ptr_array_index (self->checkpoints, c - 1);
      g_ptr_array_add (self->checkpoints,
                       apply (self, prev, (c - 1) * self->every, c * self->every - 1));
    }
}

VsAllocSteps *
vs_alloc_steps_load (VsTrace *trace, gint64 device_id, gint64 seq, gint64 span, GError **error)
{
  g_autoptr (VsAllocSteps) self = g_new0 (VsAllocSteps, 1);
  g_autoptr (GArray) failures = g_array_new (FALSE, FALSE, sizeof (VsAllocStep));
  GArray *base;
  sqlite3_stmt *stmt;
  gint64 last_ts, ts_lo = G_MININT64, ts_hi = G_MAXINT64, row_seq;
  guint n_base;

  g_return_val_if_fail (trace != NULL, NULL);
  if (span <= 0)
    span = VS_ALLOC_STEPS_SPAN;
  self->device_id = device_id;
  self->trace = trace;
  if (!vs_trace_series_row_at_seq (trace, device_id, 0, G_MAXINT64, &self->last_seq, &last_ts,
                                   error))
    return NULL;
  seq = CLAMP (seq, 0, self->last_seq);
  self->from = seq > span ? seq - span : 0;
  self->to = self->last_seq - seq > span ? seq + span : self->last_seq;

  /* The pieces live after `from`, then those allocated in the span. */
  self->pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  stmt = vs_trace_statement (trace,
                             vs_trace_is_compacted (trace)               ? live_chunked_sql
                             : vs_trace_can_use_bins (trace, self->from) ? live_bins_sql
                                                                         : live_plain_sql,
                             error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, self->from);
  if (!read_pieces (trace, stmt, self->pieces, error))
    return NULL;
  n_base = self->pieces->len;
  stmt = vs_trace_statement (trace, span_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, self->from);
  sqlite3_bind_int64 (stmt, 3, self->to);
  if (!read_pieces (trace, stmt, self->pieces, error))
    return NULL;

  /* Failures of the span's times: after the step `from` was taken, up to
   * the time of step `to` (everything after it when `to` is the last). */
  if (self->from > 0)
    {
      if (!vs_trace_series_row_at_seq (trace, device_id, 0, self->from, &row_seq, &ts_lo, error))
        return NULL;
      if (ts_lo == VS_UNKNOWN)
        ts_lo = G_MININT64;
    }
  if (self->to < self->last_seq)
    {
      if (!vs_trace_series_row_at_seq (trace, device_id, 0, self->to, &row_seq, &ts_hi, error))
        return NULL;
      if (ts_hi == VS_UNKNOWN)
        ts_hi = G_MININT64;
    }
  if (!read_failures (self, trace, ts_lo, ts_hi, failures, error))
    return NULL;
  build_steps (self, trace, failures);

  base = g_array_sized_new (FALSE, FALSE, sizeof (guint), n_base);
  for (guint i = 0; i < n_base; i++)
    g_array_append_val (base, i);
  g_array_sort_with_data (base, index_cmp, self->pieces->data);
  build_checkpoints (self, base);
  return g_steal_pointer (&self);
}

guint
vs_alloc_steps_get_n (const VsAllocSteps *steps)
{
  return steps->steps->len;
}

const VsAllocStep *
vs_alloc_steps_get (const VsAllocSteps *steps, guint index)
{
  g_return_val_if_fail (index < steps->steps->len, NULL);
  return &g_array_index (steps->steps, VsAllocStep, index);
}

void
vs_alloc_steps_get_span (const VsAllocSteps *steps, gint64 *from, gint64 *to)
{
  *from = steps->from;
  *to = steps->to;
}

gboolean
vs_alloc_steps_has_before (const VsAllocSteps *steps)
{
  return steps->from > 0;
}

gboolean
vs_alloc_steps_has_after (const VsAllocSteps *steps)
{
  return steps->to < steps->last_seq;
}

gint
vs_alloc_steps_find (const VsAllocSteps *steps, gint64 seq)
{
  guint lo = 0, hi = steps->steps->len;

  /* The first event after seq, less one. */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (steps->steps, VsAllocStep, mid).seq <= seq)
        lo = mid + 1;
      else
        hi = mid;
    }
  return (gint)lo - 1;
}

guint
vs_alloc_steps_get_checkpoint_every (const VsAllocSteps *steps)
{
  return steps->every;
}

guint
vs_alloc_steps_get_n_checkpoints (const VsAllocSteps *steps)
{
  return steps->checkpoints->len;
}

/* Appends a gap of [lo, hi) of segment seg to state. */
static void
add_gap (VsAllocState *state, gint64 seg, gint64 lo, gint64 hi)
{
  VsFreeGap gap = { seg, lo, hi - lo };

  state->frag.segment_free_bytes += gap.bytes;
  state->frag.largest_free_bytes = MAX (state->frag.largest_free_bytes, gap.bytes);
  g_array_append_val (state->gaps, gap);
}

/* The sweep of vs_fragmentation_at() and the merge of
 * vs_fragmentation_segments() over the live pieces. */
static void
sweep (const VsAllocSteps *self, const GArray *live, VsAllocState *state)
{
  const Piece *pieces = (const Piece *)(gpointer)self->pieces->data;
  gboolean ext_mapped = FALSE; /* the last extent is an expandable segment's mapped pieces */
  guint bi = 0;

  for (guint i = 0; i < live->len; i++)
    {
      const Piece *p = &pieces[g_array_index (live, guint, i)];

      if (p->level == 3)
        {
          VsSegment *last = state->segments->len > 0 ? &g_array_index (state->segments, VsSegment,
                                                                       state->segments->len - 1)
                                                     : NULL;

          /* Mapped: segment_map, or what a partial segment_unmap left,
           * as vs_fragmentation_at() reads it; only such touching pieces
           * of one allocator are one extent. */
          gboolean mapped
              = p->alloc_op == VS_ALLOC_OP_SEGMENT_MAP || p->alloc_op == VS_ALLOC_OP_SEGMENT_UNMAP;

          state->frag.reserved_bytes += p->bytes;
          if (last != NULL && last->allocator_id == p->allocator_id && ext_mapped && mapped
              && p->address <= last->address + last->bytes)
            {
              last->bytes
                  = MAX (last->address + last->bytes, p->address + p->bytes) - last->address;
              last->pieces++;
            }
          else
            {
              VsSegment seg = { p->id,      p->allocator_id,
                                p->address, p->bytes,
                                1,          vs_trace_rel (self->trace, p->alloc_ts) };
              g_array_append_val (state->segments, seg);
              ext_mapped = mapped;
            }
        }
      else
        {
          VsBlock b = { 0 };

          b.id = p->id;
          b.level = 2;
          b.device_id = self->device_id;
          b.allocator_id = p->allocator_id;
          b.process_id = VS_UNKNOWN;
          b.address = p->address;
          b.bytes = p->bytes;
          b.block_bytes = p->block_bytes;
          b.alloc_seq = p->alloc_seq == 0 ? VS_UNKNOWN : p->alloc_seq;
          b.free_seq = p->free_seq;
          b.alloc_time_ns = vs_trace_rel (self->trace, p->alloc_ts);
          b.free_time_ns = vs_trace_rel (self->trace, p->free_ts);
          b.stack_id = p->stack_id;
          b.owner_id = VS_UNKNOWN;
          state->frag.allocated_bytes += p->bytes;
          g_array_append_val (state->blocks, b);
        }
    }
  state->frag.free_bytes = state->frag.reserved_bytes - state->frag.allocated_bytes;
  state->frag.segment_count = state->segments->len;

  /* Both lists are in (allocator, address) order: one merge pass. */
  for (guint si = 0; si < state->segments->len; si++)
    {
      const VsSegment *ext = &g_array_index (state->segments, VsSegment, si);
      gint64 hi = ext->address + ext->bytes, cursor = ext->address;

      while (bi < state->blocks->len)
        {
          const VsBlock *b = &g_array_index (state->blocks, VsBlock, bi);
          gint64 bhi = b->address + (b->block_bytes != VS_UNKNOWN ? b->block_bytes : b->bytes);

          if (b->allocator_id < ext->allocator_id
              || (b->allocator_id == ext->allocator_id && b->address < ext->address))
            {
              bi++; /* a block outside every live segment */
              continue;
            }
          if (b->allocator_id != ext->allocator_id || b->address >= hi)
            break;
          if (b->address > cursor)
            add_gap (state, ext->id, cursor, b->address);
          cursor = MAX (cursor, MIN (bhi, hi));
          bi++;
        }
      if (hi > cursor)
        add_gap (state, ext->id, cursor, hi);
    }
}

VsAllocState *
vs_alloc_steps_state (const VsAllocSteps *steps, gint index)
{
  VsAllocState *state;
  guint upto, c;
  const GArray *cp;
  g_autoptr (GArray) live = NULL;

  g_return_val_if_fail (index >= -1 && index < (gint)steps->steps->len, NULL);
  state = g_new0 (VsAllocState, 1);
  upto = (guint)(index + 1); /* events applied */
  c = MIN (upto / steps->every, steps->checkpoints->len - 1);
  cp = g_ptr_array_index (steps->checkpoints, c);
  live = upto > c * steps->every ? apply (steps, cp, c * steps->every, upto - 1)
                                 : g_array_copy ((GArray *)cp);
  state->seq = index >= 0 ? g_array_index (steps->steps, VsAllocStep, index).seq : steps->from;
  state->frag.device_id = steps->device_id;
  state->frag.seq = state->seq;
  state->frag.time_ns
      = index >= 0 ? g_array_index (steps->steps, VsAllocStep, index).time_ns : VS_UNKNOWN;
  state->segments = g_array_new (FALSE, FALSE, sizeof (VsSegment));
  state->blocks = g_array_new (FALSE, FALSE, sizeof (VsBlock));
  state->gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  sweep (steps, live, state);
  return state;
}
