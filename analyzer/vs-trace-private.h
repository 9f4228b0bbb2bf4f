/* SPDX-License-Identifier: MIT */
/* vs-trace-private.h — what the analyzer's files share about a VsTrace:
 * the connection, a cache of prepared statements keyed by their SQL, and
 * helpers to read nullable columns and to turn SQLite failures into
 * GErrors that name the file; and the steps of opening and re-reading a
 * trace that vs-trace.c, vs-trace-open.c, vs-trace-recording.c and
 * vs-trace-describe.c share among themselves.
 */
#pragma once

#include <sqlite3.h>

#include "vs-trace.h"

G_BEGIN_DECLS

/* The stacks and frames read from a trace (vs-stack.c). */
typedef struct _VsStackCache VsStackCache;
void vs_stack_cache_free (VsStackCache *cache);

struct _VsTrace
{
  char *path;
  sqlite3 *db;
  gint64 start_abs_ns;
  gint64 duration_ns;
  gint64 last_seq;
  GPtrArray *devices;        /* VsDeviceInfo*, by idx */
  GPtrArray *allocators;     /* VsAllocatorInfo*, by device idx, name */
  GPtrArray *mem_kinds;      /* interned mem_kind.name by mem_kind.id (NULL: no such id) */
  GHashTable *statements;    /* const char *sql (by address) -> sqlite3_stmt* */
  VsStackCache *stacks;      /* the stacks and frames read (vs-stack.c) */
  GHashTable *level_shifts;  /* "device/allocator" -> GArray of gint64 shifts, ascending */
  GHashTable *shared_series; /* "device/allocator" of allocators whose series
                              * is stored as the device's `all` series */
  gboolean device_level;     /* device-level memory was observed (not an
                            * import: meta source 'import') */
  gint64 kernel_max_ns;      /* longest kernel, -1 until read */
  gint64 schema_version;     /* PRAGMA user_version, set by vs_trace_validate */
  gboolean full_paths;       /* stacks show full paths (vs_stack_set_full_paths) */
  char *path_base;           /* vs_stack_get_path_base(), once read */
  gboolean path_base_read;
  gint64 query_deadline; /* monotonic µs after which the running query
                              * is interrupted (see vs_trace_statement) */

  /* Following a trace that is being written (vs_trace_open_recording): trace->db
   * reads a private finalized copy (already unlinked); source is a
   * read-only connection on the file at path, used only to copy from and
   * to notice commits. */
  gboolean live;
  gboolean live_ended; /* the file at path is gone: the recording ended */
  sqlite3 *source;
  gint64 source_version; /* PRAGMA data_version at the last copy */
  char *stamp;           /* size and mtime of path and its WAL at the last read */
  struct _VsFrameworkPools *framework_pools; /* pools seen from the device level
                                              * (vs-framework-pools.h) */
  GPtrArray *retired;                        /* caches replaced by vs_trace_refresh(), kept
                            * until vs_trace_free() so pointers handed out
                            * before a refresh stay valid */
};

/* The last series row of (device_id, allocator_id) with seq <= seq: its
 * seq and absolute ts, or 0 and VS_UNKNOWN when there is none.  O(log n)
 * primary-key seeks (the series is keyed by time). */
gboolean vs_trace_series_row_at_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                                     gint64 seq, gint64 *row_seq, gint64 *row_ts, GError **error);

/* Whether trace is compacted (schema 5): its big tables are virtual
 * tables over column chunks, with no index (vs-chunk-vtab.h). */
gboolean vs_trace_is_compacted (VsTrace *trace);

/* Whether the finalizer's interval bins over block lifetimes
 * (block.span_bin) cover seq, so a point query can use them. */
gboolean vs_trace_can_use_bins (VsTrace *trace, gint64 seq);

/* The condition selecting "allocated" blocks in SQL over `block`: those
 * an allocator handed out (level 2, and a pool's own asynchronous
 * allocations, level 1 kind async with the pool as allocator) and
 * device-level allocations that belong to no allocator (kinds device,
 * async, vmm).  Exactly the blocks whose bytes the finalizer adds to the
 * allocated series.  Parameter ?2 is the allocator (0 = all). */
#define VS_ALLOCATED_BLOCK_SQL                                                                     \
  "((level = 2 AND (?2 = 0 OR allocator_id = ?2))"                                                 \
  " OR (level = 1 AND kind = 5 AND allocator_id IS NOT NULL"                                       \
  "     AND (?2 = 0 OR allocator_id = ?2))"                                                        \
  " OR (level = 1 AND ?2 = 0 AND allocator_id IS NULL AND kind IN (1, 5, 6)))"

/* How long one query may run, in seconds, and the environment variable
 * that changes it; documented in docs/architecture.md. */
#define VS_TRACE_QUERY_LIMIT_S 60
#define VS_TRACE_QUERY_LIMIT_ENV "VRAMSCOPE_QUERY_LIMIT_S"

/* The query time limit in seconds: VS_TRACE_QUERY_LIMIT_ENV when set to
 * 1..86400, else VS_TRACE_QUERY_LIMIT_S. */
int vs_trace_query_limit_s (void);

/* The most memory SQLite may hold in this process (its page caches, sorts
 * and recursive queries), in bytes; a query needing more fails. */
#define VS_TRACE_SQLITE_HEAP_LIMIT ((sqlite3_int64)2 << 30)

/* The prepared statement for sql, reset and with its bindings cleared.
 * Handing it out starts its time budget: until the next statement is
 * handed out, the queries on trace->db may run VS_TRACE_QUERY_LIMIT_S
 * seconds, then fail with an error saying so.
 * sql must be a string with static storage: its address is the cache key.
 * Returns NULL with error set when it cannot be prepared. */
sqlite3_stmt *vs_trace_statement (VsTrace *trace, const char *sql, GError **error);

/* Sets error from the connection's last failure, naming the file; result
 * codes meaning a damaged file give VS_TRACE_ERROR_CORRUPT.  Always
 * returns FALSE so callers can `return vs_trace_sql_error (…)`. */
gboolean vs_trace_sql_error (VsTrace *trace, GError **error);

/* The end of a query whose last sqlite3_step() on stmt returned rc:
 * resets stmt; TRUE when rc is SQLITE_DONE (every row read), else FALSE
 * with error set as vs_trace_sql_error() sets it. */
gboolean vs_trace_step_done (VsTrace *trace, sqlite3_stmt *stmt, int rc, GError **error);

/* The same for a query the caller may have stopped reading early: TRUE
 * also when rc is SQLITE_ROW. */
gboolean vs_trace_step_ended (VsTrace *trace, sqlite3_stmt *stmt, int rc, GError **error);

/* Resets stmt (when not NULL) and sets error to "PATH is inconsistent: "
 * followed by the formatted text: what a reader found that a trace's
 * finalizer never writes.  Returns FALSE, as vs_trace_sql_error() does. */
gboolean vs_trace_corrupt_error (VsTrace *trace, sqlite3_stmt *stmt, GError **error,
                                 const char *format, ...) G_GNUC_PRINTF (4, 5);

/* Column i as an integer, VS_UNKNOWN when NULL. */
gint64 vs_column_int (sqlite3_stmt *stmt, int i);

/* Column i as a newly allocated string, NULL when NULL. */
char *vs_column_dup (sqlite3_stmt *stmt, int i);

/* An absolute ts converted to ns since start; VS_UNKNOWN stays unknown. */
gint64 vs_trace_rel (VsTrace *trace, gint64 abs_ns);

/* A relative time converted to absolute, saturating instead of
 * overflowing. */
gint64 vs_trace_abs (VsTrace *trace, gint64 rel_ns);

/* The allocator id under which the series of (device_id, allocator_id) is
 * stored in series and series_level: allocator_id, or 0 when the finalizer
 * stored it once as the device's identical `all` series
 * (summary.series_allocator_id).  Rows read through 0 carry `all`'s device
 * columns, which an allocator's series does not have: callers reading an
 * allocator's series treat those as unknown. */
gint64 vs_trace_series_id (VsTrace *trace, gint64 device_id, gint64 allocator_id);

/* Binds ?1 to device_id and ?2 to the id the series of (device_id,
 * allocator_id) is stored under, as every query on series and
 * series_level names them. */
void vs_trace_bind_series (VsTrace *trace, sqlite3_stmt *stmt, gint64 device_id,
                           gint64 allocator_id);

/* The cached statement of sql (vs_trace_statement()) on series or
 * series_level, with ?1 and ?2 bound as vs_trace_bind_series() binds them
 * and ?3 and ?4 to p3 and p4; NULL with error set when it cannot be
 * prepared. */
sqlite3_stmt *vs_trace_series_statement (VsTrace *trace, const char *sql, gint64 device_id,
                                         gint64 allocator_id, gint64 p3, gint64 p4, GError **error);

/* The summary-level shifts available for (device_id, allocator_id),
 * ascending (possibly empty).  Owned by trace. */
GArray *vs_trace_level_shifts (VsTrace *trace, gint64 device_id, gint64 allocator_id,
                               GError **error);

/* The steps of opening and re-reading a trace, shared by vs-trace*.c. */

/* A new VsTrace for path: empty caches, no connection yet. */
VsTrace *vs_trace_new (const char *path);

/* sqlite3_open_v2 (file, db, flags) for a trace, which may come from
 * anywhere: the file's own views and triggers may not use functions or
 * virtual tables that are not marked harmless (trusted_schema off). */
int vs_trace_sqlite_open (const char *file, sqlite3 **db, int flags);

/* Opens trace->db read-only on file (the trace's path, or its private
 * copy when following a recording); error names trace->path. */
gboolean vs_trace_open_connection (VsTrace *trace, const char *file, GError **error);

/* Finalizes every cached statement and closes trace->db (set to NULL). */
void vs_trace_close_connection (VsTrace *trace);

/* Runs a one-row, one-column query; *out gets the value (VS_UNKNOWN for
 * NULL or no row).  sql has static storage (see vs_trace_statement). */
gboolean vs_trace_query_int (VsTrace *trace, const char *sql, gint64 *out, GError **error);

/* Moves the caches whose contents callers may still point into (devices,
 * allocators, stacks) to trace->retired, starts new ones, and forgets the
 * rest (level shifts, extent, longest kernel) before a reload. */
void vs_trace_retire_caches (VsTrace *trace);

/* Checks what the file's first 100 bytes and its size can tell: present,
 * not empty (an empty file beside a non-empty WAL is refused without
 * touching the WAL), SQLite, not shorter than the header says.  Returns FALSE with error set otherwise. */
gboolean vs_trace_check_file (const char *path, GError **error);

/* Checks trace->db's application id and schema version, and sets
 * *finalized to whether meta 'finalized' is 1. */
gboolean vs_trace_validate (VsTrace *trace, gboolean *finalized, GError **error);

/* Finalizes the interrupted recording at trace->path in place through a
 * read-write connection of its own (trace->db must be closed); fails with
 * VS_TRACE_ERROR_NOT_FINALIZED when the file or its directory is not
 * writable. */
gboolean vs_trace_finalize_in_place (VsTrace *trace, GError **error);

/* What every way of opening ends with: every table probed at both ends,
 * then devices, allocators and extent loaded. */
gboolean vs_trace_load_tables (VsTrace *trace, GError **error);

/* Fills trace->devices and trace->allocators (which must be empty). */
gboolean vs_trace_load_devices (VsTrace *trace, GError **error);

/* Sets trace->start_abs_ns, duration_ns and last_seq. */
gboolean vs_trace_load_extent (VsTrace *trace, GError **error);

/* Size and modification time of path and its WAL, as a newly allocated
 * string: what changes when a writer commits. */
char *vs_trace_file_stamp (const char *path);

/* Whether another process has the database at path open (its recorder is
 * still writing it), told by the locks SQLite holds on the file. */
gboolean vs_trace_is_being_written (const char *path);

/* Opens trace, fresh from vs_trace_new() and owned by this call from now
 * on, as a live copy of what is committed at its path.  Returns trace, or
 * NULL with error set (trace is then freed). */
VsTrace *vs_trace_open_recording_copy (VsTrace *trace, GError **error);

G_END_DECLS
