/* SPDX-License-Identifier: MIT */
/* vs-report.c — the reports of `vramscope report`, each built as a table
 * from the analyzer's queries.  Column lists are documented in
 * docs/reports.md; keep the two in step.
 *
 * Scope: every device of the trace, or the one chosen; the allocator
 * chosen by name (allocator names repeat across devices: "pytorch" on each
 * GPU), or `all`.
 */
#include "vs-report.h"
#include "vs-analyzer.h"
#include "vs-oom-explain.h"
#include "vs-trace-private.h"

#include <string.h>

typedef VsTable *(*ReportFunc) (VsTrace *trace, const VsReportOptions *opts, GError **error);

typedef struct
{
  const char *name;
  const char *description;
  ReportFunc build;
} Report;

void
vs_report_options_init (VsReportOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->device_id = 0;
  opts->allocator = NULL;
  opts->buckets = 100;
  opts->from_ns = VS_UNKNOWN;
  opts->to_ns = VS_UNKNOWN;
}

static gboolean
allocator_is_all (const VsReportOptions *opts)
{
  return opts->allocator == NULL || g_strcmp0 (opts->allocator, "all") == 0;
}

/* What allocator_on() gives for a device with no allocator of the
 * options' name (a framework pool's synthetic id is below 0). */
#define NO_ALLOCATOR G_MININT64

/* The allocator id the options choose on device, 0 for all, NO_ALLOCATOR
 * when the device has no allocator of that name. */
static gint64
allocator_on (VsTrace *trace, const VsReportOptions *opts, gint64 device_id)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  if (allocator_is_all (opts))
    return 0;
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device_id && g_strcmp0 (a->name, opts->allocator) == 0)
        return a->id;
    }
  return NO_ALLOCATOR;
}

/* Checks the options' device and allocator against the trace. */
static gboolean
check_scope (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  const GPtrArray *devices = vs_trace_get_devices (trace);
  gboolean found = allocator_is_all (opts);

  if (opts->device_id != 0 && vs_trace_lookup_device (trace, opts->device_id) == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no device with id %" G_GINT64_FORMAT, vs_trace_get_path (trace),
                   opts->device_id);
      return FALSE;
    }
  for (guint i = 0; i < devices->len && !found; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (devices, i);

      if ((opts->device_id == 0 || d->id == opts->device_id)
          && allocator_on (trace, opts, d->id) != NO_ALLOCATOR)
        found = TRUE;
    }
  if (!found)
    {
      g_autoptr (GString) names = g_string_new ("all");
      const GPtrArray *allocators = vs_trace_get_allocators (trace);

      for (guint i = 0; i < allocators->len; i++)
        {
          const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

          if (opts->device_id == 0 || a->device_id == opts->device_id)
            g_string_append_printf (names, ", %s", a->name);
        }
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no allocator named '%s' on the chosen devices (it has: %s)",
                   vs_trace_get_path (trace), opts->allocator, names->str);
      return FALSE;
    }
  return TRUE;
}

static gint64
device_idx (VsTrace *trace, gint64 device_id)
{
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, device_id);

  return d != NULL ? d->idx : VS_UNKNOWN;
}

/* Calls fn for every device in scope with the allocator chosen on it. */
typedef gboolean (*DeviceFunc) (VsTrace *trace, const VsReportOptions *opts,
                                const VsDeviceInfo *device, gint64 allocator_id, VsTable *table,
                                GError **error);

static gboolean
for_each_device (VsTrace *trace, const VsReportOptions *opts, VsTable *table, DeviceFunc fn,
                 GError **error)
{
  const GPtrArray *devices = vs_trace_get_devices (trace);

  for (guint i = 0; i < devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (devices, i);
      gint64 allocator_id;

      if (opts->device_id != 0 && d->id != opts->device_id)
        continue;
      allocator_id = allocator_on (trace, opts, d->id);
      if (allocator_id == NO_ALLOCATOR)
        continue;
      if (!fn (trace, opts, d, allocator_id, table, error))
        return FALSE;
    }
  return TRUE;
}

/* Fills t by fn for every device in scope: t, or NULL with t freed when
 * fn fails. */
static VsTable *
fill_by_device (VsTrace *trace, const VsReportOptions *opts, VsTable *t, DeviceFunc fn,
                GError **error)
{
  if (!for_each_device (trace, opts, t, fn, error))
    {
      vs_table_free (t);
      return NULL;
    }
  return t;
}

/* A report built device by device: a table titled `title` with the
 * columns cols[0..n_cols-1], filled by fn. */
static VsTable *
device_report (VsTrace *trace, const VsReportOptions *opts, const char *title,
               const VsColumnSpec *cols, guint n_cols, DeviceFunc fn, GError **error)
{
  VsTable *t = vs_table_new (title);

  vs_table_add_columns (t, cols, n_cols);
  return fill_by_device (trace, opts, t, fn, error);
}

/* Starts a row whose two leading columns are the device's index and the
 * allocator's name; returns the next column. */
static guint
add_device_row (VsTrace *trace, VsTable *t, gint64 device_idx, gint64 allocator_id)
{
  vs_table_add_row (t);
  vs_table_set_int (t, 0, device_idx);
  vs_table_set_text (t, 1, vs_trace_allocator_name (trace, allocator_id));
  return 2;
}

/* Sets column c of the last row to the stack's text: the user's own
 * frames only when the options ask for it. */
static void
set_stack_text (VsTable *t, guint c, const VsReportOptions *opts, const VsStackInfo *stack)
{
  g_autofree char *text
      = opts->user_stacks ? vs_stack_dup_user_text (stack) : vs_stack_dup_text (stack);

  vs_table_set_text (t, c, text);
}

/* The step of the peak of allocated memory of the allocator on the
 * device, or FALSE when nothing was recorded there or ever allocated. */
static gboolean
peak_allocated_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 *seq)
{
  VsSummary s;

  if (!vs_summary_get (trace, device_id, allocator_id, &s, NULL))
    return FALSE;
  *seq = s.peak_allocated_seq;
  return s.peak_allocated_seq != VS_UNKNOWN;
}

/* -------------------------------------------------------------- summary */

static VsTable *
report_summary (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autoptr (VsTable) t
      = vs_table_new ("Memory per device: `all` is everything on the device, then one row per "
                      "allocator (reserved = held from CUDA, allocated = handed out; "
                      "alloc_count counts allocations the trace saw, before_trace_* the "
                      "blocks already live when it began).");
  g_autoptr (GArray) rows = NULL;
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "capacity_bytes", VS_COLUMN_BYTES },
    { "peak_reserved_bytes", VS_COLUMN_BYTES },
    { "peak_reserved_time_ns", VS_COLUMN_TIME },
    { "peak_allocated_bytes", VS_COLUMN_BYTES },
    { "peak_allocated_time_ns", VS_COLUMN_TIME },
    { "final_reserved_bytes", VS_COLUMN_BYTES },
    { "final_allocated_bytes", VS_COLUMN_BYTES },
    { "alloc_count", VS_COLUMN_INT },
    { "free_count", VS_COLUMN_INT },
    { "failed_alloc_count", VS_COLUMN_INT },
    { "peak_device_bytes", VS_COLUMN_BYTES },
    { "static_bytes", VS_COLUMN_BYTES },
    { "peak_device_time_ns", VS_COLUMN_TIME },
    { "peak_pinned_bytes", VS_COLUMN_BYTES },
    { "peak_managed_bytes", VS_COLUMN_BYTES },
    { "before_trace_bytes", VS_COLUMN_BYTES },
    { "before_trace_count", VS_COLUMN_INT },
  };

  vs_table_add_columns (t, cols, G_N_ELEMENTS (cols));
  rows = vs_summary_list (trace, opts->device_id, 0, error);
  if (rows == NULL)
    return NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      const VsSummary *s = &g_array_index (rows, VsSummary, i);
      guint c;

      /* Without --allocator every row; with it only the chosen one. */
      if (opts->allocator != NULL && allocator_on (trace, opts, s->device_id) != s->allocator_id)
        continue;
      c = add_device_row (trace, t, device_idx (trace, s->device_id), s->allocator_id);
      vs_table_set_int (t, c++, s->capacity_bytes);
      vs_table_set_int (t, c++, s->peak_reserved_bytes);
      vs_table_set_int (t, c++, s->peak_reserved_time_ns);
      vs_table_set_int (t, c++, s->peak_allocated_bytes);
      vs_table_set_int (t, c++, s->peak_allocated_time_ns);
      vs_table_set_int (t, c++, s->final_reserved_bytes);
      vs_table_set_int (t, c++, s->final_allocated_bytes);
      vs_table_set_int (t, c++, s->alloc_count);
      vs_table_set_int (t, c++, s->free_count);
      vs_table_set_int (t, c++, s->failed_alloc_count);
      vs_table_set_int (t, c++, s->peak_device_bytes);
      vs_table_set_int (t, c++, s->static_bytes);
      vs_table_set_int (t, c++, s->peak_device_time_ns);
      vs_table_set_int (t, c++, s->peak_pinned_bytes);
      vs_table_set_int (t, c++, s->peak_managed_bytes);
      vs_table_set_int (t, c++, s->before_trace_bytes);
      vs_table_set_int (t, c++, s->before_trace_count);
    }
  return g_steal_pointer (&t);
}

/* ------------------------------------------------------- peak and leaks */

static void
add_group_columns (VsTable *t, gboolean with_times)
{
  vs_table_add_column (t, "device", VS_COLUMN_INT);
  vs_table_add_column (t, "allocator", VS_COLUMN_TEXT);
  vs_table_add_column (t, "bytes", VS_COLUMN_BYTES);
  vs_table_add_column (t, "count", VS_COLUMN_INT);
  if (with_times)
    {
      vs_table_add_column (t, "first_alloc_time_ns", VS_COLUMN_TIME);
      vs_table_add_column (t, "last_alloc_time_ns", VS_COLUMN_TIME);
    }
  vs_table_add_column (t, "site", VS_COLUMN_TEXT);
  vs_table_add_column (t, "top_frame", VS_COLUMN_TEXT);
  vs_table_add_column (t, "stack", VS_COLUMN_STACK);
  vs_table_add_column (t, "stack_id", VS_COLUMN_INT);
}

static void
add_group_rows (VsTrace *trace, const VsReportOptions *opts, VsTable *t, GArray *groups,
                gint64 allocator_id, gboolean with_times)
{
  for (guint i = 0; i < groups->len; i++)
    {
      const VsGroup *g = &g_array_index (groups, VsGroup, i);
      guint c = add_device_row (trace, t, device_idx (trace, g->device_id), allocator_id);

      vs_table_set_int (t, c++, g->bytes);
      vs_table_set_int (t, c++, g->count);
      if (with_times)
        {
          vs_table_set_int (t, c++, g->first_alloc_time_ns);
          vs_table_set_int (t, c++, g->last_alloc_time_ns);
        }
      vs_table_set_text (t, c++, g->site);
      vs_table_set_text (t, c++, g->top_frame);
      set_stack_text (t, c++, opts, g->stack);
      vs_table_set_int (t, c++, g->stack_id > 0 ? g->stack_id : VS_UNKNOWN);
    }
}

static gboolean
has_window (const VsReportOptions *opts)
{
  return opts->from_ns != VS_UNKNOWN || opts->to_ns != VS_UNKNOWN;
}

/* The options' window [from, to): from 0 and to the trace's end (included)
 * unless given. */
static void
window_of (VsTrace *trace, const VsReportOptions *opts, gint64 *from, gint64 *to)
{
  *from = opts->from_ns != VS_UNKNOWN ? opts->from_ns : 0;
  *to = opts->to_ns != VS_UNKNOWN ? opts->to_ns : vs_trace_get_duration_ns (trace) + 1;
}

/* Whether time_ns (since start) lies in the options' window; always when
 * there is none, never for an unknown time when there is one. */
static gboolean
in_window (VsTrace *trace, const VsReportOptions *opts, gint64 time_ns)
{
  gint64 from, to;

  if (!has_window (opts))
    return TRUE;
  if (time_ns == VS_UNKNOWN)
    return FALSE;
  window_of (trace, opts, &from, &to);
  return time_ns >= from && time_ns < to;
}

/* "title" with the window appended when the options have one. */
static char *
window_title (VsTrace *trace, const VsReportOptions *opts, const char *title)
{
  gint64 from, to;

  if (!has_window (opts))
    return g_strdup (title);
  window_of (trace, opts, &from, &to);
  return g_strdup_printf ("%s Window: [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") ns.", title,
                          from, to);
}

static gboolean
peak_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
             gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (GArray) groups = NULL;
  gint64 seq;

  if (!peak_allocated_seq (trace, device->id, allocator_id, &seq))
    return TRUE; /* nothing recorded on this device, or nothing allocated */
  if (has_window (opts))
    {
      /* The peak inside the window: the memory entering it counts, as it
       * is live at its start. */
      VsSeriesPoint at;
      gint64 from, to;

      window_of (trace, opts, &from, &to);
      if (from > to - 1)
        return TRUE;
      if (!vs_series_peak_between (trace, device->id, allocator_id, from, to - 1, &at, error))
        return FALSE;
      if (at.seq == 0)
        return TRUE; /* nothing allocated yet by the window's end */
      seq = at.seq;
    }
  blocks = vs_live_blocks (trace, device->id, allocator_id, seq, error);
  if (blocks == NULL)
    return FALSE;
  groups = vs_group_blocks (trace, blocks, opts->by_site ? VS_GROUP_BY_SITE : VS_GROUP_BY_STACK,
                            error);
  if (groups == NULL)
    return FALSE;
  add_group_rows (trace, opts, t, groups, allocator_id, FALSE);
  return TRUE;
}

/* The report of peak_device() or leaks_device(): groups by site or stack,
 * titled titles[has a window][by site], with the times of the first and
 * last allocation when with_times. */
static VsTable *
group_report (VsTrace *trace, const VsReportOptions *opts, const char *const titles[2][2],
              gboolean with_times, DeviceFunc fn, GError **error)
{
  g_autofree char *title
      = window_title (trace, opts, titles[has_window (opts) ? 1 : 0][opts->by_site ? 1 : 0]);
  VsTable *t = vs_table_new (title);

  add_group_columns (t, with_times);
  return fill_by_device (trace, opts, t, fn, error);
}

static VsTable *
report_peak (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const char *const titles[2][2] = {
    { "Allocations live at the peak of allocated memory, one row per stack, "
      "largest first; each device's rows sum to its peak_allocated_bytes.",
      "Allocations live at the peak of allocated memory, one row per site (the "
      "innermost frame of the user's own code), largest first; each device's "
      "rows sum to its peak_allocated_bytes." },
    { "Allocations live at the peak of allocated memory inside the window, one row "
      "per stack, largest first.",
      "Allocations live at the peak of allocated memory inside the window, one row "
      "per site (the innermost frame of the user's own code), largest first." },
  };

  return group_report (trace, opts, titles, FALSE, peak_device, error);
}

static gboolean
leaks_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
              gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (GArray) blocks = NULL;
  g_autoptr (GArray) groups = NULL;

  blocks = vs_leaked_blocks (trace, device->id, allocator_id, error);
  if (blocks == NULL)
    return FALSE;
  if (has_window (opts))
    {
      /* Only those allocated inside the window; one allocated before the
       * trace began only when the window starts at the beginning. */
      gint64 from, to;

      window_of (trace, opts, &from, &to);
      for (guint i = blocks->len; i-- > 0;)
        {
          const VsBlock *b = &g_array_index (blocks, VsBlock, i);
          gboolean inside = b->alloc_time_ns == VS_UNKNOWN
                                ? opts->from_ns == VS_UNKNOWN
                                : b->alloc_time_ns >= from && b->alloc_time_ns < to;

          if (!inside)
            g_array_remove_index (blocks, i);
        }
    }
  groups = vs_group_blocks (trace, blocks, opts->by_site ? VS_GROUP_BY_SITE : VS_GROUP_BY_STACK,
                            error);
  if (groups == NULL)
    return FALSE;
  add_group_rows (trace, opts, t, groups, allocator_id, TRUE);
  return TRUE;
}

static VsTable *
report_leaks (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const char *const titles[2][2] = {
    { "Allocations never freed by the end of the trace, one row per stack, "
      "largest first, with when the first and last of them were allocated.",
      "Allocations never freed by the end of the trace, one row per site, "
      "largest first, with when the first and last of them were allocated." },
    { "Allocations made inside the window and never freed by the end of the "
      "trace, one row per stack, largest first.",
      "Allocations made inside the window and never freed by the end of the "
      "trace, one row per site, largest first." },
  };

  return group_report (trace, opts, titles, TRUE, leaks_device, error);
}

/* ------------------------------------------------------------- timeline */

static gboolean
timeline_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
                 gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (GArray) buckets = NULL;
  gint64 from = opts->from_ns != VS_UNKNOWN ? opts->from_ns : 0;
  gint64 to = opts->to_ns != VS_UNKNOWN ? opts->to_ns : vs_trace_get_duration_ns (trace) + 1;
  gint64 first, last;

  /* No window asked for: where memory changes, not an idle start or
   * end. */
  if (!vs_timeline_active_range (trace, device->id, allocator_id, &first, &last, error))
    return FALSE;
  if (first != VS_UNKNOWN && last > first)
    {
      if (opts->from_ns == VS_UNKNOWN && first < to)
        from = first;
      if (opts->to_ns == VS_UNKNOWN && last + 1 > from)
        to = last + 1;
    }

  buckets = vs_timeline_query (trace, device->id, allocator_id, from, to, opts->buckets, error);
  if (buckets == NULL)
    return FALSE;
  for (guint i = 0; i < buckets->len; i++)
    {
      const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);
      guint c = add_device_row (trace, t, device->idx, allocator_id);

      vs_table_set_int (t, c++, b->from_ns);
      vs_table_set_int (t, c++, b->to_ns);
      if (!b->known)
        continue;
      vs_table_set_int (t, c++, b->min_reserved);
      vs_table_set_int (t, c++, b->max_reserved);
      vs_table_set_int (t, c++, b->last_reserved);
      vs_table_set_int (t, c++, b->min_allocated);
      vs_table_set_int (t, c++, b->max_allocated);
      vs_table_set_int (t, c++, b->last_allocated);
      vs_table_set_int (t, c++, allocator_id == 0 ? b->max_device : VS_UNKNOWN);
    }
  return TRUE;
}

static VsTable *
report_timeline (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "from_ns", VS_COLUMN_TIME },
    { "to_ns", VS_COLUMN_TIME },
    { "min_reserved_bytes", VS_COLUMN_BYTES },
    { "max_reserved_bytes", VS_COLUMN_BYTES },
    { "last_reserved_bytes", VS_COLUMN_BYTES },
    { "min_allocated_bytes", VS_COLUMN_BYTES },
    { "max_allocated_bytes", VS_COLUMN_BYTES },
    { "last_allocated_bytes", VS_COLUMN_BYTES },
    { "max_device_bytes", VS_COLUMN_BYTES },
  };

  if (opts->buckets == 0 || opts->buckets > 1000000)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "--buckets must be between 1 and 1000000");
      return NULL;
    }
  return device_report (trace, opts,
                        "Reserved and allocated memory over time: min, max and last value in "
                        "each bucket [from_ns, to_ns), from the first change of memory to the "
                        "last unless --from and --to say otherwise.",
                        cols, G_N_ELEMENTS (cols), timeline_device, error);
}

/* ------------------------------------------------------------------ oom */

static gboolean
oom_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
            gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (GPtrArray) list = vs_oom_list (trace, device->id, allocator_id, error);
  g_autoptr (GPtrArray) all = NULL;

  if (list == NULL)
    return FALSE;
  all = allocator_id == 0 ? g_ptr_array_ref (list) : vs_oom_list (trace, device->id, 0, error);
  if (all == NULL)
    return FALSE;
  for (guint i = 0; i < list->len; i++)
    {
      const VsOom *o = g_ptr_array_index (list, i);
      const VsStackInfo *s;
      g_autoptr (GArray) blocks = NULL;
      g_autoptr (GArray) sites = NULL;
      VsOomExplanation why;
      guint c;

      if (!in_window (trace, opts, o->time_ns))
        continue;
      s = vs_stack_get (trace, o->stack_id, error);
      if (s == NULL)
        return FALSE;
      if (o->seq != VS_UNKNOWN)
        {
          blocks = vs_live_blocks (trace, device->id, o->allocator_id, o->seq, error);
          if (blocks == NULL)
            return FALSE;
          sites = vs_group_blocks (trace, blocks, VS_GROUP_BY_SITE, error);
          if (sites == NULL)
            return FALSE;
        }
      vs_oom_explain (trace, o, all, &why);
      c = add_device_row (trace, t, device->idx, why.allocator_id);
      vs_table_set_int (t, c++, o->time_ns);
      vs_table_set_text (t, c++, o->api);
      vs_table_set_int (t, c++, o->requested_bytes);
      vs_table_set_int (t, c++, o->error);
      vs_table_set_text (t, c++, o->error_name);
      vs_table_set_int (t, c++, o->allocator.reserved_bytes);
      vs_table_set_int (t, c++, o->allocator.allocated_bytes);
      vs_table_set_int (t, c++, o->allocator.free_bytes);
      vs_table_set_int (t, c++, o->allocator.largest_free_bytes);
      vs_table_set_int (t, c++, o->all.reserved_bytes);
      vs_table_set_int (t, c++, o->all.allocated_bytes);
      vs_table_set_int (t, c++, o->device_free_bytes);
      vs_table_set_int (t, c++, o->device_total_bytes);
      if (sites != NULL && sites->len > 0)
        {
          const VsGroup *g = &g_array_index (sites, VsGroup, 0);

          vs_table_set_text (t, c++, g->site);
          vs_table_set_int (t, c++, g->bytes);
        }
      else
        c += 2;
      vs_table_set_text (t, c++, s->site);
      vs_table_set_text (t, c++, s->top_frame);
      set_stack_text (t, c++, opts, s);
      vs_table_set_text (t, c++,
                         why.cause != VS_OOM_CAUSE_UNKNOWN ? vs_oom_cause_name (why.cause) : NULL);
      vs_table_set_text (t, c++, why.evidence);
      vs_oom_explanation_clear (&why);
    }
  return TRUE;
}

static VsTable *
report_oom (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autofree char *title = window_title (
      trace, opts,
      "Failed allocations with the state at that instant: the failing allocator's reserved, "
      "allocated and free memory, the largest free block, the whole device, the largest live "
      "site, and the cause: device full, allocator limit or fragmentation.");
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "time_ns", VS_COLUMN_TIME },
    { "api", VS_COLUMN_TEXT },
    { "requested_bytes", VS_COLUMN_BYTES },
    { "error", VS_COLUMN_INT },
    { "error_name", VS_COLUMN_TEXT },
    { "reserved_bytes", VS_COLUMN_BYTES },
    { "allocated_bytes", VS_COLUMN_BYTES },
    { "free_bytes", VS_COLUMN_BYTES },
    { "largest_free_bytes", VS_COLUMN_BYTES },
    { "device_reserved_bytes", VS_COLUMN_BYTES },
    { "device_allocated_bytes", VS_COLUMN_BYTES },
    { "device_free_bytes", VS_COLUMN_BYTES },
    { "device_total_bytes", VS_COLUMN_BYTES },
    { "largest_live_site", VS_COLUMN_TEXT },
    { "largest_live_site_bytes", VS_COLUMN_BYTES },
    { "site", VS_COLUMN_TEXT },
    { "top_frame", VS_COLUMN_TEXT },
    { "stack", VS_COLUMN_STACK },
    { "cause", VS_COLUMN_TEXT },
    { "cause_evidence", VS_COLUMN_TEXT },
  };

  return device_report (trace, opts, title, cols, G_N_ELEMENTS (cols), oom_device, error);
}

/* -------------------------------------------------------- fragmentation */

static void
add_fragmentation_row (VsTrace *trace, VsTable *t, const VsDeviceInfo *device, const char *instant,
                       gint64 time_ns, const VsFragmentation *f, gint64 requested)
{
  guint c = add_device_row (trace, t, device->idx, f->allocator_id);

  vs_table_set_text (t, c++, instant);
  vs_table_set_int (t, c++, time_ns);
  vs_table_set_int (t, c++, f->reserved_bytes);
  vs_table_set_int (t, c++, f->allocated_bytes);
  vs_table_set_int (t, c++, f->free_bytes);
  vs_table_set_int (t, c++, f->segment_count);
  vs_table_set_int (t, c++, f->segment_free_bytes);
  vs_table_set_int (t, c++, f->largest_free_bytes);
  vs_table_set_int (t, c++, requested);
}

static gboolean
fragmentation_series (VsTrace *trace, const VsDeviceInfo *device, gint64 allocator_id, VsTable *t,
                      GError **error)
{
  g_autoptr (GPtrArray) ooms = NULL;
  VsFragmentation f;
  VsSummary s;
  struct
  {
    const char *name;
    gint64 seq, time;
  } instants[3];

  if (!vs_summary_get (trace, device->id, allocator_id, &s, NULL))
    return TRUE;
  instants[0].name = "peak_reserved";
  instants[0].seq = s.peak_reserved_seq;
  instants[0].time = s.peak_reserved_time_ns;
  instants[1].name = "peak_allocated";
  instants[1].seq = s.peak_allocated_seq;
  instants[1].time = s.peak_allocated_time_ns;
  instants[2].name = "end";
  instants[2].seq = vs_trace_get_last_seq (trace);
  instants[2].time = vs_trace_get_duration_ns (trace);
  for (guint i = 0; i < G_N_ELEMENTS (instants); i++)
    {
      if (i == 2)
        {
          /* Before the end: the instant of worst fragmentation. */
          if (!vs_fragmentation_worst (trace, device->id, allocator_id, &f, error))
            return FALSE;
          if (f.seq > 0)
            add_fragmentation_row (trace, t, device, "worst", f.time_ns, &f, VS_UNKNOWN);
        }
      if (instants[i].seq == VS_UNKNOWN)
        continue;
      if (!vs_fragmentation_at (trace, device->id, allocator_id, instants[i].seq, &f, NULL, error))
        return FALSE;
      add_fragmentation_row (trace, t, device, instants[i].name, instants[i].time, &f, VS_UNKNOWN);
    }

  /* Each failure of this allocator (for `all`: every failure on the device). */
  ooms = vs_oom_list (trace, device->id, allocator_id, error);
  if (ooms == NULL)
    return FALSE;
  for (guint i = 0; i < ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (ooms, i);

      add_fragmentation_row (trace, t, device, "failed_alloc", o->time_ns,
                             allocator_id == 0 ? &o->all : &o->allocator, o->requested_bytes);
    }
  return TRUE;
}

static gboolean
fragmentation_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
                      gint64 allocator_id, VsTable *t, GError **error)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  if (!fragmentation_series (trace, device, allocator_id, t, error))
    return FALSE;
  if (allocator_id != 0)
    return TRUE;
  /* With `all`, every allocator of the device follows. */
  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device->id && !fragmentation_series (trace, device, a->id, t, error))
        return FALSE;
    }
  return TRUE;
}

static VsTable *
report_fragmentation (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "instant", VS_COLUMN_TEXT },
    { "time_ns", VS_COLUMN_TIME },
    { "reserved_bytes", VS_COLUMN_BYTES },
    { "allocated_bytes", VS_COLUMN_BYTES },
    { "free_bytes", VS_COLUMN_BYTES },
    { "segment_count", VS_COLUMN_INT },
    { "segment_free_bytes", VS_COLUMN_BYTES },
    { "largest_free_bytes", VS_COLUMN_BYTES },
    { "requested_bytes", VS_COLUMN_BYTES },
  };

  return device_report (trace, opts,
                        "Free memory inside reserved memory (reserved - allocated) at the peaks, "
                        "at its worst, at the end and at each failed allocation, with the largest "
                        "free block where the allocator's segments are known.",
                        cols, G_N_ELEMENTS (cols), fragmentation_device, error);
}

/* -------------------------------------------------------------- kernels */

static VsTable *
report_kernels (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autoptr (VsTable) t
      = vs_table_new ("GPU kernels by name: launches and time on the device, largest total first.");
  g_autoptr (GPtrArray) list = vs_kernel_stats (trace, opts->device_id, error);
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },      { "name", VS_COLUMN_TEXT },
    { "count", VS_COLUMN_INT },       { "total_ns", VS_COLUMN_DURATION },
    { "avg_ns", VS_COLUMN_DURATION }, { "min_ns", VS_COLUMN_DURATION },
    { "max_ns", VS_COLUMN_DURATION },
  };

  if (list == NULL)
    return NULL;
  vs_table_add_columns (t, cols, G_N_ELEMENTS (cols));
  for (guint i = 0; i < list->len; i++)
    {
      const VsKernelStats *k = g_ptr_array_index (list, i);
      guint c = 0;

      vs_table_add_row (t);
      vs_table_set_int (t, c++,
                        k->device_id == VS_UNKNOWN ? VS_UNKNOWN : device_idx (trace, k->device_id));
      vs_table_set_text (t, c++, k->name);
      vs_table_set_int (t, c++, k->count);
      vs_table_set_int (t, c++, k->total_ns);
      vs_table_set_int (t, c++, k->avg_ns);
      vs_table_set_int (t, c++, k->min_ns);
      vs_table_set_int (t, c++, k->max_ns);
    }
  return g_steal_pointer (&t);
}

/* --------------------------------------------------------------- ranges */

static gboolean
ranges_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
               gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (GPtrArray) list = vs_range_memory (trace, device->id, allocator_id, error);

  if (list == NULL)
    return FALSE;
  for (guint i = 0; i < list->len; i++)
    {
      const VsRangeMemory *r = g_ptr_array_index (list, i);
      guint c;

      if (!in_window (trace, opts, r->start_ns))
        continue;
      c = add_device_row (trace, t, device->idx, allocator_id);
      vs_table_set_int (t, c++, r->id);
      vs_table_set_text (t, c++, r->domain);
      vs_table_set_text (t, c++, r->name);
      vs_table_set_int (t, c++, r->depth);
      vs_table_set_int (t, c++, r->tid);
      vs_table_set_int (t, c++, r->start_ns);
      vs_table_set_int (t, c++, r->end_ns);
      vs_table_set_int (t, c++, r->end_ns != VS_UNKNOWN ? r->end_ns - r->start_ns : VS_UNKNOWN);
      vs_table_set_int (t, c++, r->allocated_at_start);
      vs_table_set_int (t, c++, r->allocated_at_end);
      vs_table_set_int (t, c++, r->peak_allocated);
      vs_table_set_int (t, c++, r->reserved_at_start);
      vs_table_set_int (t, c++, r->reserved_at_end);
      vs_table_set_int (t, c++, r->peak_reserved);
    }
  return TRUE;
}

static VsTable *
report_ranges (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autofree char *title
      = window_title (trace, opts,
                      "NVTX ranges with each device's memory when the range was entered, when "
                      "it ended, and its peak inside.");
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "range_id", VS_COLUMN_INT },
    { "domain", VS_COLUMN_TEXT },
    { "name", VS_COLUMN_TEXT },
    { "depth", VS_COLUMN_INT },
    { "tid", VS_COLUMN_INT },
    { "start_ns", VS_COLUMN_TIME },
    { "end_ns", VS_COLUMN_TIME },
    { "duration_ns", VS_COLUMN_DURATION },
    { "allocated_at_start_bytes", VS_COLUMN_BYTES },
    { "allocated_at_end_bytes", VS_COLUMN_BYTES },
    { "peak_allocated_bytes", VS_COLUMN_BYTES },
    { "reserved_at_start_bytes", VS_COLUMN_BYTES },
    { "reserved_at_end_bytes", VS_COLUMN_BYTES },
    { "peak_reserved_bytes", VS_COLUMN_BYTES },
  };

  return device_report (trace, opts, title, cols, G_N_ELEMENTS (cols), ranges_device, error);
}

/* ---------------------------------------------------------------- roles */

static gboolean
roles_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
              gint64 allocator_id, VsTable *t, GError **error)
{
  VsRoles r;
  gint64 seq;

  if (!peak_allocated_seq (trace, device->id, allocator_id, &seq))
    return TRUE;
  if (!vs_roles_at (trace, device->id, allocator_id, seq, &r, error))
    return FALSE;
  for (VsRole role = 0; role < VS_N_ROLES; role++)
    {
      guint c = add_device_row (trace, t, device->idx, allocator_id);

      vs_table_set_text (t, c++, vs_role_name (role));
      vs_table_set_int (t, c++, r.bytes[role]);
      vs_table_set_int (t, c++, r.count[role]);
    }
  return TRUE;
}

static VsTable *
report_roles (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },  { "allocator", VS_COLUMN_TEXT }, { "role", VS_COLUMN_TEXT },
    { "bytes", VS_COLUMN_BYTES }, { "count", VS_COLUMN_INT },
  };

  return device_report (trace, opts,
                        "Memory live at the peak of allocated memory by role, from each "
                        "allocation's stack and lifetime; each device's rows sum to its "
                        "peak_allocated_bytes.",
                        cols, G_N_ELEMENTS (cols), roles_device, error);
}

/* --------------------------------------------------------------- growth */

static gboolean
growth_device (VsTrace *trace, const VsReportOptions *opts, const VsDeviceInfo *device,
               gint64 allocator_id, VsTable *t, GError **error)
{
  g_autoptr (VsIterations) it = vs_iterations_find (trace, device->id, allocator_id, error);

  if (it == NULL)
    return FALSE;
  for (guint i = 0; i < it->iterations->len; i++)
    {
      const VsIteration *v = &g_array_index (it->iterations, VsIteration, i);
      guint c = add_device_row (trace, t, device->idx, allocator_id);

      vs_table_set_int (t, c++, v->index);
      vs_table_set_int (t, c++, v->time_ns);
      vs_table_set_int (t, c++, v->allocated_bytes);
      vs_table_set_int (t, c++, v->growth_bytes);
    }
  return TRUE;
}

static VsTable *
report_growth (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const VsColumnSpec cols[] = {
    { "device", VS_COLUMN_INT },
    { "allocator", VS_COLUMN_TEXT },
    { "iteration", VS_COLUMN_INT },
    { "start_time_ns", VS_COLUMN_TIME },
    { "allocated_bytes", VS_COLUMN_BYTES },
    { "growth_bytes", VS_COLUMN_BYTES },
  };

  return device_report (trace, opts,
                        "Allocated memory at the start of each iteration (iterations from NVTX "
                        "ranges or annotations, else from the repeating allocation pattern) and "
                        "its growth.",
                        cols, G_N_ELEMENTS (cols), growth_device, error);
}

/* ----------------------------------------------------------------- meta */

static VsTable *
report_meta (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  static const char *meta_sql = "SELECT key, CAST(value AS TEXT) FROM meta ORDER BY key";
  g_autoptr (VsTable) t = vs_table_new (
      "Facts about the run: the command, host, clock, the collector's costs and the "
      "allocator's settings (pytorch.*), as the trace's meta table holds them.");
  sqlite3_stmt *stmt = vs_trace_statement (trace, meta_sql, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  vs_table_add_column (t, "key", VS_COLUMN_TEXT);
  vs_table_add_column (t, "value", VS_COLUMN_TEXT);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      vs_table_add_row (t);
      vs_table_set_text (t, 0, (const char *)sqlite3_column_text (stmt, 0));
      vs_table_set_text (t, 1, (const char *)sqlite3_column_text (stmt, 1));
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&t);
}

/* ------------------------------------------------------------- diagnose */

static VsTable *
report_diagnose (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autoptr (VsDiagnosis) dx = vs_diagnose (trace, opts->device_id, error);

  if (dx == NULL)
    return NULL;
  return vs_diagnosis_table (trace, dx);
}

/* ---------------------------------------------------------------- ranks */

/* The ranks of this one trace (vs-ranks.h); rows of every device. */
static VsTable *
report_ranks (VsTrace *trace, const VsReportOptions *opts, GError **error)
{
  g_autoptr (VsRankComparison) c = vs_ranks_compare (&trace, 1, opts->allocator, error);

  return c != NULL ? vs_rank_comparison_table (c, FALSE) : NULL;
}

/* ----------------------------------------------------------------------- */

static const Report reports[] = {
  { "diagnose", "findings with evidence, remedies and expected savings (the default)",
    report_diagnose },
  { "summary", "peaks, finals and counts per device and allocator", report_summary },
  { "peak", "what is live at the peak of allocated memory, by site or stack", report_peak },
  { "leaks", "allocations never freed, by site or stack", report_leaks },
  { "timeline", "reserved and allocated memory over time in buckets", report_timeline },
  { "oom", "failed allocations and the state at each", report_oom },
  { "fragmentation", "free memory inside reserved memory at key instants", report_fragmentation },
  { "kernels", "GPU kernels by name", report_kernels },
  { "ranges", "NVTX ranges with memory at entry, exit and peak", report_ranges },
  { "roles", "memory at the peak by role: parameters, gradients, optimizer state, ...",
    report_roles },
  { "growth", "allocated memory at the start of each iteration, and its growth", report_growth },
  { "meta", "facts about the run, the allocator's settings among them", report_meta },
  { "ranks", "peak and failures per rank, the worst rank (several traces: FILE...)", report_ranks },
};

/* The same order as reports[]. */
static const char *const report_names[] = {
  "diagnose", "summary", "peak",  "leaks",  "timeline", "oom",   "fragmentation",
  "kernels",  "ranges",  "roles", "growth", "meta",     "ranks", NULL,
};

G_STATIC_ASSERT (G_N_ELEMENTS (report_names) == G_N_ELEMENTS (reports) + 1);

const char *const *
vs_report_names (void)
{
  return report_names;
}

const char *
vs_report_describe (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (reports); i++)
    if (g_strcmp0 (reports[i].name, name) == 0)
      return reports[i].description;
  return NULL;
}

VsTable *
vs_report_build (VsTrace *trace, const char *name, const VsReportOptions *opts, GError **error)
{
  VsReportOptions defaults;

  g_return_val_if_fail (trace != NULL && name != NULL, NULL);
  if (opts == NULL)
    {
      vs_report_options_init (&defaults);
      opts = &defaults;
    }
  if (!check_scope (trace, opts, error))
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (reports); i++)
    if (strcmp (reports[i].name, name) == 0)
      {
        VsTable *t = reports[i].build (trace, opts, error);
        if (t != NULL)
          {
            vs_table_set_event_order (t, vs_trace_time_is_event_order (trace));
            vs_report_set_text_layout (name, t);
          }
        return t;
      }
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT, "Unknown report '%s'", name);
  return NULL;
}
