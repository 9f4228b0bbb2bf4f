/* SPDX-License-Identifier: MIT */
/* vs-merge.c — many per-process traces into the one trace of a run.
 *
 * While recording, every process that uses CUDA writes its own file (no
 * locking between processes, nothing shared if one is killed).  When the
 * run ends, `vramscope record` copies them into one trace: the small
 * tables through the writer API, which deduplicates devices by uuid and
 * frames and stack nodes by content, and records every id's new value
 * (processes, devices, allocators, ranges, modules, frames, stacks); then
 * the event tables (millions of rows) by one `INSERT … SELECT` each with
 * the input attached, ids mapped by the SQL function vs_map() over those
 * maps.  Rows are copied as the collector wrote them; pairing and
 * accounting are left to vs_trace_finalize().  Progress is reported every
 * 64k rows of the small tables, after each event table, and the SQL
 * statements can be cancelled through a progress handler.
 *
 * An input written by the snapshot importer (meta source 'import': a
 * PyTorch process's allocator history, tied to its pid and GPU uuids by
 * `record`) adds no process of its own: its events go to the process row
 * of the same pid and host merged before it, so the allocator level and
 * the CUPTI events of one process share process and device ids.
 *
 * The largest input is often such an import (hundreds of thousands of
 * allocator events), which record wrote itself and can write again from
 * the spool.  Given as run->adopt, it becomes the output: renamed rather
 * than copied, opened with vs_writer_open(), its rows taken as merged
 * first with their own ids (vs-merge-adopt.c); the collector's row of the same
 * process or GPU then takes over the import's row (row_process,
 * row_device), keeping its id, so the trace holds what merging the import
 * after the process traces gives, ids aside, but for one thing: the
 * finalizer replays events of the same time in the order of their rows,
 * and the import's rows now come first.  Its meta is read where its name
 * sorts among the inputs, so the settings kept from the first input that
 * has them stay the same.
 */
#include "vs-merge.h"
#include "vs-merge-meta.h"
#include "vs-merge-private.h"
#include "vs-fin-given.h"
#include "vs-row-sink.h"
#include "vs-trace-finalize.h"
#include "vs-timings.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
tick (VsMerge *m)
{
  m->done++;
  if (m->progress && (m->done & 0xffff) == 0 && !m->progress (m->done, m->total, m->progress_data))
    return vs_merge_fail (m, "merge", "cancelled");
  return 0;
}

/* A table copied through the writer: row() adds each row that sql
 * selects (the table given, for rows of several tables alike). */
typedef struct
{
  const char *sql;
  int (*row) (VsMerge *, sqlite3_stmt *, VsMergeTable);
  VsMergeTable table; /* whose id bounds the rows */
} VsCopy;

/* Runs c's sql over the input, its rows with ids in (lo, hi] (parameters 1
 * and 2), and calls c's row() for each result row. */
static int
each_row (VsMerge *m, const VsCopy *c, int64_t lo, int64_t hi)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (m->db, c->sql, -1, &s, NULL) != SQLITE_OK)
    return vs_merge_fail (m, "cannot read a process trace", sqlite3_errmsg (m->db));
  sqlite3_bind_int64 (s, 1, lo);
  sqlite3_bind_int64 (s, 2, hi);
  int rc;
  while ((rc = sqlite3_step (s)) == SQLITE_ROW)
    if (c->row (m, s, c->table) != 0 || tick (m) != 0)
      {
        sqlite3_finalize (s);
        if (m->err[0] == '\0')
          vs_merge_fail (m, "cannot write the merged trace", vs_writer_errmsg (m->w));
        return -1;
      }
  sqlite3_finalize (s);
  if (rc != SQLITE_DONE)
    return vs_merge_fail (m, "cannot read a process trace", sqlite3_errmsg (m->db));
  return 0;
}

/* The merged process row with this pid and host, latest first; 0 if none. */
static int64_t
find_process (VsMerge *m, int64_t pid, const char *host)
{
  static const char *sql
      = "SELECT id FROM process WHERE pid = ?1 AND host IS ?2 ORDER BY id DESC LIMIT 1";
  sqlite3_stmt *s = NULL;
  int64_t id = 0;
  if (sqlite3_prepare_v2 (vs_writer_db (m->w), sql, -1, &s, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64 (s, 1, pid);
  if (host != NULL)
    sqlite3_bind_text (s, 2, host, -1, SQLITE_TRANSIENT);
  if (sqlite3_step (s) == SQLITE_ROW)
    id = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return id;
}

static int64_t add_process (VsMerge *m, sqlite3_stmt *s);

static int
row_process (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  static const char *take_sql
      = "UPDATE process SET pid = ?1, ppid = ?2, host = ?3, rank = ?4, local_rank = ?5,"
        " world_size = ?6, cuda_visible_devices = ?7, command_line = ?8, start_ns = ?9,"
        " end_ns = ?10, exit_status = ?11 WHERE id = ?12";
  if (!m->imported && m->claim_process.n > 0)
    {
      /* The adopted import's row of this process: the collector's row
       * replaces it, keeping its id. */
      int64_t same = find_process (m, vs_merge_col_i64 (s, 1), vs_merge_col_text (s, 3));
      if (same > 0 && vs_merge_claim (&m->claim_process, same))
        return vs_merge_take_over (m, take_sql, s, 11, same) == 0
                   ? vs_merge_idmap_set (&m->process, vs_merge_col_i64 (s, 0), same)
                   : -1;
    }
  if (m->imported)
    {
      int64_t same = find_process (m, vs_merge_col_i64 (s, 1), vs_merge_col_text (s, 3));
      if (same > 0)
        return vs_merge_idmap_set (&m->process, vs_merge_col_i64 (s, 0), same);
    }
  int64_t id = add_process (m, s);
  /* An import's own row, where rows are appended: the collector's row of
   * the same process, merged later, takes it over (vs-merge-append.c). */
  if (id > 0 && m->imported && m->claim_new && vs_merge_claims_add (&m->claim_process, id) != 0)
    return -1;
  return id > 0 ? vs_merge_idmap_set (&m->process, vs_merge_col_i64 (s, 0), id) : -1;
}

/* A new process row of the input row at s; its id or -1. */
static int64_t
add_process (VsMerge *m, sqlite3_stmt *s)
{
  VsProcess p;

  vs_writer_read_row (VS_WRITER_ROW_PROCESS, s, 1, &p);
  return vs_writer_add_process (m->w, &p);
}

static int
row_device (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  VsDevice d;
  static const char *take_sql
      = "UPDATE device SET idx = ?1, uuid = ?2, name = ?3, total_bytes = ?4 WHERE id = ?5";
  static const char *last_sql = "SELECT ifnull(max(id), 0) FROM device";
  /* An import's own row, where rows are appended: claimed, as an
   * import's processes are (row_process). */
  bool claim = m->imported && m->claim_new;
  int64_t last = 0;

  vs_writer_read_row (VS_WRITER_ROW_DEVICE, s, 1, &d);
  if (claim)
    {
      sqlite3_stmt *q = NULL;
      if (sqlite3_prepare_v2 (vs_writer_db (m->w), last_sql, -1, &q, NULL) == SQLITE_OK
          && sqlite3_step (q) == SQLITE_ROW)
        last = sqlite3_column_int64 (q, 0);
      sqlite3_finalize (q);
    }
  int64_t id = vs_writer_add_device (m->w, &d);
  if (id > last && claim && vs_merge_claims_add (&m->claim_device, id) != 0)
    return -1;
  /* The adopted import's row of this GPU: the collector's values. */
  if (id > 0 && !m->imported && vs_merge_claim (&m->claim_device, id)
      && vs_merge_take_over (m, take_sql, s, 4, id) != 0)
    return -1;
  return id > 0 ? vs_merge_idmap_set (&m->device, vs_merge_col_i64 (s, 0), id) : -1;
}

/* A row of a table copied as it is read but for the ids it holds
 * (allocator, module, frame): those mapped, the row added through the
 * writer, its own id mapped. */
static int
row_mapped (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  VsIdMap *own[] = { [VS_MERGE_ALLOCATOR] = &m->allocator,
                     [VS_MERGE_MODULE] = &m->module,
                     [VS_MERGE_FRAME] = &m->frame };
  union
  {
    VsAllocator allocator;
    VsModule module;
    VsFrame frame;
  } r;
  int64_t id = -1;

  switch (table)
    {
    case VS_MERGE_ALLOCATOR:
      vs_writer_read_row (VS_WRITER_ROW_ALLOCATOR, s, 1, &r.allocator);
      r.allocator.device_id = vs_merge_idmap_get (&m->device, r.allocator.device_id);
      r.allocator.process_id = vs_merge_idmap_get (&m->process, r.allocator.process_id);
      id = vs_writer_add_allocator (m->w, &r.allocator);
      break;
    case VS_MERGE_MODULE:
      vs_writer_read_row (VS_WRITER_ROW_MODULE, s, 1, &r.module);
      r.module.process_id = vs_merge_idmap_get (&m->process, r.module.process_id);
      id = vs_writer_add_module (m->w, &r.module);
      break;
    case VS_MERGE_FRAME:
      vs_writer_read_row (VS_WRITER_ROW_FRAME, s, 1, &r.frame);
      r.frame.module_id = vs_merge_idmap_get (&m->module, r.frame.module_id);
      id = vs_writer_add_frame (m->w, &r.frame);
      break;
    default:
      assert (!"a table of row_mapped()");
      break;
    }
  return id > 0 ? vs_merge_idmap_set (own[table], vs_merge_col_i64 (s, 0), id) : -1;
}

/* Stack nodes come in id order, so a node's parent is always mapped. */
static int
row_stack (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  int64_t parent = vs_merge_col_i64 (s, 1);
  int64_t new_parent = parent == 0 ? 0 : vs_merge_idmap_get (&m->stack, parent);
  int64_t frame = vs_merge_idmap_get (&m->frame, vs_merge_col_i64 (s, 2));
  if (new_parent == VS_UNKNOWN || frame == VS_UNKNOWN)
    return 0;
  int64_t id = vs_writer_add_stack_node (m->w, new_parent, frame);
  return id > 0 ? vs_merge_idmap_set (&m->stack, vs_merge_col_i64 (s, 0), id) : -1;
}

/* Ranges come in id order; a parent opens before its children. */
static int
row_range (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  VsRange r;

  vs_writer_read_row (VS_WRITER_ROW_RANGE, s, 1, &r);
  r.process_id = vs_merge_idmap_get (&m->process, r.process_id);
  r.parent_id = vs_merge_idmap_get (&m->range, r.parent_id);
  r.depth = vs_merge_col_i64 (s, 8);
  if (r.name == NULL)
    r.name = "";
  int64_t id = vs_writer_add_range (m->w, &r);
  return id > 0 ? vs_merge_idmap_set (&m->range, vs_merge_col_i64 (s, 0), id) : -1;
}

/* A kernel's name and configuration, from column first of s on: name,
 * grid_x, grid_y, grid_z, block_x, block_y, block_z, static_shared,
 * dynamic_shared, registers. */
static void
read_kernel_config (sqlite3_stmt *s, int first, VsKernel *k)
{
  int64_t *config[]
      = { &k->grid_x,  &k->grid_y,        &k->grid_z,         &k->block_x,  &k->block_y,
          &k->block_z, &k->static_shared, &k->dynamic_shared, &k->registers };

  k->name = vs_merge_col_text (s, first);
  for (int i = 0; i < (int)(sizeof config / sizeof config[0]); i++)
    *config[i] = vs_merge_col_i64 (s, first + 1 + i);
}

/* Kernel names and configurations: deduplicated by the writer across
 * inputs. */
static int
row_kernel_config (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  VsKernel k = { 0 };

  read_kernel_config (s, 1, &k);
  int64_t id = vs_writer_add_kernel_config (m->w, &k);
  return id > 0 ? vs_merge_idmap_set (&m->kernel_config, vs_merge_col_i64 (s, 0), id) : -1;
}

/* A whole kernel row of an input of schema version 1 or 2. */
static int
row_kernel (VsMerge *m, sqlite3_stmt *s, VsMergeTable table)
{
  VsKernel k = {
    .start_ns = vs_merge_col_i64 (s, 0),
    .end_ns = vs_merge_col_i64 (s, 1),
    .process_id = vs_merge_idmap_get (&m->process, vs_merge_col_i64 (s, 2)),
    .device_id = vs_merge_idmap_get (&m->device, vs_merge_col_i64 (s, 3)),
    .context = vs_merge_col_i64 (s, 4),
    .stream = vs_merge_col_i64 (s, 5),
    .correlation = vs_merge_col_i64 (s, 6),
  };

  read_kernel_config (s, 7, &k);
  return vs_writer_kernel (m->w, &k) == 0 ? 0 : -1;
}

/* In dependency order: ids a table refers to are mapped before it. */
static const VsCopy copies[] = {
  { "SELECT id, pid, ppid, host, rank, local_rank, world_size, cuda_visible_devices,"
    " command_line, start_ns, end_ns, exit_status FROM process WHERE id > ?1 AND id <= ?2 ORDER BY "
    "id",
    row_process, VS_MERGE_PROCESS },
  { "SELECT id, idx, uuid, name, total_bytes FROM device WHERE id > ?1 AND id <= ?2 ORDER BY id",
    row_device, VS_MERGE_DEVICE },
  { "SELECT id, device_id, process_id, kind, name, handle, settings FROM allocator"
    " WHERE id > ?1 AND id <= ?2 ORDER BY id",
    row_mapped, VS_MERGE_ALLOCATOR },
  { "SELECT id, process_id, path, build_id, load_address, size FROM module WHERE id > ?1 AND id <= "
    "?2 ORDER BY id",
    row_mapped, VS_MERGE_MODULE },
  { "SELECT id, kind, module_id, address, function, file, line FROM frame WHERE id > ?1 AND id <= "
    "?2 ORDER BY id",
    row_mapped, VS_MERGE_FRAME },
  { "SELECT id, parent_id, frame_id FROM stack WHERE id > ?1 AND id <= ?2 ORDER BY id", row_stack,
    VS_MERGE_STACK },
  { "SELECT id, process_id, tid, domain, name, start_ns, end_ns, parent_id, depth"
    " FROM nvtx_range WHERE id > ?1 AND id <= ?2 ORDER BY id",
    row_range, VS_MERGE_RANGE },
};

/* Kernels of a version 3 input: its configurations here, its executions
 * by SQL (kernel_exec_copy); of an older input: whole rows here. */
static const VsCopy kernel_config_copy
    = { "SELECT id, name, grid_x, grid_y, grid_z, block_x, block_y, block_z, static_shared,"
        " dynamic_shared, registers FROM kernel_config WHERE id > ?1 AND id <= ?2 ORDER BY id",
        row_kernel_config, VS_MERGE_KERNEL_CONFIG };
static const VsCopy kernel_row_copy
    = { "SELECT start_ns, end_ns, process_id, device_id, context, stream, correlation, name,"
        " grid_x, grid_y, grid_z, block_x, block_y, block_z, static_shared, dynamic_shared,"
        " registers FROM kernel WHERE id > ?1 AND id <= ?2 ORDER BY id",
        row_kernel, VS_MERGE_KERNEL_EXEC };
const char *const vs_merge_kernels_v3_sql
    = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kernel_exec'";

/* The event tables are copied by SQL on the output's connection, with the
 * input attached as `src`: one INSERT … SELECT each, ids mapped by the
 * function vs_map(kind, old id) over the maps the copies above filled,
 * rows with ids in (?1, ?2], their new ids vs_event_id(table) (NULL: the
 * table's next). */
/* vs_map(kind, old id)'s kinds, as the SQL below spells them. */
enum
{
  MAP_PROCESS = 0,
  MAP_DEVICE = 1,
  MAP_ALLOCATOR = 2,
  MAP_STACK = 3,
  MAP_RANGE = 4,
  MAP_KERNEL_CONFIG = 5
};

typedef struct
{
  VsMergeTable table;
  const char *sql;
} VsEventCopy;

static const VsEventCopy event_copies[] = {
  { VS_MERGE_MEM_EVENT,
    "INSERT INTO main.mem_event (id, ts, process_id, tid, device_id, context, stream, kind, op,"
    " address, bytes, pool_id, pool_size, pool_utilized, correlation, stack_id, range_id)"
    " SELECT vs_event_id(8), ts, vs_map(0, process_id), tid, vs_map(1, device_id), context,"
    " stream, kind, op, address, bytes, vs_map(2, pool_id), pool_size, pool_utilized,"
    " correlation, vs_map(3, stack_id), vs_map(4, range_id) FROM src.mem_event"
    " WHERE id > ?1 AND id <= ?2 ORDER BY id" },
  { VS_MERGE_POOL_EVENT,
    "INSERT INTO main.pool_event (id, ts, process_id, device_id, pool_id, op, size, utilized,"
    " release_threshold, min_bytes_to_keep, correlation, stack_id)"
    " SELECT vs_event_id(9), ts, vs_map(0, process_id), vs_map(1, device_id),"
    " vs_map(2, pool_id), op, size, utilized, release_threshold, min_bytes_to_keep,"
    " correlation, vs_map(3, stack_id) FROM src.pool_event WHERE id > ?1 AND id <= ?2"
    " ORDER BY id" },
  { VS_MERGE_ALLOC_EVENT,
    "INSERT INTO main.alloc_event (id, ts, process_id, tid, device_id, allocator_id, op,"
    " address, requested_bytes, block_bytes, segment_address, stream, stack_id, range_id,"
    " before_trace)"
    " SELECT vs_event_id(10), ts, vs_map(0, process_id), tid, vs_map(1, device_id),"
    " vs_map(2, allocator_id), op, address, requested_bytes, block_bytes, segment_address,"
    " stream, vs_map(3, stack_id), vs_map(4, range_id), before_trace FROM src.alloc_event"
    " WHERE id > ?1 AND id <= ?2 ORDER BY id" },
  { VS_MERGE_FAILED_ALLOC,
    "INSERT INTO main.failed_alloc (id, ts, process_id, tid, device_id, allocator_id, api,"
    " requested_bytes, error, error_name, device_free_bytes, device_total_bytes, correlation,"
    " stack_id, range_id)"
    " SELECT vs_event_id(11), ts, vs_map(0, process_id), tid, vs_map(1, device_id),"
    " vs_map(2, allocator_id), ifnull(api, ''), requested_bytes, error, error_name,"
    " device_free_bytes, device_total_bytes, correlation, vs_map(3, stack_id),"
    " vs_map(4, range_id) FROM src.failed_alloc WHERE id > ?1 AND id <= ?2 ORDER BY id" },
  { VS_MERGE_MEMCPY,
    "INSERT INTO main.memcpy (id, start_ns, end_ns, process_id, device_id, stream,"
    " correlation, copy_kind, src_kind, dst_kind, bytes)"
    " SELECT vs_event_id(12), start_ns, end_ns, vs_map(0, process_id), vs_map(1, device_id),"
    " stream, correlation, copy_kind, src_kind, dst_kind, bytes FROM src.memcpy"
    " WHERE id > ?1 AND id <= ?2 ORDER BY id" },
  { VS_MERGE_MEMSET,
    "INSERT INTO main.memset (id, start_ns, end_ns, process_id, device_id, stream,"
    " correlation, bytes, value, mem_kind)"
    " SELECT vs_event_id(13), start_ns, end_ns, vs_map(0, process_id), vs_map(1, device_id),"
    " stream, correlation, bytes, value, mem_kind FROM src.memset"
    " WHERE id > ?1 AND id <= ?2 ORDER BY id" },
  /* In the input's own order (kernel_exec is clustered on start, then id):
   * no sort of the executions.  The new ids follow the starts; executions
   * that start together keep their order, so every reader's order (start,
   * then id) is the input's. */
  { VS_MERGE_KERNEL_EXEC,
    "INSERT INTO main.kernel_exec (start_ns, id, duration_ns, process_id, device_id, context,"
    " stream, correlation, config_id)"
    " SELECT start_ns, vs_kernel_id(), duration_ns, vs_map(0, process_id),"
    " vs_map(1, device_id), context, stream, correlation, vs_map(5, config_id)"
    " FROM src.kernel_exec WHERE id > ?1 AND id <= ?2 ORDER BY start_ns, id" },
};

const char *const vs_merge_table_names[VS_MERGE_N_TABLES] = {
  [VS_MERGE_PROCESS] = "process",
  [VS_MERGE_DEVICE] = "device",
  [VS_MERGE_ALLOCATOR] = "allocator",
  [VS_MERGE_MODULE] = "module",
  [VS_MERGE_FRAME] = "frame",
  [VS_MERGE_STACK] = "stack",
  [VS_MERGE_RANGE] = "nvtx_range",
  [VS_MERGE_KERNEL_CONFIG] = "kernel_config",
  [VS_MERGE_MEM_EVENT] = "mem_event",
  [VS_MERGE_POOL_EVENT] = "pool_event",
  [VS_MERGE_ALLOC_EVENT] = "alloc_event",
  [VS_MERGE_FAILED_ALLOC] = "failed_alloc",
  [VS_MERGE_MEMCPY] = "memcpy",
  [VS_MERGE_MEMSET] = "memset",
  [VS_MERGE_KERNEL_EXEC] = "kernel_exec",
};

/* vs_map(kind, old): the merged id of an input's id, NULL when it has
 * none (as the writer stores unknown ids). */
static void
sql_map (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  VsMerge *m = sqlite3_user_data (ctx);
  const VsIdMap *maps[] = {
    [MAP_PROCESS] = &m->process, [MAP_DEVICE] = &m->device, [MAP_ALLOCATOR] = &m->allocator,
    [MAP_STACK] = &m->stack,     [MAP_RANGE] = &m->range,   [MAP_KERNEL_CONFIG] = &m->kernel_config
  };
  int kind = sqlite3_value_int (argv[0]);
  if (kind < 0 || kind > MAP_KERNEL_CONFIG || sqlite3_value_type (argv[1]) != SQLITE_INTEGER)
    {
      sqlite3_result_null (ctx);
      return;
    }
  int64_t id = vs_merge_idmap_get (maps[kind], sqlite3_value_int64 (argv[1]));
  if (id == VS_UNKNOWN)
    sqlite3_result_null (ctx);
  else
    sqlite3_result_int64 (ctx, id);
}

/* vs_kernel_id(): the merged trace's next kernel execution id. */
static void
sql_kernel_id (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  VsMerge *m = sqlite3_user_data (ctx);
  sqlite3_result_int64 (ctx, vs_writer_next_kernel_id (m->w));
}

/* vs_event_id(table): the next id of an event table where m->event_ids
 * gives them (appending), else NULL (the table's own next). */
static void
sql_event_id (sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
  VsMerge *m = sqlite3_user_data (ctx);
  int t = sqlite3_value_int (argv[0]);
  if (m->event_ids == NULL || t < 0 || t >= VS_MERGE_N_TABLES)
    sqlite3_result_null (ctx);
  else
    sqlite3_result_int64 (ctx, ++m->event_ids[t]);
}

/* Progress while one INSERT … SELECT runs: a chance to cancel. */
static int
sql_progress (void *data)
{
  VsMerge *m = data;
  return m->progress && !m->progress (m->done, m->total, m->progress_data);
}

int
vs_merge_sql_functions (VsMerge *m)
{
  sqlite3 *db = vs_writer_db (m->w);
  int flags = SQLITE_UTF8 | SQLITE_DIRECTONLY;
  if (sqlite3_create_function (db, "vs_map", 2, flags | SQLITE_DETERMINISTIC, m, sql_map, NULL,
                               NULL)
          != SQLITE_OK
      || sqlite3_create_function (db, "vs_kernel_id", 0, flags, m, sql_kernel_id, NULL, NULL)
             != SQLITE_OK
      || sqlite3_create_function (db, "vs_event_id", 1, flags, m, sql_event_id, NULL, NULL)
             != SQLITE_OK)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  return 0;
}

int
vs_merge_copy_event_rows (VsMerge *m, const int64_t *lo, const int64_t *hi)
{
  sqlite3 *db = vs_writer_db (m->w);
  sqlite3_progress_handler (db, 100000, sql_progress, m);
  int rc = 0;
  size_t n = sizeof event_copies / sizeof event_copies[0];
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      const VsEventCopy *c = &event_copies[i];
      if (c->table == VS_MERGE_KERNEL_EXEC && (!m->kernels_v3 || m->kernels_aside))
        continue;
      sqlite3_stmt *s = NULL;
      rc = sqlite3_prepare_v2 (db, c->sql, -1, &s, NULL) == SQLITE_OK ? 0 : -1;
      if (rc == 0)
        {
          sqlite3_bind_int64 (s, 1, lo[c->table]);
          sqlite3_bind_int64 (s, 2, hi[c->table]);
          rc = sqlite3_step (s) == SQLITE_DONE ? 0 : -1;
        }
      sqlite3_finalize (s);
      m->done += (uint64_t)sqlite3_changes (db);
      if (rc == 0 && m->progress && !m->progress (m->done, m->total, m->progress_data))
        rc = -2;
    }
  if (rc == -2 || (rc == -1 && sqlite3_errcode (db) == SQLITE_INTERRUPT))
    vs_merge_fail (m, "merge", "cancelled");
  else if (rc == -1)
    vs_merge_fail (m, "cannot copy a process trace", sqlite3_errmsg (db));
  sqlite3_progress_handler (db, 0, NULL, NULL);
  return rc == 0 ? 0 : -1;
}

int
vs_merge_copy_small (VsMerge *m, const int64_t *lo, const int64_t *hi)
{
  int rc = 0;
  for (size_t c = 0; c < sizeof copies / sizeof copies[0] && rc == 0; c++)
    rc = each_row (m, &copies[c], lo[copies[c].table], hi[copies[c].table]);
  const VsCopy *kernels = m->kernels_v3 ? &kernel_config_copy : &kernel_row_copy;
  if (rc == 0)
    rc = each_row (m, kernels, lo[kernels->table], hi[kernels->table]);
  return rc;
}

/* Every row of a table: the bounds of a merge of whole inputs. */
static const int64_t all_lo[VS_MERGE_N_TABLES] = { 0 };
static const int64_t all_hi[]
    = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX,
        INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };
_Static_assert(sizeof all_hi / sizeof all_hi[0] == VS_MERGE_N_TABLES, "a bound per table");

/* Copies the event tables of the input at path (maps filled). */
static int
copy_events (VsMerge *m, const char *path)
{
  sqlite3 *db = vs_writer_db (m->w);
  sqlite3_stmt *s = NULL;
  int rc = 0;
  if (vs_writer_commit (m->w) < 0)
    return vs_merge_fail (m, "cannot write the merged trace", vs_writer_errmsg (m->w));
  if (vs_merge_sql_functions (m) != 0)
    return -1;
  if (sqlite3_prepare_v2 (db, "ATTACH ?1 AS src", -1, &s, NULL) != SQLITE_OK)
    return vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  sqlite3_bind_text (s, 1, path, -1, SQLITE_STATIC);
  rc = sqlite3_step (s) == SQLITE_DONE ? 0 : -1;
  sqlite3_finalize (s);
  if (rc < 0)
    return vs_merge_fail (m, "cannot read a process trace", sqlite3_errmsg (db));
  if (sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    rc = vs_merge_fail (m, "cannot write the merged trace", sqlite3_errmsg (db));
  if (rc == 0)
    rc = vs_merge_copy_event_rows (m, all_lo, all_hi);
  if (rc == 0 && sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    rc = vs_merge_fail (m, "cannot copy a process trace", sqlite3_errmsg (db));
  if (rc != 0)
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec (db, "DETACH src", NULL, NULL, NULL);
  return rc == 0 ? 0 : -1;
}

static const char *count_sql
    = "SELECT (SELECT count(*) FROM mem_event) + (SELECT count(*) FROM kernel)"
      " + (SELECT count(*) FROM memcpy) + (SELECT count(*) FROM memset)"
      " + (SELECT count(*) FROM nvtx_range) + (SELECT count(*) FROM pool_event)"
      " + (SELECT count(*) FROM alloc_event) + (SELECT count(*) FROM failed_alloc)";

static const char *meta_sql = "SELECT key, value FROM meta";

sqlite3 *
vs_merge_open_input (const char *path, char *err, size_t errlen)
{
  sqlite3 *db = NULL;
  /* Read-write: a process killed mid-run leaves a WAL to recover. */
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      snprintf (err, errlen, "cannot open %s: %s", path,
                db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return NULL;
    }
  sqlite3_busy_timeout (db, 5000);
  sqlite3_stmt *s = NULL;
  int app = 0;
  if (sqlite3_prepare_v2 (db, "PRAGMA application_id", -1, &s, NULL) == SQLITE_OK
      && sqlite3_step (s) == SQLITE_ROW)
    app = sqlite3_column_int (s, 0);
  sqlite3_finalize (s);
  if (app != VS_TRACE_APPLICATION_ID)
    {
      snprintf (err, errlen, "%s is not a vramscope trace", path);
      sqlite3_close (db);
      return NULL;
    }
  return db;
}

/* The kernel executions db holds (kernel_exec or, before schema 3,
 * kernel); -1 when it cannot say. */
static int64_t
count_kernels (sqlite3 *db)
{
  static const char *sql
      = "SELECT CASE WHEN EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table'"
        " AND name = 'kernel_exec') THEN (SELECT count(*) FROM kernel_exec)"
        " WHEN EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'kernel')"
        " THEN (SELECT count(*) FROM kernel) ELSE 0 END";
  sqlite3_stmt *s = NULL;
  int64_t n = -1;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step (s) == SQLITE_ROW)
    n = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return n;
}

/* Whether the kernels may be coded aside (vs-merge-kernels.c): the trace
 * is compacted next (run names a row sink), and not turned off
 * ($VRAMSCOPE_KERNELS_ASIDE=0). */
static bool
kernels_aside_wanted (const VsMergeRun *run)
{
  const char *env = getenv ("VRAMSCOPE_KERNELS_ASIDE");
  return run->sink != NULL && (env == NULL || strcmp (env, "0") != 0);
}

static int64_t
count_rows (sqlite3 *db)
{
  sqlite3_stmt *s = NULL;
  int64_t n = 0;
  if (sqlite3_prepare_v2 (db, count_sql, -1, &s, NULL) == SQLITE_OK
      && sqlite3_step (s) == SQLITE_ROW)
    n = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return n;
}

bool
vs_merge_input_meta_is (sqlite3 *db, const char *key, const char *value)
{
  static const char *sql = "SELECT 1 FROM meta WHERE key = ?1 AND CAST(value AS TEXT) = ?2";
  sqlite3_stmt *s = NULL;
  bool found = false;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
      sqlite3_bind_text (s, 2, value, -1, SQLITE_STATIC);
      found = sqlite3_step (s) == SQLITE_ROW;
    }
  sqlite3_finalize (s);
  return found;
}

typedef struct
{
  VsMerge *m;
  int64_t pend;
  const VsMergeRun *run;
} EndProcesses;

static int
end_one_process (int64_t old, int64_t new_id, void *data)
{
  EndProcesses *e = data;
  vs_merge_end_process (e->m->w, new_id, e->pend, e->run);
  return 0;
}

void
vs_merge_end_processes (VsMerge *m, int64_t pend, const VsMergeRun *run)
{
  EndProcesses e = { m, pend, run };
  vs_merge_idmap_foreach (&m->process, 0, INT64_MAX, end_one_process, &e);
}

/* Merges inputs into a new trace at out (see vs-merge.h). */
int
vs_merge_traces (const char *out, const char *const *inputs, size_t n, const VsMergeRun *run,
                 VsProgressFunc progress, void *progress_data, char *err, size_t errlen)
{
  VsMerge m
      = { .progress = progress, .progress_data = progress_data, .err = err, .errlen = errlen };
  err[0] = '\0';
  /* The adopted trace becomes the output: renamed, not copied.  Where it
   * cannot be (another filesystem), it is merged first, copied: the same
   * trace either way. */
  const char *adopt = run != NULL ? run->adopt : NULL;
  bool adopted = adopt != NULL && rename (adopt, out) == 0;
  const char **all = malloc ((n + 1) * sizeof *all);
  if (all == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  size_t nall = 0;
  if (adopt != NULL && !adopted)
    all[nall++] = adopt;
  for (size_t i = 0; i < n; i++)
    all[nall++] = inputs[i];
  m.w = adopted ? vs_writer_open (out, err, errlen) : vs_writer_create (out, err, errlen);
  if (m.w == NULL)
    {
      free (all);
      return -1;
    }
  /* OUT is a temporary file, renamed only once complete: a crash leaves
   * the spool to recover from, never a half-written trace under its name.
   * So no journal and no syncs: the copy is written once, to the file,
   * instead of to a WAL and then checkpointed into the file. */
  if (sqlite3_exec (vs_writer_db (m.w), "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", NULL,
                    NULL, NULL)
      != SQLITE_OK)
    {
      snprintf (err, errlen, "%s", sqlite3_errmsg (vs_writer_db (m.w)));
      vs_writer_close (m.w, false, NULL, NULL, NULL, 0);
      free (all);
      return -1;
    }
  size_t kernel_inputs = 0, kernel_input = nall;
  int64_t kernel_count = 0;
  for (size_t i = 0; i < nall; i++)
    {
      sqlite3 *db = vs_merge_open_input (all[i], err, errlen);
      if (db == NULL)
        continue; /* reported by the caller as a warning */
      m.total += (uint64_t)count_rows (db);
      /* The one input with kernels, if only one has any. */
      int64_t k = count_kernels (db);
      if (k != 0)
        {
          kernel_inputs += k > 0 ? 1 : 2;
          kernel_input = i;
          kernel_count = k;
        }
      sqlite3_close (db);
    }
  err[0] = '\0';
  /* Coded aside, beside the finalizer, when the merged trace gets them
   * from that input alone. */
  if (kernel_inputs != 1 || !kernels_aside_wanted (run) || count_kernels (vs_writer_db (m.w)) != 0)
    kernel_input = nall;
  VsKernelsAside *aside = NULL;

  VsMergeMeta rm = { .start_ns = VS_UNKNOWN, .end_ns = VS_UNKNOWN };
  int rc = 0;
  size_t merged = 0;
  VsClaims adopted_procs = { 0 };
  int64_t adopted_end = VS_UNKNOWN;
  bool adopted_meta_read = !adopted;
  if (adopted)
    {
      rc = vs_merge_adopt_rows (&m, &adopted_procs);
      merged++;
    }
  for (size_t i = 0; i <= nall && rc == 0; i++)
    {
      /* The adopted trace's meta where its name sorts among the inputs
       * (they come sorted by name), else after them. */
      if (!adopted_meta_read && (i == nall || strcmp (adopt, all[i]) < 0))
        {
          adopted_meta_read = true;
          rc = vs_merge_adopted_meta (&m, &rm, &adopted_end);
        }
      if (i == nall || rc != 0)
        break;
      char ierr[512];
      m.db = vs_merge_open_input (all[i], ierr, sizeof ierr);
      if (m.db == NULL)
        continue;
      /* A PyTorch snapshot's history, tied to its process by record. */
      m.imported = vs_merge_input_meta_is (m.db, "source", "import");
      if (m.imported && vs_merge_input_meta_is (m.db, "history_overflow", "1"))
        vs_writer_set_meta_int (m.w, "history_overflow", 1);
      m.kernels_v3 = vs_merge_count_is_positive (m.db, vs_merge_kernels_v3_sql);
      rc = vs_merge_copy_small (&m, all_lo, all_hi);
      m.kernels_aside = false;
      if (rc == 0 && i == kernel_input && m.kernels_v3)
        {
          aside = vs_merge_kernels_start (&m, all[i], kernel_count);
          m.kernels_aside = aside != NULL;
        }
      if (rc == 0)
        rc = copy_events (&m, all[i]);
      if (rc == 0)
        vs_merge_end_processes (&m, vs_merge_meta (m.w, m.db, meta_sql, &rm), run);
      vs_merge_free_maps (&m);
      sqlite3_close (m.db);
      merged++;
    }
  free (all);
  free (m.claim_process.ids);
  free (m.claim_device.ids);
  for (size_t k = 0; rc == 0 && k < adopted_procs.n; k++)
    vs_merge_end_process (m.w, adopted_procs.ids[k], adopted_end, run);
  free (adopted_procs.ids);
  if (rc == 0)
    vs_merge_run_meta (m.w, &rm, merged, run);
  char cerr[512] = "";
  vs_timings_phase (run->timings, "merging (copy)");
  if (rc != 0)
    {
      vs_writer_close (m.w, false, NULL, NULL, cerr, sizeof cerr);
      vs_merge_kernels_free (aside);
      return -1;
    }
  VsFinalizeOptions fo = {
    .progress = progress,
    .progress_data = progress_data,
    /* The adopted trace's rows are the ones its import handed over. */
    .given = adopted ? run->given : NULL,
    .sink = run->sink,
    /* The kernels coded aside go in before the finalizer commits. */
    .beside = aside != NULL ? vs_merge_kernels_write : NULL,
    .beside_data = aside,
    .timings = run->timings,
  };
  int crc = vs_trace_close_finalized (m.w, &fo, cerr, sizeof cerr);
  vs_merge_kernels_free (aside);
  if (crc != 0)
    {
      snprintf (err, errlen, "%s", cerr);
      return -1;
    }
  return 0;
}
