/* vs-whatif.c — the what-if replay (see vs-whatif.h).
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
 *
 * Two passes: the first derives the limit and collects the recorded
 * segment addresses (handed to the model so that best-fit ties between
 * equal blocks break as they did); the second replays.  Neither keeps the
 * events: memory follows the number of live blocks, not the trace's size.
 */
#include "vs-whatif.h"

#include "vs-alloc-conf.h"
#include "vs-caching-allocator.h"
#include "vs-trace-private.h"

static const char *events_sql
    = "SELECT op, ts, address, requested_bytes, block_bytes, stream FROM alloc_event"
      " WHERE allocator_id = ?1 ORDER BY id";
static const char *failures_sql = "SELECT ts, requested_bytes, device_free_bytes FROM failed_alloc"
                                  " WHERE allocator_id = ?1 ORDER BY ts, id";
static const char *settings_sql = "SELECT settings FROM allocator WHERE id = ?1";

typedef enum
{
  EV_END,
  EV_PREFIX_SEGMENT,
  EV_PREFIX_BLOCK,
  EV_ALLOC,
  EV_FREE,
  EV_FAIL,
  EV_RELEASES,
  EV_SEGMENT,
} EvKind;

typedef enum
{
  NEXT_OTHER,
  NEXT_SEGMENT,
  NEXT_FAILURE,
} NextKind;

typedef struct
{
  EvKind kind;
  gint64 ts;
  gint64 address;
  gint64 size;
  gint64 block_bytes;
  gint64 stream;      /* VS_UNKNOWN in the prefix */
  gint64 device_free; /* EV_FAIL */
  int op;             /* EV_SEGMENT, EV_PREFIX_SEGMENT: segment_alloc or segment_map */
  /* EV_RELEASES: the bytes given back, and what came right after */
  NextKind next;
  gint64 next_size;
} Ev;

typedef struct
{
  int op;
  gint64 ts, address, size, block_bytes, stream;
} Row;

typedef struct
{
  VsTrace *trace;
  sqlite3_stmt *events;
  sqlite3_stmt *failures;
  gboolean have_row, have_fail;
  Row row;
  gint64 fail_ts, fail_size, fail_free;
  gboolean in_prefix;
  GError **error;
  gboolean failed;
} Reader;

static gboolean
is_release (int op)
{
  return op == VS_ALLOC_OP_SEGMENT_FREE || op == VS_ALLOC_OP_SEGMENT_UNMAP;
}

static void
step_row (Reader *r)
{
  int rc = sqlite3_step (r->events);
  r->have_row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    {
      r->row.op = sqlite3_column_int (r->events, 0);
      r->row.ts = sqlite3_column_int64 (r->events, 1);
      r->row.address = sqlite3_column_int64 (r->events, 2);
      r->row.size = vs_column_int (r->events, 3);
      r->row.block_bytes = vs_column_int (r->events, 4);
      r->row.stream = vs_column_int (r->events, 5);
      if (r->row.size == VS_UNKNOWN)
        r->row.size = 0;
    }
  else if (rc != SQLITE_DONE && !r->failed)
    r->failed = !vs_trace_sql_error (r->trace, r->error);
}

static void
step_fail (Reader *r)
{
  int rc = sqlite3_step (r->failures);
  r->have_fail = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW)
    {
      r->fail_ts = sqlite3_column_int64 (r->failures, 0);
      r->fail_size = vs_column_int (r->failures, 1);
      r->fail_free = vs_column_int (r->failures, 2);
      if (r->fail_size == VS_UNKNOWN)
        r->fail_size = 0;
    }
  else if (rc != SQLITE_DONE && !r->failed)
    r->failed = !vs_trace_sql_error (r->trace, r->error);
}

static gboolean
reader_start (Reader *r, VsTrace *trace, gint64 allocator_id, GError **error)
{
  memset (r, 0, sizeof *r);
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

static void
reader_stop (Reader *r)
{
  if (r->events)
    sqlite3_reset (r->events);
  if (r->failures)
    sqlite3_reset (r->failures);
}

/* Whether the next item is the pending failure rather than the pending
 * row: earlier, or at the same instant unless the row is a release (the
 * releases an out-of-memory error follows come first). */
static gboolean
failure_first (Reader *r)
{
  if (!r->have_fail)
    return FALSE;
  if (!r->have_row)
    return TRUE;
  return r->fail_ts < r->row.ts || (r->fail_ts == r->row.ts && !is_release (r->row.op));
}

/* The next event; kind EV_END at the end (or on an error: r->failed). */
static void
reader_next (Reader *r, Ev *ev)
{
  memset (ev, 0, sizeof *ev);
  for (;;)
    {
      if (r->failed || (!r->have_row && !r->have_fail))
        {
          ev->kind = EV_END;
          return;
        }
      if (failure_first (r))
        {
          r->in_prefix = FALSE;
          ev->kind = EV_FAIL;
          ev->ts = r->fail_ts;
          ev->size = r->fail_size;
          ev->device_free = r->fail_free;
          step_fail (r);
          return;
        }
      Row row = r->row;
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
          ev->kind = r->in_prefix ? EV_PREFIX_BLOCK : EV_ALLOC;
          return;
        case VS_ALLOC_OP_FREE_COMPLETED:
          ev->kind = EV_FREE;
          return;
        case VS_ALLOC_OP_SEGMENT_ALLOC:
        case VS_ALLOC_OP_SEGMENT_MAP:
          ev->kind = r->in_prefix ? EV_PREFIX_SEGMENT : EV_SEGMENT;
          ev->op = row.op;
          return;
        case VS_ALLOC_OP_SEGMENT_FREE:
        case VS_ALLOC_OP_SEGMENT_UNMAP:
          r->in_prefix = FALSE;
          ev->kind = EV_RELEASES;
          while (r->have_row && is_release (r->row.op) && !failure_first (r))
            {
              ev->size += r->row.size;
              step_row (r);
            }
          if (failure_first (r))
            ev->next = NEXT_FAILURE;
          else if (r->have_row
                   && (r->row.op == VS_ALLOC_OP_SEGMENT_ALLOC
                       || r->row.op == VS_ALLOC_OP_SEGMENT_MAP))
            {
              ev->next = NEXT_SEGMENT;
              ev->next_size = r->row.size;
            }
          return;
        default: /* free_requested: the block is not reusable until completed */
          break;
        }
    }
}

/* What the first pass learns. */
typedef struct
{
  gint64 peak_reserved;
  gint64 limit;          /* derived; G_MAXINT64: none */
  GArray *group_empty;   /* gboolean per EV_RELEASES: replay as empty_cache() */
  GHashTable *addresses; /* segment bytes -> GQueue of recorded addresses, in order */
  gint64 default_stream; /* the most used stream */
} Derived;

static void
derived_clear (Derived *d)
{
  g_clear_pointer (&d->group_empty, g_array_unref);
  g_clear_pointer (&d->addresses, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Derived, derived_clear)

static void
queue_free (gpointer q)
{
  g_queue_free (q);
}

/* The first pass: the recorded reserved peak, each run of releases told
 * apart (a retry's or empty_cache()'s), the limit, the recorded segment
 * addresses and the most used stream. */
static gboolean
derive (VsTrace *trace, gint64 allocator_id, gint64 device_total, Derived *d, GError **error)
{
  Reader r;
  Ev ev;
  gint64 reserved = 0;
  g_autoptr (GArray) group_bound = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) failure_bound = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GHashTable) streams = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) stream_keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 best_count = 0;

  memset (d, 0, sizeof *d);
  d->group_empty = g_array_new (FALSE, FALSE, sizeof (gboolean));
  d->addresses = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, queue_free);
  d->default_stream = 0;
  if (!reader_start (&r, trace, allocator_id, error))
    {
      reader_stop (&r);
      return FALSE;
    }
  for (reader_next (&r, &ev); ev.kind != EV_END; reader_next (&r, &ev))
    switch (ev.kind)
      {
      case EV_PREFIX_SEGMENT:
      case EV_SEGMENT:
        reserved += ev.size;
        d->peak_reserved = MAX (d->peak_reserved, reserved);
        if (ev.kind == EV_SEGMENT && ev.op == VS_ALLOC_OP_SEGMENT_ALLOC)
          {
            GQueue *q = g_hash_table_lookup (d->addresses, &ev.size);
            if (q == NULL)
              g_hash_table_insert (d->addresses, g_memdup2 (&ev.size, sizeof ev.size),
                                   q = g_queue_new ());
            g_queue_push_tail (q, GSIZE_TO_POINTER ((gsize)ev.address));
          }
        break;
      case EV_RELEASES:
        {
          gint64 bound = ev.next == NEXT_SEGMENT ? reserved + ev.next_size - 1 : VS_UNKNOWN;
          gboolean empty = ev.next == NEXT_OTHER;
          reserved -= ev.size;
          g_array_append_val (group_bound, bound);
          g_array_append_val (d->group_empty, empty);
          break;
        }
      case EV_FAIL:
        {
          gint64 room = ev.size - 1;
          if (ev.device_free != VS_UNKNOWN && ev.device_free >= 0)
            room = MIN (room, ev.device_free);
          gint64 bound = reserved + MAX (room, 0);
          g_array_append_val (failure_bound, bound);
          break;
        }
      case EV_ALLOC:
        {
          gint64 *n = g_hash_table_lookup (streams, &ev.stream);
          if (n == NULL)
            {
              n = g_new0 (gint64, 2);
              n[0] = ev.stream;
              g_hash_table_insert (streams, n, n);
            }
          if (++n[1] > best_count)
            {
              best_count = n[1];
              d->default_stream = ev.stream;
            }
          break;
        }
      default:
        break;
      }
  reader_stop (&r);
  {
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init (&it, streams);
    while (g_hash_table_iter_next (&it, &key, NULL))
      g_free (key);
  }
  if (r.failed)
    return FALSE;

  /* A release right before a new segment is either the allocator's own
   * (its cudaMalloc failed: release cached blocks, retry) or the program's
   * empty_cache() followed by an allocation; the trace cannot tell them
   * apart, and both replay the recorded run exactly (with the limit that
   * makes the retry necessary, or with an empty_cache()).  It is taken for
   * a retry only under evidence of a full device: an out-of-memory failure
   * in the trace, or a retry point within a tenth of the device's known
   * capacity; and never when a cap of at least the
   * recorded peak would have let the segment be had without it. */
  gint64 limit = G_MAXINT64;
  gboolean pressure = failure_bound->len > 0;
  for (guint i = 0; i < group_bound->len; i++)
    {
      gint64 b = g_array_index (group_bound, gint64, i);
      if (b == VS_UNKNOWN)
        continue;
      if (b < d->peak_reserved
          || !(pressure || (device_total > 0 && b >= device_total - device_total / 10)))
        g_array_index (d->group_empty, gboolean, i) = TRUE;
      else
        limit = MIN (limit, b);
    }
  for (guint i = 0; i < failure_bound->len; i++)
    limit = MIN (limit, g_array_index (failure_bound, gint64, i));
  if (limit == G_MAXINT64)
    limit = device_total > 0 ? device_total : G_MAXINT64;
  d->limit = MAX (limit, d->peak_reserved);
  return TRUE;
}

typedef struct
{
  GHashTable *addresses;
} Oracle;

static gint64
oracle_address (gpointer data, gint64 bytes)
{
  Oracle *o = data;
  GQueue *q = g_hash_table_lookup (o->addresses, &bytes);
  if (q == NULL || g_queue_is_empty (q))
    return VS_UNKNOWN;
  return (gint64)GPOINTER_TO_SIZE (g_queue_pop_head (q));
}

static void
record_segment (gpointer data, int op, gint64 address, gint64 bytes)
{
  VsWhatifSegmentEvent e = { op, address, bytes };
  g_array_append_val ((GArray *)data, e);
}

void
vs_whatif_result_clear (VsWhatifResult *result)
{
  g_return_if_fail (result != NULL);
  g_free (result->alloc_conf);
  if (result->segment_events)
    g_array_unref (result->segment_events);
  memset (result, 0, sizeof *result);
}

GArray *
vs_whatif_allocators (VsTrace *trace)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (gint64));

  g_return_val_if_fail (trace != NULL, ids);
  const GPtrArray *devices = vs_trace_get_devices (trace);
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  for (guint d = 0; d < devices->len; d++)
    {
      const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
      for (guint i = 0; i < allocators->len; i++)
        {
          const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);
          if (a->device_id == dev->id && g_strcmp0 (a->kind, "pytorch") == 0)
            g_array_append_val (ids, a->id);
        }
    }
  return ids;
}

/* The allocator's recorded settings parsed into conf. */
static gboolean
own_conf (VsTrace *trace, gint64 allocator_id, VsAllocConf *conf, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, settings_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, allocator_id);
  int rc = sqlite3_step (stmt);
  g_autofree char *settings = rc == SQLITE_ROW ? vs_column_dup (stmt, 0) : NULL;
  sqlite3_reset (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  g_autoptr (GError) local = NULL;
  if (!vs_alloc_conf_from_settings (settings, conf, &local))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s: the settings recorded for allocator %" G_GINT64_FORMAT
                   " cannot be read: %s",
                   vs_trace_get_path (trace), allocator_id, local->message);
      return FALSE;
    }
  return TRUE;
}

/* The PyTorch allocator allocator_id, or NULL with error set. */
static const VsAllocatorInfo *
pytorch_allocator (VsTrace *trace, gint64 allocator_id, GError **error)
{
  const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, allocator_id);
  if (a == NULL || g_strcmp0 (a->kind, "pytorch") != 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no PyTorch caching allocator %" G_GINT64_FORMAT,
                   vs_trace_get_path (trace), allocator_id);
      return NULL;
    }
  return a;
}

char *
vs_whatif_own_alloc_conf (VsTrace *trace, gint64 allocator_id, GError **error)
{
  VsAllocConf conf;

  g_return_val_if_fail (trace != NULL, NULL);
  if (pytorch_allocator (trace, allocator_id, error) == NULL
      || !own_conf (trace, allocator_id, &conf, error))
    return NULL;
  return vs_alloc_conf_to_string (&conf);
}

gboolean
vs_whatif_run (VsTrace *trace, gint64 allocator_id, const char *alloc_conf, gint64 limit_bytes,
               VsWhatifFlags flags, VsWhatifResult *out, GError **error)
{
  VsAllocConf conf;
  g_auto (Derived) derived = { 0 };

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (limit_bytes == VS_UNKNOWN || limit_bytes >= 0, FALSE);

  memset (out, 0, sizeof *out);
  const VsAllocatorInfo *info = pytorch_allocator (trace, allocator_id, error);
  if (info == NULL)
    return FALSE;
  if (alloc_conf == NULL ? !own_conf (trace, allocator_id, &conf, error)
                         : !vs_alloc_conf_parse (alloc_conf, &conf, error))
    return FALSE;
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, info->device_id);
  gint64 total = dev != NULL ? dev->total_bytes : VS_UNKNOWN;
  if (!derive (trace, allocator_id, total, &derived, error))
    return FALSE;

  gboolean is_fraction = limit_bytes != VS_UNKNOWN;
  gint64 limit = is_fraction ? limit_bytes : derived.limit;
  g_autoptr (VsCachingAllocator) ca = vs_caching_allocator_new (&conf, limit, is_fraction, total);
  Oracle oracle = { derived.addresses };
  vs_caching_allocator_set_address_func (ca, oracle_address, &oracle);
  out->device_id = info->device_id;
  out->allocator_id = allocator_id;
  out->alloc_conf = alloc_conf != NULL ? g_strdup (alloc_conf) : vs_alloc_conf_to_string (&conf);
  out->limit_bytes = limit == G_MAXINT64 ? VS_UNKNOWN : limit;
  out->limit_derived = !is_fraction;
  out->first_failure_time_ns = VS_UNKNOWN;
  if (flags & VS_WHATIF_SEGMENT_EVENTS)
    {
      out->segment_events = g_array_new (FALSE, FALSE, sizeof (VsWhatifSegmentEvent));
      vs_caching_allocator_set_segment_func (ca, record_segment, out->segment_events);
    }

  /* Recorded address -> the model's block for it (absent when the model
   * failed that request). */
  g_autoptr (GHashTable) live = g_hash_table_new (NULL, NULL);
  VsCaBlock *pending = NULL; /* a recorded failure the model satisfied */
  gint64 last_stream = derived.default_stream;
  guint group = 0;
  Reader r;
  Ev ev;
  if (!reader_start (&r, trace, allocator_id, error))
    {
      reader_stop (&r);
      vs_whatif_result_clear (out);
      return FALSE;
    }
  for (reader_next (&r, &ev); ev.kind != EV_END; reader_next (&r, &ev))
    {
      if (pending != NULL && ev.kind != EV_SEGMENT)
        {
          /* The trace does not say how long the program would have kept
           * it: it is let go at once. */
          vs_caching_allocator_release (ca, pending);
          pending = NULL;
        }
      VsCaBlock *b;
      switch (ev.kind)
        {
        case EV_PREFIX_SEGMENT:
          vs_caching_allocator_add_segment (ca, ev.address, ev.size, derived.default_stream,
                                            ev.size == VS_CA_SMALL_BUFFER);
          break;
        case EV_PREFIX_BLOCK:
          b = vs_caching_allocator_place_block (ca, ev.address, ev.size, ev.block_bytes,
                                                derived.default_stream);
          if (b != NULL)
            g_hash_table_insert (live, GSIZE_TO_POINTER ((gsize)ev.address), b);
          break;
        case EV_ALLOC:
        case EV_FAIL:
          out->request_count++;
          if (ev.kind == EV_ALLOC)
            last_stream = ev.stream;
          b = vs_caching_allocator_malloc (ca, ev.size, last_stream);
          if (b == NULL)
            {
              if (out->failed_alloc_count++ == 0)
                out->first_failure_time_ns = vs_trace_rel (trace, ev.ts);
            }
          else if (ev.kind == EV_FAIL)
            pending = b;
          else
            {
              VsCaBlock *old = g_hash_table_lookup (live, GSIZE_TO_POINTER ((gsize)ev.address));
              if (old != NULL)
                vs_caching_allocator_release (ca, old); /* its free was not recorded */
              g_hash_table_insert (live, GSIZE_TO_POINTER ((gsize)ev.address), b);
            }
          break;
        case EV_FREE:
          if (g_hash_table_steal_extended (live, GSIZE_TO_POINTER ((gsize)ev.address), NULL,
                                           (gpointer *)&b))
            vs_caching_allocator_release (ca, b);
          break;
        case EV_RELEASES:
          g_assert (group < derived.group_empty->len);
          if (g_array_index (derived.group_empty, gboolean, group))
            vs_caching_allocator_empty_cache (ca);
          group++;
          break;
        default:
          break;
        }
    }
  reader_stop (&r);
  if (r.failed)
    {
      vs_whatif_result_clear (out);
      return FALSE;
    }
  out->peak_reserved_bytes = vs_caching_allocator_get_peak_reserved (ca);
  out->peak_allocated_bytes = vs_caching_allocator_get_peak_requested (ca);
  out->final_reserved_bytes = vs_caching_allocator_get_reserved (ca);
  out->segment_alloc_count = vs_caching_allocator_get_segment_allocs (ca);
  out->segment_free_count = vs_caching_allocator_get_segment_frees (ca);
  return TRUE;
}
