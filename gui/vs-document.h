/* SPDX-License-Identifier: MIT */
/* vs-document.h — an open trace, as the viewer sees it.
 *
 * Wraps the analyzer's VsTrace.  Everything that touches the trace runs in
 * GTask threads, one at a time (the analyzer's VsTrace is used by one
 * thread at a time, so a mutex serializes the workers); results come back
 * on the main loop as plain data the widgets display.  What the window
 * shows all the time (devices, summaries, failed allocations, NVTX ranges)
 * is read once when the trace is loaded and again on each live refresh;
 * its diagnosis follows, read beside the rest (vs_document_diagnose).
 */
#pragma once

#include <gio/gio.h>

#include "vs-analyzer.h"
#include "vs-chart-data.h"
#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_DOCUMENT (vs_document_get_type ())
G_DECLARE_FINAL_TYPE (VsDocument, vs_document, VS, DOCUMENT, GObject)

/* One device of the trace with its "all" summary. */
typedef struct
{
  gint64 id;
  gint64 idx;
  char *name;                    /* NULL when unknown */
  VsSummary summary;             /* allocator "all" */
  gint64 kernel_count;           /* kernels recorded on it: a kernel lane when > 0 */
  gint64 worst_fragmentation_ns; /* instant of its worst fragmentation
                                  * (vs_fragmentation_worst), VS_UNKNOWN if none
                                  * or not diagnosed yet */
  char *own_alloc_conf;          /* the settings of its PyTorch caching allocator as
                                  * PYTORCH_CUDA_ALLOC_CONF text; NULL when it has no
                                  * allocator a what-if can replay (none, or one
                                  * per process sharing the device) */
  gint64 limit_bytes;            /* its allocator's limit (vs_allocator_settings_read:
                                  * PyTorch's memory fraction × capacity), VS_UNKNOWN */
  double memory_fraction;        /* that fraction, < 0 when unknown */
  gboolean fragmentation_hurt;   /* the diagnosis found fragmentation on it (a
                                  * fragmentation or oom-fragmentation finding) */
  gint64 worst_allocated_bytes;  /* allocated and reserved at worst_fragmentation_ns */
  gint64 worst_reserved_bytes;
} VsDocumentDevice;

/* Called on the main loop while loading: what is being done, and the
 * fraction done (0..1). */
typedef void (*VsDocumentProgressFunc) (const char *what, double fraction, gpointer user_data);

/* Opens and reads the trace at file in a thread.  progress (may be NULL)
 * is called on the caller's main context.  Finish with
 * vs_document_load_finish(): a new VsDocument, or NULL with the analyzer's
 * one-sentence error. */
void vs_document_load_async (GFile *file, GCancellable *cancellable,
                             VsDocumentProgressFunc progress, gpointer progress_data,
                             GAsyncReadyCallback callback, gpointer user_data);
VsDocument *vs_document_load_finish (GAsyncResult *result, GError **error);

GFile *vs_document_get_file (VsDocument *self);
/* The trace, locked for the calling worker thread until
 * vs_document_unlock_trace(): for queries of other files run in GTask
 * threads as the document's own are (never on the main thread while a
 * worker may hold it for long). */
VsTrace *vs_document_lock_trace (VsDocument *self);
void vs_document_unlock_trace (VsDocument *self);
/* Duration of the trace (ns since its start). */
gint64 vs_document_get_duration (VsDocument *self);

/* The range the main chart shows first: where memory changes (the first
 * to the last change of any device's memory, failed allocations included)
 * with a small margin, not an idle start or end; the whole trace when
 * memory never changes. */
void vs_document_get_first_view (VsDocument *self, gint64 *from_ns, gint64 *to_ns);
/* Whether the recording is finished: FALSE while the trace is a live copy
 * of a recording in progress (see vs_trace_open_recording()). */
gboolean vs_document_is_finalized (VsDocument *self);
/* The devices (VsDocumentDevice*), ordered by idx. */
GPtrArray *vs_document_get_devices (VsDocument *self);
/* Failed allocations (VsOom*, from vs_oom_list), by time. */
GPtrArray *vs_document_get_ooms (VsDocument *self);
/* TRUE when the trace's times are event numbers, not ns (an imported
 * snapshot without timestamps). */
gboolean vs_document_is_event_order (VsDocument *self);
/* The call stack of the failed allocation at index of
 * vs_document_get_ooms(), frames innermost first joined with
 * VS_STACK_SEPARATOR ("" when the trace has none).  Valid as long as the
 * document. */
const char *vs_document_get_oom_stack (VsDocument *self, guint index);
/* Holds the queries that are not the charts' (instants, what-if replays,
 * vs_document_run_async, and the diagnosis: vs_document_diagnose) until
 * vs_document_release_queries(): they hold the trace or a core for long,
 * and the window shows the timelines first.  Held queries run, in order,
 * when released (a cancelled one ends at once). */
void vs_document_hold_queries (VsDocument *self);
void vs_document_release_queries (VsDocument *self);
/* The window stops showing the document: the queries it held run (their
 * own cancellables end them at once) and a diagnosis held or being read
 * is dropped, even while panes still hold the document. */
void vs_document_close (VsDocument *self);

/* Reads the trace's diagnosis in a worker thread, on a connection of its
 * own (vs-document-diagnosis.h), beside the document's other queries:
 * the second phase of a load, asked for by the window that shows the
 * document (a compared trace is never diagnosed).  When it is read (or
 * failed), "diagnosed" is notified, and again after each refresh that
 * read new events.  Closing the document drops a diagnosis being read. */
void vs_document_diagnose (VsDocument *self);
/* Whether the diagnosis is known: read, or failed (see
 * vs_document_get_diagnosis_error); the "diagnosed" property.  Until
 * then the devices' worst fragmentation is unknown and none hurt. */
gboolean vs_document_is_diagnosed (VsDocument *self);
/* Why reading the diagnosis failed, NULL when it did not. */
const char *vs_document_get_diagnosis_error (VsDocument *self);
/* The trace's diagnosis (vs_diagnose of every device): the findings the
 * Diagnosis pane lists; NULL until it is read.  Owned by the document,
 * valid until the next is read (after a refresh). */
const VsDiagnosis *vs_document_get_diagnosis (VsDocument *self);
/* Why the failed allocation at index of vs_document_get_ooms() failed,
 * as vs_oom_explain() says it (and so `report oom`); *evidence (may be
 * NULL) is set to its one sentence, owned by the document. */
VsOomCause vs_document_get_oom_cause (VsDocument *self, guint index, const char **evidence);

/* The device's memory as CUDA reported it at the failed allocation at
 * index, with the device's capacity (vs_oom_device_memory_text()):
 * "133.05 GiB free of 139.80 GiB".  Owned by the document. */
const char *vs_document_get_oom_memory (VsDocument *self, guint index);
/* Replays, in a thread, the PyTorch caching allocator of every device
 * that has one (vs_whatif_line_new) under alloc_conf
 * (PYTORCH_CUDA_ALLOC_CONF text replacing the allocator's settings) and
 * limit_bytes (VS_UNKNOWN: the limit derived from the trace).  progress
 * (may be NULL) is called on the caller's main context; cancelling
 * stops the replay.  Finish returns a GPtrArray of VsWhatifLine (one per
 * device replayed), or NULL with error set (G_IO_ERROR_CANCELLED when
 * cancelled; G_OPTION_ERROR for settings that cannot be parsed). */
void vs_document_whatif_async (VsDocument *self, const char *alloc_conf, gint64 limit_bytes,
                               GCancellable *cancellable, VsDocumentProgressFunc progress,
                               gpointer progress_data, GAsyncReadyCallback callback,
                               gpointer user_data);
GPtrArray *vs_document_whatif_finish (VsDocument *self, GAsyncResult *result, GError **error);

/* The replayed lines the charts draw from now on (a reference is taken;
 * NULL: none), with label as their legend ("reserved with …"). */
void vs_document_set_whatif (VsDocument *self, GPtrArray *lines, const char *label);
/* The lines set (NULL: none). */
GPtrArray *vs_document_get_whatif (VsDocument *self);

/* One line for the window subtitle: devices, duration, peak. */
char *vs_document_describe (VsDocument *self);

/* Reduces [t0, t1) of device_id to n_buckets for the chart, with the
 * device's title, capacity, peaks, failed allocations and NVTX ranges,
 * and the replayed reserved line of vs_document_set_whatif when it has
 * one for the device (the device's memory outside the PyTorch allocator
 * added, as recorded, so that it compares with the recorded reserved). */
void vs_document_query_chart_async (VsDocument *self, gint64 device_id, gint64 t0, gint64 t1,
                                    guint n_buckets, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
VsChartData *vs_document_query_chart_finish (VsDocument *self, GAsyncResult *result,
                                             GError **error);

/* The state of device_id at time t (live blocks, trees, fragmentation);
 * t < 0 means the instant of peak allocated memory.  range_t0/range_t1
 * (range_t1 > range_t0) restrict the blocks listed to those allocated in
 * that range; pass -1, -1 for no range. */
void vs_document_query_instant_async (VsDocument *self, gint64 device_id, gint64 t, gint64 range_t0,
                                      gint64 range_t1, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);
VsInstant *vs_document_query_instant_finish (VsDocument *self, GAsyncResult *result,
                                             GError **error);

/* Reads the trace again if its file changed (a recording in progress
 * committed new events; vs_trace_refresh()); finish returns TRUE when
 * anything was read again. */
void vs_document_refresh_async (VsDocument *self, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data);
gboolean vs_document_refresh_finish (VsDocument *self, GAsyncResult *result, GError **error);

/* An analyzer query run in a thread on the document's trace, one at a
 * time with the others: returns a new result, or NULL with error set.
 * Strings from the trace's stack cache in the result stay valid as long
 * as the document. */
typedef gpointer (*VsDocumentQueryFunc) (VsTrace *trace, gpointer data, GError **error);

/* Runs func (trace, data) in a thread; data_free (may be NULL) frees data
 * afterwards, result_free frees a result nobody finished.  Finish returns
 * func's result (owned by the caller) or NULL with its error
 * (G_IO_ERROR_CANCELLED when cancelled before it ran). */
void vs_document_run_async (VsDocument *self, VsDocumentQueryFunc func, gpointer data,
                            GDestroyNotify data_free, GDestroyNotify result_free,
                            GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data);
gpointer vs_document_run_finish (VsDocument *self, GAsyncResult *result, GError **error);

G_END_DECLS
