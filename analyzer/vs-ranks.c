/* SPDX-License-Identifier: MIT */
/* vs-ranks.c — the ranks of one or several traces compared (see
 * vs-ranks.h).  Each trace gives its processes, the devices each used
 * (its own allocators, its device-level events, its failed requests), the
 * summaries of those devices or allocators, and its failed requests; the
 * rows of every trace are then ordered and the worst rank chosen.
 */
#include "vs-ranks.h"
#include "vs-format.h"
#include "vs-summary.h"
#include "vs-trace-private.h"

#include <string.h>

struct _VsRankComparison
{
  GArray *ranks;      /* VsRank */
  GStringChunk *text; /* the rows' strings */
  guint n_traces;
  gint worst; /* index in ranks, -1 when none */
};

/* A process of one trace, while its rows are gathered. */
typedef struct
{
  gint64 id, pid, rank, local_rank, world_size, exit_status;
  char *host;
  gboolean has_pytorch; /* owns a PyTorch allocator (failures count as the summary counts) */
  GArray *devices;      /* gint64 device ids, in first-seen order */
  GArray *static_only;  /* devices where it has module memory only (claim_devices) */
} Proc;

static void
proc_clear (gpointer data)
{
  Proc *p = data;

  g_free (p->host);
  g_array_unref (p->devices);
  g_array_unref (p->static_only);
}

static void
add_device_id (GArray *ids, gint64 device_id)
{
  for (guint i = 0; i < ids->len; i++)
    if (g_array_index (ids, gint64, i) == device_id)
      return;
  g_array_append_val (ids, device_id);
}

static void
proc_add_device (Proc *p, gint64 device_id)
{
  add_device_id (p->devices, device_id);
}

static Proc *
find_proc (GArray *procs, gint64 id)
{
  for (guint i = 0; i < procs->len; i++)
    if (g_array_index (procs, Proc, i).id == id)
      return &g_array_index (procs, Proc, i);
  return NULL;
}

static const char *processes_sql = "SELECT id, pid, host, rank, local_rank, world_size,"
                                   " exit_status FROM process ORDER BY id";

/* Each process with device-level events on a device, and whether they are
 * all module memory (kinds static and managed_static: a CUDA context the
 * process created there, loading its modules' globals). */
static const char *device_processes_sql = "SELECT process_id, min(kind IN (4, 9)) FROM mem_event"
                                          " WHERE device_id = ?1 GROUP BY process_id";

static const char *failures_sql = "SELECT process_id, device_id, allocator_id, ts,"
                                  " requested_bytes FROM failed_alloc ORDER BY ts, id";

/* One failed request, as failures_sql reads it (VS_UNKNOWN for NULL). */
typedef struct
{
  gint64 process_id, device_id, allocator_id, ts, bytes;
} VsRankFailure;

/* Every failed request of trace, in time order, into out. */
static gboolean
read_failures (VsTrace *trace, GArray *out, GError **error)
{
  sqlite3_stmt *st = vs_trace_statement (trace, failures_sql, error);
  int rc;

  if (st == NULL)
    return FALSE;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      VsRankFailure f
          = { sqlite3_column_int64 (st, 0), vs_column_int (st, 1), vs_column_int (st, 2),
              sqlite3_column_int64 (st, 3), vs_column_int (st, 4) };
      g_array_append_val (out, f);
    }
  return rc == SQLITE_DONE || vs_trace_sql_error (trace, error);
}

/* Reads the processes of trace into procs, with the devices of their
 * allocators. */
static gboolean
read_processes (VsTrace *trace, GArray *procs, GError **error)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  sqlite3_stmt *st = vs_trace_statement (trace, processes_sql, error);
  int rc;

  if (st == NULL)
    return FALSE;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      Proc p = {
        .id = sqlite3_column_int64 (st, 0),
        .pid = vs_column_int (st, 1),
        .host = vs_column_dup (st, 2),
        .rank = vs_column_int (st, 3),
        .local_rank = vs_column_int (st, 4),
        .world_size = vs_column_int (st, 5),
        .exit_status = vs_column_int (st, 6),
        .devices = g_array_new (FALSE, FALSE, sizeof (gint64)),
        .static_only = g_array_new (FALSE, FALSE, sizeof (gint64)),
      };
      g_array_append_val (procs, p);
    }
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);
      Proc *p = a->process_id != VS_UNKNOWN ? find_proc (procs, a->process_id) : NULL;

      if (p == NULL)
        continue;
      proc_add_device (p, a->device_id);
      if (strcmp (a->kind, "pytorch") == 0)
        p->has_pytorch = TRUE;
    }
  return TRUE;
}

/* Adds the processes of devices no process has claimed yet through an
 * allocator, from their device-level events.  A scan
 * of the events of each such device: none at all for a PyTorch run, whose
 * every process has its allocator on its device.  A device where a
 * process has only module memory (a context it created there, as a rank
 * does on GPU 0 before it selects its own) is not one of its devices,
 * unless the process has no other. */
static gboolean
claim_devices (VsTrace *trace, GArray *procs, GError **error)
{
  const GPtrArray *devices = vs_trace_get_devices (trace);

  for (guint i = 0; i < devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (devices, i);
      gboolean claimed = FALSE;
      sqlite3_stmt *st;
      int rc;

      for (guint k = 0; k < procs->len && !claimed; k++)
        {
          GArray *used = g_array_index (procs, Proc, k).devices;

          for (guint m = 0; m < used->len && !claimed; m++)
            claimed = g_array_index (used, gint64, m) == d->id;
        }
      if (claimed)
        continue;
      st = vs_trace_statement (trace, device_processes_sql, error);
      if (st == NULL)
        return FALSE;
      sqlite3_bind_int64 (st, 1, d->id);
      while ((rc = sqlite3_step (st)) == SQLITE_ROW)
        {
          Proc *p = find_proc (procs, sqlite3_column_int64 (st, 0));

          if (p != NULL)
            add_device_id (sqlite3_column_int (st, 1) ? p->static_only : p->devices, d->id);
        }
      if (rc != SQLITE_DONE)
        return vs_trace_sql_error (trace, error);
    }
  for (guint k = 0; k < procs->len; k++)
    {
      Proc *p = &g_array_index (procs, Proc, k);

      if (p->devices->len == 0)
        for (guint m = 0; m < p->static_only->len; m++)
          proc_add_device (p, g_array_index (p->static_only, gint64, m));
    }
  return TRUE;
}

/* The allocator named name that process_id owns on device_id, or NULL. */
static const VsAllocatorInfo *
own_allocator (VsTrace *trace, gint64 process_id, gint64 device_id, const char *name)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->process_id == process_id && a->device_id == device_id && strcmp (a->name, name) == 0)
        return a;
    }
  return NULL;
}

/* The row of (process, device) in rows[first..], or NULL. */
static VsRank *
find_row (GArray *rows, guint first, gint64 pid, gint64 device_idx)
{
  for (guint i = first; i < rows->len; i++)
    {
      VsRank *r = &g_array_index (rows, VsRank, i);

      if (r->pid == pid && r->device_idx == device_idx)
        return r;
    }
  return NULL;
}

/* Adds the rows of trace (the index-th compared) to c. */
static gboolean
add_trace (VsRankComparison *c, VsTrace *trace, guint index, const char *allocator, GError **error)
{
  g_autoptr (GArray) procs = g_array_new (FALSE, TRUE, sizeof (Proc));
  g_autoptr (GArray) failures = g_array_new (FALSE, FALSE, sizeof (VsRankFailure));
  g_autofree char *job_id = vs_trace_dup_meta (trace, "job_id");
  const char *path = g_string_chunk_insert_const (c->text, vs_trace_get_path (trace));
  const char *job = job_id != NULL ? g_string_chunk_insert_const (c->text, job_id) : NULL;
  gboolean by_allocator = allocator != NULL && strcmp (allocator, "all") != 0;
  guint first = c->ranks->len;

  g_array_set_clear_func (procs, proc_clear);
  if (!read_processes (trace, procs, error) || !claim_devices (trace, procs, error))
    return FALSE;

  if (!read_failures (trace, failures, error))
    return FALSE;
  /* A request that failed before anything else was allocated still makes
   * its device one the process used. */
  for (guint i = 0; i < failures->len; i++)
    {
      const VsRankFailure *f = &g_array_index (failures, VsRankFailure, i);
      Proc *p = find_proc (procs, f->process_id);

      if (p != NULL && f->device_id != VS_UNKNOWN && vs_trace_lookup_device (trace, f->device_id))
        proc_add_device (p, f->device_id);
    }

  for (guint i = 0; i < procs->len; i++)
    {
      const Proc *p = &g_array_index (procs, Proc, i);

      for (guint k = 0; k < p->devices->len; k++)
        {
          gint64 device_id = g_array_index (p->devices, gint64, k);
          const VsDeviceInfo *d = vs_trace_lookup_device (trace, device_id);
          VsRank r = {
            .trace_index = index,
            .trace = path,
            .job_id = job,
            .pid = p->pid,
            .host = p->host != NULL ? g_string_chunk_insert_const (c->text, p->host) : NULL,
            .rank = p->rank,
            .local_rank = p->local_rank,
            .world_size = p->world_size,
            .exit_status = p->exit_status,
            .device_idx = d != NULL ? d->idx : VS_UNKNOWN,
            .device_uuid
            = d != NULL && d->uuid != NULL ? g_string_chunk_insert_const (c->text, d->uuid) : NULL,
            .capacity_bytes = d != NULL ? d->total_bytes : VS_UNKNOWN,
            .peak_reserved_bytes = VS_UNKNOWN,
            .peak_reserved_time_ns = VS_UNKNOWN,
            .peak_allocated_bytes = VS_UNKNOWN,
            .peak_allocated_time_ns = VS_UNKNOWN,
            .first_failure_time_ns = VS_UNKNOWN,
            .first_failure_bytes = VS_UNKNOWN,
            .own_peak_reserved_bytes = VS_UNKNOWN,
          };
          gint64 allocator_id = 0;
          VsSummary s;

          if (d == NULL)
            continue;
          for (guint j = 0; j < procs->len; j++)
            if (j != i)
              for (guint m = 0; m < g_array_index (procs, Proc, j).devices->len; m++)
                if (g_array_index (g_array_index (procs, Proc, j).devices, gint64, m) == device_id)
                  r.shared_device = TRUE;
          if (by_allocator)
            {
              const VsAllocatorInfo *a = own_allocator (trace, p->id, device_id, allocator);

              allocator_id = a != NULL ? a->id : -1;
            }
          if (allocator_id >= 0)
            {
              g_autoptr (GError) local = NULL;

              if (vs_summary_get (trace, device_id, allocator_id, &s, &local))
                {
                  r.peak_reserved_bytes = s.peak_reserved_bytes;
                  r.peak_reserved_time_ns = s.peak_reserved_time_ns;
                  r.peak_allocated_bytes = s.peak_allocated_bytes;
                  r.peak_allocated_time_ns = s.peak_allocated_time_ns;
                  if (s.capacity_bytes != VS_UNKNOWN)
                    r.capacity_bytes = s.capacity_bytes;
                }
              else if (!g_error_matches (local, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT))
                {
                  g_propagate_error (error, g_steal_pointer (&local));
                  return FALSE;
                }
            }
          /* What tells apart ranks that share a device. */
          for (guint m = 0; m < vs_trace_get_allocators (trace)->len; m++)
            {
              const VsAllocatorInfo *a = g_ptr_array_index (vs_trace_get_allocators (trace), m);

              if (a->process_id == p->id && a->device_id == device_id
                  && vs_summary_get (trace, device_id, a->id, &s, NULL)
                  && s.peak_reserved_bytes > r.own_peak_reserved_bytes)
                r.own_peak_reserved_bytes = s.peak_reserved_bytes;
            }
          g_array_append_val (c->ranks, r);
        }
    }

  /* Failed requests, counted as the summary counts them, on the row of
   * their process and device (a failure of no known device: the process's
   * first row). */
  for (guint i = 0; i < failures->len; i++)
    {
      const VsRankFailure *f = &g_array_index (failures, VsRankFailure, i);
      const Proc *p = find_proc (procs, f->process_id);
      gint64 device_id = f->device_id;
      gint64 allocator_id = f->allocator_id;
      const VsDeviceInfo *d
          = device_id != VS_UNKNOWN ? vs_trace_lookup_device (trace, device_id) : NULL;
      VsRank *r = NULL;

      if (p == NULL)
        continue;
      if (by_allocator)
        {
          const VsAllocatorInfo *a
              = allocator_id != VS_UNKNOWN ? vs_trace_lookup_allocator (trace, allocator_id) : NULL;

          if (a == NULL || strcmp (a->name, allocator) != 0)
            continue;
        }
      else if (allocator_id == VS_UNKNOWN && p->has_pytorch)
        continue;
      if (d != NULL)
        r = find_row (c->ranks, first, p->pid, d->idx);
      else if (p->devices->len > 0)
        {
          const VsDeviceInfo *d0
              = vs_trace_lookup_device (trace, g_array_index (p->devices, gint64, 0));

          r = d0 != NULL ? find_row (c->ranks, first, p->pid, d0->idx) : NULL;
        }
      if (r == NULL)
        continue;
      if (r->failed_alloc_count++ == 0)
        {
          r->first_failure_time_ns = vs_trace_rel (trace, f->ts);
          r->first_failure_bytes = f->bytes;
        }
    }
  return TRUE;
}

static gint
compare_int (gint64 a, gint64 b)
{
  return a < b ? -1 : a > b;
}

/* By rank (unknown last), trace, pid, device. */
static gint
compare_rows (gconstpointer pa, gconstpointer pb)
{
  const VsRank *a = pa, *b = pb;
  gboolean ua = a->rank == VS_UNKNOWN, ub = b->rank == VS_UNKNOWN;

  if (ua != ub)
    return ua ? 1 : -1;
  if (a->rank != b->rank)
    return compare_int (a->rank, b->rank);
  if (a->trace_index != b->trace_index)
    return a->trace_index < b->trace_index ? -1 : 1;
  if (a->pid != b->pid)
    return compare_int (a->pid, b->pid);
  return compare_int (a->device_idx, b->device_idx);
}

/* The index of the worst row (see vs-ranks.h), -1 when no peak is known. */
static gint
find_worst (GArray *rows)
{
  gboolean any_capacity = FALSE;
  gint worst = -1;
  double worst_key = -1;

  for (guint i = 0; i < rows->len; i++)
    {
      const VsRank *r = &g_array_index (rows, VsRank, i);

      if (r->peak_reserved_bytes != VS_UNKNOWN && r->capacity_bytes != VS_UNKNOWN
          && r->capacity_bytes > 0)
        any_capacity = TRUE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      const VsRank *r = &g_array_index (rows, VsRank, i);
      double key;

      if (r->peak_reserved_bytes == VS_UNKNOWN)
        continue;
      if (any_capacity)
        {
          if (r->capacity_bytes == VS_UNKNOWN || r->capacity_bytes <= 0)
            continue;
          key = (double)r->peak_reserved_bytes / (double)r->capacity_bytes;
        }
      else
        key = (double)r->peak_reserved_bytes;
      /* A tie (ranks sharing a device have its figures) goes to the rank
       * whose own allocators reserved most. */
      if (key > worst_key
          || (worst >= 0 && key == worst_key
              && r->own_peak_reserved_bytes
                     > g_array_index (rows, VsRank, worst).own_peak_reserved_bytes))
        {
          worst_key = key;
          worst = (gint)i;
        }
    }
  return worst;
}

VsRankComparison *
vs_ranks_compare (VsTrace *const *traces, guint n_traces, const char *allocator, GError **error)
{
  g_autoptr (VsRankComparison) c = NULL;

  g_return_val_if_fail (traces != NULL && n_traces > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  c = g_new0 (VsRankComparison, 1);
  c->ranks = g_array_new (FALSE, TRUE, sizeof (VsRank));
  c->text = g_string_chunk_new (256);
  c->n_traces = n_traces;
  for (guint i = 0; i < n_traces; i++)
    {
      g_return_val_if_fail (traces[i] != NULL, NULL);
      if (!add_trace (c, traces[i], i, allocator, error))
        return NULL;
    }
  g_array_sort (c->ranks, compare_rows);
  c->worst = find_worst (c->ranks);
  if (c->worst >= 0)
    g_array_index (c->ranks, VsRank, c->worst).worst = TRUE;
  return g_steal_pointer (&c);
}

void
vs_rank_comparison_free (VsRankComparison *c)
{
  if (c == NULL)
    return;
  g_array_unref (c->ranks);
  g_string_chunk_free (c->text);
  g_free (c);
}

guint
vs_rank_comparison_get_n_ranks (const VsRankComparison *c)
{
  g_return_val_if_fail (c != NULL, 0);
  return c->ranks->len;
}

const VsRank *
vs_rank_comparison_get_rank (const VsRankComparison *c, guint i)
{
  g_return_val_if_fail (c != NULL && i < c->ranks->len, NULL);
  return &g_array_index (c->ranks, VsRank, i);
}

const VsRank *
vs_rank_comparison_get_worst (const VsRankComparison *c)
{
  g_return_val_if_fail (c != NULL, NULL);
  return c->worst >= 0 ? &g_array_index (c->ranks, VsRank, c->worst) : NULL;
}

const VsRank *
vs_rank_comparison_get_first_failed (const VsRankComparison *c)
{
  g_return_val_if_fail (c != NULL, NULL);
  for (guint i = 0; i < c->ranks->len; i++)
    if (g_array_index (c->ranks, VsRank, i).failed_alloc_count > 0)
      return &g_array_index (c->ranks, VsRank, i);
  return NULL;
}

char *
vs_rank_comparison_dup_label (const VsRankComparison *c, const VsRank *r)
{
  gboolean ambiguous = FALSE;

  g_return_val_if_fail (c != NULL && r != NULL, NULL);
  /* The rank alone names a row unless another trace has the same rank. */
  for (guint i = 0; i < c->ranks->len && r->rank != VS_UNKNOWN; i++)
    {
      const VsRank *o = &g_array_index (c->ranks, VsRank, i);

      if (o->rank == r->rank && o->trace_index != r->trace_index)
        ambiguous = TRUE;
    }
  if (r->rank == VS_UNKNOWN)
    return c->n_traces > 1
               ? g_strdup_printf ("process %" G_GINT64_FORMAT " of %s", r->pid, r->trace)
               : g_strdup_printf ("process %" G_GINT64_FORMAT, r->pid);
  return ambiguous ? g_strdup_printf ("rank %" G_GINT64_FORMAT " of %s", r->rank, r->trace)
                   : g_strdup_printf ("rank %" G_GINT64_FORMAT, r->rank);
}

/* The columns of the table, in order; brief ones are those text shows. */
typedef enum
{
  COL_TRACE,
  COL_JOB_ID,
  COL_HOST,
  COL_RANK,
  COL_LOCAL_RANK,
  COL_WORLD_SIZE,
  COL_PID,
  COL_DEVICE,
  COL_CAPACITY,
  COL_PEAK_RESERVED,
  COL_PEAK_RESERVED_TIME,
  COL_PEAK_ALLOCATED,
  COL_PEAK_ALLOCATED_TIME,
  COL_FAILED,
  COL_FIRST_FAILURE_TIME,
  COL_FIRST_FAILURE_BYTES,
  COL_EXIT_STATUS,
  COL_MARK,
} Column;

static const struct
{
  const char *name;
  VsColumnKind kind;
  gboolean brief;
} columns[] = {
  [COL_TRACE] = { "trace", VS_COLUMN_TEXT, TRUE },
  [COL_JOB_ID] = { "job_id", VS_COLUMN_TEXT, FALSE },
  [COL_HOST] = { "host", VS_COLUMN_TEXT, TRUE },
  [COL_RANK] = { "rank", VS_COLUMN_INT, TRUE },
  [COL_LOCAL_RANK] = { "local_rank", VS_COLUMN_INT, TRUE },
  [COL_WORLD_SIZE] = { "world_size", VS_COLUMN_INT, FALSE },
  [COL_PID] = { "pid", VS_COLUMN_INT, FALSE },
  [COL_DEVICE] = { "device", VS_COLUMN_INT, TRUE },
  [COL_CAPACITY] = { "capacity_bytes", VS_COLUMN_BYTES, FALSE },
  [COL_PEAK_RESERVED] = { "peak_reserved_bytes", VS_COLUMN_BYTES, TRUE },
  [COL_PEAK_RESERVED_TIME] = { "peak_reserved_time_ns", VS_COLUMN_TIME, TRUE },
  [COL_PEAK_ALLOCATED] = { "peak_allocated_bytes", VS_COLUMN_BYTES, TRUE },
  [COL_PEAK_ALLOCATED_TIME] = { "peak_allocated_time_ns", VS_COLUMN_TIME, FALSE },
  [COL_FAILED] = { "failed_alloc_count", VS_COLUMN_INT, TRUE },
  [COL_FIRST_FAILURE_TIME] = { "first_failure_time_ns", VS_COLUMN_TIME, TRUE },
  [COL_FIRST_FAILURE_BYTES] = { "first_failure_bytes", VS_COLUMN_BYTES, FALSE },
  [COL_EXIT_STATUS] = { "exit_status", VS_COLUMN_INT, FALSE },
  [COL_MARK] = { "mark", VS_COLUMN_TEXT, TRUE },
};

/* The integer value of column col in row r (not for text columns). */
static gint64
rank_int (const VsRank *r, Column col)
{
  switch (col)
    {
    case COL_RANK:
      return r->rank;
    case COL_LOCAL_RANK:
      return r->local_rank;
    case COL_WORLD_SIZE:
      return r->world_size;
    case COL_PID:
      return r->pid;
    case COL_DEVICE:
      return r->device_idx;
    case COL_CAPACITY:
      return r->capacity_bytes;
    case COL_PEAK_RESERVED:
      return r->peak_reserved_bytes;
    case COL_PEAK_RESERVED_TIME:
      return r->peak_reserved_time_ns;
    case COL_PEAK_ALLOCATED:
      return r->peak_allocated_bytes;
    case COL_PEAK_ALLOCATED_TIME:
      return r->peak_allocated_time_ns;
    case COL_FAILED:
      return r->failed_alloc_count;
    case COL_FIRST_FAILURE_TIME:
      return r->first_failure_time_ns;
    case COL_FIRST_FAILURE_BYTES:
      return r->first_failure_bytes;
    case COL_EXIT_STATUS:
      return r->exit_status;
    case COL_TRACE:
    case COL_JOB_ID:
    case COL_HOST:
    case COL_MARK:
      break;
    }
  g_assert_not_reached ();
}

VsTable *
vs_rank_comparison_table (const VsRankComparison *c, gboolean brief)
{
  VsTable *t;

  g_return_val_if_fail (c != NULL, NULL);
  t = vs_table_new ("Peak memory of each rank, the worst marked (times since its trace's start)");
  for (guint k = 0; k < G_N_ELEMENTS (columns); k++)
    if (!brief || columns[k].brief)
      vs_table_add_column (t, columns[k].name, columns[k].kind);
  for (guint i = 0; i < c->ranks->len; i++)
    {
      const VsRank *r = &g_array_index (c->ranks, VsRank, i);
      g_autoptr (GString) mark = g_string_new (NULL);
      guint out = 0;

      if (r->worst)
        g_string_append (mark, "worst ");
      if (r->failed_alloc_count > 0)
        g_string_append (mark, "failed ");
      if (r->shared_device)
        g_string_append (mark, "shared-device ");
      if (mark->len > 0)
        g_string_truncate (mark, mark->len - 1);
      vs_table_add_row (t);
      for (guint k = 0; k < G_N_ELEMENTS (columns); k++)
        {
          if (brief && !columns[k].brief)
            continue;
          switch ((Column)k)
            {
            case COL_TRACE:
              vs_table_set_text (t, out, r->trace);
              break;
            case COL_JOB_ID:
              vs_table_set_text (t, out, r->job_id);
              break;
            case COL_HOST:
              vs_table_set_text (t, out, r->host);
              break;
            case COL_MARK:
              vs_table_set_text (t, out, mark->str);
              break;
            default:
              vs_table_set_int (t, out, rank_int (r, (Column)k));
              break;
            }
          out++;
        }
      g_assert (out == vs_table_get_n_columns (t));
    }
  return t;
}

/* How many failed ranks the headline names before "and N more". */
#define RANKS_NAMED 8

/* "rank 5 failed", "ranks 5, 7 failed", "rank 2 and process 17 failed",
 * "ranks 0, 1, …, 7 and 56 more failed". */
static void
write_failed (const VsRankComparison *c, GString *out)
{
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  gboolean plain = TRUE;
  guint shown;

  for (guint i = 0; i < c->ranks->len; i++)
    {
      const VsRank *r = &g_array_index (c->ranks, VsRank, i);
      char *label;

      if (r->failed_alloc_count == 0)
        continue;
      label = vs_rank_comparison_dup_label (c, r);
      for (guint k = 0; k < labels->len && label != NULL; k++)
        if (strcmp (g_ptr_array_index (labels, k), label) == 0)
          g_clear_pointer (&label, g_free);
      if (label == NULL)
        continue;
      if (!g_str_has_prefix (label, "rank ") || strchr (label + 5, ' ') != NULL)
        plain = FALSE;
      g_ptr_array_add (labels, label);
    }
  if (labels->len == 0)
    {
      g_string_append (out, "no rank failed");
      return;
    }
  /* The headline stays one line: the first few, then how many more. */
  shown = MIN (labels->len, RANKS_NAMED);
  if (labels->len > 1 && plain)
    {
      g_string_append (out, "ranks ");
      for (guint k = 0; k < shown; k++)
        g_string_append_printf (out, "%s%s", k > 0 ? ", " : "",
                                (const char *)g_ptr_array_index (labels, k) + 5);
    }
  else
    for (guint k = 0; k < shown; k++)
      g_string_append_printf (out, "%s%s",
                              k == 0                 ? ""
                              : k + 1 == labels->len ? " and "
                                                     : ", ",
                              (const char *)g_ptr_array_index (labels, k));
  if (shown < labels->len)
    g_string_append_printf (out, " and %u more", labels->len - shown);
  g_string_append (out, " failed");
}

void
vs_rank_comparison_write_headline (const VsRankComparison *c, GString *out)
{
  const VsRank *worst, *low = NULL, *high = NULL;
  guint known = 0;

  g_return_if_fail (c != NULL && out != NULL);
  worst = vs_rank_comparison_get_worst (c);
  if (worst == NULL)
    g_string_append (out, "no rank has a known peak");
  else
    {
      g_autofree char *label = vs_rank_comparison_dup_label (c, worst);
      g_autofree char *peak = vs_format_bytes (worst->peak_reserved_bytes);

      g_string_append (out, label);
      if (worst->host != NULL)
        g_string_append_printf (out, " on host %s", worst->host);
      g_string_append_printf (out, " peaks highest: %s", peak);
      if (worst->capacity_bytes != VS_UNKNOWN && worst->capacity_bytes > 0)
        {
          g_autofree char *cap = vs_format_bytes (worst->capacity_bytes);

          g_string_append_printf (out, " of %s (%.0f %%)", cap,
                                  100.0 * (double)worst->peak_reserved_bytes
                                      / (double)worst->capacity_bytes);
        }
    }
  g_string_append (out, "; ");
  write_failed (c, out);
  g_string_append (out, "\n");

  for (guint i = 0; i < c->ranks->len; i++)
    {
      const VsRank *r = &g_array_index (c->ranks, VsRank, i);

      if (r->peak_reserved_bytes == VS_UNKNOWN)
        continue;
      known++;
      if (low == NULL || r->peak_reserved_bytes < low->peak_reserved_bytes)
        low = r;
      if (high == NULL || r->peak_reserved_bytes > high->peak_reserved_bytes)
        high = r;
    }
  if (known >= 2 && low->peak_reserved_bytes == high->peak_reserved_bytes)
    {
      g_autofree char *peak = vs_format_bytes (high->peak_reserved_bytes);

      g_string_append_printf (out, "no spread of peak reserved: all %u ranks at %s\n", known, peak);
    }
  else if (known >= 2)
    {
      g_autofree char *lo = vs_format_bytes (low->peak_reserved_bytes);
      g_autofree char *hi = vs_format_bytes (high->peak_reserved_bytes);
      g_autofree char *lo_label = vs_rank_comparison_dup_label (c, low);
      g_autofree char *hi_label = vs_rank_comparison_dup_label (c, high);

      g_string_append_printf (out, "spread of peak reserved over %u ranks: %s (%s) to %s (%s)",
                              known, lo, lo_label, hi, hi_label);
      if (low->peak_reserved_bytes > 0)
        g_string_append_printf (out, ", max/min %.2f×",
                                (double)high->peak_reserved_bytes
                                    / (double)low->peak_reserved_bytes);
      g_string_append (out, "\n");
    }
}
