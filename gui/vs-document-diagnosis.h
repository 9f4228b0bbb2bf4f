/* SPDX-License-Identifier: MIT */
/* vs-document-diagnosis.h — the second phase of loading a trace: its
 * diagnosis, read in a worker thread on a connection of its own.
 *
 * A document is shown as soon as what the timeline needs is read; the
 * diagnosis (vs_diagnose of every device, and where each device's
 * fragmentation is worst) takes much longer on a large trace and follows.
 * It opens the trace's file a second time (cheap for a finalized trace,
 * see vs-trace.h), so it runs beside the document's own queries rather
 * than before them.  Private to VsDocument.
 */
#pragma once

#include <gio/gio.h>

#include "vs-analyzer.h"

G_BEGIN_DECLS

/* What the diagnosis says of one device. */
typedef struct
{
  gint64 id;
  gint64 worst_fragmentation_ns; /* VS_UNKNOWN if none */
  gint64 worst_allocated_bytes;
  gint64 worst_reserved_bytes;
  gboolean fragmentation_hurt; /* a fragmentation or oom-fragmentation finding */
} VsDiagnosedDevice;

typedef struct
{
  VsTrace *trace;         /* the connection it was read with: the diagnosis
                            * points into its caches */
  VsDiagnosis *diagnosis; /* vs_diagnose of every device */
  GArray *devices;        /* VsDiagnosedDevice, those asked for */
} VsDocumentDiagnosis;

void vs_document_diagnosis_free (VsDocumentDiagnosis *diagnosis);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsDocumentDiagnosis, vs_document_diagnosis_free)

/* Opens path anew and diagnoses it in a thread, with the worst
 * fragmentation of each device of device_ids (gint64; a reference is
 * taken).  Cancelling drops the result at the next step (a step already
 * running ends first).  Finish returns a new VsDocumentDiagnosis, or NULL
 * with error set (G_IO_ERROR_CANCELLED when cancelled). */
void vs_document_diagnosis_async (const char *path, GArray *device_ids, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data);
VsDocumentDiagnosis *vs_document_diagnosis_finish (GAsyncResult *result, GError **error);

/* The device of diagnosis with id, NULL if it has none. */
const VsDiagnosedDevice *vs_document_diagnosis_device (const VsDocumentDiagnosis *diagnosis,
                                                       gint64 id);

G_END_DECLS
