/* SPDX-License-Identifier: MIT */
/* vs-comparison.c — two traces compared (see vs-comparison.h).  B is
 * opened as the window opens a trace (snapshot import, then the
 * document's load); then the diff, the differences and the iteration
 * offset are computed in one thread holding both documents' traces,
 * while the timelines already draw B; the charts'
 * data are A's and B's own queries, B's on A's grid shifted by the
 * offset.
 */
#include "vs-comparison.h"

#include <glib/gi18n.h>

#include "vs-analyzer.h"
#include "vs-compare-item.h"
#include "vs-snapshot-open.h"

struct _VsComparison
{
  GObject parent_instance;
  VsDocument *a, *b;
  char *name_a, *name_b;
  GArray *rows;
  GListStore *items;
  GPtrArray *differences;
  char *text;
  gboolean has_iteration_offset;
  gint64 iteration_offset;
  gboolean align_by_iteration;
};

enum
{
  PROP_0,
  PROP_ALIGN_BY_ITERATION,
  PROP_COMPUTED,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsComparison, vs_comparison, G_TYPE_OBJECT)

/* ------------------------------------------------------------ making -- */

typedef struct
{
  VsComparison *self; /* being filled */
  GFile *file;
  gboolean snapshot;
  GCancellable *cancellable;
} NewJob;

static void
new_job_free (gpointer p)
{
  NewJob *j = p;

  g_clear_object (&j->self);
  g_clear_object (&j->file);
  g_clear_object (&j->cancellable);
  g_free (j);
}

/* Everything computed from both traces at once (vs_comparison_compute_async),
 * on connections of the thread's own (task_data: the two paths) so that
 * the documents' queries — the timelines drawing B — go on meanwhile. */
static void
compute_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  VsComparison *self = source;
  char **paths = task_data;
  g_autoptr (VsTrace) ta = NULL;
  g_autoptr (VsTrace) tb = NULL;
  GError *error = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  const VsDeviceInfo *first;

  ta = vs_trace_open (paths[0], &error);
  tb = ta != NULL ? vs_trace_open (paths[1], &error) : NULL;
  if (tb != NULL)
    self->rows = vs_diff (ta, tb, 20, &error);
  if (self->rows != NULL)
    {
      self->differences = vs_compare_differences (ta, tb);
      first = vs_trace_get_devices (ta)->len > 0 ? g_ptr_array_index (vs_trace_get_devices (ta), 0)
                                                 : NULL;
      /* No iterations is no error: aligning by them is then not offered. */
      self->has_iteration_offset
          = first != NULL
            && vs_compare_iteration_offset (ta, tb, first->idx, &self->iteration_offset, NULL);
    }
  if (self->rows == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  vs_diff_write_text (self->rows, self->name_a, self->name_b, 120, text);
  vs_compare_write_differences (self->differences, 120, text);
  self->text = g_string_free (g_steal_pointer (&text), FALSE);
  g_task_return_boolean (task, TRUE);
}

static void
on_b_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  NewJob *j = g_task_get_task_data (task);
  GError *error = NULL;

  j->self->b = vs_document_load_finish (result, &error);
  if (j->self->b == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_object_ref (j->self), g_object_unref);
  g_object_unref (task);
}

static void
on_b_imported (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  NewJob *j = g_task_get_task_data (task);
  GError *error = NULL;
  g_autoptr (GFile) trace = vs_snapshot_open_finish (result, &error);

  if (trace == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  vs_document_load_async (trace, j->cancellable, NULL, NULL, on_b_loaded, task);
}

/* See vs-comparison.h. */
void
vs_comparison_new_async (VsDocument *a, GFile *file, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task;
  NewJob *j;

  g_return_if_fail (VS_IS_DOCUMENT (a));
  g_return_if_fail (G_IS_FILE (file));
  task = g_task_new (NULL, cancellable, callback, user_data);
  j = g_new0 (NewJob, 1);
  j->self = g_object_new (VS_TYPE_COMPARISON, NULL);
  j->self->a = g_object_ref (a);
  j->self->name_a = g_file_get_basename (vs_document_get_file (a));
  j->self->name_b = g_file_get_basename (file);
  j->file = g_object_ref (file);
  j->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  g_task_set_task_data (task, j, new_job_free);
  if (vs_snapshot_open_is_snapshot (file))
    vs_snapshot_open_async (file, cancellable, NULL, NULL, on_b_imported, task);
  else
    vs_document_load_async (file, cancellable, NULL, NULL, on_b_loaded, task);
}

/* See vs-comparison.h. */
VsComparison *
vs_comparison_new_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* See vs-comparison.h. */
void
vs_comparison_compute_async (VsComparison *self, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (VS_IS_COMPARISON (self));
  g_return_if_fail (self->rows == NULL);
  task = g_task_new (self, cancellable, callback, user_data);
  {
    char **paths = g_new0 (char *, 3);

    paths[0] = g_file_get_path (vs_document_get_file (self->a));
    paths[1] = g_file_get_path (vs_document_get_file (self->b));
    if (paths[0] == NULL || paths[1] == NULL)
      {
        g_strfreev (paths);
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                 _("Only local files can be compared"));
        return;
      }
    g_task_set_task_data (task, paths, (GDestroyNotify)g_strfreev);
  }
  g_task_run_in_thread (task, compute_thread);
}

/* See vs-comparison.h. */
gboolean
vs_comparison_compute_finish (VsComparison *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  self->items = g_list_store_new (VS_TYPE_COMPARE_ITEM);
  for (guint i = 0; i < self->rows->len; i++)
    {
      const VsDiffRow *r = &g_array_index (self->rows, VsDiffRow, i);
      g_autoptr (VsCompareItem) item = NULL;

      /* Unchanged zeros say nothing (as the CLI's text leaves them). */
      if (r->a == 0 && r->b == 0)
        continue;
      item = vs_compare_item_new (r);
      g_list_store_append (self->items, item);
    }
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_COMPUTED]);
  return TRUE;
}

gboolean
vs_comparison_is_computed (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), FALSE);
  return self->items != NULL;
}

/* ---------------------------------------------------------- getters -- */

VsDocument *
vs_comparison_get_b (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return self->b;
}

const char *
vs_comparison_get_name_a (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return self->name_a;
}

const char *
vs_comparison_get_name_b (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return self->name_b;
}

GListModel *
vs_comparison_get_items (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return G_LIST_MODEL (self->items);
}

GPtrArray *
vs_comparison_get_differences (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return self->differences;
}

const char *
vs_comparison_get_text (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), NULL);
  return self->text;
}

gboolean
vs_comparison_can_align_by_iteration (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), FALSE);
  return self->items != NULL && self->has_iteration_offset;
}

gboolean
vs_comparison_get_align_by_iteration (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), FALSE);
  return self->align_by_iteration;
}

void
vs_comparison_set_align_by_iteration (VsComparison *self, gboolean on)
{
  g_return_if_fail (VS_IS_COMPARISON (self));
  on = on && self->items != NULL && self->has_iteration_offset;
  if (self->align_by_iteration == on)
    return;
  self->align_by_iteration = on;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_ALIGN_BY_ITERATION]);
}

gint64
vs_comparison_get_offset (VsComparison *self)
{
  g_return_val_if_fail (VS_IS_COMPARISON (self), 0);
  return self->align_by_iteration && self->items != NULL ? self->iteration_offset : 0;
}

/* ------------------------------------------------------------ charts -- */

typedef struct
{
  VsComparison *self;
  gint64 b_device_id, t0, t1, offset;
  guint n;
  VsChartData *a; /* A's data, once it came */
} ChartJob;

static void
chart_job_free (gpointer p)
{
  ChartJob *j = p;

  g_clear_object (&j->self);
  g_clear_pointer (&j->a, vs_chart_data_unref);
  g_free (j);
}

static void
on_b_chart (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  ChartJob *j = g_task_get_task_data (task);
  GError *error = NULL;
  VsChartData *b = vs_document_query_chart_finish (VS_DOCUMENT (source), result, &error);
  VsChartData *a = j->a;

  if (b == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  /* On A's axis: B's time t is drawn at t − offset. */
  b->t0 -= j->offset;
  b->t1 -= j->offset;
  for (guint i = 0; i < b->markers->len; i++)
    g_array_index (b->markers, VsChartMarker, i).ts -= j->offset;
  a->compare = b;
  a->label = g_strdup_printf (_("A: %s"), j->self->name_a);
  a->compare_label = g_strdup_printf (_("B: %s"), j->self->name_b);
  a->peak_bytes = MAX (a->peak_bytes, b->peak_bytes);
  j->a = NULL;
  g_task_return_pointer (task, a, (GDestroyNotify)vs_chart_data_unref);
  g_object_unref (task);
}

static void
on_a_chart (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  ChartJob *j = g_task_get_task_data (task);
  GError *error = NULL;
  VsChartData *a = vs_document_query_chart_finish (VS_DOCUMENT (source), result, &error);

  if (a == NULL || j->b_device_id < 0)
    {
      if (a == NULL)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, a, (GDestroyNotify)vs_chart_data_unref);
      g_object_unref (task);
      return;
    }
  j->a = a;
  vs_document_query_chart_async (j->self->b, j->b_device_id, j->t0 + j->offset, j->t1 + j->offset,
                                 j->n, g_task_get_cancellable (task), on_b_chart, task);
}

/* B's device of the same index as A's device_id, -1 when none. */
static gint64
b_device (VsComparison *self, gint64 a_device_id)
{
  GPtrArray *da = vs_document_get_devices (self->a);
  GPtrArray *db = vs_document_get_devices (self->b);

  for (guint i = 0; i < da->len; i++)
    {
      const VsDocumentDevice *x = g_ptr_array_index (da, i);

      if (x->id != a_device_id)
        continue;
      for (guint k = 0; k < db->len; k++)
        {
          const VsDocumentDevice *y = g_ptr_array_index (db, k);

          if (y->idx == x->idx)
            return y->id;
        }
    }
  return -1;
}

/* See vs-comparison.h. */
void
vs_comparison_query_chart_async (VsComparison *self, gint64 device_id, gint64 t0, gint64 t1,
                                 guint n_buckets, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task;
  ChartJob *j;

  g_return_if_fail (VS_IS_COMPARISON (self));
  task = g_task_new (self, cancellable, callback, user_data);
  j = g_new0 (ChartJob, 1);
  j->self = g_object_ref (self);
  j->b_device_id = b_device (self, device_id);
  j->t0 = t0;
  j->t1 = t1;
  j->n = n_buckets;
  j->offset = vs_comparison_get_offset (self);
  g_task_set_task_data (task, j, chart_job_free);
  vs_document_query_chart_async (self->a, device_id, t0, t1, n_buckets, cancellable, on_a_chart,
                                 task);
}

/* See vs-comparison.h. */
VsChartData *
vs_comparison_query_chart_finish (VsComparison *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------ object -- */

static void
vs_comparison_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  VsComparison *self = VS_COMPARISON (object);

  switch (id)
    {
    case PROP_ALIGN_BY_ITERATION:
      g_value_set_boolean (value, self->align_by_iteration);
      break;
    case PROP_COMPUTED:
      g_value_set_boolean (value, self->items != NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_comparison_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  VsComparison *self = VS_COMPARISON (object);

  switch (id)
    {
    case PROP_ALIGN_BY_ITERATION:
      vs_comparison_set_align_by_iteration (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_comparison_finalize (GObject *object)
{
  VsComparison *self = VS_COMPARISON (object);

  g_clear_object (&self->a);
  g_clear_object (&self->b);
  g_free (self->name_a);
  g_free (self->name_b);
  g_clear_pointer (&self->rows, g_array_unref);
  g_clear_object (&self->items);
  g_clear_pointer (&self->differences, g_ptr_array_unref);
  g_free (self->text);
  G_OBJECT_CLASS (vs_comparison_parent_class)->finalize (object);
}

static void
vs_comparison_class_init (VsComparisonClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = vs_comparison_get_property;
  object_class->set_property = vs_comparison_set_property;
  object_class->finalize = vs_comparison_finalize;
  props[PROP_ALIGN_BY_ITERATION]
      = g_param_spec_boolean ("align-by-iteration", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  props[PROP_COMPUTED] = g_param_spec_boolean ("computed", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
vs_comparison_init (VsComparison *self)
{
}
