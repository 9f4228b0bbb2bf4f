/* SPDX-License-Identifier: MIT */
/* vs-framework-oom.c — out-of-memory findings for the frameworks' pools
 * (see vs-framework-oom.h): why XLA's BFC allocator or CuPy's memory pool
 * refused a request, from the framework's own figures at the failure, and
 * the remedies that apply to that framework.
 */
#include "vs-framework-oom.h"
#include "vs-format.h"
#include "vs-framework-pools.h"
#include "vs-stack.h"
#include "vs-trace-private.h"

#include <string.h>

/* The framework's own figures at the failure, from the hook's meta. */
typedef struct
{
  gint64 capacity, limit, in_use, held, largest_free;
  char *fraction, *preallocate; /* XLA's settings, NULL if unknown */
} PoolState;

static char *
meta_text (VsTrace *trace, const char *key)
{
  static const char *sql = "SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1";
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, NULL);
  char *v = NULL;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    v = vs_column_dup (stmt, 0);
  sqlite3_reset (stmt);
  return v;
}

/* Meta prefix.what.idx at the failure, else at exit; VS_UNKNOWN if none. */
static gint64
figure (VsTrace *trace, const char *prefix, const char *what, gint64 idx)
{
  g_autofree char *at
      = g_strdup_printf ("%s.%s.%" G_GINT64_FORMAT ".at_failure", prefix, what, idx);
  g_autofree char *end = g_strdup_printf ("%s.%s.%" G_GINT64_FORMAT, prefix, what, idx);
  g_autofree char *v = meta_text (trace, at);

  if (v == NULL)
    v = meta_text (trace, end);
  return v != NULL && v[0] != '\0' ? g_ascii_strtoll (v, NULL, 10) : VS_UNKNOWN;
}

static void
pool_state (VsTrace *trace, const char *framework, gint64 device_id, PoolState *st)
{
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, device_id);
  gint64 idx = d != NULL ? d->idx : 0;

  memset (st, 0, sizeof *st);
  st->capacity = d != NULL ? d->total_bytes : VS_UNKNOWN;
  st->limit = st->in_use = st->held = st->largest_free = VS_UNKNOWN;
  if (strcmp (framework, "xla") == 0)
    {
      st->limit = figure (trace, "xla", "bytes_limit", idx);
      st->in_use = figure (trace, "xla", "bytes_in_use", idx);
      st->held = figure (trace, "xla", "pool_bytes", idx);
      st->largest_free = figure (trace, "xla", "largest_free_block_bytes", idx);
      st->fraction = meta_text (trace, "xla.mem_fraction");
      st->preallocate = meta_text (trace, "xla.preallocate");
    }
  else if (strcmp (framework, "cupy") == 0)
    {
      st->limit = figure (trace, "cupy", "limit_bytes", idx);
      st->in_use = figure (trace, "cupy", "used_bytes", idx);
      st->held = figure (trace, "cupy", "total_bytes", idx);
    }
}

static void
pool_state_clear (PoolState *st)
{
  g_free (st->fraction);
  g_free (st->preallocate);
}

static char *
bytes (gint64 n)
{
  return n == VS_UNKNOWN ? g_strdup ("?") : vs_format_bytes (MAX (n, 0));
}

/* The cause of a failure of request bytes in a pool in state st. */
static VsFindingKind
classify (const PoolState *st, gint64 request)
{
  if (st->limit != VS_UNKNOWN && st->in_use != VS_UNKNOWN && st->largest_free != VS_UNKNOWN
      && st->limit - st->in_use >= request && st->largest_free < request)
    return VS_FINDING_OOM_FRAGMENTATION;
  if (st->held != VS_UNKNOWN && st->in_use != VS_UNKNOWN && st->held - st->in_use >= request
      && st->limit == VS_UNKNOWN)
    return VS_FINDING_OOM_FRAGMENTATION;
  /* The pool's own limit, below what the GPU has. */
  if (st->limit != VS_UNKNOWN
      && (st->capacity == VS_UNKNOWN || st->limit * 100 < st->capacity * 95))
    return VS_FINDING_OOM_ALLOCATOR_LIMIT;
  return VS_FINDING_OOM_DEVICE_FULL;
}

static char *
xla_evidence (const PoolState *st, gint64 request, VsFindingKind kind)
{
  g_autofree char *req = bytes (request);
  g_autofree char *in_use = bytes (st->in_use);
  g_autofree char *limit = bytes (st->limit != VS_UNKNOWN ? st->limit : st->held);
  g_autofree char *largest = bytes (st->largest_free);
  g_autofree char *cap = bytes (st->capacity);

  if (kind == VS_FINDING_OOM_FRAGMENTATION)
    return g_strdup_printf ("%s failed inside XLA's BFC allocator: %s of its %s pool was in use, "
                            "enough room in all, but its largest free block was %s",
                            req, in_use, limit, largest);
  return g_strdup_printf ("%s failed inside XLA's BFC allocator: %s of its %s pool was in use "
                          "(the pool is %s of the %s GPU: XLA_PYTHON_CLIENT_MEM_FRACTION %s, "
                          "preallocation %s), largest free block %s; no CUDA call failed",
                          req, in_use, limit,
                          st->limit != VS_UNKNOWN && st->capacity > 0
                              ? (st->limit * 100 >= st->capacity * 95 ? "nearly all" : "a fraction")
                              : "part",
                          cap, st->fraction != NULL ? st->fraction : "?",
                          st->preallocate != NULL ? st->preallocate : "?", largest);
}

static char *
xla_remedy (const PoolState *st, VsFindingKind kind)
{
  const char *lower = "or lower the need: donate the buffers a step replaces "
                      "(jax.jit(..., donate_argnums=...)), recompute activations in the backward "
                      "pass (jax.checkpoint / jax.remat), or a smaller batch";

  if (kind == VS_FINDING_OOM_FRAGMENTATION)
    return g_strdup_printf (
        "let XLA's pool grow as needed (XLA_PYTHON_CLIENT_PREALLOCATE=false) or "
        "allocate the largest buffers first; %s",
        lower);
  if (kind == VS_FINDING_OOM_ALLOCATOR_LIMIT)
    return g_strdup_printf ("raise XLA_PYTHON_CLIENT_MEM_FRACTION (now %s; up to about 0.95 "
                            "leaves room for CUDA and its libraries); %s",
                            st->fraction != NULL ? st->fraction : "0.75", lower);
  return g_strdup_printf ("the GPU has no more room: %s", lower + strlen ("or "));
}

static char *
cupy_evidence (const PoolState *st, gint64 request, VsFindingKind kind)
{
  g_autofree char *req = bytes (request);
  g_autofree char *in_use = bytes (st->in_use);
  g_autofree char *held = bytes (st->held);
  g_autofree char *limit = bytes (st->limit);

  if (kind == VS_FINDING_OOM_ALLOCATOR_LIMIT)
    return g_strdup_printf ("%s failed inside CuPy's memory pool: %s in use of its %s limit "
                            "(set_limit or CUPY_GPU_MEMORY_LIMIT), the pool holding %s; no CUDA "
                            "call failed",
                            req, in_use, limit, held);
  if (kind == VS_FINDING_OOM_FRAGMENTATION)
    return g_strdup_printf ("%s failed inside CuPy's memory pool: it held %s with %s in use, "
                            "but no cached block large enough",
                            req, held, in_use);
  return g_strdup_printf ("%s failed in CuPy's memory pool: CUDA had no room, with %s in use and "
                          "%s held by the pool",
                          req, in_use, held);
}

static char *
cupy_remedy (VsFindingKind kind)
{
  const char *cached = "cupy.get_default_memory_pool().free_all_blocks() gives the blocks the pool "
                       "keeps cached back to CUDA; the stream-ordered pool "
                       "(cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)) shares "
                       "free memory better";

  if (kind == VS_FINDING_OOM_ALLOCATOR_LIMIT)
    return g_strdup_printf (
        "raise the pool's limit (cupy.get_default_memory_pool().set_limit(size="
        "...) or CUPY_GPU_MEMORY_LIMIT), or keep fewer arrays alive (del them); "
        "%s",
        cached);
  return g_strdup_printf ("%s; or keep fewer or smaller arrays alive", cached);
}

static char *
other_remedy (const char *framework)
{
  if (strcmp (framework, "tensorflow") == 0)
    return g_strdup (
        "let TensorFlow's pool grow as needed "
        "(tf.config.experimental.set_memory_growth, TF_FORCE_GPU_ALLOW_GROWTH=true) or "
        "size it (per_process_gpu_memory_fraction); or a smaller batch");
  if (strcmp (framework, "rmm") == 0)
    return g_strdup ("size RMM's pool (pool_memory_resource's initial and maximum size) for the "
                     "work, or release what the program keeps");
  return NULL;
}

/* The finding for failure o of pool pool_id; NULL with error set when its
 * stack cannot be read. */
static VsFinding *
finding_for (VsTrace *trace, const VsOom *o, gint64 pool_id, GError **error)
{
  const char *framework = vs_trace_allocator_name (trace, pool_id);
  const VsStackInfo *s = vs_stack_get (trace, o->stack_id, error);
  VsFinding *f;
  PoolState st;

  if (s == NULL)
    return NULL;
  pool_state (trace, framework, o->device_id, &st);
  f = g_new0 (VsFinding, 1);
  f->kind = classify (&st, o->requested_bytes);
  f->device_id = o->device_id;
  f->allocator_id = pool_id;
  f->bytes = o->requested_bytes;
  f->count = 1;
  f->run_count = VS_UNKNOWN;
  f->time_ns = o->time_ns;
  f->seq = o->seq;
  f->site = s->site[0] != '\0' ? g_strdup (s->site) : NULL;
  f->stack_id = o->stack_id > 0 ? o->stack_id : VS_UNKNOWN;
  f->saving_bytes = VS_UNKNOWN;
  if (strcmp (framework, "xla") == 0)
    {
      f->evidence = xla_evidence (&st, o->requested_bytes, f->kind);
      f->remedy = xla_remedy (&st, f->kind);
    }
  else if (strcmp (framework, "cupy") == 0)
    {
      f->evidence = cupy_evidence (&st, o->requested_bytes, f->kind);
      f->remedy = cupy_remedy (f->kind);
    }
  else
    {
      g_autofree char *req = bytes (o->requested_bytes);

      f->evidence = g_strdup_printf ("%s failed in %s's pool (%s)", req, framework,
                                     o->api != NULL ? o->api : "?");
      f->remedy = other_remedy (framework);
    }
  if (o->error_name != NULL && o->error_name[0] != '\0' && strcmp (framework, "xla") == 0)
    {
      /* The framework's own words, as the program printed them. */
      char *with = g_strdup_printf ("%s. The error: %s", f->evidence, o->error_name);

      g_free (f->evidence);
      f->evidence = with;
    }
  pool_state_clear (&st);
  return f;
}

gboolean
vs_framework_oom_classify (VsTrace *trace, const VsOom *o, gint64 *pool_id, VsOomCause *cause,
                           char **evidence)
{
  g_autoptr (GError) error = NULL;
  VsFinding *f;

  g_return_val_if_fail (trace != NULL && o != NULL, FALSE);
  if (!vs_framework_pool_failure (trace, o, pool_id))
    return FALSE;
  f = finding_for (trace, o, *pool_id, &error);
  if (f == NULL)
    {
      *cause = VS_OOM_CAUSE_UNKNOWN;
      *evidence = NULL;
      return TRUE;
    }
  *cause = f->kind == VS_FINDING_OOM_FRAGMENTATION     ? VS_OOM_CAUSE_FRAGMENTATION
           : f->kind == VS_FINDING_OOM_ALLOCATOR_LIMIT ? VS_OOM_CAUSE_ALLOCATOR_LIMIT
                                                       : VS_OOM_CAUSE_DEVICE_FULL;
  *evidence = g_steal_pointer (&f->evidence);
  g_free (f->site);
  g_free (f->remedy);
  g_free (f);
  return TRUE;
}

static gboolean
contains (GArray *ids, gint64 id)
{
  for (guint i = 0; i < ids->len; i++)
    if (g_array_index (ids, gint64, i) == id)
      return TRUE;
  return FALSE;
}

gboolean
vs_framework_oom_findings (VsTrace *trace, gint64 device_id, const GPtrArray *failures,
                           GPtrArray *findings, GError **error)
{
  g_autoptr (GArray) recorded = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GPtrArray) mine = g_ptr_array_new ();

  g_return_val_if_fail (trace != NULL && failures != NULL && findings != NULL, FALSE);
  /* The framework's own records of its errors, where there are any, stand
   * for the failures of its pool's cudaMalloc it then retried. */
  for (guint i = 0; i < failures->len; i++)
    {
      const VsOom *o = g_ptr_array_index (failures, i);
      gint64 pool;

      if (o->device_id == device_id && vs_framework_pool_failure (trace, o, &pool) && o->api != NULL
          && strcmp (o->api, vs_trace_allocator_name (trace, pool)) == 0)
        g_array_append_val (recorded, pool);
    }
  for (guint i = 0; i < failures->len; i++)
    {
      const VsOom *o = g_ptr_array_index (failures, i);
      gint64 pool;
      VsFinding *f, *same = NULL;

      if (o->device_id != device_id || !vs_framework_pool_failure (trace, o, &pool))
        continue;
      if (contains (recorded, pool)
          && g_strcmp0 (o->api, vs_trace_allocator_name (trace, pool)) != 0)
        continue;
      f = finding_for (trace, o, pool, error);
      if (f == NULL)
        return FALSE;
      for (guint k = 0; k < mine->len && same == NULL; k++)
        {
          VsFinding *x = g_ptr_array_index (mine, k);

          if (x->kind == f->kind && x->allocator_id == f->allocator_id)
            same = x;
        }
      if (same != NULL)
        {
          same->count++;
          g_free (f->site);
          g_free (f->evidence);
          g_free (f->remedy);
          g_free (f);
          continue;
        }
      g_ptr_array_add (mine, f);
      g_ptr_array_add (findings, f);
    }
  return TRUE;
}
