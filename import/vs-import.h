/* SPDX-License-Identifier: MIT */
/* vs-import.h — turning a PyTorch memory snapshot into a vramscope trace.
 *
 * A snapshot (torch.cuda.memory._dump_snapshot) holds the allocator's state
 * at one instant (`segments`) and its recent history (`device_traces`, a
 * ring buffer).  The import writes the history as allocator-level events of
 * one `pytorch` allocator per device, with Python frames as stacks and `oom`
 * entries as failed allocations, after synthetic events that recreate what
 * was live before the first history entry (found by replaying the history
 * backwards from the final segments).  The trace is then finalized.
 */
#pragma once

#include <glib.h>

#include "vs-import-error.h"
#include "vs-timings.h"

G_BEGIN_DECLS

/* Progress of an import: stage names "reading", "importing", "finalizing";
 * fraction in [0, 1] over the whole import.  Return FALSE to cancel. */
typedef gboolean (*VsImportProgress) (const char *stage, double fraction, gpointer data);

typedef struct
{
  guint64 entries;          /* history entries read, all devices */
  guint64 synthetic_events; /* events written for memory live before them */
  guint devices;
  gboolean history_overflow;
  gboolean event_order; /* no time_us: times are event numbers */
  guint64 skipped;      /* entries and annotations not imported */
  /* Wall time of each stage, in microseconds: parsing the pickle, writing
   * the events, and finalizing the trace (vs_writer_close). */
  gint64 reading_us, importing_us, finalizing_us;
} VsImportStats;

/* Imports the snapshot at pickle_path into a new trace at trace_path (an
 * existing file there is replaced), finalized unless finalize is FALSE
 * (raw events only, for a trace that will be merged into another and
 * finalized there; a reader finalizes such a file when it first opens
 * it).  On failure returns FALSE with error set (VS_PICKLE_ERROR for a
 * malformed or refused pickle); trace_path may then hold a partial file,
 * which the caller removes.  stats may be NULL. */
gboolean vs_import_snapshot (const char *pickle_path, const char *trace_path, gboolean finalize,
                             VsImportProgress progress, gpointer progress_data,
                             VsImportStats *stats, GError **error);

struct VsRowSink;

/* vs_import_snapshot(), with the finalizer's derived rows going to sink
 * (NULL: their tables; a VsRowChunker's when the trace is compacted next)
 * and the import's stages and the finalizer's passes marked into timings
 * (NULL: not marked). */
gboolean vs_import_snapshot_full (const char *pickle_path, const char *trace_path,
                                  gboolean finalize, struct VsRowSink *sink, VsTimings *timings,
                                  VsImportProgress progress, gpointer progress_data,
                                  VsImportStats *stats, GError **error);

G_END_DECLS
