/* SPDX-License-Identifier: MIT */
/* vs-whatif-line.c — the replayed reserved line of one device (see
 * vs-whatif-line.h).
 *
 * One read of the allocator's history gives both the trace's own replay
 * and the one asked for (vs_whatif_run_settings_full); the replay's
 * changes of reserved memory (VS_WHATIF_SEGMENT_EVENTS, already timed on
 * the trace's axis) are summed into steps.  The steps of a 10 M-event
 * trace number its segment changes (thousands), so reductions walk them
 * directly.
 */
#include "vs-whatif-line.h"

void
vs_whatif_line_free (VsWhatifLine *line)
{
  if (line == NULL)
    return;
  vs_whatif_result_clear (&line->own);
  vs_whatif_result_clear (&line->result);
  g_clear_pointer (&line->steps, g_array_unref);
  g_free (line);
}

gint64
vs_whatif_line_allocator (VsTrace *trace, gint64 device_id, GError **error)
{
  g_autoptr (GArray) ids = NULL;
  gint64 found = 0;
  guint n = 0;

  g_return_val_if_fail (trace != NULL, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  ids = vs_whatif_allocators (trace);
  for (guint i = 0; i < ids->len; i++)
    {
      gint64 id = g_array_index (ids, gint64, i);
      const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, id);
      if (a != NULL && a->device_id == device_id)
        {
          found = id;
          n++;
        }
    }
  if (n == 1)
    return found;
  if (n == 0)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                 "%s: device %" G_GINT64_FORMAT " has no PyTorch caching allocator to replay",
                 vs_trace_get_path (trace), device_id);
  else
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                 "%s: device %" G_GINT64_FORMAT
                 " has %u PyTorch caching allocators (one per process); vramscope whatif"
                 " replays each",
                 vs_trace_get_path (trace), device_id, n);
  return 0;
}

VsWhatifLine *
vs_whatif_line_new (VsTrace *trace, gint64 device_id, const char *alloc_conf, gint64 limit_bytes,
                    VsWhatifProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autoptr (VsWhatifLine) line = NULL;
  VsWhatifResult results[2];
  const char *confs[1] = { alloc_conf };
  gint64 reserved = 0;

  g_return_val_if_fail (trace != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_return_val_if_fail (limit_bytes == VS_UNKNOWN || limit_bytes >= 0, NULL);

  gint64 allocator_id = vs_whatif_line_allocator (trace, device_id, error);
  if (allocator_id == 0)
    return NULL;
  if (!vs_whatif_run_settings_full (trace, allocator_id, confs, 1, limit_bytes,
                                    VS_WHATIF_SEGMENT_EVENTS, progress, progress_data, results,
                                    error))
    return NULL;
  line = g_new0 (VsWhatifLine, 1);
  line->device_id = device_id;
  line->allocator_id = allocator_id;
  line->own = results[0];
  line->result = results[1];
  const GArray *events = line->result.segment_events;
  line->steps = g_array_sized_new (FALSE, FALSE, sizeof (VsWhatifStep), events->len);
  for (guint i = 0; i < events->len; i++)
    {
      const VsWhatifSegmentEvent *e = &g_array_index (events, VsWhatifSegmentEvent, i);
      gboolean grows = e->op == VS_ALLOC_OP_SEGMENT_ALLOC || e->op == VS_ALLOC_OP_SEGMENT_MAP;
      VsWhatifStep step = { e->time_ns, reserved + (grows ? e->bytes : -e->bytes) };

      /* A trace whose events are out of time order within the allocator
       * (a hostile file) still gives a line that goes forward in time. */
      if (i > 0)
        step.time_ns = MAX (step.time_ns, g_array_index (line->steps, VsWhatifStep, i - 1).time_ns);
      /* the model never gives back more than it holds */
      g_assert (step.reserved_bytes >= 0);
      reserved = step.reserved_bytes;
      g_array_append_val (line->steps, step);
    }
  g_assert (reserved == line->result.final_reserved_bytes);
  return g_steal_pointer (&line);
}

/* The index of the first step after time_ns (steps->len when none). */
static guint
first_after (const GArray *steps, gint64 time_ns)
{
  guint lo = 0, hi = steps->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (steps, VsWhatifStep, mid).time_ns <= time_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

gint64
vs_whatif_line_at (const VsWhatifLine *line, gint64 time_ns)
{
  g_return_val_if_fail (line != NULL, 0);
  guint i = first_after (line->steps, time_ns);
  return i == 0 ? 0 : g_array_index (line->steps, VsWhatifStep, i - 1).reserved_bytes;
}

GArray *
vs_whatif_line_buckets (const VsWhatifLine *line, gint64 from_ns, gint64 to_ns, guint n_buckets)
{
  g_return_val_if_fail (line != NULL && from_ns < to_ns && n_buckets >= 1, NULL);
  GArray *out = vs_timeline_buckets_new (from_ns, to_ns, n_buckets);
  guint next = first_after (line->steps, from_ns - 1);
  gboolean known = next > 0;
  gint64 value = known ? g_array_index (line->steps, VsWhatifStep, next - 1).reserved_bytes : 0;

  for (guint i = 0; i < n_buckets; i++)
    {
      VsTimelineBucket *b = &g_array_index (out, VsTimelineBucket, i);

      b->min_reserved = b->max_reserved = value;
      b->n_changes = 0;
      for (; next < line->steps->len
             && g_array_index (line->steps, VsWhatifStep, next).time_ns < b->to_ns;
           next++)
        {
          value = g_array_index (line->steps, VsWhatifStep, next).reserved_bytes;
          b->min_reserved = known ? MIN (b->min_reserved, value) : value;
          b->max_reserved = known ? MAX (b->max_reserved, value) : value;
          known = TRUE;
          b->n_changes++;
        }
      b->known = known;
      b->last_reserved = value;
      if (!known)
        b->min_reserved = b->max_reserved = b->last_reserved = VS_UNKNOWN;
      b->min_allocated = b->max_allocated = b->last_allocated = VS_UNKNOWN;
      b->max_device = VS_UNKNOWN;
    }
  return out;
}
