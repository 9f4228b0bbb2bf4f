/* SPDX-License-Identifier: MIT */
/* vs-trace-writer.c — creating a trace and appending rows to it.
 *
 * Workload: millions of small inserts from one thread (the collector's
 * writer thread, the importer, the benchmark generator).  Every insert uses
 * a persistent prepared statement; rows are grouped into transactions of
 * VS_WRITER_BATCH_ROWS so the cost per row is one sqlite3_step().  Indexes
 * the readers need are created later by vs_trace_finalize(), so inserts only
 * maintain the rowid b-trees (and the small dedup indexes of frame/stack).
 *
 * alloc_event and kernel_exec rows, the bulk of every trace, are gathered
 * and inserted VS_SQL_BATCH_ROWS at a time by one INSERT … SELECT
 * (vs-sql-batch.h), two to three times as fast per row.  They keep the order they were written
 * in, so their ids are the same as one INSERT each would give; gathered
 * rows are inserted before every commit, so a committed trace holds every
 * row written (rows not yet committed are lost with a killed writer
 * either way).
 *
 * In bulk mode (vs_writer_set_bulk: an import writing millions of events
 * in one go) the writer also keeps the finalizer's record of every event
 * row it writes, with its id, so that finalizing on close need not read
 * millions of rows back (vs_fin_finalize_gathered); should memory for
 * them run out, the finalizer reads the tables as usual.
 */
#include "vs-trace-writer.h"

#include <errno.h>
#include <stdarg.h>
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "vs-kernel-configs.h"
#include "vs-sql-batch.h"
#include "vs-trace-writer-private.h"

/* The codes the writer stores are the ids of the lookup tables' rows in
 * schemas/trace.sql: a trace written by one version reads the same in
 * every other.  Checked when compiling, so nothing here can stop the
 * profiled program. */
static_assert (VS_TRACE_SCHEMA_COMPACTED == VS_TRACE_SCHEMA_VERSION + 1,
               "a compacted trace is the version after the plain one");
static_assert (VS_MEM_KIND_DEVICE == 1 && VS_MEM_KIND_PINNED == 2, "mem_kind rows 1, 2");
static_assert (VS_MEM_KIND_MANAGED == 3 && VS_MEM_KIND_STATIC == 4, "mem_kind rows 3, 4");
static_assert (VS_MEM_KIND_ASYNC == 5 && VS_MEM_KIND_VMM == 6, "mem_kind rows 5, 6");
static_assert (VS_MEM_KIND_PAGEABLE == 7 && VS_MEM_KIND_ARRAY == 8, "mem_kind rows 7, 8");
static_assert (VS_MEM_KIND_MANAGED_STATIC == 9, "mem_kind row 9");
static_assert (VS_MEM_OP_ALLOC == 1 && VS_MEM_OP_FREE == 2, "mem_op rows");
static_assert (VS_ALLOC_OP_ALLOC == 1 && VS_ALLOC_OP_FREE_REQUESTED == 2, "alloc_op rows 1, 2");
static_assert (VS_ALLOC_OP_FREE_COMPLETED == 3 && VS_ALLOC_OP_SEGMENT_ALLOC == 4,
               "alloc_op rows 3, 4");
static_assert (VS_ALLOC_OP_SEGMENT_FREE == 5 && VS_ALLOC_OP_SEGMENT_MAP == 6, "alloc_op rows 5, 6");
static_assert (VS_ALLOC_OP_SEGMENT_UNMAP == 7, "alloc_op row 7");
static_assert (VS_POOL_OP_CREATED == 1 && VS_POOL_OP_DESTROYED == 2, "pool_op rows 1, 2");
static_assert (VS_POOL_OP_TRIMMED == 3 && VS_POOL_OP_SAMPLE == 4, "pool_op rows 3, 4");
static_assert (VS_FRAME_NATIVE == 1 && VS_FRAME_PYTHON == 2, "frame_kind rows 1, 2");
static_assert (VS_FRAME_INLINE == 3 && VS_FRAME_LABEL == 4, "frame_kind rows 3, 4");
static_assert (VS_TRACE_MAX_STACK_DEPTH > 0 && VS_TRACE_MAX_STACK_DEPTH <= INT32_MAX,
               "a stack's depth in frames fits 32 bits");

enum
{
  STMT_META,
  STMT_PROCESS,
  STMT_DEVICE_FIND,
  STMT_DEVICE_ADD,
  STMT_ALLOCATOR,
  STMT_MODULE,
  STMT_FRAME_ADD,
  STMT_FRAME_FIND,
  STMT_STACK_ADD,
  STMT_STACK_FIND,
  STMT_MEM_EVENT,
  STMT_POOL_EVENT,
  STMT_FAILED_ALLOC,
  STMT_RANGE_ADD,
  STMT_RANGE_END,
  STMT_KERNEL_CONFIG,
  STMT_MEMCPY,
  STMT_MEMSET,
  N_STMTS
};

/* One statement per row kind; the order matches the enum above. */
static const char *const stmt_sql[N_STMTS] = {
  [STMT_META] = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
  [STMT_PROCESS] = "INSERT INTO process (pid, ppid, host, rank, local_rank, world_size,"
                   " cuda_visible_devices, command_line, start_ns, end_ns, exit_status)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
  [STMT_DEVICE_FIND] = "SELECT id FROM device WHERE uuid = ?",
  [STMT_DEVICE_ADD] = "INSERT INTO device (idx, uuid, name, total_bytes) VALUES (?,?,?,?)",
  [STMT_ALLOCATOR] = "INSERT INTO allocator (device_id, process_id, kind, name, handle,"
                     " settings) VALUES (?,?,?,?,?,?)",
  [STMT_MODULE] = "INSERT INTO module (process_id, path, build_id, load_address, size)"
                  " VALUES (?,?,?,?,?)",
  [STMT_FRAME_ADD] = "INSERT OR IGNORE INTO frame (kind, module_id, address, function, file,"
                     " line) VALUES (?,?,?,?,?,?)",
  [STMT_FRAME_FIND]
  = "SELECT id FROM frame WHERE kind = ?1 AND ifnull(module_id, 0) = ifnull(?2, 0)"
    " AND ifnull(address, 0) = ifnull(?3, 0) AND ifnull(function, '') = ifnull(?4, '')"
    " AND ifnull(file, '') = ifnull(?5, '') AND ifnull(line, 0) = ifnull(?6, 0)",
  [STMT_STACK_ADD] = "INSERT OR IGNORE INTO stack (parent_id, frame_id) VALUES (?, ?)",
  [STMT_STACK_FIND] = "SELECT id FROM stack WHERE parent_id = ? AND frame_id = ?",
  [STMT_MEM_EVENT] = "INSERT INTO mem_event (ts, process_id, tid, device_id, context, stream,"
                     " kind, op, address, bytes, pool_id, pool_size, pool_utilized,"
                     " correlation, stack_id, range_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [STMT_POOL_EVENT] = "INSERT INTO pool_event (ts, process_id, device_id, pool_id, op, size,"
                      " utilized, release_threshold, min_bytes_to_keep, correlation, stack_id)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
  [STMT_FAILED_ALLOC] = "INSERT INTO failed_alloc (ts, process_id, tid, device_id, allocator_id,"
                        " api, requested_bytes, error, error_name, device_free_bytes,"
                        " device_total_bytes, correlation, stack_id, range_id)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [STMT_RANGE_ADD] = "INSERT INTO nvtx_range (process_id, tid, domain, name, start_ns, end_ns,"
                     " parent_id, depth) VALUES (?,?,?,?,?,?,?,?)",
  [STMT_RANGE_END] = "UPDATE nvtx_range SET end_ns = ? WHERE id = ?",
  [STMT_KERNEL_CONFIG] = "INSERT INTO kernel_config (name, grid_x, grid_y, grid_z, block_x,"
                         " block_y, block_z, static_shared, dynamic_shared, registers)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?)",
  [STMT_MEMCPY] = "INSERT INTO memcpy (start_ns, end_ns, process_id, device_id, stream,"
                  " correlation, copy_kind, src_kind, dst_kind, bytes)"
                  " VALUES (?,?,?,?,?,?,?,?,?,?)",
  [STMT_MEMSET] = "INSERT INTO memset (start_ns, end_ns, process_id, device_id, stream,"
                  " correlation, bytes, value, mem_kind) VALUES (?,?,?,?,?,?,?,?,?)",
};

/* Dedup indexes that inserts need; everything else waits for finalize. */
static const char *writer_index_sql
    = "CREATE UNIQUE INDEX IF NOT EXISTS frame_key ON frame (kind,"
      " ifnull(module_id, 0), ifnull(address, 0), ifnull(function, ''),"
      " ifnull(file, ''), ifnull(line, 0));";

struct VsWriter
{
  sqlite3 *db;
  sqlite3_stmt *stmt[N_STMTS];
  int in_txn;
  int held; /* vs_writer_hold: commits only flush, one transaction */
  unsigned rows_in_txn;
  VsSqlBatch *alloc_rows;       /* alloc_event rows not yet inserted */
  VsSqlBatch *kernel_rows;      /* kernel_exec rows not yet inserted */
  int bulk;                     /* vs_writer_set_bulk was called */
  int64_t next_alloc_id;        /* bulk mode: the id the next alloc_event gets */
  const VsWriterGather *gather; /* bulk mode: where every event row goes too */
  void *gather_data;
  int64_t schema_version;          /* bulk mode: user_version, withheld until closed */
  VsKernelConfigs *kernel_configs; /* kernel_config rows written so far */
  int64_t last_kernel_id;          /* kernel_exec ids are 1, 2, … in writing order */
  char errmsg[512];
};

static void
set_error (VsWriter *w, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (w->errmsg, sizeof w->errmsg, fmt, ap);
  va_end (ap);
}

const char *
vs_writer_errmsg (VsWriter *w)
{
  return w ? w->errmsg : "no writer";
}

sqlite3 *
vs_writer_db (VsWriter *w)
{
  return w->db;
}

/* Binds an integer or NULL for VS_UNKNOWN. */
static void
bind_i64 (sqlite3_stmt *s, int i, int64_t v)
{
  if (v == VS_UNKNOWN)
    sqlite3_bind_null (s, i);
  else
    sqlite3_bind_int64 (s, i, v);
}

/* Binds an integer id, where 0 (no row) is stored as NULL too. */
static void
bind_id (sqlite3_stmt *s, int i, int64_t v)
{
  if (v == VS_UNKNOWN || v == 0)
    sqlite3_bind_null (s, i);
  else
    sqlite3_bind_int64 (s, i, v);
}

static void
bind_text (sqlite3_stmt *s, int i, const char *v)
{
  if (v == NULL)
    sqlite3_bind_null (s, i);
  else
    sqlite3_bind_text (s, i, v, -1, SQLITE_STATIC);
}

/* --- rows described once ------------------------------------------------

   Each table's INSERT binds the fields of one C struct in column order.
   A VsColumn says where a field lives and how it is stored, so one loop
   binds a statement (bind_row) or fills a bulk batch (batch_row) for any
   table, instead of a hand-written bind sequence per table. */

typedef enum
{
  COL_I64,  /* int64_t; VS_UNKNOWN is NULL */
  COL_ID,   /* int64_t row id; VS_UNKNOWN and 0 (no row) are NULL */
  COL_RAW,  /* int64_t stored as is (addresses, sizes that are always known) */
  COL_ENUM, /* an enum field, stored as its integer */
  COL_TEXT, /* const char *; NULL is NULL, or the column's default text */
} VsColumnType;

typedef struct
{
  VsColumnType type;
  size_t offset;
  const char *fallback; /* COL_TEXT: stored instead of NULL when set */
} VsColumn;

#define COL(T, type, field)                                                                        \
  {                                                                                                \
    type, offsetof (T, field), NULL                                                                \
  }
#define COL_TEXT_OR(T, field, text)                                                                \
  {                                                                                                \
    COL_TEXT, offsetof (T, field), text                                                            \
  }

_Static_assert(sizeof (VsMemKind) == sizeof (int) && sizeof (VsAllocOp) == sizeof (int)
                   && sizeof (VsMemOp) == sizeof (int) && sizeof (VsPoolOp) == sizeof (int)
                   && sizeof (VsFrameKind) == sizeof (int),
               "COL_ENUM reads enum fields as int");

static int64_t
column_int (const VsColumn *c, const void *row)
{
  const char *p = (const char *)row + c->offset;
  return c->type == COL_ENUM ? (int64_t) * (const int *)p : *(const int64_t *)p;
}

static const char *
column_text (const VsColumn *c, const void *row)
{
  const char *v = *(const char *const *)((const char *)row + c->offset);
  return v != NULL ? v : c->fallback;
}

/* Binds the described field of row to parameter at of s. */
static void
bind_row_column (sqlite3_stmt *s, int at, const VsColumn *c, const void *row)
{
  switch (c->type)
    {
    case COL_TEXT:
      bind_text (s, at, column_text (c, row));
      break;
    case COL_ID:
      bind_id (s, at, column_int (c, row));
      break;
    case COL_I64:
      bind_i64 (s, at, column_int (c, row));
      break;
    case COL_RAW:
    case COL_ENUM:
      sqlite3_bind_int64 (s, at, column_int (c, row));
      break;
    }
}

/* Binds the n described fields of row to parameters 1..n of s. */
static void
bind_row (sqlite3_stmt *s, const VsColumn *cols, size_t n, const void *row)
{
  for (size_t i = 0; i < n; i++)
    bind_row_column (s, (int)i + 1, &cols[i], row);
}

#define N_COLUMNS(a) (sizeof (a) / sizeof (a)[0])

/* The columns of each INSERT, in statement parameter order. */
static const VsColumn process_columns[] = {
  COL (VsProcess, COL_I64, pid),
  COL (VsProcess, COL_I64, ppid),
  COL (VsProcess, COL_TEXT, host),
  COL (VsProcess, COL_I64, rank),
  COL (VsProcess, COL_I64, local_rank),
  COL (VsProcess, COL_I64, world_size),
  COL (VsProcess, COL_TEXT, cuda_visible_devices),
  COL (VsProcess, COL_TEXT, command_line),
  COL (VsProcess, COL_I64, start_ns),
  COL (VsProcess, COL_I64, end_ns),
  COL (VsProcess, COL_I64, exit_status),
};

static const VsColumn device_columns[] = {
  COL (VsDevice, COL_I64, idx),
  COL (VsDevice, COL_TEXT, uuid),
  COL (VsDevice, COL_TEXT, name),
  COL (VsDevice, COL_I64, total_bytes),
};

static const VsColumn allocator_columns[] = {
  COL (VsAllocator, COL_ID, device_id), COL (VsAllocator, COL_ID, process_id),
  COL (VsAllocator, COL_TEXT, kind),    COL (VsAllocator, COL_TEXT, name),
  COL (VsAllocator, COL_I64, handle),   COL (VsAllocator, COL_TEXT, settings),
};

static const VsColumn module_columns[] = {
  COL (VsModule, COL_ID, process_id), COL (VsModule, COL_TEXT, path),
  COL (VsModule, COL_TEXT, build_id), COL (VsModule, COL_I64, load_address),
  COL (VsModule, COL_I64, size),
};

static const VsColumn frame_columns[] = {
  COL (VsFrame, COL_ENUM, kind),   COL (VsFrame, COL_ID, module_id),
  COL (VsFrame, COL_I64, address), COL (VsFrame, COL_TEXT, function),
  COL (VsFrame, COL_TEXT, file),   COL (VsFrame, COL_I64, line),
};

static const VsColumn mem_event_columns[] = {
  COL (VsMemEvent, COL_I64, ts),
  COL (VsMemEvent, COL_I64, process_id),
  COL (VsMemEvent, COL_I64, tid),
  COL (VsMemEvent, COL_ID, device_id),
  COL (VsMemEvent, COL_I64, context),
  COL (VsMemEvent, COL_I64, stream),
  COL (VsMemEvent, COL_ENUM, kind),
  COL (VsMemEvent, COL_ENUM, op),
  COL (VsMemEvent, COL_RAW, address),
  COL (VsMemEvent, COL_RAW, bytes),
  COL (VsMemEvent, COL_ID, pool_id),
  COL (VsMemEvent, COL_I64, pool_size),
  COL (VsMemEvent, COL_I64, pool_utilized),
  COL (VsMemEvent, COL_I64, correlation),
  COL (VsMemEvent, COL_ID, stack_id),
  COL (VsMemEvent, COL_ID, range_id),
};

static const VsColumn pool_event_columns[] = {
  COL (VsPoolEvent, COL_I64, ts),
  COL (VsPoolEvent, COL_I64, process_id),
  COL (VsPoolEvent, COL_ID, device_id),
  COL (VsPoolEvent, COL_I64, pool_id),
  COL (VsPoolEvent, COL_ENUM, op),
  COL (VsPoolEvent, COL_I64, size),
  COL (VsPoolEvent, COL_I64, utilized),
  COL (VsPoolEvent, COL_I64, release_threshold),
  COL (VsPoolEvent, COL_I64, min_bytes_to_keep),
  COL (VsPoolEvent, COL_I64, correlation),
  COL (VsPoolEvent, COL_ID, stack_id),
};

static const VsColumn alloc_event_columns[] = {
  COL (VsAllocEvent, COL_I64, ts),           COL (VsAllocEvent, COL_I64, process_id),
  COL (VsAllocEvent, COL_I64, tid),          COL (VsAllocEvent, COL_I64, device_id),
  COL (VsAllocEvent, COL_I64, allocator_id), COL (VsAllocEvent, COL_ENUM, op),
  COL (VsAllocEvent, COL_RAW, address),      COL (VsAllocEvent, COL_I64, requested_bytes),
  COL (VsAllocEvent, COL_I64, block_bytes),  COL (VsAllocEvent, COL_I64, segment_address),
  COL (VsAllocEvent, COL_I64, stream),       COL (VsAllocEvent, COL_ID, stack_id),
  COL (VsAllocEvent, COL_ID, range_id),      COL (VsAllocEvent, COL_ID, before_trace),
};

static const VsColumn failed_alloc_columns[] = {
  COL (VsFailedAlloc, COL_I64, ts),
  COL (VsFailedAlloc, COL_I64, process_id),
  COL (VsFailedAlloc, COL_I64, tid),
  COL (VsFailedAlloc, COL_ID, device_id),
  COL (VsFailedAlloc, COL_ID, allocator_id),
  COL_TEXT_OR (VsFailedAlloc, api, "unknown"),
  COL (VsFailedAlloc, COL_I64, requested_bytes),
  COL (VsFailedAlloc, COL_I64, error),
  COL (VsFailedAlloc, COL_TEXT, error_name),
  COL (VsFailedAlloc, COL_I64, device_free_bytes),
  COL (VsFailedAlloc, COL_I64, device_total_bytes),
  COL (VsFailedAlloc, COL_I64, correlation),
  COL (VsFailedAlloc, COL_ID, stack_id),
  COL (VsFailedAlloc, COL_ID, range_id),
};

static const VsColumn range_columns[] = {
  COL (VsRange, COL_ID, process_id), COL (VsRange, COL_I64, tid),
  COL (VsRange, COL_TEXT, domain),   COL_TEXT_OR (VsRange, name, ""),
  COL (VsRange, COL_I64, start_ns),  COL (VsRange, COL_I64, end_ns),
  COL (VsRange, COL_ID, parent_id),
};

/* kernel_exec's columns after start_ns and duration_ns, before config_id. */
static const VsColumn kernel_columns[] = {
  COL (VsKernel, COL_I64, process_id),  COL (VsKernel, COL_ID, device_id),
  COL (VsKernel, COL_I64, context),     COL (VsKernel, COL_I64, stream),
  COL (VsKernel, COL_I64, correlation),
};

static const VsColumn memcpy_columns[] = {
  COL (VsMemcpy, COL_I64, start_ns),   COL (VsMemcpy, COL_I64, end_ns),
  COL (VsMemcpy, COL_I64, process_id), COL (VsMemcpy, COL_ID, device_id),
  COL (VsMemcpy, COL_I64, stream),     COL (VsMemcpy, COL_I64, correlation),
  COL (VsMemcpy, COL_TEXT, copy_kind), COL (VsMemcpy, COL_TEXT, src_kind),
  COL (VsMemcpy, COL_TEXT, dst_kind),  COL (VsMemcpy, COL_I64, bytes),
};

static const VsColumn memset_columns[] = {
  COL (VsMemset, COL_I64, start_ns),   COL (VsMemset, COL_I64, end_ns),
  COL (VsMemset, COL_I64, process_id), COL (VsMemset, COL_ID, device_id),
  COL (VsMemset, COL_I64, stream),     COL (VsMemset, COL_I64, correlation),
  COL (VsMemset, COL_I64, bytes),      COL (VsMemset, COL_I64, value),
  COL (VsMemset, COL_ID, mem_kind),
};

/* The described tables of vs_writer_read_row(), by VsWriterRow. */
static const struct
{
  const VsColumn *cols;
  size_t n;
} read_rows[] = {
  [VS_WRITER_ROW_PROCESS] = { process_columns, N_COLUMNS (process_columns) },
  [VS_WRITER_ROW_DEVICE] = { device_columns, N_COLUMNS (device_columns) },
  [VS_WRITER_ROW_ALLOCATOR] = { allocator_columns, N_COLUMNS (allocator_columns) },
  [VS_WRITER_ROW_MODULE] = { module_columns, N_COLUMNS (module_columns) },
  [VS_WRITER_ROW_FRAME] = { frame_columns, N_COLUMNS (frame_columns) },
  [VS_WRITER_ROW_RANGE] = { range_columns, N_COLUMNS (range_columns) },
};

void
vs_writer_read_row (VsWriterRow kind, sqlite3_stmt *s, int first, void *row)
{
  assert (kind >= 0 && (size_t)kind < N_COLUMNS (read_rows));
  for (size_t i = 0; i < read_rows[kind].n; i++)
    {
      const VsColumn *c = &read_rows[kind].cols[i];
      char *field = (char *)row + c->offset;
      int at = first + (int)i;

      if (c->type == COL_TEXT)
        *(const char **)field = (const char *)sqlite3_column_text (s, at);
      else if (c->type == COL_ENUM)
        *(int *)field = sqlite3_column_int (s, at);
      else
        *(int64_t *)field = sqlite3_column_type (s, at) == SQLITE_NULL
                                ? VS_UNKNOWN
                                : sqlite3_column_int64 (s, at);
    }
}

static int
exec_sql (VsWriter *w, const char *sql)
{
  char *msg = NULL;
  if (sqlite3_exec (w->db, sql, NULL, NULL, &msg) != SQLITE_OK)
    {
      set_error (w, "trace write failed: %s", msg ? msg : sqlite3_errmsg (w->db));
      sqlite3_free (msg);
      return -1;
    }
  return 0;
}

/* Opens a transaction if none is open, so rows are batched. */
static int
ensure_txn (VsWriter *w)
{
  if (w->in_txn)
    return 0;
  if (exec_sql (w, "BEGIN") < 0)
    return -1;
  w->in_txn = 1;
  w->rows_in_txn = 0;
  return 0;
}

int
vs_writer_commit (VsWriter *w)
{
  if (!w->in_txn)
    return 0;
  if ((w->alloc_rows && vs_sql_batch_flush (w->alloc_rows) < 0)
      || (w->kernel_rows && vs_sql_batch_flush (w->kernel_rows) < 0))
    {
      set_error (w, "trace write failed: %s", sqlite3_errmsg (w->db));
      return -1;
    }
  if (w->held)
    return 0;
  w->in_txn = 0;
  return exec_sql (w, "COMMIT");
}

int
vs_writer_hold (VsWriter *w, bool hold, bool keep)
{
  if (hold)
    {
      if (w->held)
        return 0;
      if (vs_writer_commit (w) < 0 || ensure_txn (w) < 0)
        return -1;
      w->held = 1;
      return 0;
    }
  if (!w->held)
    return 0;
  w->held = 0;
  if (keep)
    return vs_writer_commit (w);
  /* Rows still gathered in batches are dropped by vs_writer_close(). */
  w->in_txn = 0;
  return exec_sql (w, "ROLLBACK");
}

/* Runs a bound insert statement once and resets it, without committing.
 * Returns 0 or -1. */
static int
step_only (VsWriter *w, int which)
{
  sqlite3_stmt *s = w->stmt[which];
  int rc = sqlite3_step (s);
  sqlite3_reset (s);
  if (rc != SQLITE_DONE)
    {
      set_error (w, "trace write failed: %s", sqlite3_errmsg (w->db));
      return -1;
    }
  return 0;
}

/* Counts a row written; commits the batch when it is full.  Returns 0 or
 * -1. */
static int
row_done (VsWriter *w)
{
  if (++w->rows_in_txn >= VS_WRITER_BATCH_ROWS)
    return vs_writer_commit (w);
  return 0;
}

/* Runs a bound insert statement once and resets it.  Commits the batch when
 * it is full.  Returns 0 or -1. */
static int
step_insert (VsWriter *w, int which)
{
  if (step_only (w, which) < 0)
    return -1;
  return row_done (w);
}

/* Like step_insert() but returns the new row's id. */
static int64_t
step_insert_id (VsWriter *w, int which)
{
  if (step_insert (w, which) < 0)
    return -1;
  return sqlite3_last_insert_rowid (w->db);
}

/* Runs a bound single-value lookup; returns the id, 0 when absent, -1 on
 * error. */
static int64_t
step_find (VsWriter *w, int which)
{
  sqlite3_stmt *s = w->stmt[which];
  int64_t id = 0;
  int rc = sqlite3_step (s);
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64 (s, 0);
  else if (rc != SQLITE_DONE)
    {
      set_error (w, "trace read failed: %s", sqlite3_errmsg (w->db));
      id = -1;
    }
  sqlite3_reset (s);
  sqlite3_clear_bindings (s);
  return id;
}

VsWriter *
vs_writer_create (const char *path, char *err, size_t errlen)
{
  VsWriter *w = calloc (1, sizeof *w);
  if (w == NULL)
    {
      if (errlen)
        snprintf (err, errlen, "out of memory");
      return NULL;
    }

  /* A trace is always new: remove any earlier file and its WAL. */
  size_t n = strlen (path) + 8;
  char *side = malloc (n);
  if (side != NULL)
    {
      unlink (path);
      snprintf (side, n, "%s-wal", path);
      unlink (side);
      snprintf (side, n, "%s-shm", path);
      unlink (side);
      snprintf (side, n, "%s-journal", path);
      unlink (side);
      free (side);
    }

  int rc = sqlite3_open_v2 (path, &w->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      if (errlen)
        snprintf (err, errlen, "cannot create trace %s: %s", path,
                  w->db ? sqlite3_errmsg (w->db) : sqlite3_errstr (rc));
      sqlite3_close (w->db);
      free (w);
      return NULL;
    }

  /* Another process may write the same file: record deletes the rows it
   * has merged from a running collector's trace (vs-merge-append.h).  A
   * commit then waits for the other's short transaction rather than
   * failing with SQLITE_BUSY. */
  sqlite3_busy_timeout (w->db, VS_WRITER_BUSY_MS);

  /* WAL with synchronous=NORMAL: a commit survives a crash of the writing
   * process.  16 KiB pages (measured: 21 % more rows per second than 4 KiB
   * on bench/vs-gen-trace, with readers' point queries unaffected), and a
   * larger cache and checkpoint interval keep the inserts from re-reading
   * and re-writing the same b-tree pages. */
  if (exec_sql (w, "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                   " PRAGMA cache_size=-32768; PRAGMA wal_autocheckpoint=16384;")
          < 0
      || exec_sql (w, "BEGIN") < 0 || exec_sql (w, vs_trace_schema_sql) < 0
      || exec_sql (w, writer_index_sql) < 0 || exec_sql (w, "COMMIT") < 0)
    goto fail;

  for (int i = 0; i < N_STMTS; i++)
    if (sqlite3_prepare_v3 (w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->stmt[i], NULL)
        != SQLITE_OK)
      {
        set_error (w, "cannot prepare trace statement: %s", sqlite3_errmsg (w->db));
        goto fail;
      }

  vs_writer_set_meta (w, "format", "vramscope-trace");
  vs_writer_set_meta (w, "finalized", "0");
  vs_writer_commit (w);
  return w;

fail:
  if (errlen)
    snprintf (err, errlen, "cannot create trace %s: %s", path, w->errmsg);
  for (int i = 0; i < N_STMTS; i++)
    sqlite3_finalize (w->stmt[i]);
  sqlite3_close (w->db);
  free (w);
  return NULL;
}

static const char *open_check_sql = "SELECT (SELECT application_id FROM pragma_application_id),"
                                    " (SELECT value FROM meta WHERE key = 'finalized')";
static const char *open_configs_sql
    = "SELECT id, name, grid_x, grid_y, grid_z, block_x, block_y, block_z, static_shared,"
      " dynamic_shared, registers FROM kernel_config";
static const char *open_last_kernel_sql = "SELECT ifnull(max(id), 0) FROM kernel_exec";

VsWriter *
vs_writer_open (const char *path, char *err, size_t errlen)
{
  VsWriter *w = calloc (1, sizeof *w);
  if (w == NULL)
    {
      if (errlen)
        snprintf (err, errlen, "out of memory");
      return NULL;
    }
  sqlite3_stmt *q = NULL;
  if (sqlite3_open_v2 (path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (w->db, open_check_sql, -1, &q, NULL) != SQLITE_OK
      || sqlite3_step (q) != SQLITE_ROW)
    {
      set_error (w, "%s", w->db ? sqlite3_errmsg (w->db) : "out of memory");
      goto fail;
    }
  if (sqlite3_column_int64 (q, 0) != VS_TRACE_APPLICATION_ID || sqlite3_column_int64 (q, 1) != 0)
    {
      set_error (w, "not a raw vramscope trace");
      goto fail;
    }
  sqlite3_finalize (q);
  q = NULL;
  /* As vs_writer_create(): another process's deletes make a commit wait. */
  sqlite3_busy_timeout (w->db, VS_WRITER_BUSY_MS);
  for (int i = 0; i < N_STMTS; i++)
    if (sqlite3_prepare_v3 (w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->stmt[i], NULL)
        != SQLITE_OK)
      {
        set_error (w, "cannot prepare trace statement: %s", sqlite3_errmsg (w->db));
        goto fail;
      }
  /* The cache vs_writer_create() gives (its page size stays the file's). */
  if (exec_sql (w, "PRAGMA cache_size=-32768;") < 0)
    goto fail;
  /* The kernel configurations stored, so that none is stored twice. */
  if (exec_sql (w, writer_index_sql) < 0 || (w->kernel_configs = vs_kernel_configs_new ()) == NULL
      || sqlite3_prepare_v2 (w->db, open_configs_sql, -1, &q, NULL) != SQLITE_OK)
    {
      set_error (w, "cannot read trace: %s", sqlite3_errmsg (w->db));
      goto fail;
    }
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      VsKernel k = { .name = (const char *)sqlite3_column_text (q, 1) };
      int64_t *v[] = { &k.grid_x,  &k.grid_y,        &k.grid_z,         &k.block_x,  &k.block_y,
                       &k.block_z, &k.static_shared, &k.dynamic_shared, &k.registers };
      for (int i = 0; i < VS_KERNEL_CONFIG_INTS; i++)
        *v[i] = sqlite3_column_type (q, i + 2) == SQLITE_NULL ? VS_UNKNOWN
                                                              : sqlite3_column_int64 (q, i + 2);
      VsKernelConfigKey key = vs_kernel_config_key (&k);
      if (vs_kernel_configs_add (w->kernel_configs, &key, sqlite3_column_int64 (q, 0)) < 0)
        break;
    }
  sqlite3_finalize (q);
  q = NULL;
  if (rc != SQLITE_DONE
      || sqlite3_prepare_v2 (w->db, open_last_kernel_sql, -1, &q, NULL) != SQLITE_OK
      || sqlite3_step (q) != SQLITE_ROW)
    {
      set_error (w, "cannot read trace: %s", sqlite3_errmsg (w->db));
      goto fail;
    }
  w->last_kernel_id = sqlite3_column_int64 (q, 0);
  sqlite3_finalize (q);
  return w;

fail:
  if (errlen)
    snprintf (err, errlen, "cannot open trace %s: %s", path, w->errmsg);
  sqlite3_finalize (q);
  for (int i = 0; i < N_STMTS; i++)
    sqlite3_finalize (w->stmt[i]);
  vs_kernel_configs_free (w->kernel_configs);
  sqlite3_close (w->db);
  free (w);
  return NULL;
}

static const char *max_alloc_id_sql = "SELECT ifnull(max(id), 0) FROM alloc_event";
static const char *any_event_sql = "SELECT 1 FROM mem_event UNION ALL SELECT 1 FROM alloc_event"
                                   " UNION ALL SELECT 1 FROM pool_event LIMIT 1";

/* The columns of alloc_event rows gathered in bulk mode, in the order
 * vs_writer_alloc_event sets them. */
static const char *alloc_batch_sql
    = "alloc_event (ts, process_id, tid, device_id, allocator_id,"
      " op, address, requested_bytes, block_bytes, segment_address, stream,"
      " stack_id, range_id, before_trace)";

/* Creates the batch alloc_event rows are gathered in; 0 or -1. */
static int
ensure_alloc_batch (VsWriter *w)
{
  if (w->alloc_rows != NULL)
    return 0;
  w->alloc_rows = malloc (sizeof *w->alloc_rows);
  if (w->alloc_rows == NULL)
    {
      set_error (w, "out of memory");
      return -1;
    }
  if (vs_sql_batch_init (w->alloc_rows, w->db, alloc_batch_sql, 14) < 0)
    {
      set_error (w, "cannot prepare trace statement: %s", sqlite3_errmsg (w->db));
      free (w->alloc_rows);
      w->alloc_rows = NULL;
      return -1;
    }
  return 0;
}

int
vs_writer_begin_bulk (VsWriter *w, bool *empty)
{
  assert (w != NULL && empty != NULL);
  *empty = false;
  if (w->bulk)
    return 0;
  /* Until vs_writer_close() completes, the file carries no schema version:
   * readers refuse what a killed writer leaves (schemas/README.md). */
  sqlite3_stmt *v = NULL;
  if (sqlite3_prepare_v2 (w->db, "PRAGMA user_version", -1, &v, NULL) == SQLITE_OK
      && sqlite3_step (v) == SQLITE_ROW)
    w->schema_version = sqlite3_column_int64 (v, 0);
  sqlite3_finalize (v);
  if (w->schema_version <= 0)
    {
      set_error (w, "trace read failed: no schema version");
      return -1;
    }
  if (vs_writer_commit (w) < 0
      || exec_sql (w, "PRAGMA user_version=0; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;") < 0
      || ensure_alloc_batch (w) < 0)
    return -1;
  w->bulk = 1;
  /* Rows get the ids SQLite gives an INSERT without one: the largest so
   * far plus one (the table is empty unless rows came before bulk mode). */
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (w->db, max_alloc_id_sql, -1, &q, NULL) != SQLITE_OK
      || sqlite3_step (q) != SQLITE_ROW)
    {
      set_error (w, "trace read failed: %s", sqlite3_errmsg (w->db));
      sqlite3_finalize (q);
      return -1;
    }
  w->next_alloc_id = sqlite3_column_int64 (q, 0) + 1;
  sqlite3_finalize (q);
  /* Events written before bulk mode cannot be gathered: then the
   * finalizer reads the tables. */
  sqlite3_stmt *any = NULL;
  *empty = sqlite3_prepare_v2 (w->db, any_event_sql, -1, &any, NULL) == SQLITE_OK
           && sqlite3_step (any) == SQLITE_DONE;
  sqlite3_finalize (any);
  return 0;
}

void
vs_writer_set_gather (VsWriter *w, const VsWriterGather *g, void *data)
{
  assert (w != NULL && w->gather == NULL);
  assert (g == NULL || (g->mem != NULL && g->alloc != NULL && g->pool != NULL && g->drop != NULL));
  w->gather = g;
  w->gather_data = g != NULL ? data : NULL;
}

void *
vs_writer_take_gathered (VsWriter *w)
{
  assert (w != NULL);
  void *data = w->gather_data;
  w->gather = NULL;
  w->gather_data = NULL;
  return data;
}

/* Stops gathering events (a hook failed, out of memory): the finalizer
 * will read them from the tables. */
static void
drop_events (VsWriter *w)
{
  if (w->gather == NULL)
    return;
  w->gather->drop (w->gather_data);
  w->gather = NULL;
  w->gather_data = NULL;
}

int
vs_writer_set_meta (VsWriter *w, const char *key, const char *value)
{
  if (ensure_txn (w) < 0)
    return -1;
  sqlite3_stmt *s = w->stmt[STMT_META];
  bind_text (s, 1, key);
  bind_text (s, 2, value);
  return step_insert (w, STMT_META);
}

int
vs_writer_set_meta_int (VsWriter *w, const char *key, int64_t value)
{
  if (ensure_txn (w) < 0)
    return -1;
  sqlite3_stmt *s = w->stmt[STMT_META];
  bind_text (s, 1, key);
  bind_i64 (s, 2, value);
  return step_insert (w, STMT_META);
}

int64_t
vs_writer_add_process (VsWriter *w, const VsProcess *p)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_PROCESS], process_columns, N_COLUMNS (process_columns), p);
  return step_insert_id (w, STMT_PROCESS);
}

VsProcess
vs_writer_process_started (int64_t pid, int64_t ppid, const char *host, const char *command_line,
                           int64_t start_ns)
{
  VsProcess p = { .pid = pid,
                  .ppid = ppid,
                  .host = host,
                  .rank = VS_UNKNOWN,
                  .local_rank = VS_UNKNOWN,
                  .world_size = VS_UNKNOWN,
                  .command_line = command_line,
                  .start_ns = start_ns,
                  .end_ns = VS_UNKNOWN,
                  .exit_status = VS_UNKNOWN };
  return p;
}

int64_t
vs_writer_add_imported_process (VsWriter *w, int64_t pid, const char *host, int64_t start_ns)
{
  VsProcess p = vs_writer_process_started (pid, VS_UNKNOWN, host, NULL, start_ns);

  return vs_writer_add_process (w, &p);
}

int64_t
vs_writer_add_device (VsWriter *w, const VsDevice *d)
{
  if (ensure_txn (w) < 0)
    return -1;
  if (d->uuid != NULL)
    {
      bind_text (w->stmt[STMT_DEVICE_FIND], 1, d->uuid);
      int64_t id = step_find (w, STMT_DEVICE_FIND);
      if (id != 0)
        return id;
    }
  bind_row (w->stmt[STMT_DEVICE_ADD], device_columns, N_COLUMNS (device_columns), d);
  return step_insert_id (w, STMT_DEVICE_ADD);
}

int64_t
vs_writer_add_allocator (VsWriter *w, const VsAllocator *a)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_ALLOCATOR], allocator_columns, N_COLUMNS (allocator_columns), a);
  return step_insert_id (w, STMT_ALLOCATOR);
}

int64_t
vs_writer_add_module (VsWriter *w, const VsModule *m)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_MODULE], module_columns, N_COLUMNS (module_columns), m);
  return step_insert_id (w, STMT_MODULE);
}

int64_t
vs_writer_add_frame (VsWriter *w, const VsFrame *f)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_FRAME_ADD], frame_columns, N_COLUMNS (frame_columns), f);
  if (step_insert (w, STMT_FRAME_ADD) < 0)
    return -1;
  if (sqlite3_changes (w->db) > 0)
    return sqlite3_last_insert_rowid (w->db);
  bind_row (w->stmt[STMT_FRAME_FIND], frame_columns, N_COLUMNS (frame_columns), f);
  return step_find (w, STMT_FRAME_FIND);
}

int64_t
vs_writer_add_stack_node (VsWriter *w, int64_t parent_id, int64_t frame_id)
{
  if (ensure_txn (w) < 0)
    return -1;
  sqlite3_stmt *s = w->stmt[STMT_STACK_ADD];
  sqlite3_bind_int64 (s, 1, parent_id);
  sqlite3_bind_int64 (s, 2, frame_id);
  if (step_insert (w, STMT_STACK_ADD) < 0)
    return -1;
  if (sqlite3_changes (w->db) > 0)
    return sqlite3_last_insert_rowid (w->db);
  s = w->stmt[STMT_STACK_FIND];
  sqlite3_bind_int64 (s, 1, parent_id);
  sqlite3_bind_int64 (s, 2, frame_id);
  return step_find (w, STMT_STACK_FIND);
}

int64_t
vs_writer_add_stack (VsWriter *w, const int64_t *frame_ids, size_t n)
{
  int64_t node = 0;
  if (n > VS_TRACE_MAX_STACK_DEPTH)
    {
      frame_ids += n - VS_TRACE_MAX_STACK_DEPTH;
      n = VS_TRACE_MAX_STACK_DEPTH;
    }
  for (size_t i = 0; i < n; i++)
    {
      node = vs_writer_add_stack_node (w, node, frame_ids[i]);
      if (node < 0)
        return -1;
    }
  return node;
}

int
vs_writer_mem_event (VsWriter *w, const VsMemEvent *e)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_MEM_EVENT], mem_event_columns, N_COLUMNS (mem_event_columns), e);
  if (step_only (w, STMT_MEM_EVENT) < 0)
    return -1;
  if (w->gather && w->gather->mem (w->gather_data, sqlite3_last_insert_rowid (w->db), e) < 0)
    drop_events (w);
  return row_done (w);
}

int
vs_writer_pool_event (VsWriter *w, const VsPoolEvent *e)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_POOL_EVENT], pool_event_columns, N_COLUMNS (pool_event_columns), e);
  if (step_only (w, STMT_POOL_EVENT) < 0)
    return -1;
  if (w->gather && w->gather->pool (w->gather_data, sqlite3_last_insert_rowid (w->db), e) < 0)
    drop_events (w);
  return row_done (w);
}

/* Sets column at of the batch's current row from the described field of
 * row, as bind_row_column binds it. */
static void
batch_column (VsSqlBatch *b, int at, const VsColumn *c, const void *row)
{
  assert (c->type != COL_TEXT);
  int64_t v = column_int (c, row);
  if ((c->type == COL_I64 || c->type == COL_ID) && v == VS_UNKNOWN)
    vs_sql_batch_null (b, at);
  else if (c->type == COL_ID && v == 0)
    vs_sql_batch_null (b, at);
  else
    vs_sql_batch_int (b, at, v);
}

/* Fills the batch's current row from the n described fields of row, as
 * bind_row binds them. */
static void
batch_row (VsSqlBatch *b, const VsColumn *cols, size_t n, const void *row)
{
  for (size_t i = 0; i < n; i++)
    batch_column (b, (int)i, &cols[i], row);
}

/* Sets column at of the batch's current row to v, NULL for VS_UNKNOWN. */
static void
batch_i64 (VsSqlBatch *b, int at, int64_t v)
{
  if (v == VS_UNKNOWN)
    vs_sql_batch_null (b, at);
  else
    vs_sql_batch_int (b, at, v);
}

void
vs_writer_alloc_event_row (const VsAllocEvent *e, int64_t id, int64_t *v, uint32_t *nulls)
{
  _Static_assert(N_COLUMNS (alloc_event_columns) + 1 == VS_ALLOC_EVENT_COLUMNS,
                 "alloc_event: id and the written columns");
  v[0] = id;
  *nulls = 0;
  /* As batch_column stores each field. */
  for (size_t i = 0; i < N_COLUMNS (alloc_event_columns); i++)
    {
      const VsColumn *c = &alloc_event_columns[i];
      int64_t x = column_int (c, e);
      bool null = ((c->type == COL_I64 || c->type == COL_ID) && x == VS_UNKNOWN)
                  || (c->type == COL_ID && x == 0);
      v[i + 1] = null ? 0 : x;
      if (null)
        *nulls |= 1u << (i + 1);
    }
}

/* vs_writer_alloc_event: the row joins the gathered ones. */
static int
alloc_event_gathered (VsWriter *w, const VsAllocEvent *e)
{
  VsSqlBatch *b = w->alloc_rows;
  batch_row (b, alloc_event_columns, N_COLUMNS (alloc_event_columns), e);
  if (vs_sql_batch_row (b) < 0)
    {
      set_error (w, "trace write failed: %s", sqlite3_errmsg (w->db));
      return -1;
    }
  if (w->gather && w->gather->alloc (w->gather_data, w->next_alloc_id, e) < 0)
    drop_events (w);
  w->next_alloc_id++;
  return row_done (w);
}

int
vs_writer_alloc_event (VsWriter *w, const VsAllocEvent *e)
{
  if (ensure_txn (w) < 0 || ensure_alloc_batch (w) < 0)
    return -1;
  return alloc_event_gathered (w, e);
}

int
vs_writer_failed_alloc (VsWriter *w, const VsFailedAlloc *e)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_FAILED_ALLOC], failed_alloc_columns, N_COLUMNS (failed_alloc_columns), e);
  return step_insert (w, STMT_FAILED_ALLOC);
}

int64_t
vs_writer_add_range (VsWriter *w, const VsRange *r)
{
  if (ensure_txn (w) < 0)
    return -1;
  sqlite3_stmt *s = w->stmt[STMT_RANGE_ADD];
  bind_row (s, range_columns, N_COLUMNS (range_columns), r);
  sqlite3_bind_int64 (s, 8, r->depth == VS_UNKNOWN ? 0 : r->depth);
  return step_insert_id (w, STMT_RANGE_ADD);
}

int
vs_writer_end_range (VsWriter *w, int64_t range_id, int64_t end_ns)
{
  if (ensure_txn (w) < 0)
    return -1;
  sqlite3_stmt *s = w->stmt[STMT_RANGE_END];
  sqlite3_bind_int64 (s, 1, end_ns);
  sqlite3_bind_int64 (s, 2, range_id);
  return step_insert (w, STMT_RANGE_END);
}

int64_t
vs_writer_add_kernel_config (VsWriter *w, const VsKernel *k)
{
  if (ensure_txn (w) < 0)
    return -1;
  if (w->kernel_configs == NULL && (w->kernel_configs = vs_kernel_configs_new ()) == NULL)
    {
      set_error (w, "out of memory");
      return -1;
    }
  VsKernelConfigKey key = vs_kernel_config_key (k);
  int64_t id = vs_kernel_configs_find (w->kernel_configs, &key);
  if (id != 0)
    return id;
  sqlite3_stmt *s = w->stmt[STMT_KERNEL_CONFIG];
  bind_text (s, 1, key.name);
  for (int i = 0; i < VS_KERNEL_CONFIG_INTS; i++)
    bind_i64 (s, i + 2, key.v[i]);
  id = step_insert_id (w, STMT_KERNEL_CONFIG);
  if (id < 0)
    return -1;
  if (vs_kernel_configs_add (w->kernel_configs, &key, id) < 0)
    {
      set_error (w, "out of memory");
      return -1;
    }
  return id;
}

/* The columns of kernel_exec rows gathered in a batch, in the order
 * vs_writer_kernel sets them. */
static const char *kernel_batch_sql = "kernel_exec (start_ns, duration_ns, process_id, device_id,"
                                      " context, stream, correlation, config_id, id)";

int
vs_writer_kernel (VsWriter *w, const VsKernel *k)
{
  int64_t config = vs_writer_add_kernel_config (w, k);
  if (config < 0)
    return -1;
  if (w->kernel_rows == NULL)
    {
      w->kernel_rows = malloc (sizeof *w->kernel_rows);
      if (w->kernel_rows == NULL
          || vs_sql_batch_init (w->kernel_rows, w->db, kernel_batch_sql, 9) < 0)
        {
          set_error (w, "cannot prepare trace statement: %s",
                     w->kernel_rows ? sqlite3_errmsg (w->db) : "out of memory");
          free (w->kernel_rows);
          w->kernel_rows = NULL;
          return -1;
        }
    }
  VsSqlBatch *b = w->kernel_rows;
  batch_i64 (b, 0, k->start_ns);
  /* Unknown times stay NULL, which the table refuses as it did them. */
  batch_i64 (b, 1,
             k->start_ns == VS_UNKNOWN || k->end_ns == VS_UNKNOWN ? VS_UNKNOWN
                                                                  : k->end_ns - k->start_ns);
  for (size_t i = 0; i < N_COLUMNS (kernel_columns); i++)
    batch_column (b, (int)i + 2, &kernel_columns[i], k);
  vs_sql_batch_int (b, 7, config);
  vs_sql_batch_int (b, 8, ++w->last_kernel_id);
  if (vs_sql_batch_row (b) < 0)
    {
      set_error (w, "trace write failed: %s", sqlite3_errmsg (w->db));
      return -1;
    }
  return row_done (w);
}

int64_t
vs_writer_next_kernel_id (VsWriter *w)
{
  return ++w->last_kernel_id;
}

int64_t
vs_writer_last_kernel_id (VsWriter *w)
{
  return w->last_kernel_id;
}

void
vs_writer_kernel_ids_after (VsWriter *w, int64_t id)
{
  if (id > w->last_kernel_id)
    w->last_kernel_id = id;
}

int
vs_writer_memcpy (VsWriter *w, const VsMemcpy *m)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_MEMCPY], memcpy_columns, N_COLUMNS (memcpy_columns), m);
  return step_insert (w, STMT_MEMCPY);
}

int
vs_writer_memset (VsWriter *w, const VsMemset *m)
{
  if (ensure_txn (w) < 0)
    return -1;
  bind_row (w->stmt[STMT_MEMSET], memset_columns, N_COLUMNS (memset_columns), m);
  return step_insert (w, STMT_MEMSET);
}

int
vs_writer_end_rows (VsWriter *w)
{
  assert (w != NULL);
  int ret = vs_writer_commit (w);
  for (int i = 0; i < N_STMTS; i++)
    {
      sqlite3_finalize (w->stmt[i]);
      w->stmt[i] = NULL;
    }
  if (w->alloc_rows)
    {
      vs_sql_batch_clear (w->alloc_rows);
      free (w->alloc_rows);
      w->alloc_rows = NULL;
    }
  if (w->kernel_rows)
    {
      vs_sql_batch_clear (w->kernel_rows);
      free (w->kernel_rows);
      w->kernel_rows = NULL;
    }
  vs_kernel_configs_free (w->kernel_configs);
  w->kernel_configs = NULL;
  return ret;
}

int
vs_writer_release (VsWriter *w, int ret, const char *why, char *err, size_t errlen)
{
  assert (w != NULL && w->alloc_rows == NULL && w->kernel_rows == NULL);
  drop_events (w);
  if (ret == 0 && w->schema_version > 0)
    {
      char sql[64];
      snprintf (sql, sizeof sql, "PRAGMA user_version=%lld", (long long)w->schema_version);
      ret = exec_sql (w, sql);
      why = NULL;
    }
  if (ret < 0 && errlen)
    snprintf (err, errlen, "%s", why != NULL ? why : w->errmsg);
  if (sqlite3_close (w->db) != SQLITE_OK && ret == 0)
    {
      if (errlen)
        snprintf (err, errlen, "cannot close trace: %s", sqlite3_errmsg (w->db));
      ret = -1;
    }
  free (w);
  return ret;
}

int
vs_writer_finish (VsWriter *w, char *err, size_t errlen)
{
  return vs_writer_release (w, vs_writer_end_rows (w), NULL, err, errlen);
}
