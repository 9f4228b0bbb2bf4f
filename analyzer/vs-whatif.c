/* SPDX-License-Identifier: MIT */
/* vs-whatif.c — the what-if replay (see vs-whatif.h).
 *
 * The requests come from vs-whatif-requests.c.
 *
 * One pass replays and learns what the limit must be at once (with no
 * limit, or the one given); a second replays again only when the derived
 * limit or the decision on a run of releases would have changed the first
 * (see vs_whatif_run).  The recorded segment addresses are handed to the
 * model as they are read, so that best-fit ties between equal blocks break
 * as they did.  Events are not kept: memory follows the number of live
 * blocks, not the trace's size.
 */
#include "vs-whatif.h"

#include "vs-address-map-private.h"
#include "vs-alloc-conf.h"
#include "vs-caching-allocator.h"
#include "vs-trace-private.h"
#include "vs-whatif-private.h"
#include "vs-whatif-requests.h"

static const char *last_id_sql = "SELECT MAX(id) FROM alloc_event";
static const char *settings_sql = "SELECT settings FROM allocator WHERE id = ?1";

/* The addresses the recorded run got for its segments, in order, handed
 * out while the replay asks for the same segments in the same order (a
 * segment_alloc comes before the alloc it was for, so the recorded one is
 * read before the replay needs it).  From the first difference on, the
 * replay is a different run: new segments are made up (below every
 * recorded one, see vs-caching-allocator.c). */
typedef struct
{
  GQueue *sizes;     /* gint64 as pointers, recorded order */
  GQueue *addresses; /* likewise */
  gboolean diverged;
  gint64 lowest; /* lowest recorded address */
} Oracle;

static void
oracle_add (Oracle *o, gint64 bytes, gint64 address)
{
  g_queue_push_tail (o->sizes, GSIZE_TO_POINTER ((gsize)bytes));
  g_queue_push_tail (o->addresses, GSIZE_TO_POINTER ((gsize)address));
  o->lowest = MIN (o->lowest, address);
}

static gint64
oracle_address (gpointer data, gint64 bytes)
{
  Oracle *o = data;
  if (!o->diverged && !g_queue_is_empty (o->sizes)
      && (gint64)GPOINTER_TO_SIZE (g_queue_peek_head (o->sizes)) == bytes)
    {
      g_queue_pop_head (o->sizes);
      return (gint64)GPOINTER_TO_SIZE (g_queue_pop_head (o->addresses));
    }
  o->diverged = TRUE;
  return VS_UNKNOWN;
}

/* When the replay's changes of reserved memory happen.  A change gets the
 * time of the next recorded change not yet matched since the request
 * before (a recorded segment_alloc comes before the alloc it was for, and
 * the releases of a retry before the request that needed them), so that
 * a replay that makes the changes the recorded run made has them at the
 * recorded times; a change the recorded run did not make gets the time of
 * the event the replay is at. */
typedef struct
{
  GArray *events; /* VsWhatifSegmentEvent out */
  VsTrace *trace;
  GArray *recorded; /* gint64: ts of the recorded changes since the last request */
  guint next;       /* the first of recorded not yet matched */
  gint64 now;       /* ts of the event being replayed */
} SegmentClock;

static void
clock_add_recorded (SegmentClock *c, gint64 ts)
{
  g_array_append_val (c->recorded, ts);
}

/* The request the recorded changes led up to has been replayed. */
static void
clock_request_done (SegmentClock *c)
{
  g_array_set_size (c->recorded, 0);
  c->next = 0;
}

static void
record_segment (gpointer data, int op, gint64 address, gint64 bytes)
{
  SegmentClock *c = data;
  gint64 ts = c->next < c->recorded->len ? g_array_index (c->recorded, gint64, c->next++) : c->now;
  VsWhatifSegmentEvent e = { op, address, bytes, vs_trace_rel (c->trace, ts) };

  g_array_append_val (c->events, e);
}

void
vs_whatif_result_clear (VsWhatifResult *result)
{
  g_return_if_fail (result != NULL);
  g_free (result->alloc_conf);
  if (result->segment_events)
    g_array_unref (result->segment_events);
  if (result->failures)
    g_array_unref (result->failures);
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
  if (!vs_trace_step_ended (trace, stmt, rc, error))
    return FALSE;
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

/* What the learning pass finds out about the recorded run (see
 * vs_whatif_run). */
typedef struct
{
  gint64 reserved, peak_reserved;
  GArray *group_bound;   /* gint64 per run of releases: VS_UNKNOWN when no new segment follows */
  GArray *group_next;    /* VsWhatifNextKind per run of releases */
  GArray *group_partial; /* gboolean per run: it gave back less than empty_cache() would have */
  GArray *group_whole;   /* gboolean per run: it gave back exactly what empty_cache() would have */
  GArray *failure_bound; /* gint64 per failure */
  gboolean in_step;      /* the model followed every recorded release */
  gboolean fail_cache;   /* a failure came with cached memory left to release */
} Record;

static void
record_init (Record *rec)
{
  memset (rec, 0, sizeof *rec);
  rec->group_bound = g_array_new (FALSE, FALSE, sizeof (gint64));
  rec->group_next = g_array_new (FALSE, FALSE, sizeof (VsWhatifNextKind));
  rec->group_partial = g_array_new (FALSE, FALSE, sizeof (gboolean));
  rec->group_whole = g_array_new (FALSE, FALSE, sizeof (gboolean));
  rec->failure_bound = g_array_new (FALSE, FALSE, sizeof (gint64));
  rec->in_step = TRUE;
}

static void
record_clear (Record *rec)
{
  g_clear_pointer (&rec->group_bound, g_array_unref);
  g_clear_pointer (&rec->group_next, g_array_unref);
  g_clear_pointer (&rec->group_partial, g_array_unref);
  g_clear_pointer (&rec->group_whole, g_array_unref);
  g_clear_pointer (&rec->failure_bound, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Record, record_clear)

/* Whether a run of releases followed by a new segment was the allocator's
 * own release before a retry rather than the program's empty_cache(): the
 * trace cannot always tell them apart, and both reproduce the recorded
 * run.  A retry when it gave back less than empty_cache() would have
 * (max_split_size's release_available_cached_blocks); otherwise only under
 * evidence of a full device (an out-of-memory failure in the trace, or a
 * retry point within a tenth of the device's known capacity), and never
 * when a cap of at least the recorded peak would have let the segment be
 * had without the releases. */
static gboolean
is_retry (const Record *rec, guint i, gint64 total)
{
  gint64 bound = g_array_index (rec->group_bound, gint64, i);
  if (bound == VS_UNKNOWN)
    return FALSE;
  if (g_array_index (rec->group_partial, gboolean, i))
    return TRUE;
  if (bound < rec->peak_reserved)
    return FALSE;
  return rec->failure_bound->len > 0 || (total > 0 && bound >= total - total / 10);
}

/* The limit the recorded run met, and the decision on each run of releases
 * (into empty: replayed as empty_cache()). */
static gint64
decide (const Record *rec, gint64 total, GArray *empty)
{
  gint64 limit = G_MAXINT64;

  g_array_set_size (empty, rec->group_bound->len);
  for (guint i = 0; i < rec->group_bound->len; i++)
    {
      VsWhatifNextKind next = g_array_index (rec->group_next, VsWhatifNextKind, i);
      gboolean retry = is_retry (rec, i, total);
      /* runs followed by a failure are that failure's own releases */
      g_array_index (empty, gboolean, i)
          = next == VS_WHATIF_NEXT_OTHER || (next == VS_WHATIF_NEXT_SEGMENT && !retry);
      if (retry)
        limit = MIN (limit, g_array_index (rec->group_bound, gint64, i));
    }
  for (guint i = 0; i < rec->failure_bound->len; i++)
    limit = MIN (limit, g_array_index (rec->failure_bound, gint64, i));
  if (limit == G_MAXINT64)
    limit = total > 0 ? total : G_MAXINT64;
  return MAX (limit, rec->peak_reserved);
}

typedef struct
{
  VsTrace *trace;
  gint64 allocator_id;
  const VsAllocConf *conf;
  gint64 limit;
  gboolean is_fraction;
  gint64 total;
  const GArray *decisions; /* gboolean per run of releases; NULL: the learning pass */
  gint64 default_stream;
  VsWhatifProgressFunc progress; /* may be NULL */
  gpointer progress_data;
  double progress_from, progress_to; /* the share of the whole work this pass is */
  gint64 last_id;                    /* the trace's last alloc_event id (progress) */
} Pass;

/* Sets error to the one line that refuses a replay beyond the model's
 * range (see VS_CA_MAX_BYTES); returns FALSE. */
static gboolean
beyond_range (const Pass *a, GError **error)
{
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
               "%s: allocator %" G_GINT64_FORMAT " cannot be replayed: a size, the device's"
               " capacity or a sum of sizes is beyond the what-if model's range (2^62 bytes"
               " each, 2^63 in all)",
               vs_trace_get_path (a->trace), a->allocator_id);
  return FALSE;
}

/* *total += delta (delta may be negative); FALSE when it would leave 64
 * bits. */
static gboolean
add_checked (gint64 *total, gint64 delta)
{
  return !__builtin_add_overflow (*total, delta, total);
}

/* Events between two looks at the cancellable and two progress reports. */
#define CHECK_EVERY 65536

/* One replay of the trace through a new model, filling out.
 *
 * The learning pass (no decisions yet; the trace's own settings, no limit)
 * follows the recorded run: it gives back exactly what the run gave back
 * and fails exactly what failed, and fills rec with what is needed to
 * derive the limit and to tell each run of releases apart.  A deciding
 * pass replays as PyTorch would under the limit and decisions given. */
static gboolean
replay (const Pass *a, Record *rec, VsWhatifResult *out, gint64 *max_need, GError **error)
{
  g_autoptr (VsCachingAllocator) ca
      = vs_caching_allocator_new (a->conf, a->limit, a->is_fraction, a->total);
  Oracle oracle = { g_queue_new (), g_queue_new (), FALSE, G_MAXINT64 };
  g_autoptr (GArray) recorded_times = g_array_new (FALSE, FALSE, sizeof (gint64));
  SegmentClock clock = { out->segment_events, a->trace, recorded_times, 0, 0 };
  guint64 n_events = 0;
  g_auto (VsAddressMap) live = { 0 };
  VsCaBlock *pending = NULL; /* a recorded failure the model satisfied */
  gint64 last_stream = a->default_stream;
  gint64 live_bytes = 0; /* the live blocks' rounded sizes */
  gboolean learning = a->decisions == NULL;
  gboolean in_range = TRUE;
  guint group = 0;
  VsWhatifReader r;
  VsWhatifEv ev;

  vs_caching_allocator_set_address_func (ca, oracle_address, &oracle);
  if (out->segment_events != NULL)
    {
      g_array_set_size (out->segment_events, 0);
      vs_caching_allocator_set_segment_func (ca, record_segment, &clock);
    }
  out->request_count = out->failed_alloc_count = 0;
  out->first_failure_time_ns = VS_UNKNOWN;
  if (!vs_whatif_reader_start (&r, a->trace, a->allocator_id, error))
    {
      vs_whatif_reader_stop (&r);
      return FALSE;
    }
  for (vs_whatif_reader_next (&r, &ev); ev.kind != VS_WHATIF_EV_END;
       vs_whatif_reader_next (&r, &ev))
    {
      /* at the first event too, so that a replay asked to stop before it
       * began stops at once */
      if (n_events++ % CHECK_EVERY == 0 && a->progress != NULL)
        {
          double done = a->last_id > 0 ? MIN (1.0, (double)r.row.id / (double)a->last_id) : 0;
          if (!a->progress (a->progress_from + (a->progress_to - a->progress_from) * done,
                            a->progress_data))
            {
              g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CANCELLED,
                           "the replay of %s was cancelled", vs_trace_get_path (a->trace));
              r.failed = TRUE;
              break;
            }
        }
      clock.now = ev.ts;
      if (ev.size > VS_CA_MAX_BYTES || ev.next_size > VS_CA_MAX_BYTES
          || vs_caching_allocator_out_of_range (ca))
        {
          in_range = FALSE;
          break;
        }
      if (pending != NULL && ev.kind != VS_WHATIF_EV_SEGMENT)
        {
          /* The trace does not say how long the program would have kept
           * it: it is let go at once. */
          vs_caching_allocator_release (ca, pending);
          pending = NULL;
        }
      VsCaBlock *b;
      switch (ev.kind)
        {
        case VS_WHATIF_EV_PREFIX_SEGMENT:
          in_range = add_checked (&rec->reserved, ev.size);
          rec->peak_reserved = MAX (rec->peak_reserved, rec->reserved);
          vs_caching_allocator_add_segment (ca, ev.address, ev.size, a->default_stream,
                                            ev.size == VS_CA_SMALL_BUFFER);
          break;
        case VS_WHATIF_EV_SEGMENT:
          in_range = add_checked (&rec->reserved, ev.size);
          rec->peak_reserved = MAX (rec->peak_reserved, rec->reserved);
          if (ev.op == VS_ALLOC_OP_SEGMENT_ALLOC)
            oracle_add (&oracle, ev.size, ev.address);
          clock_add_recorded (&clock, ev.ts);
          break;
        case VS_WHATIF_EV_PREFIX_BLOCK:
          b = vs_caching_allocator_place_block (ca, ev.address, ev.size, ev.block_bytes,
                                                a->default_stream);
          if (b != NULL)
            {
              vs_address_map_put (&live, ev.address, b);
              live_bytes += vs_ca_block_get_size (b);
            }
          break;
        case VS_WHATIF_EV_FAIL:
          {
            gint64 room = ev.size - 1;
            if (ev.device_free != VS_UNKNOWN && ev.device_free >= 0)
              room = MIN (room, ev.device_free);
            gint64 bound = rec->reserved;
            in_range = add_checked (&bound, MAX (room, 0));
            g_array_append_val (rec->failure_bound, bound);
          }
          out->request_count++;
          if (learning && out->failures != NULL)
            {
              VsWhatifFailure fl = {
                .time_ns = vs_trace_rel (a->trace, ev.ts),
                .requested_bytes = ev.size,
                .alloc_bytes = vs_caching_allocator_allocation_size (ca, ev.size),
                .allocated_bytes = live_bytes,
                .requested_live_bytes = vs_caching_allocator_get_requested (ca),
                .reserved_bytes = vs_caching_allocator_get_reserved (ca),
              };
              g_array_append_val (out->failures, fl);
            }
          if (learning)
            {
              /* As recorded: its releases came before it. */
              if (vs_caching_allocator_get_releasable (ca) != 0)
                rec->fail_cache = TRUE;
              b = NULL;
            }
          else
            b = vs_caching_allocator_malloc (ca, ev.size, last_stream);
          if (b == NULL)
            {
              if (out->failed_alloc_count++ == 0)
                out->first_failure_time_ns = vs_trace_rel (a->trace, ev.ts);
            }
          else
            pending = b;
          clock_request_done (&clock);
          break;
        case VS_WHATIF_EV_ALLOC:
          out->request_count++;
          last_stream = ev.stream;
          b = vs_caching_allocator_malloc (ca, ev.size, last_stream);
          if (b == NULL)
            {
              if (out->failed_alloc_count++ == 0)
                out->first_failure_time_ns = vs_trace_rel (a->trace, ev.ts);
            }
          else
            {
              VsCaBlock *old = vs_address_map_get (&live, ev.address);
              if (old != NULL)
                {
                  live_bytes -= vs_ca_block_get_size (old);
                  vs_caching_allocator_release (ca, old); /* its free was not recorded */
                }
              vs_address_map_put (&live, ev.address, b);
              live_bytes += vs_ca_block_get_size (b);
            }
          clock_request_done (&clock);
          break;
        case VS_WHATIF_EV_FREE:
          if ((b = vs_address_map_take (&live, ev.address)) != NULL)
            {
              live_bytes -= vs_ca_block_get_size (b);
              vs_caching_allocator_release (ca, b);
            }
          break;
        case VS_WHATIF_EV_RELEASES:
          for (guint i = 0; i < r.releases->len; i++)
            clock_add_recorded (&clock, g_array_index (r.releases, VsWhatifRow, i).ts);
          if (learning)
            {
              gint64 bound = VS_UNKNOWN;
              if (ev.next == VS_WHATIF_NEXT_SEGMENT)
                {
                  bound = rec->reserved;
                  in_range = add_checked (&bound, ev.next_size - 1);
                }
              gint64 releasable = vs_caching_allocator_get_releasable (ca);
              gboolean partial = ev.size < releasable, whole = ev.size == releasable;
              g_array_append_val (rec->group_bound, bound);
              g_array_append_val (rec->group_next, ev.next);
              g_array_append_val (rec->group_partial, partial);
              g_array_append_val (rec->group_whole, whole);
              for (guint i = 0; i < r.releases->len; i++)
                {
                  const VsWhatifRow *rel = &g_array_index (r.releases, VsWhatifRow, i);
                  if (!vs_caching_allocator_release_recorded (ca, rel->op, rel->address, rel->size))
                    rec->in_step = FALSE;
                }
            }
          else if (g_array_index (a->decisions, gboolean, group))
            vs_caching_allocator_empty_cache (ca);
          /* After a retry's releases the request that follows gives them
           * back; otherwise what was not given back here is not the
           * model's to give. */
          if (learning || g_array_index (a->decisions, gboolean, group))
            clock_request_done (&clock);
          group++;
          in_range = in_range && add_checked (&rec->reserved, -ev.size);
          break;
        default:
          break;
        }
      if (!in_range)
        break;
    }
  in_range = in_range && !vs_caching_allocator_out_of_range (ca);
  vs_whatif_reader_stop (&r);
  g_queue_free (oracle.sizes);
  g_queue_free (oracle.addresses);
  if (r.failed)
    return FALSE;
  if (!in_range)
    return beyond_range (a, error);
  out->peak_reserved_bytes = vs_caching_allocator_get_peak_reserved (ca);
  out->peak_allocated_bytes = vs_caching_allocator_get_peak_requested (ca);
  out->final_reserved_bytes = vs_caching_allocator_get_reserved (ca);
  out->segment_alloc_count = vs_caching_allocator_get_segment_allocs (ca);
  out->segment_free_count = vs_caching_allocator_get_segment_frees (ca);
  *max_need = vs_caching_allocator_get_max_need (ca);
  return TRUE;
}

/* Whether the learning pass is what a deciding pass with the trace's own
 * settings, the derived limit and the decisions would give: the model
 * followed every release, each release it was told to make is one it would
 * have made itself (all of the cache, for empty_cache() and for a retry
 * without max_split_size), each failure had nothing cached left, and no
 * new segment was ever wanted beyond the limit. */
static gboolean
learned_is_decided (const Record *rec, const GArray *empty, const VsAllocConf *conf, gint64 limit,
                    gint64 max_need)
{
  if (!rec->in_step || rec->fail_cache || max_need > limit)
    return FALSE;
  for (guint i = 0; i < empty->len; i++)
    {
      gboolean is_empty = g_array_index (empty, gboolean, i);
      VsWhatifNextKind next = g_array_index (rec->group_next, VsWhatifNextKind, i);
      if (!g_array_index (rec->group_whole, gboolean, i))
        return FALSE;
      if (!is_empty && next == VS_WHATIF_NEXT_SEGMENT && conf->max_split_size != G_MAXINT64)
        return FALSE;
    }
  return TRUE;
}

static const char *first_stream_sql
    = "SELECT stream FROM alloc_event WHERE allocator_id = ?1 AND op = 1"
      " AND stream IS NOT NULL ORDER BY id LIMIT 1";

/* What every replay of one allocator shares: its own settings, the
 * learning pass's result, the derived limit and the decisions. */
typedef struct
{
  const VsAllocatorInfo *info;
  VsAllocConf own;
  Pass pass;
  VsWhatifResult learned; /* with segment events when asked */
  gboolean learned_ok;    /* learned is what a deciding pass would give */
  GArray *decisions;
  GArray *group_bound; /* from the learning pass (Record) */
  gint64 limit;        /* derived */
  VsWhatifFlags flags; /* those of the learning pass */
} Plan;

static void
plan_clear (Plan *p)
{
  vs_whatif_result_clear (&p->learned);
  g_clear_pointer (&p->decisions, g_array_unref);
  g_clear_pointer (&p->group_bound, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)

/* The learning pass: the trace under its own settings, following what the
 * recorded run gave back and what failed; from it the limit and the
 * decisions. */
static gboolean
plan_prepare (VsTrace *trace, gint64 allocator_id, VsWhatifFlags flags,
              VsWhatifProgressFunc progress, gpointer progress_data, Plan *p, GError **error)
{
  memset (p, 0, sizeof *p);
  p->info = pytorch_allocator (trace, allocator_id, error);
  if (p->info == NULL || !own_conf (trace, allocator_id, &p->own, error))
    return FALSE;
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, p->info->device_id);
  p->pass = (Pass){
    .trace = trace,
    .allocator_id = allocator_id,
    .conf = &p->own,
    .limit = G_MAXINT64,
    .is_fraction = FALSE,
    .total = dev != NULL ? dev->total_bytes : VS_UNKNOWN,
    .decisions = NULL,
    .default_stream = 0,
    .progress = progress,
    .progress_data = progress_data,
    .progress_from = 0,
    .progress_to = 0.5,
  };
  /* The stream of what was live before the history (and of a failure
   * before any allocation): the first one used. */
  sqlite3_stmt *stmt = vs_trace_statement (trace, first_stream_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, allocator_id);
  int rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    p->pass.default_stream = sqlite3_column_int64 (stmt, 0);
  if (!vs_trace_step_ended (trace, stmt, rc, error))
    return FALSE;
  if (progress != NULL)
    {
      stmt = vs_trace_statement (trace, last_id_sql, error);
      if (stmt == NULL)
        return FALSE;
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        p->pass.last_id = sqlite3_column_int64 (stmt, 0);
      if (!vs_trace_step_ended (trace, stmt, rc, error))
        return FALSE;
    }

  if (flags & VS_WHATIF_SEGMENT_EVENTS)
    p->learned.segment_events = g_array_new (FALSE, FALSE, sizeof (VsWhatifSegmentEvent));
  if (flags & VS_WHATIF_FAILURES)
    p->learned.failures = g_array_new (FALSE, FALSE, sizeof (VsWhatifFailure));
  g_auto (Record) rec;
  record_init (&rec);
  gint64 max_need = 0;
  if (!replay (&p->pass, &rec, &p->learned, &max_need, error))
    return FALSE;
  p->decisions = g_array_new (FALSE, FALSE, sizeof (gboolean));
  p->limit = decide (&rec, p->pass.total, p->decisions);
  p->group_bound = g_array_ref (rec.group_bound);
  p->flags = flags;
  p->learned_ok = !(flags & VS_WHATIF_DECIDE)
                  && learned_is_decided (&rec, p->decisions, &p->own, p->limit, max_need);
  return TRUE;
}

/* One result: alloc_conf (NULL: the trace's own) under limit_bytes
 * (VS_UNKNOWN: derived). */
static gboolean
plan_run (Plan *p, VsTrace *trace, const char *alloc_conf, gint64 limit_bytes, VsWhatifFlags flags,
          VsWhatifResult *out, GError **error)
{
  VsAllocConf conf = p->own;
  gboolean derived = limit_bytes == VS_UNKNOWN;

  memset (out, 0, sizeof *out);
  if (alloc_conf != NULL && !vs_alloc_conf_parse (alloc_conf, &conf, error))
    return FALSE;
  if (alloc_conf == NULL && derived && p->learned_ok)
    {
      *out = p->learned;
      out->alloc_conf = NULL;
      out->segment_events = NULL;
      if (p->learned.segment_events != NULL)
        out->segment_events = g_array_copy (p->learned.segment_events);
      out->failures = NULL;
    }
  else
    {
      Pass a = p->pass;
      g_auto (Record) again;
      gint64 max_need;
      record_init (&again);
      g_autoptr (GArray) decisions = g_array_copy (p->decisions);
      /* Under a cap given, a run of releases before a new segment the
       * recorded run could not have had under that cap without them was
       * the allocator's retry, not empty_cache(). */
      for (guint i = 0; !derived && i < decisions->len; i++)
        {
          gint64 bound = g_array_index (p->group_bound, gint64, i);
          if (bound != VS_UNKNOWN && bound >= limit_bytes)
            g_array_index (decisions, gboolean, i) = FALSE;
        }
      a.trace = trace != NULL ? trace : p->pass.trace;
      a.conf = &conf;
      a.progress_from = 0.5;
      a.progress_to = 1;
      a.limit = derived ? p->limit : limit_bytes;
      a.is_fraction = !derived;
      a.decisions = decisions;
      if (flags & VS_WHATIF_SEGMENT_EVENTS)
        out->segment_events = g_array_new (FALSE, FALSE, sizeof (VsWhatifSegmentEvent));
      if (!replay (&a, &again, out, &max_need, error))
        {
          vs_whatif_result_clear (out);
          return FALSE;
        }
    }
  if (p->learned.failures != NULL)
    out->failures = g_array_copy (p->learned.failures);
  gint64 limit = derived ? p->limit : limit_bytes;
  out->device_id = p->info->device_id;
  out->allocator_id = p->pass.allocator_id;
  out->alloc_conf = alloc_conf != NULL ? g_strdup (alloc_conf) : vs_alloc_conf_to_string (&p->own);
  out->limit_bytes = limit == G_MAXINT64 ? VS_UNKNOWN : limit;
  out->limit_derived = derived;
  return TRUE;
}

gboolean
vs_whatif_run (VsTrace *trace, gint64 allocator_id, const char *alloc_conf, gint64 limit_bytes,
               VsWhatifFlags flags, VsWhatifResult *out, GError **error)
{
  return vs_whatif_run_full (trace, allocator_id, alloc_conf, limit_bytes, flags, NULL, NULL, out,
                             error);
}

gboolean
vs_whatif_run_full (VsTrace *trace, gint64 allocator_id, const char *alloc_conf, gint64 limit_bytes,
                    VsWhatifFlags flags, VsWhatifProgressFunc progress, gpointer progress_data,
                    VsWhatifResult *out, GError **error)
{
  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (limit_bytes == VS_UNKNOWN || limit_bytes >= 0, FALSE);

  memset (out, 0, sizeof *out);
  VsAllocConf check;
  if (alloc_conf != NULL && !vs_alloc_conf_parse (alloc_conf, &check, error))
    return FALSE;
  g_auto (Plan) plan;
  if (!plan_prepare (trace, allocator_id, flags, progress, progress_data, &plan, error)
      || !plan_run (&plan, NULL, alloc_conf, limit_bytes, flags, out, error))
    return FALSE;
  if (progress != NULL)
    progress (1, progress_data);
  return TRUE;
}

gboolean
vs_whatif_run_settings (VsTrace *trace, gint64 allocator_id, const char *const *alloc_confs,
                        guint n_confs, gint64 limit_bytes, VsWhatifFlags flags,
                        VsWhatifResult *results, GError **error)
{
  return vs_whatif_run_settings_full (trace, allocator_id, alloc_confs, n_confs, limit_bytes, flags,
                                      NULL, NULL, results, error);
}

gboolean
vs_whatif_run_settings_full (VsTrace *trace, gint64 allocator_id, const char *const *alloc_confs,
                             guint n_confs, gint64 limit_bytes, VsWhatifFlags flags,
                             VsWhatifProgressFunc progress, gpointer progress_data,
                             VsWhatifResult *results, GError **error)
{
  g_return_val_if_fail (trace != NULL && results != NULL, FALSE);
  g_return_val_if_fail (n_confs == 0 || alloc_confs != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (limit_bytes == VS_UNKNOWN || limit_bytes >= 0, FALSE);

  memset (results, 0, (n_confs + 1) * sizeof *results);
  for (guint k = 0; k < n_confs; k++)
    {
      VsAllocConf check;
      if (alloc_confs[k] != NULL && !vs_alloc_conf_parse (alloc_confs[k], &check, error))
        return FALSE;
    }
  g_auto (Plan) plan;
  if (!plan_prepare (trace, allocator_id, flags, progress, progress_data, &plan, error))
    return FALSE;
  for (guint k = 0; k <= n_confs; k++)
    if (!plan_run (&plan, NULL, k == 0 ? NULL : alloc_confs[k - 1],
                   k == 0 ? VS_UNKNOWN : limit_bytes, flags, &results[k], error))
      {
        for (guint j = 0; j < k; j++)
          vs_whatif_result_clear (&results[j]);
        return FALSE;
      }
  if (progress != NULL)
    progress (1, progress_data);
  return TRUE;
}

/* A plan shared by the replays of vs-whatif-plan.c: the learning pass's
 * result (see vs-whatif-private.h). */
struct _VsWhatifPlan
{
  Plan plan;
};

VsWhatifPlan *
vs_whatif_plan_new (VsTrace *trace, gint64 allocator_id, VsWhatifFlags flags, GError **error)
{
  g_return_val_if_fail (trace != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  VsWhatifPlan *plan = g_new0 (VsWhatifPlan, 1);
  if (!plan_prepare (trace, allocator_id, flags, NULL, NULL, &plan->plan, error))
    {
      vs_whatif_plan_free (plan);
      return NULL;
    }
  return plan;
}

void
vs_whatif_plan_free (VsWhatifPlan *plan)
{
  if (plan == NULL)
    return;
  plan_clear (&plan->plan);
  g_free (plan);
}

gint64
vs_whatif_plan_limit (const VsWhatifPlan *plan)
{
  return plan->plan.limit == G_MAXINT64 ? VS_UNKNOWN : plan->plan.limit;
}

VsTrace *
vs_whatif_plan_trace (const VsWhatifPlan *plan)
{
  return plan->plan.pass.trace;
}

gboolean
vs_whatif_plan_replay (VsWhatifPlan *plan, VsTrace *trace, const char *alloc_conf,
                       gint64 limit_bytes, VsWhatifResult *out, GError **error)
{
  return plan_run (&plan->plan, trace, alloc_conf, limit_bytes, plan->plan.flags, out, error);
}
