/* SPDX-License-Identifier: MIT */
/* vs-whatif-requests.c — a trace's PyTorch allocator events as the
 * requests a what-if replay feeds its model (see vs-whatif.c).
 *
 * The allocator's events are read in the order they were recorded
 * (alloc_event by id, which is time order within one allocator) and merged
 * with its failures (failed_alloc by time: a failure comes after events of
 * the same instant only when those are the releases that preceded it).
 * They become requests:
 *   - alloc → malloc of requested_bytes on its stream;
 *   - free_completed → free of the block allocated at that address;
 *   - a failure → malloc of the failed size (PyTorch records the rounded
 *     size), on the stream of the allocation before it;
 *   - a run of segment_free / segment_unmap → nothing when a new segment
 *     or a failure follows it at once (the allocator's own release before
 *     a retry, which the model repeats when its limit requires), else
 *     empty_cache();
 *   - segment_alloc / segment_map → nothing (the model decides).
 * Events before the history began (no stream: what an imported snapshot
 * reconstructed as live at its first entry) become the model's starting
 * state instead.
 */
#include "vs-whatif-requests.h"

#include "vs-caching-allocator.h"

static const char *events_sql
    = "SELECT op, ts, address, requested_bytes, block_bytes, stream, id FROM alloc_event"
      " WHERE allocator_id = ?1 ORDER BY id";
static const char *failures_sql = "SELECT ts, requested_bytes, device_free_bytes FROM failed_alloc"
                                  " WHERE allocator_id = ?1 ORDER BY ts, id";

static gboolean
is_release (int op)
{
  return op == VS_ALLOC_OP_SEGMENT_FREE || op == VS_ALLOC_OP_SEGMENT_UNMAP;
}

/* A recorded size as the model takes it: what is not a size (negative, as
 * an unsigned 2^64 - 1 reads) is 0.  A size beyond the model's range
 * (VS_CA_MAX_BYTES) is kept as one more than it, which the replay
 * refuses; sums of such sizes stop there too, so they cannot overflow. */
static gint64
clamp_size (gint64 size)
{
  return CLAMP (size, 0, VS_CA_MAX_BYTES + 1);
}

static void
step_row (VsWhatifReader *r)
{
  int rc = sqlite3_step (r->events);
  r->have_row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    {
      /* NULL reads as 0: a size the trace does not know counts nothing */
      r->row.op = sqlite3_column_int (r->events, 0);
      r->row.ts = sqlite3_column_int64 (r->events, 1);
      r->row.address = sqlite3_column_int64 (r->events, 2);
      r->row.size = clamp_size (sqlite3_column_int64 (r->events, 3));
      r->row.stream = vs_column_int (r->events, 5);
      r->row.id = sqlite3_column_int64 (r->events, 6);
      /* the rounded size matters only for what was live before the history
       * (rows without a stream) */
      r->row.block_bytes = r->row.stream == VS_UNKNOWN ? vs_column_int (r->events, 4) : VS_UNKNOWN;
    }
  else if (rc != SQLITE_DONE && !r->failed)
    r->failed = !vs_trace_sql_error (r->trace, r->error);
}

static void
step_fail (VsWhatifReader *r)
{
  int rc = sqlite3_step (r->failures);
  r->have_fail = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    {
      r->fail_ts = sqlite3_column_int64 (r->failures, 0);
      r->fail_size = clamp_size (sqlite3_column_int64 (r->failures, 1));
      r->fail_free = vs_column_int (r->failures, 2);
    }
  else if (rc != SQLITE_DONE && !r->failed)
    r->failed = !vs_trace_sql_error (r->trace, r->error);
}

gboolean
vs_whatif_reader_start (VsWhatifReader *r, VsTrace *trace, gint64 allocator_id, GError **error)
{
  memset (r, 0, sizeof *r);
  r->releases = g_array_new (FALSE, FALSE, sizeof (VsWhatifRow));
  r->trace = trace;
  r->error = error;
  r->in_prefix = TRUE;
  r->events = vs_trace_statement (trace, events_sql, error);
  if (r->events == NULL)
    return FALSE;
  r->failures = vs_trace_statement (trace, failures_sql, error);
  if (r->failures == NULL)
    return FALSE;
  sqlite3_bind_int64 (r->events, 1, allocator_id);
  sqlite3_bind_int64 (r->failures, 1, allocator_id);
  step_row (r);
  step_fail (r);
  return !r->failed;
}

void
vs_whatif_reader_stop (VsWhatifReader *r)
{
  g_clear_pointer (&r->releases, g_array_unref);
  if (r->events)
    sqlite3_reset (r->events);
  if (r->failures)
    sqlite3_reset (r->failures);
}

/* Whether the next item is the pending failure rather than the pending
 * row: earlier, or at the same instant unless the row is a release (the
 * releases an out-of-memory error follows come first). */
static gboolean
failure_first (VsWhatifReader *r)
{
  if (!r->have_fail)
    return FALSE;
  if (!r->have_row)
    return TRUE;
  return r->fail_ts < r->row.ts || (r->fail_ts == r->row.ts && !is_release (r->row.op));
}

/* The next event; kind VS_WHATIF_EV_END at the end (or on an error: r->failed). */
void
vs_whatif_reader_next (VsWhatifReader *r, VsWhatifEv *ev)
{
  memset (ev, 0, sizeof *ev);
  for (;;)
    {
      if (r->failed || (!r->have_row && !r->have_fail))
        {
          ev->kind = VS_WHATIF_EV_END;
          return;
        }
      if (failure_first (r))
        {
          r->in_prefix = FALSE;
          ev->kind = VS_WHATIF_EV_FAIL;
          ev->ts = r->fail_ts;
          ev->size = r->fail_size;
          ev->device_free = r->fail_free;
          step_fail (r);
          return;
        }
      VsWhatifRow row = r->row;
      if (row.stream != VS_UNKNOWN)
        r->in_prefix = FALSE;
      ev->ts = row.ts;
      ev->address = row.address;
      ev->size = row.size;
      ev->block_bytes = row.block_bytes;
      ev->stream = row.stream;
      step_row (r);
      switch (row.op)
        {
        case VS_ALLOC_OP_ALLOC:
          ev->kind = r->in_prefix ? VS_WHATIF_EV_PREFIX_BLOCK : VS_WHATIF_EV_ALLOC;
          return;
        case VS_ALLOC_OP_FREE_COMPLETED:
          ev->kind = VS_WHATIF_EV_FREE;
          return;
        case VS_ALLOC_OP_SEGMENT_ALLOC:
        case VS_ALLOC_OP_SEGMENT_MAP:
          ev->kind = r->in_prefix ? VS_WHATIF_EV_PREFIX_SEGMENT : VS_WHATIF_EV_SEGMENT;
          ev->op = row.op;
          return;
        case VS_ALLOC_OP_SEGMENT_FREE:
        case VS_ALLOC_OP_SEGMENT_UNMAP:
          r->in_prefix = FALSE;
          ev->kind = VS_WHATIF_EV_RELEASES;
          g_array_set_size (r->releases, 0);
          g_array_append_val (r->releases, row);
          while (r->have_row && is_release (r->row.op) && !failure_first (r))
            {
              ev->size = MIN (ev->size + r->row.size, VS_CA_MAX_BYTES + 1);
              g_array_append_val (r->releases, r->row);
              step_row (r);
            }
          if (failure_first (r))
            ev->next = VS_WHATIF_NEXT_FAILURE;
          else if (r->have_row
                   && (r->row.op == VS_ALLOC_OP_SEGMENT_ALLOC
                       || r->row.op == VS_ALLOC_OP_SEGMENT_MAP))
            {
              ev->next = VS_WHATIF_NEXT_SEGMENT;
              ev->next_size = r->row.size;
            }
          return;
        default: /* free_requested: the block is not reusable until completed */
          break;
        }
    }
}
