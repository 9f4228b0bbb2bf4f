/* SPDX-License-Identifier: MIT */
/* vs-document.c — an open trace and the worker-thread queries on it.
 *
 * All analyzer calls run in GTask threads under one mutex (a VsTrace is
 * used by one thread at a time).  The main thread only reads what a load or
 * refresh copied out: devices with their summaries, failed allocations and
 * NVTX ranges.  A refresh opens the file again and swaps the new VsTrace in;
 * the old one is kept until the document goes away, because instants still
 * on screen point into its stack cache.
 */
#include "vs-document.h"

#include <glib/gi18n.h>
#include <string.h>

#include "vs-document-diagnosis.h"
#include "vs-file-task.h"
#include "vs-progress.h"

/* What one read of the trace copies out for the main thread. */
typedef struct
{
  gint64 duration;
  gint64 active_from, active_to; /* where memory changes; -1: nowhere */
  gboolean finalized;
  gboolean event_order;    /* times are event numbers (meta time_axis) */
  gint64 detail_from;      /* a windowed trace's full detail from (since start); -1: complete */
  GPtrArray *devices;      /* VsDocumentDevice* */
  GPtrArray *ooms;         /* VsOom* */
  GPtrArray *oom_stacks;   /* char * (owned), parallel to ooms */
  GPtrArray *ranges;       /* VsRangeInfo* */
  GArray *oom_causes;      /* VsOomCause, parallel to ooms */
  GPtrArray *oom_evidence; /* char *, parallel to ooms */
  GPtrArray *oom_memory;   /* char *, parallel to ooms */
} Readings;

struct _VsDocument
{
  GObject parent_instance;

  GFile *file;
  char *path;
  GMutex lock; /* guards trace and the retired list */
  VsTrace *trace;
  GPtrArray *retired; /* VsTrace* replaced by refreshes */

  /* Main-thread copies, replaced as a whole by load and refresh. */
  Readings r;

  /* The replayed lines the charts draw (VsWhatifLine*, immutable; worker
   * threads hold a reference to the array), and their legend. */
  GPtrArray *whatif;
  char *whatif_label;

  /* The diagnosis, read after the load (vs-document-diagnosis.h): the
   * last one read (NULL: none yet, or it failed with diagnosis_error). */
  gboolean diagnosis_wanted; /* vs_document_diagnose() was called */
  gboolean diagnosing;       /* one is being read */
  gboolean diagnose_again;   /* the trace was read again meanwhile */
  GCancellable *diagnosis_cancellable;
  VsDocumentDiagnosis *diag;
  char *diagnosis_error;

  /* Queries held until the timelines have their data
   * (vs_document_hold_queries): HeldTask*, in order. */
  gboolean holding;
  GPtrArray *held;
  gboolean diagnosis_held; /* vs_document_diagnose() was called meanwhile */
};

enum
{
  PROP_0,
  PROP_DIAGNOSED,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsDocument, vs_document, G_TYPE_OBJECT)

typedef struct
{
  GTask *task;
  GTaskThreadFunc func;
} HeldTask;

static void
held_task_free (gpointer p)
{
  HeldTask *h = p;

  g_object_unref (h->task);
  g_free (h);
}

/* Runs task's func in a thread, or later while queries are held. */
static void
run_or_hold (VsDocument *self, GTask *task, GTaskThreadFunc func)
{
  HeldTask *h;

  if (!self->holding)
    {
      g_task_run_in_thread (task, func);
      return;
    }
  h = g_new0 (HeldTask, 1);
  h->task = g_object_ref (task);
  h->func = func;
  g_ptr_array_add (self->held, h);
}

/* See vs-document.h. */
void
vs_document_hold_queries (VsDocument *self)
{
  g_return_if_fail (VS_IS_DOCUMENT (self));
  self->holding = TRUE;
}

/* See vs-document.h. */
void
vs_document_release_queries (VsDocument *self)
{
  g_autoptr (GPtrArray) held = NULL;

  g_return_if_fail (VS_IS_DOCUMENT (self));
  self->holding = FALSE;
  held = g_steal_pointer (&self->held);
  self->held = g_ptr_array_new_with_free_func (held_task_free);
  for (guint i = 0; i < held->len; i++)
    {
      HeldTask *h = g_ptr_array_index (held, i);
      g_task_run_in_thread (h->task, h->func);
    }
  if (self->diagnosis_held)
    {
      self->diagnosis_held = FALSE;
      vs_document_diagnose (self);
    }
}

/* See vs-document.h. */
void
vs_document_close (VsDocument *self)
{
  g_return_if_fail (VS_IS_DOCUMENT (self));
  g_cancellable_cancel (self->diagnosis_cancellable);
  self->diagnosis_wanted = FALSE;
  self->diagnosis_held = FALSE;
  self->diagnose_again = FALSE;
  vs_document_release_queries (self);
}

static void
device_free (gpointer p)
{
  VsDocumentDevice *d = p;
  g_free (d->name);
  g_free (d->own_alloc_conf);
  g_free (d);
}

/* Frees r's arrays (its numbers stay). */
static void
readings_clear (Readings *r)
{
  g_clear_pointer (&r->devices, g_ptr_array_unref);
  g_clear_pointer (&r->ooms, g_ptr_array_unref);
  g_clear_pointer (&r->oom_stacks, g_ptr_array_unref);
  g_clear_pointer (&r->ranges, g_ptr_array_unref);
  g_clear_pointer (&r->oom_causes, g_array_unref);
  g_clear_pointer (&r->oom_evidence, g_ptr_array_unref);
  g_clear_pointer (&r->oom_memory, g_ptr_array_unref);
}

/* What one read of the trace produces (trace: the connection it read,
 * NULL for a refresh); moved into the document. */
typedef struct
{
  VsTrace *trace;
  Readings r;
} Snapshot;

static void
snapshot_free (Snapshot *s)
{
  if (s->trace != NULL)
    vs_trace_free (s->trace);
  readings_clear (&s->r);
  g_free (s);
}

/* d's allocator limit (PyTorch's memory fraction × capacity, from the
 * trace's settings). */
static void
read_limit (VsTrace *trace, VsDocumentDevice *d)
{
  VsAllocatorSettings settings;

  vs_allocator_settings_read (trace, d->id, &settings);
  d->limit_bytes = settings.limit_bytes;
  d->memory_fraction = settings.memory_fraction;
  vs_allocator_settings_clear (&settings);
}

/* Reads from trace what the window shows all the time, except the
 * diagnosis, which follows (vs_document_diagnose).  trace is only
 * read; the snapshot does not own it (s->trace is NULL).  Returns NULL
 * with error set on failure. */
static Snapshot *
read_tables (VsTrace *trace, const VsProgress *progress, GError **error)
{
  g_autoptr (GArray) summaries = NULL;
  g_autoptr (GPtrArray) kernels = NULL;
  g_autofree char *fin = NULL;
  const GPtrArray *devices;
  Snapshot *s;

  vs_progress_report (progress, _("Reading peaks"), 0.35);
  summaries = vs_summary_list (trace, 0, 0, error);
  if (summaries == NULL)
    return NULL;
  kernels = vs_kernel_stats (trace, 0, error);
  if (kernels == NULL)
    return NULL;

  s = g_new0 (Snapshot, 1);
  s->r.duration = vs_trace_get_duration_ns (trace);
  s->r.active_from = s->r.active_to = -1;
  /* Where memory changes, over every device's series. */
  for (guint i = 0; i < vs_trace_get_devices (trace)->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (vs_trace_get_devices (trace), i);
      gint64 first, last;

      if (!vs_timeline_active_range (trace, d->id, 0, &first, &last, error))
        {
          g_free (s);
          return NULL;
        }
      if (first == VS_UNKNOWN)
        continue;
      s->r.active_from = s->r.active_from < 0 ? first : MIN (s->r.active_from, first);
      s->r.active_to = MAX (s->r.active_to, last);
    }
  s->r.event_order = vs_trace_time_is_event_order (trace);
  {
    VsWindowedInfo w;
    if (!vs_windowed_info (trace, &w, error))
      {
        g_free (s);
        return NULL;
      }
    s->r.detail_from = w.windowed ? w.detail_from_ns : -1;
  }
  fin = vs_trace_dup_meta (trace, "finalized");
  /* A live copy is finalized, its recording is not. */
  s->r.finalized = fin != NULL && g_strcmp0 (fin, "1") == 0 && !vs_trace_is_recording (trace);
  s->r.devices = g_ptr_array_new_with_free_func (device_free);
  devices = vs_trace_get_devices (trace);
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDeviceInfo *info = g_ptr_array_index (devices, i);
      VsDocumentDevice *d = g_new0 (VsDocumentDevice, 1);
      gboolean found = FALSE;

      d->id = info->id;
      d->idx = info->idx;
      /* Known once diagnosed. */
      d->worst_fragmentation_ns = VS_UNKNOWN;
      d->name = g_strdup (info->name);
      for (guint j = 0; j < kernels->len; j++)
        {
          const VsKernelStats *k = g_ptr_array_index (kernels, j);
          if (k->device_id == info->id)
            d->kernel_count += k->count;
        }
      for (guint j = 0; j < summaries->len; j++)
        {
          VsSummary *sum = &g_array_index (summaries, VsSummary, j);
          if (sum->device_id == info->id && sum->allocator_id == 0)
            {
              d->summary = *sum;
              found = TRUE;
            }
        }
      {
        gint64 allocator = vs_whatif_line_allocator (trace, info->id, NULL);
        if (allocator != 0)
          d->own_alloc_conf = vs_whatif_own_alloc_conf (trace, allocator, NULL);
      }
      /* A device with no memory activity has no summary row: nothing to
       * chart. */
      if (found)
        g_ptr_array_add (s->r.devices, d);
      else
        device_free (d);
    }

  vs_progress_report (progress, _("Reading failed allocations"), 0.55);
  s->r.ooms = vs_oom_list (trace, 0, 0, error);
  if (s->r.ooms == NULL)
    {
      snapshot_free (s);
      return NULL;
    }
  /* Their stacks' text (failures are few; the stacks of blocks are
   * rendered only when shown).  A broken
   * stack leaves that failure without one rather than the trace closed:
   * the panes that need it say why when they ask. */
  s->r.oom_stacks = g_ptr_array_new_full (s->r.ooms->len, g_free);
  for (guint i = 0; i < s->r.ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (s->r.ooms, i);
      g_autoptr (GError) stack_error = NULL;
      const VsStackInfo *st = vs_stack_get (trace, o->stack_id, &stack_error);

      g_ptr_array_add (s->r.oom_stacks, st != NULL ? vs_stack_dup_text (st) : g_strdup (""));
    }
  /* Each failure's cause and its words, as `report oom` says them
   * (vs_oom_explain, against every failure of its device). */
  s->r.oom_causes = g_array_sized_new (FALSE, TRUE, sizeof (VsOomCause), s->r.ooms->len);
  s->r.oom_evidence = g_ptr_array_new_with_free_func (g_free);
  s->r.oom_memory = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < s->r.ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (s->r.ooms, i);
      g_autoptr (GPtrArray) same = g_ptr_array_new ();
      VsOomExplanation why;

      for (guint j = 0; j < s->r.ooms->len; j++)
        {
          VsOom *other = g_ptr_array_index (s->r.ooms, j);
          if (other->device_id == o->device_id)
            g_ptr_array_add (same, other);
        }
      /* A failure is part of the activity the first view shows, even
       * where memory did not change after it. */
      if (s->r.active_from >= 0 && o->time_ns >= 0)
        {
          s->r.active_from = MIN (s->r.active_from, o->time_ns);
          s->r.active_to = MAX (s->r.active_to, o->time_ns);
        }
      vs_oom_explain (trace, o, same, &why);
      g_array_append_val (s->r.oom_causes, why.cause);
      g_ptr_array_add (s->r.oom_evidence, g_steal_pointer (&why.evidence));
      g_ptr_array_add (s->r.oom_memory, vs_oom_device_memory_text (trace, o));
      vs_oom_explanation_clear (&why);
    }
  for (guint i = 0; i < s->r.devices->len; i++)
    read_limit (trace, g_ptr_array_index (s->r.devices, i));
  vs_progress_report (progress, _("Reading NVTX ranges"), 0.75);
  s->r.ranges = vs_range_list (trace, error);
  if (s->r.ranges == NULL)
    {
      snapshot_free (s);
      return NULL;
    }
  vs_progress_report (progress, _("Drawing"), 0.95);
  return s;
}

/* Opens path and reads what the window shows all the time.  Returns NULL
 * with error set on failure. */
static Snapshot *
read_snapshot (const char *path, const VsProgress *progress, GError **error)
{
  g_autoptr (VsTrace) trace = NULL;
  Snapshot *s;

  vs_progress_report (progress, _("Opening the trace"), 0.05);
  trace = vs_trace_open (path, error);
  if (trace == NULL)
    return NULL;
  s = read_tables (trace, progress, error);
  if (s != NULL)
    s->trace = g_steal_pointer (&trace);
  return s;
}

/* Copies what the diagnosis says of each device into self's devices. */
static void
apply_diagnosed_devices (VsDocument *self)
{
  for (guint i = 0; self->r.devices != NULL && i < self->r.devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (self->r.devices, i);
      const VsDiagnosedDevice *dd = vs_document_diagnosis_device (self->diag, d->id);

      d->worst_fragmentation_ns = dd != NULL ? dd->worst_fragmentation_ns : VS_UNKNOWN;
      d->worst_allocated_bytes = dd != NULL ? dd->worst_allocated_bytes : 0;
      d->worst_reserved_bytes = dd != NULL ? dd->worst_reserved_bytes : 0;
      d->fragmentation_hurt = dd != NULL && dd->fragmentation_hurt;
    }
}

/* Moves s into self (main thread).  Returns TRUE when the duration
 * changed. */
static gboolean
adopt (VsDocument *self, Snapshot *s)
{
  gboolean changed = s->r.duration != self->r.duration;

  /* A refresh reads the same VsTrace again (s->trace NULL). */
  if (s->trace != NULL)
    {
      g_mutex_lock (&self->lock);
      if (self->trace != NULL)
        g_ptr_array_add (self->retired, self->trace);
      self->trace = g_steal_pointer (&s->trace);
      g_mutex_unlock (&self->lock);
    }

  /* The readings move whole into the document. */
  readings_clear (&self->r);
  self->r = s->r;
  memset (&s->r, 0, sizeof s->r);
  /* The last diagnosis stays until the next is read. */
  apply_diagnosed_devices (self);
  snapshot_free (s);
  return changed;
}

static void
vs_document_dispose (GObject *object)
{
  VsDocument *self = VS_DOCUMENT (object);

  /* Closed: a diagnosis being read is dropped. */
  g_cancellable_cancel (self->diagnosis_cancellable);
  G_OBJECT_CLASS (vs_document_parent_class)->dispose (object);
}

static void
vs_document_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsDocument *self = VS_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_DIAGNOSED:
      g_value_set_boolean (value, vs_document_is_diagnosed (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_document_finalize (GObject *object)
{
  VsDocument *self = VS_DOCUMENT (object);

  g_clear_object (&self->file);
  g_free (self->path);
  if (self->trace != NULL)
    vs_trace_free (self->trace);
  g_ptr_array_unref (self->retired);
  readings_clear (&self->r);
  g_clear_object (&self->diagnosis_cancellable);
  g_clear_pointer (&self->diag, vs_document_diagnosis_free);
  g_free (self->diagnosis_error);
  g_ptr_array_unref (self->held);
  g_clear_pointer (&self->whatif, g_ptr_array_unref);
  g_free (self->whatif_label);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (vs_document_parent_class)->finalize (object);
}

static void
vs_document_class_init (VsDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = vs_document_dispose;
  object_class->finalize = vs_document_finalize;
  object_class->get_property = vs_document_get_property;
  /* Whether the diagnosis asked for (vs_document_diagnose) is known: read,
   * or failed.  Notified each time one is read (after a refresh too). */
  props[PROP_DIAGNOSED]
      = g_param_spec_boolean ("diagnosed", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
vs_document_init (VsDocument *self)
{
  g_mutex_init (&self->lock);
  self->diagnosis_cancellable = g_cancellable_new ();
  self->held = g_ptr_array_new_with_free_func (held_task_free);
  self->retired = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_trace_free);
}

/* ------------------------------------------------------------- loading -- */

typedef struct
{
  char *path;
  VsProgress progress;
} LoadData;

static void
load_data_free (gpointer p)
{
  LoadData *ld = p;
  g_free (ld->path);
  vs_progress_clear (&ld->progress);
  g_free (ld);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *ld = task_data;
  GError *error = NULL;
  Snapshot *s = read_snapshot (ld->path, &ld->progress, &error);

  if (s == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, s, (GDestroyNotify)snapshot_free);
}

/* See vs-document.h. */
void
vs_document_load_async (GFile *file, GCancellable *cancellable, VsDocumentProgressFunc progress,
                        gpointer progress_data, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  LoadData *ld = g_new0 (LoadData, 1);

  ld->path = g_file_get_path (file);
  vs_progress_init (&ld->progress, progress, progress_data);
  g_task_set_task_data (task, ld, load_data_free);
  vs_file_task_run (task, file, load_thread);
}

/* See vs-document.h. */
VsDocument *
vs_document_load_finish (GAsyncResult *result, GError **error)
{
  Snapshot *s = g_task_propagate_pointer (G_TASK (result), error);
  VsDocument *self;

  if (s == NULL)
    return NULL;
  self = g_object_new (VS_TYPE_DOCUMENT, NULL);
  self->file = g_object_ref (vs_file_task_get_file (result));
  self->path = g_file_get_path (self->file);
  adopt (self, s);
  return self;
}

/* ---------------------------------------------------------- accessors -- */

/* See vs-document.h. */
VsTrace *
vs_document_lock_trace (VsDocument *self)
{
  g_mutex_lock (&self->lock);
  return self->trace;
}

/* See vs-document.h. */
void
vs_document_unlock_trace (VsDocument *self)
{
  g_mutex_unlock (&self->lock);
}

/* See vs-document.h. */
GFile *
vs_document_get_file (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->file;
}

/* See vs-document.h. */
gint64
vs_document_get_duration (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), 0);
  return self->r.duration;
}

/* See vs-document.h. */
void
vs_document_get_first_view (VsDocument *self, gint64 *from_ns, gint64 *to_ns)
{
  gint64 span, margin;

  g_return_if_fail (VS_IS_DOCUMENT (self) && from_ns != NULL && to_ns != NULL);
  *from_ns = 0;
  *to_ns = MAX (1, self->r.duration);
  if (self->r.active_from < 0 || self->r.active_to <= self->r.active_from)
    return;
  /* The changes with a margin of 2 % of their span on each side, inside
   * the trace. */
  span = self->r.active_to - self->r.active_from;
  margin = MAX (1, span / 50);
  *from_ns = MAX (0, self->r.active_from - margin);
  *to_ns = MIN (MAX (1, self->r.duration), self->r.active_to + margin);
  if (*to_ns <= *from_ns)
    *from_ns = 0, *to_ns = MAX (1, self->r.duration);
}

/* See vs-document.h. */
gboolean
vs_document_is_finalized (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), FALSE);
  return self->r.finalized;
}

/* See vs-document.h. */
GPtrArray *
vs_document_get_devices (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->r.devices;
}

/* See vs-document.h. */
GPtrArray *
vs_document_get_ooms (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->r.ooms;
}

/* See vs-document.h. */
gboolean
vs_document_is_event_order (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), FALSE);
  return self->r.event_order;
}

/* See vs-document.h. */
const char *
vs_document_get_oom_stack (VsDocument *self, guint index)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  g_return_val_if_fail (self->r.oom_stacks != NULL && index < self->r.oom_stacks->len, NULL);
  return g_ptr_array_index (self->r.oom_stacks, index);
}

/* See vs-document.h. */
char *
vs_document_describe (VsDocument *self)
{
  g_autofree char *dur = NULL;
  g_autofree char *before = NULL;
  gint64 peak = 0, before_bytes = 0, before_count = 0;

  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  dur = self->r.event_order
            ? g_strdup_printf (ngettext ("%lld event (no timestamps)",
                                         "%lld events (no timestamps)", (gulong)self->r.duration),
                               (long long)self->r.duration)
            : vs_format_duration (self->r.duration);
  for (guint i = 0; i < self->r.devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (self->r.devices, i);
      peak = MAX (peak, d->summary.peak_allocated_bytes);
      if (d->summary.before_trace_count > 0)
        {
          before_bytes += d->summary.before_trace_bytes;
          before_count += d->summary.before_trace_count;
        }
    }
  if (before_count > 0)
    {
      /* Blocks the history did not see being allocated (PyTorch's own
       * counts leave them out): said apart. */
      g_autofree char *b = vs_format_bytes (before_bytes);
      before = g_strdup_printf (ngettext (" · %s in %lld block live before the trace",
                                          " · %s in %lld blocks live before the trace",
                                          (gulong)before_count),
                                b, (long long)before_count);
    }
  {
    g_autofree char *p = vs_format_bytes (peak);
    g_autofree char *from
        = self->r.detail_from >= 0 ? vs_format_duration (self->r.detail_from) : NULL;
    /* A windowed trace says from when its detail is complete. */
    g_autofree char *windowed
        = from != NULL ? g_strdup_printf (_(" · windowed: full detail from %s"), from) : NULL;
    return g_strdup_printf (ngettext ("%u device · %s · peak allocated %s%s%s%s",
                                      "%u devices · %s · peak allocated %s%s%s%s",
                                      self->r.devices->len),
                            self->r.devices->len, dur, p, before ? before : "",
                            windowed ? windowed : "", self->r.finalized ? "" : _(" · recording"));
  }
}

static const VsDocumentDevice *
find_device (VsDocument *self, gint64 device_id)
{
  for (guint i = 0; i < self->r.devices->len; i++)
    {
      VsDocumentDevice *d = g_ptr_array_index (self->r.devices, i);
      if (d->id == device_id)
        return d;
    }
  return NULL;
}

/* ------------------------------------------------------- chart queries -- */

typedef struct
{
  gint64 device_id, t0, t1, duration;
  guint n;
  VsChartData *base;  /* title, capacity, markers, ranges, filled on main */
  GPtrArray *whatif;  /* a reference to the document's lines, or NULL */
  VsWhatifLine *line; /* the device's, in whatif; NULL: none */
} ChartQuery;

static void
chart_query_free (gpointer p)
{
  ChartQuery *q = p;
  g_clear_pointer (&q->base, vs_chart_data_unref);
  g_clear_pointer (&q->whatif, g_ptr_array_unref);
  g_free (q);
}

/* Fills the buckets' replayed line: the line's reserved bytes plus what
 * the device held outside its allocator as recorded (all minus the
 * allocator's own series at each bucket's end). */
static void
fill_whatif (VsChartData *d, const ChartQuery *q, const GArray *all, const GArray *own)
{
  g_autoptr (GArray) line = vs_whatif_line_buckets (q->line, q->t0, q->t1, q->n);

  for (guint i = 0; i < line->len && i < d->n_buckets; i++)
    {
      const VsTimelineBucket *w = &g_array_index (line, VsTimelineBucket, i);
      const VsTimelineBucket *a = &g_array_index (all, VsTimelineBucket, i);
      const VsTimelineBucket *o = &g_array_index (own, VsTimelineBucket, i);
      VsChartBucket *c = &d->buckets[i];
      gint64 outside = a->known && o->known ? MAX (0, a->last_reserved - o->last_reserved) : 0;

      c->has_whatif = c->has_data && w->known;
      if (!c->has_whatif)
        continue;
      c->min_whatif = w->min_reserved + outside;
      c->max_whatif = w->max_reserved + outside;
      c->last_whatif = w->last_reserved + outside;
    }
}

static void
chart_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  VsDocument *self = source;
  ChartQuery *q = task_data;
  GError *error = NULL;
  g_autoptr (GArray) buckets = NULL;
  g_autoptr (GArray) kernels = NULL;
  g_autoptr (GArray) own = NULL;
  VsChartData *d = q->base;

  if (g_task_return_error_if_cancelled (task))
    return;
  g_mutex_lock (&self->lock);
  buckets = vs_timeline_query (self->trace, q->device_id, 0, q->t0, q->t1, q->n, &error);
  if (buckets != NULL && q->line != NULL)
    {
      own = vs_timeline_query (self->trace, q->device_id, q->line->allocator_id, q->t0, q->t1, q->n,
                               &error);
      if (own == NULL)
        g_clear_pointer (&buckets, g_array_unref);
    }
  if (buckets != NULL && d->has_kernels)
    {
      kernels = vs_kernel_density (self->trace, q->device_id, q->t0, q->t1, q->n, &error);
      if (kernels == NULL)
        g_clear_pointer (&buckets, g_array_unref);
    }
  g_mutex_unlock (&self->lock);
  if (buckets == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  for (guint i = 0; kernels != NULL && i < kernels->len && i < d->n_buckets; i++)
    d->buckets[i].kernels
        = (guint32)MIN (G_MAXUINT32, g_array_index (kernels, VsKernelBucket, i).count);
  for (guint i = 0; i < buckets->len && i < d->n_buckets; i++)
    {
      const VsTimelineBucket *b = &g_array_index (buckets, VsTimelineBucket, i);
      VsChartBucket *c = &d->buckets[i];

      /* After the trace's end the series is only carried forward: leave it
       * blank so the chart shows where recording stopped. */
      c->has_data = b->known && b->from_ns <= q->duration;
      if (!c->has_data)
        continue;
      c->min_reserved = b->min_reserved;
      c->max_reserved = b->max_reserved;
      c->last_reserved = b->last_reserved;
      c->min_allocated = b->min_allocated;
      c->max_allocated = b->max_allocated;
      c->last_allocated = b->last_allocated;
    }
  if (q->line != NULL)
    fill_whatif (d, q, buckets, own);
  q->base = NULL;
  g_task_return_pointer (task, d, (GDestroyNotify)vs_chart_data_unref);
}

/* See vs-document.h. */
void
vs_document_query_chart_async (VsDocument *self, gint64 device_id, gint64 t0, gint64 t1,
                               guint n_buckets, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  const VsDocumentDevice *dev = find_device (self, device_id);
  ChartQuery *q;
  VsChartData *d;

  g_return_if_fail (t1 > t0 && n_buckets > 0);
  if (dev == NULL)
    {
      g_task_return_new_error (task, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                               _("The trace has no device %lld."), (long long)device_id);
      return;
    }
  /* Everything but the buckets comes from the main-thread copies. */
  d = vs_chart_data_new (t0, t1, n_buckets);
  {
    g_autofree char *cap
        = dev->summary.capacity_bytes > 0 ? vs_format_bytes (dev->summary.capacity_bytes) : NULL;
    d->title
        = g_strdup_printf ("GPU %" G_GINT64_FORMAT "%s%s%s%s", dev->idx, dev->name ? " · " : "",
                           dev->name ? dev->name : "", cap ? " · " : "", cap ? cap : "");
  }
  d->trace_end_ns = self->r.duration;
  d->has_kernels = dev->kernel_count > 0;
  d->capacity_bytes = dev->summary.capacity_bytes > 0 ? dev->summary.capacity_bytes : 0;
  if (dev->limit_bytes != VS_UNKNOWN && dev->limit_bytes > 0)
    {
      g_autofree char *limit = vs_format_bytes (dev->limit_bytes);

      d->limit_bytes = dev->limit_bytes;
      d->limit_label = dev->memory_fraction > 0 ? g_strdup_printf (
                           _("limit %s (memory fraction %.3g)"), limit, dev->memory_fraction)
                                                : g_strdup_printf (_("limit %s"), limit);
    }
  /* Fragmentation only where the diagnosis found that it hurt: at the
   * worst instant and at each failure it caused. */
  if (dev->fragmentation_hurt && dev->worst_fragmentation_ns != VS_UNKNOWN)
    vs_chart_data_add_fragmentation (d, dev->worst_fragmentation_ns, dev->worst_allocated_bytes,
                                     dev->worst_reserved_bytes);
  for (guint i = 0; dev->fragmentation_hurt && i < self->r.ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (self->r.ooms, i);

      if (o->device_id == device_id
          && g_array_index (self->r.oom_causes, VsOomCause, i) == VS_OOM_CAUSE_FRAGMENTATION)
        vs_chart_data_add_fragmentation (d, o->time_ns, o->all.allocated_bytes,
                                         o->all.reserved_bytes);
    }
  d->peak_bytes = MAX (dev->summary.peak_reserved_bytes, dev->summary.peak_allocated_bytes);
  if (dev->summary.peak_allocated_time_ns != VS_UNKNOWN)
    vs_chart_data_add_marker (d, VS_CHART_MARKER_PEAK_ALLOCATED,
                              dev->summary.peak_allocated_time_ns,
                              dev->summary.peak_allocated_bytes);
  if (dev->summary.peak_reserved_time_ns != VS_UNKNOWN
      && dev->summary.peak_reserved_bytes > dev->summary.peak_allocated_bytes)
    vs_chart_data_add_marker (d, VS_CHART_MARKER_PEAK_RESERVED, dev->summary.peak_reserved_time_ns,
                              dev->summary.peak_reserved_bytes);
  for (guint i = 0; i < self->r.ooms->len; i++)
    {
      const VsOom *o = g_ptr_array_index (self->r.ooms, i);
      if (o->device_id == device_id)
        vs_chart_data_add_marker (d, VS_CHART_MARKER_FAILED, o->time_ns, o->requested_bytes);
    }
  for (guint i = 0; i < self->r.ranges->len; i++)
    {
      const VsRangeInfo *r = g_ptr_array_index (self->r.ranges, i);
      /* NVTX ranges belong to threads, not devices: every timeline shows
       * them. */
      if ((r->end_ns == VS_UNKNOWN || r->end_ns >= t0) && r->start_ns < t1)
        vs_chart_data_add_range (d, r->start_ns, r->end_ns == VS_UNKNOWN ? -1 : r->end_ns,
                                 (guint)MAX (0, r->depth), r->name);
    }

  q = g_new0 (ChartQuery, 1);
  for (guint i = 0; self->whatif != NULL && i < self->whatif->len; i++)
    {
      VsWhatifLine *line = g_ptr_array_index (self->whatif, i);
      if (line->device_id != device_id)
        continue;
      q->whatif = g_ptr_array_ref (self->whatif);
      q->line = line;
      d->whatif_label = g_strdup (self->whatif_label);
      /* room for the replayed peak (outside memory taken at its recorded
       * peak: the scale only) */
      d->peak_bytes = MAX (d->peak_bytes, line->result.peak_reserved_bytes
                                              + MAX (0, dev->summary.peak_reserved_bytes
                                                            - line->own.peak_reserved_bytes));
    }
  q->device_id = device_id;
  q->t0 = t0;
  q->t1 = t1;
  q->duration = self->r.duration;
  q->n = n_buckets;
  q->base = d;
  g_task_set_task_data (task, q, chart_query_free);
  g_task_run_in_thread (task, chart_thread);
}

/* See vs-document.h. */
VsChartData *
vs_document_query_chart_finish (VsDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------ what-if -- */

typedef struct
{
  char *alloc_conf;
  gint64 limit_bytes;
  GArray *device_ids; /* gint64: the devices to replay */
  VsProgress progress;
  GCancellable *cancellable;
  guint done, total; /* devices replayed, for the progress */
} WhatifQuery;

static void
whatif_query_free (gpointer p)
{
  WhatifQuery *q = p;
  g_free (q->alloc_conf);
  g_array_unref (q->device_ids);
  vs_progress_clear (&q->progress);
  g_clear_object (&q->cancellable);
  g_free (q);
}

static gboolean
whatif_progress (double fraction, gpointer data)
{
  WhatifQuery *q = data;
  vs_progress_report (&q->progress, _("Replaying the allocator"), (q->done + fraction) / q->total);
  return !g_cancellable_is_cancelled (q->cancellable);
}

static void
whatif_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  VsDocument *self = source;
  WhatifQuery *q = task_data;
  g_autoptr (GPtrArray) lines
      = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_whatif_line_free);
  GError *error = NULL;

  for (q->done = 0; q->done < q->device_ids->len; q->done++)
    {
      VsWhatifLine *line;

      g_mutex_lock (&self->lock);
      line = vs_whatif_line_new (self->trace, g_array_index (q->device_ids, gint64, q->done),
                                 q->alloc_conf, q->limit_bytes, whatif_progress, q, &error);
      g_mutex_unlock (&self->lock);
      if (line == NULL)
        {
          if (g_error_matches (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CANCELLED))
            {
              g_clear_error (&error);
              g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                   _("The replay was cancelled."));
            }
          g_task_return_error (task, error);
          return;
        }
      g_ptr_array_add (lines, line);
    }
  g_task_return_pointer (task, g_steal_pointer (&lines), (GDestroyNotify)g_ptr_array_unref);
}

/* See vs-document.h. */
void
vs_document_whatif_async (VsDocument *self, const char *alloc_conf, gint64 limit_bytes,
                          GCancellable *cancellable, VsDocumentProgressFunc progress,
                          gpointer progress_data, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  WhatifQuery *q;

  g_return_if_fail (VS_IS_DOCUMENT (self));
  q = g_new0 (WhatifQuery, 1);
  q->alloc_conf = g_strdup (alloc_conf);
  q->limit_bytes = limit_bytes;
  q->device_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < self->r.devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (self->r.devices, i);
      if (d->own_alloc_conf != NULL)
        g_array_append_val (q->device_ids, d->id);
    }
  q->total = MAX (1, q->device_ids->len);
  vs_progress_init (&q->progress, progress, progress_data);
  q->cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
  g_task_set_task_data (task, q, whatif_query_free);
  if (q->device_ids->len == 0)
    {
      g_task_return_new_error (task, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                               _("The trace has no PyTorch caching allocator to replay."));
      return;
    }
  run_or_hold (self, task, whatif_thread);
}

/* See vs-document.h. */
GPtrArray *
vs_document_whatif_finish (VsDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* See vs-document.h. */
void
vs_document_set_whatif (VsDocument *self, GPtrArray *lines, const char *label)
{
  g_return_if_fail (VS_IS_DOCUMENT (self));
  if (lines != NULL)
    g_ptr_array_ref (lines);
  g_clear_pointer (&self->whatif, g_ptr_array_unref);
  self->whatif = lines;
  g_free (self->whatif_label);
  self->whatif_label = g_strdup (label);
}

/* See vs-document.h. */
GPtrArray *
vs_document_get_whatif (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->whatif;
}

/* ----------------------------------------------------- instant queries -- */

typedef struct
{
  VsDocument *document; /* the instant's, not referenced: the query's task holds it */
  gint64 device_id, t, range_t0, range_t1;
  gint64 peak_seq, peak_time; /* of the device's peak allocated */
} InstantQuery;

static int
segment_cmp (gconstpointer a, gconstpointer b)
{
  const VsSegment *x = a, *y = b;
  return x->address < y->address ? -1 : x->address > y->address;
}

/* Builds the instant; runs with the lock held and reads nothing of self
 * but its identity (the main thread may swap the copies meanwhile). */
static VsInstant *
build_instant (VsDocument *self, VsTrace *trace, const InstantQuery *q, GError **error)
{
  g_autoptr (VsInstant) in = vs_instant_new (G_OBJECT (self));
  g_autoptr (GArray) live = NULL;

  in->device_id = q->device_id;
  in->range_t0 = q->range_t0;
  in->range_t1 = q->range_t1;
  if (q->range_t1 > q->range_t0)
    {
      /* A range is shown at its own peak of allocated memory. */
      VsSeriesPoint peak;

      if (!vs_series_peak_between (trace, q->device_id, 0, q->range_t0, q->range_t1, &peak, error))
        return NULL;
      in->seq = peak.seq;
      in->time_ns = peak.time_ns == VS_UNKNOWN ? q->range_t0 : MAX (peak.time_ns, q->range_t0);
    }
  else if (q->t < 0 && q->peak_seq != VS_UNKNOWN)
    {
      in->seq = q->peak_seq;
      in->time_ns = q->peak_time;
    }
  else
    {
      in->time_ns = MAX (q->t, 0);
      in->seq = vs_trace_seq_at_time (trace, q->device_id, 0, in->time_ns, error);
      if (in->seq < 0)
        return NULL;
    }
  if (!vs_series_at_seq (trace, q->device_id, 0, in->seq, &in->point, error))
    return NULL;
  live = vs_live_blocks (trace, q->device_id, 0, in->seq, error);
  if (live == NULL)
    return NULL;
  in->blocks = g_array_sized_new (FALSE, FALSE, sizeof (VsBlock), live->len);
  for (guint i = 0; i < live->len; i++)
    {
      const VsBlock *b = &g_array_index (live, VsBlock, i);
      const VsStackInfo *st;

      if (q->range_t1 > q->range_t0
          && (b->alloc_time_ns == VS_UNKNOWN || b->alloc_time_ns < q->range_t0
              || b->alloc_time_ns >= q->range_t1))
        continue;
      st = vs_stack_get (trace, b->stack_id, error);
      if (st == NULL)
        return NULL;
      g_array_append_vals (in->blocks, b, 1);
      g_ptr_array_add (in->sites, (gpointer)st->site);
      g_ptr_array_add (in->stacks, (gpointer)st);
      /* Allocator names are owned by the trace, kind names interned. */
      g_ptr_array_add (in->kinds, (gpointer)(b->allocator_id > 0
                                                 ? vs_trace_allocator_name (trace, b->allocator_id)
                                                 : vs_trace_mem_kind_name (trace, b->kind)));
    }
  in->top_down = vs_tree_build (trace, in->blocks, VS_TREE_TOP_DOWN, error);
  if (in->top_down == NULL)
    return NULL;
  in->bottom_up = vs_tree_build (trace, in->blocks, VS_TREE_BOTTOM_UP, error);
  if (in->bottom_up == NULL)
    return NULL;
  in->top_down_user = vs_tree_build_filtered (trace, in->blocks, VS_TREE_TOP_DOWN, TRUE, error);
  if (in->top_down_user == NULL)
    return NULL;
  in->bottom_up_user = vs_tree_build_filtered (trace, in->blocks, VS_TREE_BOTTOM_UP, TRUE, error);
  if (in->bottom_up_user == NULL)
    return NULL;
  in->have_fragmentation
      = vs_fragmentation_at (trace, q->device_id, 0, in->seq, &in->frag, in->gaps, error);
  if (!in->have_fragmentation)
    return NULL;
  g_array_unref (in->segments);
  in->segments = vs_fragmentation_segments (trace, q->device_id, 0, in->seq, error);
  if (in->segments == NULL)
    return NULL;
  g_array_sort (in->segments, segment_cmp);
  return g_steal_pointer (&in);
}

/* build_instant() as one of the document's queries (run_thread). */
static gpointer
instant_query (VsTrace *trace, gpointer data, GError **error)
{
  const InstantQuery *q = data;

  return build_instant (q->document, trace, q, error);
}

/* See vs-document.h. */
void
vs_document_query_instant_async (VsDocument *self, gint64 device_id, gint64 t, gint64 range_t0,
                                 gint64 range_t1, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  const VsDocumentDevice *dev = find_device (self, device_id);
  InstantQuery *q = g_new0 (InstantQuery, 1);

  q->document = self;
  q->peak_seq = dev != NULL ? dev->summary.peak_allocated_seq : VS_UNKNOWN;
  q->peak_time = dev != NULL ? dev->summary.peak_allocated_time_ns : 0;
  q->device_id = device_id;
  q->t = t;
  q->range_t0 = range_t0;
  q->range_t1 = range_t1;
  vs_document_run_async (self, instant_query, q, g_free, (GDestroyNotify)vs_instant_unref,
                         cancellable, callback, user_data);
}

/* See vs-document.h. */
VsInstant *
vs_document_query_instant_finish (VsDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------ refresh -- */

static void
refresh_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  VsDocument *self = source;
  GError *error = NULL;
  gboolean changed = FALSE;
  Snapshot *s = NULL;

  /* The trace is read again in place: pointers into it (stack texts,
   * allocator names) that instants on screen hold stay valid, see
   * vs_trace_refresh(). */
  g_mutex_lock (&self->lock);
  if (vs_trace_refresh (self->trace, &changed, &error) && changed)
    s = read_tables (self->trace, NULL, &error);
  else if (error == NULL)
    {
      /* Nothing new; still report whether the recording has ended. */
      s = g_new0 (Snapshot, 1);
      s->r.duration = -1;
      s->r.finalized = !vs_trace_is_recording (self->trace);
    }
  g_mutex_unlock (&self->lock);
  if (s == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, s, (GDestroyNotify)snapshot_free);
}

/* See vs-document.h. */
void
vs_document_refresh_async (VsDocument *self, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_run_in_thread (task, refresh_thread);
}

/* See vs-document.h. */
gboolean
vs_document_refresh_finish (VsDocument *self, GAsyncResult *result, GError **error)
{
  Snapshot *s;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  s = g_task_propagate_pointer (G_TASK (result), error);
  if (s == NULL)
    return FALSE;
  if (s->r.duration < 0)
    {
      self->r.finalized = s->r.finalized;
      snapshot_free (s);
      return FALSE;
    }
  adopt (self, s);
  /* New events: diagnosed again. */
  if (self->diagnosis_wanted)
    vs_document_diagnose (self);
  return TRUE;
}

/* -------------------------------------------------------- diagnosis -- */

static void start_diagnosis (VsDocument *self);

static void
on_diagnosis_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GWeakRef *ref = data;
  g_autoptr (VsDocument) self = g_weak_ref_get (ref);
  g_autoptr (GError) error = NULL;
  g_autoptr (VsDocumentDiagnosis) d = vs_document_diagnosis_finish (result, &error);

  g_weak_ref_clear (ref);
  g_free (ref);
  /* Closed meanwhile: nobody waits for it. */
  if (self == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self->diagnosing = FALSE;
  g_clear_pointer (&self->diagnosis_error, g_free);
  if (d != NULL)
    {
      g_clear_pointer (&self->diag, vs_document_diagnosis_free);
      self->diag = g_steal_pointer (&d);
    }
  else
    {
      g_clear_pointer (&self->diag, vs_document_diagnosis_free);
      self->diagnosis_error = g_strdup (error->message);
    }
  apply_diagnosed_devices (self);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DIAGNOSED]);
  if (self->diagnose_again)
    start_diagnosis (self);
}

/* Starts reading the diagnosis of the trace as it is now. */
static void
start_diagnosis (VsDocument *self)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  GWeakRef *ref = g_new0 (GWeakRef, 1);

  for (guint i = 0; i < self->r.devices->len; i++)
    g_array_append_val (ids, ((VsDocumentDevice *)g_ptr_array_index (self->r.devices, i))->id);
  g_weak_ref_init (ref, self);
  self->diagnosing = TRUE;
  self->diagnose_again = FALSE;
  vs_document_diagnosis_async (self->path, ids, self->diagnosis_cancellable, on_diagnosis_done,
                               ref);
}

/* See vs-document.h. */
void
vs_document_diagnose (VsDocument *self)
{
  g_return_if_fail (VS_IS_DOCUMENT (self));
  if (g_cancellable_is_cancelled (self->diagnosis_cancellable))
    return; /* closed */
  self->diagnosis_wanted = TRUE;
  /* Its CPU goes to the timelines first. */
  if (self->holding)
    {
      self->diagnosis_held = TRUE;
      return;
    }
  /* One at a time: a refresh while one is read asks for another after. */
  if (self->diagnosing)
    self->diagnose_again = TRUE;
  else
    start_diagnosis (self);
}

/* See vs-document.h. */
gboolean
vs_document_is_diagnosed (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), FALSE);
  return self->diag != NULL || self->diagnosis_error != NULL;
}

/* See vs-document.h. */
const char *
vs_document_get_diagnosis_error (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->diagnosis_error;
}

/* See vs-document.h. */
const VsDiagnosis *
vs_document_get_diagnosis (VsDocument *self)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  return self->diag != NULL ? self->diag->diagnosis : NULL;
}

/* See vs-document.h. */
VsOomCause
vs_document_get_oom_cause (VsDocument *self, guint index, const char **evidence)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), VS_OOM_CAUSE_UNKNOWN);
  g_return_val_if_fail (self->r.oom_causes != NULL && index < self->r.oom_causes->len,
                        VS_OOM_CAUSE_UNKNOWN);
  if (evidence != NULL)
    *evidence = g_ptr_array_index (self->r.oom_evidence, index);
  return g_array_index (self->r.oom_causes, VsOomCause, index);
}

/* See vs-document.h. */
const char *
vs_document_get_oom_memory (VsDocument *self, guint index)
{
  g_return_val_if_fail (VS_IS_DOCUMENT (self), NULL);
  g_return_val_if_fail (self->r.oom_memory != NULL && index < self->r.oom_memory->len, NULL);
  return g_ptr_array_index (self->r.oom_memory, index);
}

/* ---------------------------------------------------------- any query -- */

typedef struct
{
  VsDocumentQueryFunc func;
  gpointer data;
  GDestroyNotify data_free;
  GDestroyNotify result_free;
} RunQuery;

static void
run_query_free (gpointer p)
{
  RunQuery *q = p;

  if (q->data_free != NULL)
    q->data_free (q->data);
  g_free (q);
}

static void
run_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  VsDocument *self = source;
  RunQuery *q = task_data;
  GError *error = NULL;
  gpointer result;

  if (g_task_return_error_if_cancelled (task))
    return;
  g_mutex_lock (&self->lock);
  result = q->func (self->trace, q->data, &error);
  g_mutex_unlock (&self->lock);
  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, q->result_free);
}

/* See vs-document.h. */
void
vs_document_run_async (VsDocument *self, VsDocumentQueryFunc func, gpointer data,
                       GDestroyNotify data_free, GDestroyNotify result_free,
                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  RunQuery *q = g_new0 (RunQuery, 1);

  g_return_if_fail (VS_IS_DOCUMENT (self));
  g_return_if_fail (func != NULL);
  q->func = func;
  q->data = data;
  q->data_free = data_free;
  q->result_free = result_free;
  g_task_set_task_data (task, q, run_query_free);
  run_or_hold (self, task, run_thread);
}

/* See vs-document.h. */
gpointer
vs_document_run_finish (VsDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
