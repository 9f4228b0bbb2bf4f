/* SPDX-License-Identifier: MIT */
/* vs-whatif.h — replaying a trace's PyTorch allocator under other settings.
 *
 * The requests a PyTorch caching allocator received (allocations with their
 * requested size and stream, frees once completed, out-of-memory failures,
 * empty_cache() calls) are read back from a trace and fed, in order, to a
 * model of the allocator (vs-caching-allocator.h) configured with any
 * PYTORCH_CUDA_ALLOC_CONF and memory cap.  The result says what the run's
 * reserved peak would have been and which requests would have failed.
 *
 * Replayed under the trace's own settings and limit, a trace reproduces
 * its own reserved peak, segment allocations and frees, and failures.  The
 * limit a trace ran under is not recorded; it is derived (see
 * vs_whatif_run) and docs/whatif.md says how.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef enum
{
  VS_WHATIF_NONE = 0,
  VS_WHATIF_SEGMENT_EVENTS = 1 << 0, /* fill VsWhatifResult.segment_events */
  VS_WHATIF_DECIDE = 1 << 1,         /* always replay with the model deciding every release
                                      * itself, even when the pass that follows the recorded
                                      * run already gives the answer (tests) */
  VS_WHATIF_FAILURES = 1 << 2,       /* fill VsWhatifResult.failures */
} VsWhatifFlags;

/* One change of reserved memory in the replay. */
typedef struct
{
  gint64 op; /* alloc_op code: 4 segment_alloc, 5 segment_free, 6 segment_map, 7 segment_unmap */
  gint64 address; /* where the model put it (the recorded run's address when it can) */
  gint64 bytes;
  gint64 time_ns; /* ns since the trace's start, on the trace's own time axis: the time of
                   * the recorded change it repeats (a change the recorded run made before
                   * the same request), else of the request or release that caused it */
} VsWhatifSegmentEvent;

/* The allocator's state at one of the trace's recorded failures, as the
 * model following the recorded run holds it once the retry's releases are
 * done: the figures PyTorch's out-of-memory message prints. */
typedef struct
{
  gint64 time_ns;              /* ns since the trace's start */
  gint64 requested_bytes;      /* the request as the program made it */
  gint64 alloc_bytes;          /* as the allocator rounded it: the segment it tried to get
                           * ("Tried to allocate") */
  gint64 allocated_bytes;      /* live blocks at their rounded sizes (memory_stats
                           * allocated_bytes: "allocated by PyTorch") */
  gint64 requested_live_bytes; /* the same blocks at their requested sizes (requested_bytes) */
  gint64 reserved_bytes;       /* reserved; minus allocated_bytes: "reserved but unallocated" */
} VsWhatifFailure;

/* Called from the replaying thread with the fraction of the work done
 * (0..1), every 65536 events (a few times a second on large traces).
 * Returns FALSE to stop the replay.  (The library links GLib alone, not
 * GIO, so that the CLI can link it statically: a caller holding a
 * GCancellable returns !g_cancellable_is_cancelled() here.) */
typedef gboolean (*VsWhatifProgressFunc) (double fraction, gpointer user_data);

typedef struct
{
  gint64 device_id;
  gint64 allocator_id;
  char *alloc_conf;   /* the settings replayed, as PYTORCH_CUDA_ALLOC_CONF text ("" = defaults) */
  gint64 limit_bytes; /* the cap replayed; VS_UNKNOWN: none */
  gboolean limit_derived; /* limit_bytes was derived from the trace */
  gint64 peak_reserved_bytes;
  gint64 peak_allocated_bytes; /* requested bytes, as the trace's `allocated` */
  gint64 final_reserved_bytes;
  gint64 failed_alloc_count;
  gint64 first_failure_time_ns; /* ns since the trace's start; VS_UNKNOWN: none failed */
  gint64 segment_alloc_count;   /* segments taken, or pieces mapped */
  gint64 segment_free_count;    /* segments given back, or pieces unmapped */
  gint64 request_count;         /* allocation requests replayed */
  GArray *segment_events;       /* VsWhatifSegmentEvent, with VS_WHATIF_SEGMENT_EVENTS */
  GArray *failures;             /* VsWhatifFailure, the recorded failures in order, with
                     * VS_WHATIF_FAILURES (whatever settings are replayed) */
} VsWhatifResult;

/* Frees what result owns and zeroes it. */
void vs_whatif_result_clear (VsWhatifResult *result);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsWhatifResult, vs_whatif_result_clear)

/* The ids of the trace's PyTorch caching allocators (allocator kind
 * 'pytorch'), by device index then id.  Newly allocated GArray of gint64. */
GArray *vs_whatif_allocators (VsTrace *trace);

/* The settings allocator_id ran with, as PYTORCH_CUDA_ALLOC_CONF text
 * naming what differs from the defaults.  NULL with error set when they
 * cannot be read. */
char *vs_whatif_own_alloc_conf (VsTrace *trace, gint64 allocator_id, GError **error);

/* Replays the requests of PyTorch allocator allocator_id through the
 * caching-allocator model configured by alloc_conf (PYTORCH_CUDA_ALLOC_CONF
 * text replacing the whole configuration; NULL: the settings the trace
 * recorded) under limit_bytes:
 *   - a number of bytes: the cap set_per_process_memory_fraction() sets
 *     (checked before each new segment, and what garbage_collection_threshold
 *     is a share of);
 *   - VS_UNKNOWN: the limit the recorded run met, derived from the trace —
 *     the smallest that makes every recorded failure and every release of
 *     cached memory before a new segment necessary, never below the
 *     recorded reserved peak; the device's capacity when nothing failed.
 * Fills out (cleared first; release with vs_whatif_result_clear).  Returns
 * FALSE with error set for an allocator that is not a PyTorch one
 * (VS_TRACE_ERROR_INVALID_ARGUMENT), settings that cannot be parsed
 * (G_OPTION_ERROR) or a trace that cannot be read. */
gboolean vs_whatif_run (VsTrace *trace, gint64 allocator_id, const char *alloc_conf,
                        gint64 limit_bytes, VsWhatifFlags flags, VsWhatifResult *out,
                        GError **error);

/* vs_whatif_run, reporting its progress to progress (may be NULL) in the
 * calling thread; when progress returns FALSE it stops and returns FALSE
 * with VS_TRACE_ERROR_CANCELLED (nothing set in out). */
gboolean vs_whatif_run_full (VsTrace *trace, gint64 allocator_id, const char *alloc_conf,
                             gint64 limit_bytes, VsWhatifFlags flags, VsWhatifProgressFunc progress,
                             gpointer progress_data, VsWhatifResult *out, GError **error);

/* The trace's own replay and n_confs others, reading the trace's history
 * of releases and failures once: results[0] gets what vs_whatif_run
 * (trace, allocator_id, NULL, VS_UNKNOWN, …) gives, results[k] (k = 1 …
 * n_confs) what it gives for alloc_confs[k - 1] (NULL: the trace's own
 * settings) under limit_bytes.  results must hold n_confs + 1 results
 * (each released with vs_whatif_result_clear).  On failure none is set. */
gboolean vs_whatif_run_settings (VsTrace *trace, gint64 allocator_id,
                                 const char *const *alloc_confs, guint n_confs, gint64 limit_bytes,
                                 VsWhatifFlags flags, VsWhatifResult *results, GError **error);

/* vs_whatif_run_settings with progress, as vs_whatif_run_full. */
gboolean vs_whatif_run_settings_full (VsTrace *trace, gint64 allocator_id,
                                      const char *const *alloc_confs, guint n_confs,
                                      gint64 limit_bytes, VsWhatifFlags flags,
                                      VsWhatifProgressFunc progress, gpointer progress_data,
                                      VsWhatifResult *results, GError **error);

/* One setting to replay from a plan: alloc_conf (NULL: the trace's own
 * settings) under limit_bytes (VS_UNKNOWN: the limit derived from the
 * trace), as vs_whatif_run takes them. */
typedef struct
{
  const char *alloc_conf;
  gint64 limit_bytes;
} VsWhatifSetting;

/* The learning pass of one allocator (its own settings, what the recorded
 * run released and what failed), which every replay of it shares. */
typedef struct _VsWhatifPlan VsWhatifPlan;

/* Makes the learning pass of PyTorch allocator allocator_id with flags (as
 * vs_whatif_run takes them; no progress).  trace must outlive the plan.
 * NULL with error set as vs_whatif_run fails. */
VsWhatifPlan *vs_whatif_plan_new (VsTrace *trace, gint64 allocator_id, VsWhatifFlags flags,
                                  GError **error);

void vs_whatif_plan_free (VsWhatifPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsWhatifPlan, vs_whatif_plan_free)

/* The limit derived from the trace (what results[k].limit_bytes is for a
 * setting with VS_UNKNOWN); VS_UNKNOWN when there is none. */
gint64 vs_whatif_plan_limit (const VsWhatifPlan *plan);

/* Fills results[k] (k < n; each released with vs_whatif_result_clear)
 * with what vs_whatif_run gives for settings[k] and the plan's flags.  The
 * replays run at once, each on a thread and a read-only connection of its
 * own, when the trace is a finished file and there are processors for
 * them; the results are the same either way.  On failure none is set and
 * error is what vs_whatif_run gives. */
gboolean vs_whatif_plan_run (VsWhatifPlan *plan, const VsWhatifSetting *settings, guint n,
                             VsWhatifResult *results, GError **error);

G_END_DECLS
