/* SPDX-License-Identifier: MIT */
/* vs-predict.c — the model of a run at any batch size, its replay through
 * the caching-allocator model, and the largest batch under a limit (see
 * vs-predict.h).
 *
 * A model holds the first run's history and, per allocation, its size at
 * the first run's batch and its slope in bytes per unit of batch: from two
 * runs the difference of the matched sizes over the difference of the
 * batches (0 for an allocation the second run lacks), from one run
 * size / batch for the roles that scale and 0 for the others.  A replay
 * feeds the history with sizes a + slope·(batch − b1) to a fresh
 * VsCachingAllocator configured with the run's own settings.
 */
#include "vs-predict.h"

#include <math.h>
#include <string.h>

#include "vs-alloc-conf.h"
#include "vs-caching-allocator.h"
#include "vs-predict-private.h"
#include "vs-whatif-line.h"
#include "vs-whatif.h"

struct _VsPredictModel
{
  VsPredictBasis basis;
  VsPredictKeys keys;
  VsPredictHistory first;
  gint64 batch1;
  double *slope; /* per allocation of first */
  gint64 n_varying, n_unmatched;
  char *alloc_conf;
  gint64 device_total;
  gboolean gc_threshold; /* the settings set garbage_collection_threshold */
  GArray *replays;       /* Replayed: the replays made so far */
};

/* How many parts the search for the largest batch cuts its interval in
 * at each round (their replays run at once). */
#define BISECT_PARTS 8

/* A replay made, kept: the same batch under the same limit gives the same
 * peaks, and a replay without limit answers for any limit it stayed under. */
typedef struct
{
  gint64 limit_bytes; /* VS_UNKNOWN: none */
  gboolean limit_is_fraction;
  VsPredictPoint point;
} Replayed;

void
vs_predict_model_free (VsPredictModel *m)
{
  if (m == NULL)
    return;
  vs_predict_history_clear (&m->first);
  vs_predict_keys_clear (&m->keys);
  g_free (m->slope);
  g_free (m->alloc_conf);
  g_clear_pointer (&m->replays, g_array_unref);
  g_free (m);
}

VsPredictBasis
vs_predict_model_get_basis (VsPredictModel *m)
{
  return m->basis;
}

gint64
vs_predict_model_get_n_allocations (VsPredictModel *m)
{
  return m->first.allocs->len;
}

gint64
vs_predict_model_get_n_varying (VsPredictModel *m)
{
  return m->n_varying;
}

gint64
vs_predict_model_get_n_unmatched (VsPredictModel *m)
{
  return m->n_unmatched;
}

const char *
vs_predict_model_get_alloc_conf (VsPredictModel *m)
{
  return m->alloc_conf;
}

gint64
vs_predict_model_get_device_total (VsPredictModel *m)
{
  return m->device_total;
}

static const VsDeviceInfo *
device_of (VsTrace *trace, gint64 allocator_id)
{
  const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, allocator_id);
  return a != NULL ? vs_trace_lookup_device (trace, a->device_id) : NULL;
}

/* The error for two runs that are not one program at two sizes. */
static gboolean
differ (GError **error, const char *what, const char *v1, const char *v2)
{
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
               "the two runs are not the same program at two sizes: %s differ (%s, %s)", what,
               v1 != NULL && *v1 ? v1 : "unknown", v2 != NULL && *v2 ? v2 : "unknown");
  return FALSE;
}

/* The device and the allocator settings of both runs must be the same. */
static gboolean
check_same_setup (VsTrace *t1, gint64 a1, VsTrace *t2, gint64 a2, const char *conf1, GError **error)
{
  const VsDeviceInfo *d1 = device_of (t1, a1), *d2 = device_of (t2, a2);
  g_autofree char *conf2 = vs_whatif_own_alloc_conf (t2, a2, error);

  if (conf2 == NULL)
    return FALSE;
  if (d1 != NULL && d2 != NULL && d1->name != NULL && d2->name != NULL
      && strcmp (d1->name, d2->name) != 0)
    return differ (error, "their devices", d1->name, d2->name);
  if (d1 != NULL && d2 != NULL && d1->total_bytes != VS_UNKNOWN && d2->total_bytes != VS_UNKNOWN
      && d1->total_bytes != d2->total_bytes)
    {
      g_autofree char *s1 = g_strdup_printf ("%" G_GINT64_FORMAT " bytes", d1->total_bytes);
      g_autofree char *s2 = g_strdup_printf ("%" G_GINT64_FORMAT " bytes", d2->total_bytes);
      return differ (error, "their devices' capacities", s1, s2);
    }
  if (strcmp (conf1, conf2) != 0)
    return differ (error, "their allocator settings", *conf1 ? conf1 : "defaults",
                   *conf2 ? conf2 : "defaults");
  return TRUE;
}

/* Two runs: the history of the larger batch (m->first, read by the caller
 * for trace1 at batch1; swapped with *read_other, the second run's, when
 * batch2 is larger), the slopes of its allocations matched in the other.
 * Takes *read_other. */
static gboolean
fit_two (VsPredictModel *m, VsPredictHistory *read_other, gint64 batch2, GError **error)
{
  VsPredictHistory other = *read_other;
  g_autofree gint64 *match = NULL;
  gint64 other_batch = batch2;
  gboolean ok = TRUE;

  *read_other = (VsPredictHistory){ 0 };
  if (batch2 > m->batch1)
    {
      VsPredictHistory t = m->first;
      m->first = other;
      other = t;
      other_batch = m->batch1;
      m->batch1 = batch2;
    }
  if (ok)
    {
      guint n = m->first.allocs->len;
      match = g_new (gint64, n);
      m->slope = g_new0 (double, n);
      m->n_unmatched = vs_predict_match (&m->first, &other, (double)m->batch1 / (double)other_batch,
                                         &m->keys, match, error);
      ok = m->n_unmatched >= 0;
      if (!ok)
        g_prefix_error (error, "the two runs are not the same program at two sizes: ");
      for (guint i = 0; ok && i < n; i++)
        {
          const VsPredictAlloc *x = &g_array_index (m->first.allocs, VsPredictAlloc, i);
          if (match[i] < 0)
            continue;
          const VsPredictAlloc *y = &g_array_index (other.allocs, VsPredictAlloc, match[i]);
          m->slope[i] = (double)(x->size - y->size) / (double)(m->batch1 - other_batch);
          if (y->size != x->size)
            m->n_varying++;
        }
    }
  vs_predict_history_clear (&other);
  return ok;
}

/* One run: the allocations whose role scales with the batch (roles: read
 * meanwhile, may be NULL). */
static gboolean
fit_one (VsPredictModel *m, VsPredictRoles *roles, GError **error)
{
  gpointer found = g_hash_table_lookup (m->keys.index, "");
  guint32 empty = found != NULL ? GPOINTER_TO_UINT (found) - 1 : G_MAXUINT32;

  return vs_predict_one_run_slopes (&m->first, roles, empty, m->batch1, m->slope, &m->n_varying,
                                    error);
}

/* Reading a history on a thread of its own. */
typedef struct
{
  VsPredictHistory *h;
  VsTrace *trace;
  gint64 allocator_id;
  VsPredictKeys *keys;
  GError *error;
  gboolean ok;
} ReadJob;

static gpointer
read_job (gpointer data)
{
  ReadJob *j = data;
  j->ok = vs_predict_history_read (j->h, j->trace, j->allocator_id, j->keys, &j->error);
  return NULL;
}

/* Reads the first run's history into m->first and the second's (trace2
 * may be NULL) into *other: at once, on two threads, when they are two
 * traces (each has its own connection). */
static gboolean
read_histories (VsPredictModel *m, VsTrace *trace1, gint64 allocator1, VsTrace *trace2,
                gint64 allocator2, VsPredictHistory *other, GError **error)
{
  ReadJob job = { other, trace2, allocator2, &m->keys, NULL, FALSE };
  GThread *thread = NULL;
  gboolean ok;

  if (trace2 != NULL && trace2 != trace1)
    thread = g_thread_try_new ("vs-predict-read", read_job, &job, NULL);
  ok = vs_predict_history_read (&m->first, trace1, allocator1, &m->keys, error);
  if (thread != NULL)
    g_thread_join (thread);
  else if (ok && trace2 != NULL)
    read_job (&job);
  if (trace2 == NULL || !ok)
    {
      g_clear_error (&job.error);
      return ok;
    }
  if (!job.ok)
    g_propagate_error (error, job.error);
  return job.ok;
}

VsPredictModel *
vs_predict_model_new (VsTrace *trace1, gint64 allocator1, gint64 batch1, VsTrace *trace2,
                      gint64 allocator2, gint64 batch2, GError **error)
{
  g_autoptr (VsPredictModel) m = g_new0 (VsPredictModel, 1);
  g_auto (VsPredictHistory) other = { 0 };
  g_autoptr (VsPredictRoles) roles = NULL;
  const VsDeviceInfo *dev;

  g_return_val_if_fail (trace1 != NULL && batch1 >= 1, NULL);
  g_return_val_if_fail (trace2 == NULL || (batch2 >= 1 && batch2 != batch1), NULL);
  vs_predict_keys_init (&m->keys);
  m->batch1 = batch1;
  m->basis = trace2 != NULL ? VS_PREDICT_TWO_RUNS : VS_PREDICT_ONE_RUN;
  m->alloc_conf = vs_whatif_own_alloc_conf (trace1, allocator1, error);
  if (m->alloc_conf == NULL)
    return NULL;
  VsAllocConf conf;
  if (!vs_alloc_conf_parse (m->alloc_conf, &conf, error))
    return NULL;
  m->gc_threshold = conf.garbage_collection_threshold > 0.0;
  m->replays = g_array_new (FALSE, FALSE, sizeof (Replayed));
  dev = device_of (trace1, allocator1);
  m->device_total = dev != NULL ? dev->total_bytes : VS_UNKNOWN;
  if (trace2 != NULL
      && !check_same_setup (trace1, allocator1, trace2, allocator2, m->alloc_conf, error))
    return NULL;
  /* one run: the blocks' roles are read while the history is */
  if (trace2 == NULL)
    roles = vs_predict_roles_start (trace1, allocator1);
  if (!read_histories (m, trace1, allocator1, trace2, allocator2, &other, error))
    return NULL;
  if (trace2 == NULL)
    m->slope = g_new0 (double, m->first.allocs->len);
  if (trace2 != NULL ? !fit_two (m, &other, batch2, error) : !fit_one (m, roles, error))
    return NULL;
  return g_steal_pointer (&m);
}

/* The size of allocation i at batch. */
static inline gint64
size_at (const VsPredictModel *m, const VsPredictAlloc *a, guint i, gint64 batch)
{
  if (m->slope[i] == 0.0)
    return a->size;
  double s = (double)a->size + m->slope[i] * (double)(batch - m->batch1);
  return s <= 0.0 ? 0 : (gint64)llround (MIN (s, (double)((gint64)1 << 50)));
}

/* The replay; steps (may be NULL) receives a VsWhatifStep per change of
 * reserved memory, at the time of the recorded event that caused it. */
static gboolean
replay (VsPredictModel *m, gint64 batch, gint64 limit_bytes, gboolean limit_is_fraction,
        GArray *steps, VsPredictPoint *out, GError **error)
{
  const gint64 *times = (const gint64 *)m->first.times->data;
  gint64 reserved = 0;
  VsAllocConf conf;
  g_autoptr (VsCachingAllocator) ca = NULL;
  const VsPredictAlloc *allocs = (const VsPredictAlloc *)m->first.allocs->data;
  const gint32 *events = (const gint32 *)m->first.events->data;
  g_autofree VsCaBlock **blocks = NULL;

  g_return_val_if_fail (m != NULL && batch >= 1 && out != NULL, FALSE);
  if (!vs_alloc_conf_parse (m->alloc_conf, &conf, error))
    return FALSE;
  ca = vs_caching_allocator_new (&conf, limit_bytes == VS_UNKNOWN ? G_MAXINT64 : limit_bytes,
                                 limit_bytes != VS_UNKNOWN && limit_is_fraction,
                                 m->device_total != VS_UNKNOWN ? m->device_total : (gint64)1 << 40);
  blocks = g_new0 (VsCaBlock *, m->first.allocs->len);
  for (guint k = 0; k < m->first.events->len; k++)
    {
      gint32 ev = events[k];
      if (ev >= 0)
        blocks[ev] = vs_caching_allocator_malloc (ca, size_at (m, &allocs[ev], ev, batch),
                                                  allocs[ev].stream);
      else if (blocks[-ev - 1] != NULL)
        {
          vs_caching_allocator_release (ca, blocks[-ev - 1]);
          blocks[-ev - 1] = NULL;
        }
      if (steps != NULL && vs_caching_allocator_get_reserved (ca) != reserved)
        {
          VsWhatifStep step = { times[k], vs_caching_allocator_get_reserved (ca) };
          /* a trace's events out of time order within the allocator */
          if (steps->len > 0)
            step.time_ns
                = MAX (step.time_ns, g_array_index (steps, VsWhatifStep, steps->len - 1).time_ns);
          g_array_append_val (steps, step);
          reserved = step.reserved_bytes;
        }
    }
  out->batch = batch;
  out->peak_allocated_bytes = vs_caching_allocator_get_peak_requested (ca);
  out->peak_reserved_bytes = vs_caching_allocator_get_peak_reserved (ca);
  out->failed_alloc_count = vs_caching_allocator_get_ooms (ca);
  return TRUE;
}

/* A replay made before that gives the peaks of batch under the limit:
 * the same one, or one without limit whose reserved memory never went
 * past it (the limit is consulted only when a segment would take reserved
 * memory past it, and by the garbage collection a fraction enables).
 * NULL when none. */
static const VsPredictPoint *
replayed (VsPredictModel *m, gint64 batch, gint64 limit_bytes, gboolean limit_is_fraction)
{
  for (guint i = 0; i < m->replays->len; i++)
    {
      const Replayed *r = &g_array_index (m->replays, Replayed, i);
      if (r->point.batch != batch)
        continue;
      if (r->limit_bytes == limit_bytes
          && (limit_bytes == VS_UNKNOWN || r->limit_is_fraction == limit_is_fraction))
        return &r->point;
      if (r->limit_bytes == VS_UNKNOWN && r->point.peak_reserved_bytes <= limit_bytes
          && !(limit_is_fraction && m->gc_threshold))
        return &r->point;
    }
  return NULL;
}

gboolean
vs_predict_model_replay (VsPredictModel *m, gint64 batch, gint64 limit_bytes,
                         gboolean limit_is_fraction, VsPredictPoint *out, GError **error)
{
  const VsPredictPoint *known;
  Replayed r = { limit_bytes, limit_is_fraction, { 0 } };

  g_return_val_if_fail (m != NULL && batch >= 1 && out != NULL, FALSE);
  /* Where no size varies, every batch replays the same history. */
  gint64 as = m->n_varying == 0 ? m->batch1 : batch;
  known = replayed (m, as, limit_bytes, limit_is_fraction);
  if (known != NULL)
    r.point = *known;
  else if (replay (m, as, limit_bytes, limit_is_fraction, NULL, &r.point, error))
    g_array_append_val (m->replays, r);
  else
    return FALSE;
  *out = r.point;
  out->batch = batch;
  return TRUE;
}

/* One replay of replay_many, on a thread of the pool. */
typedef struct
{
  VsPredictModel *m;
  Replayed r;
  GError *error;
  gboolean ok;
} ReplayJob;

static void
replay_job (gpointer data, gpointer user_data)
{
  ReplayJob *j = data;
  (void)user_data;
  j->ok = replay (j->m, j->r.point.batch, j->r.limit_bytes, j->r.limit_is_fraction, NULL,
                  &j->r.point, &j->error);
}

/* Adds the replay of batch under limit (VS_UNKNOWN: none) to jobs unless it
 * is there or known. */
static void
add_job (VsPredictModel *m, GArray *jobs, gint64 batch, gint64 limit, gboolean fraction)
{
  ReplayJob j = { m, { limit, fraction, { 0 } }, NULL, FALSE };

  if (m->n_varying == 0)
    batch = m->batch1;
  for (guint k = 0; k < jobs->len; k++)
    {
      const Replayed *r = &g_array_index (jobs, ReplayJob, k).r;
      if (r->point.batch == batch && r->limit_bytes == limit
          && (limit == VS_UNKNOWN || r->limit_is_fraction == fraction))
        return;
    }
  if (replayed (m, batch, limit, fraction) != NULL)
    return;
  j.r.point.batch = batch;
  g_array_append_val (jobs, j);
}

/* Runs jobs (ReplayJob) on as many threads as there are processors and
 * jobs, and keeps their results.  Returns FALSE with error set when a
 * replay failed. */
static gboolean
replay_many (VsPredictModel *m, GArray *jobs, GError **error)
{
  GThreadPool *pool;
  gboolean ok = TRUE;

  if (jobs->len == 0)
    return TRUE;
  pool = jobs->len == 1
             ? NULL
             : g_thread_pool_new (replay_job, NULL, (gint)MIN (jobs->len, g_get_num_processors ()),
                                  FALSE, NULL);
  for (guint k = 0; k < jobs->len; k++)
    if (pool == NULL || !g_thread_pool_push (pool, &g_array_index (jobs, ReplayJob, k), NULL))
      replay_job (&g_array_index (jobs, ReplayJob, k), NULL);
  if (pool != NULL)
    g_thread_pool_free (pool, FALSE, TRUE);
  for (guint k = 0; k < jobs->len; k++)
    {
      ReplayJob *j = &g_array_index (jobs, ReplayJob, k);
      if (j->ok)
        g_array_append_val (m->replays, j->r);
      else if (ok)
        {
          g_propagate_error (error, j->error);
          j->error = NULL;
          ok = FALSE;
        }
      g_clear_error (&j->error);
    }
  return ok;
}

gboolean
vs_predict_model_prepare (VsPredictModel *m, const gint64 *batches, guint n, gint64 limit_bytes,
                          gboolean limit_is_fraction, gboolean for_largest, GError **error)
{
  g_autoptr (GArray) jobs = g_array_new (FALSE, TRUE, sizeof (ReplayJob));
  guint unlimited;

  g_return_val_if_fail (m != NULL && (n == 0 || batches != NULL), FALSE);
  for (guint i = 0; i < n + (for_largest ? 2 : 0); i++)
    {
      gint64 b = i < n ? batches[i] : (i == n ? m->batch1 : 2 * m->batch1);
      g_return_val_if_fail (b >= 1, FALSE);
      add_job (m, jobs, b, VS_UNKNOWN, FALSE);
    }
  /* Under the limit too, where processors are left for them: a replay
   * without limit that stays under it makes them useless. */
  unlimited = jobs->len;
  for (guint i = 0; limit_bytes != VS_UNKNOWN && i < n; i++)
    add_job (m, jobs, batches[i], limit_bytes, limit_is_fraction);
  if (jobs->len > MAX (unlimited, g_get_num_processors ()))
    g_array_set_size (jobs, unlimited);
  return replay_many (m, jobs, error);
}

gboolean
vs_predict_model_replay_steps (VsPredictModel *m, gint64 batch, GArray *steps, VsPredictPoint *out,
                               GError **error)
{
  g_return_val_if_fail (steps != NULL, FALSE);
  return replay (m, batch, VS_UNKNOWN, FALSE, steps, out, error);
}

/* Whether batch fails no request under the limit. */
static gboolean
fits (VsPredictModel *m, gint64 batch, gint64 limit, gboolean fraction, gboolean *ok,
      GError **error)
{
  VsPredictPoint p;
  if (!vs_predict_model_replay (m, batch, limit, fraction, &p, error))
    return FALSE;
  *ok = p.failed_alloc_count == 0;
  return TRUE;
}

gint64
vs_predict_model_largest (VsPredictModel *m, gint64 limit_bytes, gboolean limit_is_fraction,
                          gint64 max_batch, VsPredictPoint *out, GError **error)
{
  VsPredictPoint p1, p2;
  gint64 lo, hi, guess;
  gboolean ok;

  g_return_val_if_fail (m != NULL && limit_bytes != VS_UNKNOWN && max_batch >= 1, -1);
  /* A first guess from the straight line through the unlimited reserved
   * peaks at b1 and 2·b1, then a bracket around it and bisection: a few
   * replays instead of one per doubling. */
  if (!vs_predict_model_replay (m, m->batch1, VS_UNKNOWN, FALSE, &p1, error)
      || !vs_predict_model_replay (m, 2 * m->batch1, VS_UNKNOWN, FALSE, &p2, error))
    return -1;
  double per = (double)(p2.peak_reserved_bytes - p1.peak_reserved_bytes) / (double)m->batch1;
  if (per > 0.0)
    guess = m->batch1 + (gint64)(((double)limit_bytes - (double)p1.peak_reserved_bytes) / per);
  else
    guess = max_batch;
  guess = CLAMP (guess, 1, max_batch);
  gint64 step = MAX (1, guess / 16);
  if (!fits (m, guess, limit_bytes, limit_is_fraction, &ok, error))
    return -1;
  if (ok)
    {
      lo = guess;
      hi = guess + step;
      for (;;)
        {
          if (hi > max_batch)
            {
              hi = max_batch + 1;
              break;
            }
          if (!fits (m, hi, limit_bytes, limit_is_fraction, &ok, error))
            return -1;
          if (!ok)
            break;
          lo = hi;
          step *= 2;
          hi = lo + step;
        }
    }
  else
    {
      hi = guess;
      lo = guess - step;
      for (;;)
        {
          if (lo < 1)
            {
              lo = 0;
              break;
            }
          if (!fits (m, lo, limit_bytes, limit_is_fraction, &ok, error))
            return -1;
          if (ok)
            break;
          hi = lo;
          step *= 2;
          lo = hi - step;
        }
    }
  /* lo fits (or is 0), hi fails (or is past max_batch): the batches
   * between are cut in BISECT_PARTS parts, the replays at the cuts made at
   * once, until lo and hi are next to each other (a fixed number of parts,
   * not one per processor, so that every machine probes the same batches
   * and answers the same). */
  while (hi - lo > 1)
    {
      g_autoptr (GArray) jobs = g_array_new (FALSE, TRUE, sizeof (ReplayJob));
      gint64 parts = MIN (BISECT_PARTS, hi - lo);
      gint64 new_lo = lo, new_hi = hi;
      for (gint64 k = 1; k < parts; k++)
        add_job (m, jobs, lo + (hi - lo) * k / parts, limit_bytes, limit_is_fraction);
      if (!replay_many (m, jobs, error))
        return -1;
      for (gint64 k = 1; k < parts; k++)
        {
          gint64 mid = lo + (hi - lo) * k / parts;
          if (!fits (m, mid, limit_bytes, limit_is_fraction, &ok, error))
            return -1;
          if (!ok)
            {
              new_hi = mid;
              break;
            }
          new_lo = mid;
        }
      lo = new_lo;
      hi = new_hi;
    }
  if (out != NULL && lo >= 1
      && !vs_predict_model_replay (m, lo, limit_bytes, limit_is_fraction, out, error))
    return -1;
  return lo;
}
