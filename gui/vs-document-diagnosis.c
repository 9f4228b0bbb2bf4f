/* SPDX-License-Identifier: MIT */
/* vs-document-diagnosis.c — a trace's diagnosis read in a worker thread
 * on a connection of its own (see vs-document-diagnosis.h).
 */
#include "vs-document-diagnosis.h"

/* See vs-document-diagnosis.h. */
void
vs_document_diagnosis_free (VsDocumentDiagnosis *d)
{
  if (d == NULL)
    return;
  /* The diagnosis first: it points into the trace. */
  g_clear_pointer (&d->diagnosis, vs_diagnosis_free);
  g_clear_pointer (&d->devices, g_array_unref);
  g_clear_pointer (&d->trace, vs_trace_free);
  g_free (d);
}

typedef struct
{
  char *path;
  GArray *device_ids; /* gint64 */
} DiagnosisQuery;

static void
diagnosis_query_free (gpointer p)
{
  DiagnosisQuery *q = p;

  g_free (q->path);
  g_array_unref (q->device_ids);
  g_free (q);
}

/* Whether diagnosis found fragmentation that hurt on device_id. */
static gboolean
fragmentation_hurt (const VsDiagnosis *diagnosis, gint64 device_id)
{
  for (guint i = 0; i < diagnosis->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (diagnosis->findings, i);

      if (f->device_id == device_id
          && (f->kind == VS_FINDING_FRAGMENTATION || f->kind == VS_FINDING_OOM_FRAGMENTATION))
        return TRUE;
    }
  return FALSE;
}

/* Reads the diagnosis; NULL with error set on failure or cancellation. */
static VsDocumentDiagnosis *
read_diagnosis (const DiagnosisQuery *q, GCancellable *cancellable, GError **error)
{
  g_autoptr (VsDocumentDiagnosis) d = g_new0 (VsDocumentDiagnosis, 1);

  d->devices = g_array_new (FALSE, TRUE, sizeof (VsDiagnosedDevice));
  d->trace = vs_trace_open (q->path, error);
  if (d->trace == NULL || g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  d->diagnosis = vs_diagnose (d->trace, 0, error);
  if (d->diagnosis == NULL)
    return NULL;
  /* Where each device's fragmentation is worst (the Fragmentation pane
   * opens there, the chart marks it where it hurt). */
  for (guint i = 0; i < q->device_ids->len; i++)
    {
      VsDiagnosedDevice dev = { .id = g_array_index (q->device_ids, gint64, i) };
      VsFragmentation f;

      if (g_cancellable_set_error_if_cancelled (cancellable, error)
          || !vs_fragmentation_worst (d->trace, dev.id, 0, &f, error))
        return NULL;
      dev.worst_fragmentation_ns = f.seq > 0 && f.free_bytes > 0 ? f.time_ns : VS_UNKNOWN;
      dev.worst_allocated_bytes = f.allocated_bytes;
      dev.worst_reserved_bytes = f.reserved_bytes;
      dev.fragmentation_hurt = fragmentation_hurt (d->diagnosis, dev.id);
      g_array_append_val (d->devices, dev);
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return g_steal_pointer (&d);
}

static void
diagnosis_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  VsDocumentDiagnosis *d = read_diagnosis (task_data, cancellable, &error);

  if (d == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, d, (GDestroyNotify)vs_document_diagnosis_free);
}

/* See vs-document-diagnosis.h. */
void
vs_document_diagnosis_async (const char *path, GArray *device_ids, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  DiagnosisQuery *q = g_new0 (DiagnosisQuery, 1);

  q->path = g_strdup (path);
  q->device_ids = g_array_ref (device_ids);
  g_task_set_task_data (task, q, diagnosis_query_free);
  g_task_run_in_thread (task, diagnosis_thread);
}

/* See vs-document-diagnosis.h. */
VsDocumentDiagnosis *
vs_document_diagnosis_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* See vs-document-diagnosis.h. */
const VsDiagnosedDevice *
vs_document_diagnosis_device (const VsDocumentDiagnosis *d, gint64 id)
{
  for (guint i = 0; d != NULL && i < d->devices->len; i++)
    if (g_array_index (d->devices, VsDiagnosedDevice, i).id == id)
      return &g_array_index (d->devices, VsDiagnosedDevice, i);
  return NULL;
}
