/* SPDX-License-Identifier: MIT */
/* vs-trace.h — opening, validating and describing a vramscope trace.
 *
 * A VsTrace is one read-only SQLite connection on a trace file plus small
 * caches (devices, allocators, rendered stacks).  vs_trace_open() refuses
 * anything that is not a readable trace of a schema this build knows, with
 * one sentence naming the file; a trace whose recording was interrupted
 * (meta 'finalized' not 1) is finalized first when the file is writable.
 *
 * A trace still being recorded (its recorder holds the file open) is never
 * written: vs_trace_open() then reads a private finalized copy of what the
 * recorder has committed, as vs_trace_open_recording() does, and
 * vs_trace_refresh() takes a new copy after further commits.
 *
 * Threads: a VsTrace may be used from one thread at a time.  To work in a
 * GTask thread while the main thread keeps its own, open the same path a
 * second time in that thread (opening a finalized trace is cheap).
 *
 * Times: every time this library takes or returns is in nanoseconds since
 * the trace's start (meta 'start_ns'), unless a name says "abs".  Integer
 * values the trace cannot know are VS_UNKNOWN (from vs-trace-format.h).
 */
#pragma once

#include <glib.h>

#include "vs-trace-format.h"

G_BEGIN_DECLS

#define VS_TRACE_ERROR (vs_trace_error_quark ())

typedef enum
{
  VS_TRACE_ERROR_NOT_FOUND,     /* no file at the path */
  VS_TRACE_ERROR_NOT_A_TRACE,   /* empty, not SQLite, or another application's */
  VS_TRACE_ERROR_NEWER_SCHEMA,  /* written by a newer vramscope */
  VS_TRACE_ERROR_CORRUPT,       /* truncated, malformed or inconsistent */
  VS_TRACE_ERROR_NOT_FINALIZED, /* interrupted recording on a read-only file */
  VS_TRACE_ERROR_INVALID_ARGUMENT, /* a query was given a device, allocator or range that does not exist */
  VS_TRACE_ERROR_FAILED,           /* any other failure (I/O, SQLite) */
  VS_TRACE_ERROR_CANCELLED,        /* the caller asked a long query to stop */
} VsTraceError;

typedef struct _VsTrace VsTrace;

/* A GPU of the trace. */
typedef struct
{
  gint64 id;          /* device.id, the key used by every query */
  gint64 idx;         /* the index a user recognises (CUDA device ordinal) */
  char *uuid;         /* NULL when unknown */
  char *name;         /* NULL when unknown */
  gint64 total_bytes; /* capacity, VS_UNKNOWN when unknown */
} VsDeviceInfo;

/* An allocator that hands out memory inside what it reserves. */
typedef struct
{
  gint64 id; /* allocator.id (> 0; 0 means "all" in queries) */
  gint64 device_id;
  gint64 process_id; /* VS_UNKNOWN when unknown */
  char *kind;        /* "pytorch", "pool" or "nvtx" */
  char *name;        /* "pytorch", "pool:0x…", "nvtx:<heap>" */
} VsAllocatorInfo;

GQuark vs_trace_error_quark (void);

/* Opens the trace at path read-only and validates it.  Never creates a
 * file.  A trace not yet finalized is read as a live copy (see
 * vs_trace_open_recording()) when another process has it open — its recorder
 * is still writing it — and otherwise, its recording having been killed,
 * finalized in place first if the file is writable.  Returns a new VsTrace, or NULL with error set (domain
 * VS_TRACE_ERROR, one sentence naming the file). */
VsTrace *vs_trace_open (const char *path, GError **error);

/* Opens a trace that may still be being written — typically a recording
 * process's file `<outdir>/.vramscope-spool-<pid>-XXXXXX/process-<pid>-<ns>.db`
 * — without ever writing it: what is committed is copied (one consistent
 * snapshot, through a read-only connection; a WAL writer goes on
 * committing meanwhile) into a private temporary database, which is
 * finalized and read.  Works on any trace, finalized or not.  Returns a new
 * VsTrace, or NULL with error set. */
VsTrace *vs_trace_open_recording (const char *path, GError **error);

/* Reads the trace again when its file changed since it was last read: for a
 * live trace, when the recorder committed (PRAGMA data_version); otherwise
 * when the size or modification time of the file or its WAL changed (a
 * file that turns out to be being written is then followed live).  Sets
 * *changed (may be NULL) to whether anything was read again.  Devices,
 * allocators, extent and caches are reloaded; pointers obtained from trace
 * before (device and allocator infos, stack texts) stay valid until
 * vs_trace_free().  On failure returns FALSE with error set and, for a live
 * trace, keeps the previous copy. */
gboolean vs_trace_refresh (VsTrace *trace, gboolean *changed, GError **error);

/* Whether trace is a live copy of a recording still in progress: opened
 * live and its file still exists (the recorder removes a process's file
 * once it has merged it into the final trace). */
gboolean vs_trace_is_recording (VsTrace *trace);

/* Closes the connection and frees trace.  NULL is allowed. */
void vs_trace_free (VsTrace *trace);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTrace, vs_trace_free)

/* The path given to vs_trace_open(); owned by trace. */
const char *vs_trace_get_path (VsTrace *trace);

/* Absolute time (ns on the trace's clock) that relative times count from:
 * meta 'start_ns', or the earliest event when the meta row is missing. */
gint64 vs_trace_get_start_abs_ns (VsTrace *trace);

/* Duration of the trace in ns since start: the latest time of any memory
 * event, kernel, failed allocation or closed NVTX range (0 when empty). */
gint64 vs_trace_get_duration_ns (VsTrace *trace);

/* The highest replay sequence number in the trace (0 when empty).  Every
 * seq used by the queries lies in [1, last seq]. */
gint64 vs_trace_get_last_seq (VsTrace *trace);

/* Whether device-level memory (what processes took from CUDA) was
 * observed: FALSE for a trace imported from an allocator's history. */
gboolean vs_trace_has_device_level (VsTrace *trace);

/* A meta value as text, or NULL when the key is absent.  Free with g_free. */
char *vs_trace_dup_meta (VsTrace *trace, const char *key);

/* TRUE when the trace's times are event numbers, not ns: an imported
 * snapshot whose history has no timestamps (meta time_axis "order"). */
gboolean vs_trace_time_is_event_order (VsTrace *trace);

/* The devices ordered by idx, as a GPtrArray of VsDeviceInfo (owned by
 * trace, valid until vs_trace_free; do not modify). */
const GPtrArray *vs_trace_get_devices (VsTrace *trace);

/* The allocators ordered by device idx then name, a GPtrArray of
 * VsAllocatorInfo owned by trace. */
const GPtrArray *vs_trace_get_allocators (VsTrace *trace);

/* The device with device.id == device_id, or NULL. */
const VsDeviceInfo *vs_trace_lookup_device (VsTrace *trace, gint64 device_id);

/* The device a user calls idx, or NULL. */
const VsDeviceInfo *vs_trace_find_device_by_idx (VsTrace *trace, gint64 idx);

/* The allocator with this id, or NULL (also for 0, "all"). */
const VsAllocatorInfo *vs_trace_lookup_allocator (VsTrace *trace, gint64 allocator_id);

/* The name reports print for an allocator id: "all" for 0, else
 * allocator.name ("?" for an id that does not exist).  Owned by trace. */
const char *vs_trace_allocator_name (VsTrace *trace, gint64 allocator_id);

/* The name the trace's mem_kind table gives a memory kind code (VsMemKind:
 * "device", "async", …), or "?" for a code it does not define.  The
 * string is interned: valid for the life of the process. */
const char *vs_trace_mem_kind_name (VsTrace *trace, gint64 kind);

/* The replay sequence number of the state of (device_id, allocator_id)
 * at time_ns: the seq of the last change of that series at or before
 * time_ns, or 0 when the series has no change up to then (its state is
 * "before the trace"); -1 with error set on failure.  One index seek. */
gint64 vs_trace_seq_at_time (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 time_ns,
                             GError **error);

G_END_DECLS
