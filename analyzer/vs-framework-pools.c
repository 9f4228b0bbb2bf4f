/* SPDX-License-Identifier: MIT */
/* vs-framework-pools.c — pooling allocators recognised from the device
 * level alone (see vs-framework-pools.h).
 *
 * Read once when the trace is opened: the frames naming a known pool,
 * the stacks under them (the trie's descendants of those frames: the
 * pool's frame is outer to the cudaMalloc it makes), the device-level
 * allocations made from those stacks (the pool's segments), the
 * framework's own statistics in meta, and its failures.  A pool's series
 * of reserved memory is its segments' sum, replayed here in the order of
 * the trace's replay (seq).
 */
#include "vs-framework-pools.h"
#include "vs-blocks.h"
#include "vs-trace-private.h"

#include <stdlib.h>
#include <string.h>

typedef enum
{
  FW_NONE,
  FW_XLA,
  FW_TENSORFLOW,
  FW_CUPY,
  FW_RMM,
  FW_N
} Framework;

static const char *const framework_names[FW_N] = { "", "xla", "tensorflow", "cupy", "rmm" };

/* One change of a pool's reserved memory. */
typedef struct
{
  gint64 seq, ts, delta;
} Step;

typedef struct
{
  gint64 allocator_id; /* < 0 */
  gint64 device_id;
  Framework framework;
  GArray *steps;        /* Step, by seq */
  gint64 segments;      /* segment allocations seen */
  gint64 failures;      /* the framework's own failure records */
  gint64 pool_failures; /* the pool's own cudaMalloc failing */
  /* The trace's own allocator of this name on the device, where `record`
   * kept the framework's allocator level (its blocks and segments): the
   * pool is that allocator, its row the finalizer's. */
  gboolean backed;
  VsSummary summary;
} Pool;

struct _VsFrameworkPools
{
  GPtrArray *pools;   /* Pool* */
  GHashTable *stacks; /* stack id → Framework */
  /* device id → the `all` row's allocated without the pools' segments
   * (gint64[4]: peak, its ts, its seq, final), computed on first use */
  GHashTable *all_allocated;
};

static void
pool_free (gpointer data)
{
  Pool *p = data;

  g_array_unref (p->steps);
  g_free (p);
}

void
vs_framework_pools_free (VsFrameworkPools *pools)
{
  if (pools == NULL)
    return;
  g_ptr_array_unref (pools->pools);
  g_hash_table_unref (pools->stacks);
  g_hash_table_unref (pools->all_allocated);
  g_free (pools);
}

/* The framework of a pool frame (function as symbolized, module path),
 * FW_NONE when it names none.  Destructors free; they allocate nothing. */
static Framework
frame_framework (const char *function, const char *module)
{
  if (function == NULL || strstr (function, "::~") != NULL)
    return FW_NONE;
  if (strstr (function, "BFCAllocator") != NULL)
    return module != NULL && strstr (module, "tensorflow") != NULL ? FW_TENSORFLOW : FW_XLA;
  if (strstr (function, "SingleDeviceMemoryPool") != NULL)
    return FW_CUPY;
  if (strstr (function, "rmm::mr::") != NULL
      && (strstr (function, "pool_memory_resource") != NULL
          || strstr (function, "arena_memory_resource") != NULL
          || strstr (function, "fixed_size_memory_resource") != NULL
          || strstr (function, "binning_memory_resource") != NULL))
    return FW_RMM;
  return FW_NONE;
}

static Framework
api_framework (const char *api)
{
  for (int f = FW_XLA; f < FW_N && api != NULL; f++)
    if (strcmp (api, framework_names[f]) == 0)
      return (Framework)f;
  return FW_NONE;
}

static gint64
pool_id (gint64 device_id, Framework f)
{
  return -(device_id * FW_N + (gint64)f);
}

static Pool *
pool_get (VsFrameworkPools *fp, gint64 device_id, Framework f)
{
  for (guint i = 0; i < fp->pools->len; i++)
    {
      Pool *p = g_ptr_array_index (fp->pools, i);

      if (p->device_id == device_id && p->framework == f)
        return p;
    }
  {
    Pool *p = g_new0 (Pool, 1);

    p->allocator_id = pool_id (device_id, f);
    p->device_id = device_id;
    p->framework = f;
    p->steps = g_array_new (FALSE, FALSE, sizeof (Step));
    g_ptr_array_add (fp->pools, p);
    return p;
  }
}

/* The stacks under the pool frames, into fp->stacks. */
static gboolean
load_stacks (VsTrace *trace, VsFrameworkPools *fp, GError **error)
{
  static const char *frames_sql
      = "SELECT f.id, f.function, m.path FROM frame f LEFT JOIN module m ON m.id = f.module_id"
        " WHERE f.function LIKE '%BFCAllocator%' OR f.function LIKE '%SingleDeviceMemoryPool%'"
        " OR f.function LIKE '%rmm::mr::%'";
  static const char *under_sql
      = "WITH RECURSIVE d(id) AS (SELECT id FROM stack WHERE frame_id = ?1"
        " UNION SELECT s.id FROM stack s JOIN d ON s.parent_id = d.id) SELECT id FROM d";
  g_autoptr (GArray) frames = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  sqlite3_stmt *stmt = vs_trace_statement (trace, frames_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Framework f = frame_framework ((const char *)sqlite3_column_text (stmt, 1),
                                     (const char *)sqlite3_column_text (stmt, 2));
      gint64 v[2] = { sqlite3_column_int64 (stmt, 0), f };

      if (f != FW_NONE)
        g_array_append_vals (frames, v, 1);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  if (frames->len == 0)
    return TRUE;
  stmt = vs_trace_statement (trace, under_sql, error);
  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < frames->len; i++)
    {
      const gint64 *v = (const gint64 *)frames->data + 2 * i;

      sqlite3_bind_int64 (stmt, 1, v[0]);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          gint64 *key = g_new (gint64, 1);

          *key = sqlite3_column_int64 (stmt, 0);
          g_hash_table_insert (fp->stacks, key, GINT_TO_POINTER ((int)v[1]));
        }
      if (!vs_trace_step_done (trace, stmt, rc, error))
        return FALSE;
    }
  return TRUE;
}

static Framework
stack_framework (VsFrameworkPools *fp, gint64 stack_id)
{
  return stack_id > 0 ? (Framework)GPOINTER_TO_INT (g_hash_table_lookup (fp->stacks, &stack_id))
                      : FW_NONE;
}

static gint
step_cmp (gconstpointer a, gconstpointer b)
{
  const Step *x = a, *y = b;

  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The pools' segments: device-level allocations of no allocator made from
 * a pool's stacks. */
static gboolean
load_segments (VsTrace *trace, VsFrameworkPools *fp, GError **error)
{
  static const char *segments_sql
      = "SELECT device_id, stack_id, alloc_seq, free_seq, bytes, alloc_ts, free_ts FROM block"
        " WHERE " VS_FRAMEWORK_POOL_SEGMENT_SQL;
  sqlite3_stmt *stmt;
  int rc;

  if (g_hash_table_size (fp->stacks) == 0)
    return TRUE;
  stmt = vs_trace_statement (trace, segments_sql, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Framework f = stack_framework (fp, sqlite3_column_int64 (stmt, 1));
      gint64 bytes = sqlite3_column_int64 (stmt, 4);
      Pool *p;
      Step s;

      if (f == FW_NONE || sqlite3_column_type (stmt, 0) == SQLITE_NULL)
        continue;
      p = pool_get (fp, sqlite3_column_int64 (stmt, 0), f);
      /* Live before the trace began: held from its first step. */
      s.seq = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64 (stmt, 2);
      s.ts = vs_column_int (stmt, 5);
      s.delta = bytes;
      g_array_append_val (p->steps, s);
      p->segments++;
      if (sqlite3_column_type (stmt, 3) != SQLITE_NULL)
        {
          s.seq = sqlite3_column_int64 (stmt, 3);
          s.ts = vs_column_int (stmt, 6);
          s.delta = -bytes;
          g_array_append_val (p->steps, s);
        }
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  for (guint i = 0; i < fp->pools->len; i++)
    g_array_sort (((Pool *)g_ptr_array_index (fp->pools, i))->steps, step_cmp);
  return TRUE;
}

/* Failures: the hook's records (api = the framework) and the pools' own
 * cudaMalloc failing (a pool stack). */
static gboolean
load_failures (VsTrace *trace, VsFrameworkPools *fp, GError **error)
{
  static const char *failed_sql
      = "SELECT device_id, api, stack_id FROM failed_alloc WHERE device_id IS NOT NULL";
  sqlite3_stmt *stmt = vs_trace_statement (trace, failed_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 device_id = sqlite3_column_int64 (stmt, 0);
      Framework f = api_framework ((const char *)sqlite3_column_text (stmt, 1));

      if (f != FW_NONE)
        pool_get (fp, device_id, f)->failures++;
      else if ((f = stack_framework (fp, vs_column_int (stmt, 2))) != FW_NONE)
        pool_get (fp, device_id, f)->pool_failures++;
    }
  return vs_trace_step_done (trace, stmt, rc, error);
}

/* Meta value key (an integer), VS_UNKNOWN when absent. */
static gint64
meta_int (VsTrace *trace, const char *key)
{
  static const char *meta_sql = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1";
  sqlite3_stmt *stmt = vs_trace_statement (trace, meta_sql, NULL);
  gint64 v = VS_UNKNOWN;

  if (stmt == NULL)
    return VS_UNKNOWN;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    v = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  return v;
}

static gint64
pool_meta (VsTrace *trace, const Pool *p, const char *what)
{
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, p->device_id);
  g_autofree char *key = NULL;

  if (d == NULL)
    return VS_UNKNOWN;
  key = g_strdup_printf ("%s.%s.%" G_GINT64_FORMAT, framework_names[p->framework], what, d->idx);
  return meta_int (trace, key);
}

/* Pools the hook described (meta) but whose segments the trace does not
 * show (no stacks, or unsymbolized ones). */
static void
add_described_pools (VsTrace *trace, VsFrameworkPools *fp)
{
  for (guint i = 0; i < trace->devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (trace->devices, i);
      g_autofree char *xla = g_strdup_printf ("xla.pool_bytes.%" G_GINT64_FORMAT, d->idx);
      g_autofree char *cupy = g_strdup_printf ("cupy.total_bytes.%" G_GINT64_FORMAT, d->idx);

      if (meta_int (trace, xla) != VS_UNKNOWN)
        pool_get (fp, d->id, FW_XLA);
      if (meta_int (trace, cupy) != VS_UNKNOWN)
        pool_get (fp, d->id, FW_CUPY);
    }
}

/* The pool's summary row: reserved from its segments (else the
 * framework's own pool size), allocated from the framework's figures or
 * unknown. */
static void
summarize (VsTrace *trace, Pool *p)
{
  VsSummary *s = &p->summary;
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, p->device_id);
  gint64 held = 0;

  memset (s, 0, sizeof *s);
  s->device_id = p->device_id;
  s->allocator_id = p->allocator_id;
  s->capacity_bytes = d != NULL ? d->total_bytes : VS_UNKNOWN;
  s->peak_reserved_bytes = 0;
  s->peak_reserved_time_ns = s->peak_reserved_seq = VS_UNKNOWN;
  for (guint i = 0; i < p->steps->len; i++)
    {
      const Step *st = &g_array_index (p->steps, Step, i);

      held += st->delta;
      if (held > s->peak_reserved_bytes)
        {
          s->peak_reserved_bytes = held;
          s->peak_reserved_seq = st->seq;
          s->peak_reserved_time_ns = vs_trace_rel (trace, st->ts);
        }
    }
  s->final_reserved_bytes = held;
  if (p->segments == 0)
    {
      gint64 pool = pool_meta (trace, p, p->framework == FW_CUPY ? "total_bytes" : "pool_bytes");

      s->peak_reserved_bytes = s->final_reserved_bytes = pool;
    }
  if (p->framework == FW_XLA)
    {
      s->peak_allocated_bytes = pool_meta (trace, p, "peak_bytes_in_use");
      s->final_allocated_bytes = pool_meta (trace, p, "bytes_in_use");
      s->alloc_count = pool_meta (trace, p, "num_allocs");
    }
  else if (p->framework == FW_CUPY)
    {
      s->peak_allocated_bytes = pool_meta (trace, p, "peak_used_bytes");
      s->final_allocated_bytes = pool_meta (trace, p, "used_bytes");
      s->alloc_count = pool_meta (trace, p, "num_allocs");
    }
  else
    s->peak_allocated_bytes = s->final_allocated_bytes = s->alloc_count = VS_UNKNOWN;
  s->peak_allocated_time_ns = s->peak_allocated_seq = VS_UNKNOWN;
  s->free_count = VS_UNKNOWN;
  /* An out-of-memory error the framework raised, else its pool's own
   * cudaMalloc failing (the framework then retries and raises). */
  s->failed_alloc_count = p->failures > 0 ? p->failures : p->pool_failures;
  s->peak_device_bytes = s->peak_device_time_ns = s->static_bytes = VS_UNKNOWN;
  s->peak_pinned_bytes = s->peak_managed_bytes = VS_UNKNOWN;
  s->before_trace_bytes = s->before_trace_count = VS_UNKNOWN;
}

/* The allocator of the trace itself named like the pool on its device
 * (the allocator level `record` kept), 0 when there is none. */
static gint64
real_allocator (VsTrace *trace, const Pool *p)
{
  for (guint i = 0; i < trace->allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (trace->allocators, i);

      if (a->id > 0 && a->device_id == p->device_id && a->name != NULL
          && strcmp (a->name, framework_names[p->framework]) == 0)
        return a->id;
    }
  return 0;
}

static gint
pool_cmp (gconstpointer a, gconstpointer b)
{
  const Pool *x = *(Pool *const *)a, *y = *(Pool *const *)b;

  if (x->device_id != y->device_id)
    return x->device_id < y->device_id ? -1 : 1;
  return strcmp (framework_names[x->framework], framework_names[y->framework]);
}

gboolean
vs_framework_pools_load (VsTrace *trace, GError **error)
{
  VsFrameworkPools *fp = g_new0 (VsFrameworkPools, 1);

  g_return_val_if_fail (trace != NULL, FALSE);
  fp->pools = g_ptr_array_new_with_free_func (pool_free);
  fp->stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  fp->all_allocated = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  vs_framework_pools_free (trace->framework_pools);
  trace->framework_pools = fp;
  if (!load_stacks (trace, fp, error) || !load_segments (trace, fp, error)
      || !load_failures (trace, fp, error))
    return FALSE;
  add_described_pools (trace, fp);
  g_ptr_array_sort (fp->pools, pool_cmp);
  for (guint i = 0; i < fp->pools->len; i++)
    {
      Pool *p = g_ptr_array_index (fp->pools, i);
      gint64 real = real_allocator (trace, p);
      VsAllocatorInfo *a;

      summarize (trace, p);
      if (real != 0)
        {
          p->backed = TRUE;
          p->allocator_id = p->summary.allocator_id = real;
          continue;
        }
      a = g_new0 (VsAllocatorInfo, 1);
      a->id = p->allocator_id;
      a->device_id = p->device_id;
      a->process_id = VS_UNKNOWN;
      a->kind = g_strdup (framework_names[p->framework]);
      a->name = g_strdup (framework_names[p->framework]);
      g_ptr_array_add (trace->allocators, a);
    }
  return TRUE;
}

/* The pool whose synthetic id is allocator_id, NULL if none. */
static const Pool *
find_pool (VsTrace *trace, gint64 allocator_id)
{
  VsFrameworkPools *fp = trace->framework_pools;

  for (guint i = 0; fp != NULL && i < fp->pools->len; i++)
    {
      const Pool *p = g_ptr_array_index (fp->pools, i);

      if (p->allocator_id == allocator_id)
        return p;
    }
  return NULL;
}

/* See vs-framework-pools.h. */
gboolean
vs_framework_pool_is (VsTrace *trace, gint64 allocator_id)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  return allocator_id < 0 && find_pool (trace, allocator_id) != NULL;
}

/* The pool of framework f on the device, NULL if none. */
static const Pool *
pool_find (VsFrameworkPools *fp, gint64 device_id, Framework f)
{
  for (guint i = 0; i < fp->pools->len; i++)
    {
      const Pool *p = g_ptr_array_index (fp->pools, i);

      if (p->device_id == device_id && p->framework == f)
        return p;
    }
  return NULL;
}

/* The allocator id of framework f's pool on the device. */
static gint64
pool_allocator (VsFrameworkPools *fp, gint64 device_id, Framework f)
{
  const Pool *p = pool_find (fp, device_id, f);

  return p != NULL ? p->allocator_id : pool_id (device_id, f);
}

gint64
vs_framework_pool_of_stack (VsTrace *trace, gint64 device_id, gint64 stack_id)
{
  Framework f;

  g_return_val_if_fail (trace != NULL, 0);
  if (trace->framework_pools == NULL)
    return 0;
  f = stack_framework (trace->framework_pools, stack_id);
  return f != FW_NONE ? pool_allocator (trace->framework_pools, device_id, f) : 0;
}

/* What a walk over steps calls on each: FALSE ends the walk of this
 * pool's steps (the next pool's are still walked). */
typedef gboolean (*StepFunc) (const Step *st, gpointer data);

/* Calls func on pool p's steps in replay order, until it returns FALSE. */
static void
pool_steps_foreach (const Pool *p, StepFunc func, gpointer data)
{
  for (guint k = 0; k < p->steps->len; k++)
    if (!func (&g_array_index (p->steps, Step, k), data))
      return;
}

/* Calls func on the steps of every pool of the device, pool by pool. */
static void
device_steps_foreach (VsFrameworkPools *fp, gint64 device_id, StepFunc func, gpointer data)
{
  for (guint i = 0; fp != NULL && i < fp->pools->len; i++)
    {
      const Pool *p = g_ptr_array_index (fp->pools, i);

      if (p->device_id == device_id)
        pool_steps_foreach (p, func, data);
    }
}

/* A sum of steps' bytes over steps up to a bound (a seq or a time), or
 * whether a step falls between two times. */
typedef struct
{
  gint64 from, to;
  gint64 held;
  gboolean found;
} StepSum;

/* Adds the steps up to seq `to`. */
static gboolean
add_to_seq (const Step *st, gpointer data)
{
  StepSum *sum = data;

  if (st->seq > sum->to)
    return FALSE;
  sum->held += st->delta;
  return TRUE;
}

/* Adds the steps before time `to`. */
static gboolean
add_before_ts (const Step *st, gpointer data)
{
  StepSum *sum = data;

  if (st->ts < sum->to)
    sum->held += st->delta;
  return TRUE;
}

/* Notes a step in [from, to). */
static gboolean
find_within (const Step *st, gpointer data)
{
  StepSum *sum = data;

  sum->found = sum->found || (st->ts >= sum->from && st->ts < sum->to);
  return !sum->found;
}

/* Bytes pool p's segments held after step seq. */
static gint64
pool_held_at (const Pool *p, gint64 seq)
{
  StepSum sum = { 0, seq, 0, FALSE };

  pool_steps_foreach (p, add_to_seq, &sum);
  return sum.held;
}

gint64
vs_framework_pools_reserved_at (VsTrace *trace, gint64 device_id, gint64 seq)
{
  StepSum sum = { 0, seq, 0, FALSE };

  device_steps_foreach (trace->framework_pools, device_id, add_to_seq, &sum);
  return sum.held;
}

gint64
vs_framework_pools_reserved_before (VsTrace *trace, gint64 device_id, gint64 ts)
{
  StepSum sum = { 0, ts, 0, FALSE };

  device_steps_foreach (trace->framework_pools, device_id, add_before_ts, &sum);
  return sum.held;
}

gboolean
vs_framework_pools_change_within (VsTrace *trace, gint64 device_id, gint64 from_ts, gint64 to_ts)
{
  StepSum sum = { from_ts, to_ts, 0, FALSE };

  device_steps_foreach (trace->framework_pools, device_id, find_within, &sum);
  return sum.found;
}

GArray *
vs_framework_pool_steps (VsTrace *trace, gint64 allocator_id)
{
  const Pool *p;
  GArray *out;
  gint64 held = 0;

  g_return_val_if_fail (trace != NULL, NULL);
  p = allocator_id < 0 ? find_pool (trace, allocator_id) : NULL;
  if (p == NULL || p->segments == 0)
    return NULL;
  out = g_array_sized_new (FALSE, FALSE, sizeof (VsPoolStep), p->steps->len);
  for (guint k = 0; k < p->steps->len; k++)
    {
      const Step *st = &g_array_index (p->steps, Step, k);
      VsPoolStep v = { st->seq, st->ts, held += st->delta };

      g_array_append_val (out, v);
    }
  return out;
}

gint64
vs_framework_pool_reserved_at (VsTrace *trace, gint64 allocator_id, gint64 seq)
{
  const Pool *p;

  g_return_val_if_fail (trace != NULL, VS_UNKNOWN);
  p = allocator_id < 0 ? find_pool (trace, allocator_id) : NULL;
  if (p == NULL)
    return VS_UNKNOWN;
  /* A pool the hook described but whose segments the trace does not show:
   * its size is known at its peak and end only. */
  return p->segments > 0 ? pool_held_at (p, seq) : VS_UNKNOWN;
}

/* Appends a step to the GArray of Step data. */
static gboolean
append_step (const Step *st, gpointer data)
{
  g_array_append_vals (data, st, 1);
  return TRUE;
}

/* The device's `all` allocated series without its pools' segments:
 * v[0] peak, v[1] its ts, v[2] its seq, v[3] final. */
static gboolean
all_allocated (VsTrace *trace, gint64 device_id, gint64 v[4], GError **error)
{
  static const char *series_sql = "SELECT seq, ts, allocated_bytes FROM series"
                                  " WHERE device_id = ?1 AND allocator_id = ?2 ORDER BY ts, seq";
  VsFrameworkPools *fp = trace->framework_pools;
  gint64 *cached = g_hash_table_lookup (fp->all_allocated, &device_id);
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (Step));
  sqlite3_stmt *stmt;
  gint64 held = 0, allocated = 0;
  guint k = 0;
  int rc;

  if (cached != NULL)
    {
      memcpy (v, cached, 4 * sizeof (gint64));
      return TRUE;
    }
  device_steps_foreach (fp, device_id, append_step, steps);
  g_array_sort (steps, step_cmp);
  stmt = vs_trace_statement (trace, series_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, vs_trace_series_id (trace, device_id, 0));
  v[0] = 0;
  v[1] = v[2] = VS_UNKNOWN;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 seq = sqlite3_column_int64 (stmt, 0);

      for (; k < steps->len && g_array_index (steps, Step, k).seq <= seq; k++)
        held += g_array_index (steps, Step, k).delta;
      allocated = MAX (sqlite3_column_int64 (stmt, 2) - held, 0);
      if (allocated > v[0])
        {
          v[0] = allocated;
          v[1] = sqlite3_column_int64 (stmt, 1);
          v[2] = seq;
        }
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  v[3] = allocated;
  cached = g_new (gint64, 4);
  memcpy (cached, v, 4 * sizeof (gint64));
  {
    gint64 *key = g_new (gint64, 1);

    *key = device_id;
    g_hash_table_insert (fp->all_allocated, key, cached);
  }
  return TRUE;
}

static gboolean
device_has_segments (VsFrameworkPools *fp, gint64 device_id)
{
  for (guint i = 0; i < fp->pools->len; i++)
    {
      const Pool *p = g_ptr_array_index (fp->pools, i);

      if (p->device_id == device_id && p->segments > 0)
        return TRUE;
    }
  return FALSE;
}

gboolean
vs_framework_pools_hold_segments (VsTrace *trace, gint64 device_id)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  return trace->framework_pools != NULL && device_has_segments (trace->framework_pools, device_id);
}

gboolean
vs_framework_pools_adjust_summary (VsTrace *trace, GArray *rows, gint64 device_id,
                                   gint64 allocator_id, GError **error)
{
  VsFrameworkPools *fp = trace->framework_pools;

  g_return_val_if_fail (trace != NULL && rows != NULL, FALSE);
  if (fp == NULL || fp->pools->len == 0)
    return TRUE;
  for (guint i = 0; i < rows->len; i++)
    {
      VsSummary *s = &g_array_index (rows, VsSummary, i);
      gint64 v[4] = { 0 };

      if (s->allocator_id != 0)
        continue;
      /* An error the framework raised stands for its pool's cudaMalloc
       * failures, retried before it raised: one failure, not two. */
      for (guint k = 0; k < fp->pools->len; k++)
        {
          const Pool *p = g_ptr_array_index (fp->pools, k);

          if (p->device_id == s->device_id && p->failures > 0 && p->pool_failures > 0
              && s->failed_alloc_count != VS_UNKNOWN)
            s->failed_alloc_count = MAX (s->failed_alloc_count - p->pool_failures, 0);
        }
      if (!device_has_segments (fp, s->device_id))
        continue;
      if (!all_allocated (trace, s->device_id, v, error))
        return FALSE;
      s->peak_allocated_bytes = v[0];
      s->peak_allocated_time_ns = vs_trace_rel (trace, v[1]);
      s->peak_allocated_seq = v[2];
      s->final_allocated_bytes = v[3];
    }
  for (guint i = 0; i < fp->pools->len; i++)
    {
      const Pool *p = g_ptr_array_index (fp->pools, i);
      guint at = rows->len;

      if ((device_id != 0 && p->device_id != device_id)
          || (allocator_id != 0 && p->allocator_id != allocator_id))
        continue;
      if (p->backed)
        {
          /* The finalizer's row, with the errors the framework raised. */
          gint64 failed = p->failures > 0 ? p->failures : p->pool_failures;

          for (guint k = 0; k < rows->len; k++)
            {
              VsSummary *s = &g_array_index (rows, VsSummary, k);

              if (s->allocator_id == p->allocator_id && s->failed_alloc_count < failed)
                s->failed_alloc_count = failed;
            }
          continue;
        }
      /* After the last row of its device (rows come by device, then
       * allocator), else at the end. */
      for (guint k = 0; k < rows->len; k++)
        if (g_array_index (rows, VsSummary, k).device_id == p->device_id)
          at = k + 1;
      g_array_insert_val (rows, at, p->summary);
    }
  return TRUE;
}

void
vs_framework_pools_filter_blocks (VsTrace *trace, GArray *blocks)
{
  VsFrameworkPools *fp = trace->framework_pools;
  guint kept = 0;

  if (fp == NULL || g_hash_table_size (fp->stacks) == 0)
    return;
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);

      if (b->level == 1 && b->allocator_id == 0 && stack_framework (fp, b->stack_id) != FW_NONE)
        continue;
      if (kept != i)
        g_array_index (blocks, VsBlock, kept) = *b;
      kept++;
    }
  g_array_set_size (blocks, kept);
}

gboolean
vs_framework_pool_failure (VsTrace *trace, const VsOom *o, gint64 *pool)
{
  Framework f;

  g_return_val_if_fail (trace != NULL && o != NULL, FALSE);
  if (trace->framework_pools == NULL || o->allocator_id != 0 || o->device_id == VS_UNKNOWN)
    return FALSE;
  f = api_framework (o->api);
  if (f == FW_NONE)
    f = stack_framework (trace->framework_pools, o->stack_id);
  if (f == FW_NONE)
    return FALSE;
  *pool = pool_allocator (trace->framework_pools, o->device_id, f);
  return TRUE;
}
