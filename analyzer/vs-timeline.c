/* SPDX-License-Identifier: MIT */
/* vs-timeline.c — the reserved/allocated step series at any zoom.
 *
 * Three sources, cheapest first: the summary levels (`series_level`, one
 * row per 2^shift ns bucket with min/max/last), the raw rows (`series`,
 * through the index on (device_id, allocator_id, ts)), and for the state
 * before the first change the blocks live since before the trace began.
 * A timeline query reads one level chosen so that a level bucket is at most
 * 1/8 of an output bucket, so its cost is bounded by the number of output
 * buckets (times 8) rather than by the number of events in view.
 *
 * A device whose `all` series counts a framework pool's segments as
 * allocated (a pool seen only from the device level, vs-framework-pools.h)
 * is read from its raw rows, each made exact by taking out what the pools
 * held at its step — by every reader here: points, buckets, extremes and
 * the peak inside an interval, so growth, ranges, fragmentation and the
 * viewer see the allocated memory summary does.  Such devices change
 * their memory seldom (a pool takes large segments), so the rows read
 * stay few.
 */
#include "vs-timeline.h"
#include "vs-framework-pools.h"
#include "vs-pool-series.h"
#include "vs-trace-private.h"

#include <string.h>

/* A level bucket may be at most this fraction of an output bucket. */
#define LEVEL_RATIO 8

/* State before the first change: blocks with alloc_seq 0 are the memory
 * live before the trace began (the finalizer counts them from the start). */
static const char *initial_sql
    = "SELECT"
      " coalesce(sum(CASE WHEN " VS_ALLOCATED_BLOCK_SQL " THEN bytes END), 0),"
      " coalesce(sum(CASE WHEN (level = 3 AND (?2 = 0 OR allocator_id = ?2))"
      "   OR (level = 1 AND kind = 5 AND allocator_id IS NOT NULL"
      "       AND (?2 = 0 OR allocator_id = ?2))"
      "   OR (level = 1 AND ?2 = 0 AND allocator_id IS NULL AND kind IN (1, 5, 6))"
      "   THEN bytes END), 0),"
      " coalesce(sum(CASE WHEN level = 1 AND (kind IN (1, 6)"
      "   OR (kind = 5 AND allocator_id IS NULL)) THEN bytes END), 0),"
      " coalesce(sum(CASE WHEN level = 1 AND kind = 4 THEN bytes END), 0),"
      " coalesce(sum(CASE WHEN level = 1 AND kind = 2 THEN bytes END), 0),"
      " coalesce(sum(CASE WHEN level = 1 AND kind = 3 THEN bytes END), 0)"
      " FROM block WHERE device_id = ?1 AND level IN (1, 2, 3) AND alloc_seq = 0";

static gboolean
initial_state (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsSeriesPoint *out,
               GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, initial_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    return vs_trace_sql_error (trace, error);
  out->seq = 0;
  out->time_ns = VS_UNKNOWN;
  out->allocated_bytes = sqlite3_column_int64 (stmt, 0);
  out->reserved_bytes = sqlite3_column_int64 (stmt, 1);
  /* An imported trace knows no device-level memory (its series rows say
   * NULL too). */
  if (allocator_id == 0 && trace->device_level)
    {
      out->device_bytes = sqlite3_column_int64 (stmt, 2);
      out->static_bytes = sqlite3_column_int64 (stmt, 3);
      out->pinned_bytes = sqlite3_column_int64 (stmt, 4);
      out->managed_bytes = sqlite3_column_int64 (stmt, 5);
    }
  else
    out->device_bytes = out->static_bytes = out->pinned_bytes = out->managed_bytes = VS_UNKNOWN;
  sqlite3_reset (stmt);
  return TRUE;
}

static const char *point_sql
    = "SELECT seq, ts, reserved_bytes, allocated_bytes, device_bytes,"
      " static_bytes, pinned_bytes, managed_bytes FROM series"
      " WHERE device_id = ?1 AND allocator_id = ?2 AND ts = ?3 AND seq = ?4";

/* Whether the allocated bytes of (device_id, allocator_id)'s series rows
 * count framework pools' segments that readers take out (the device's
 * `all` series, where a pool is seen only from the device level). */
static gboolean
counts_pools (VsTrace *trace, gint64 device_id, gint64 allocator_id)
{
  return allocator_id == 0 && vs_framework_pools_hold_segments (trace, device_id);
}

/* Allocated bytes of a row of the series after step seq, without the
 * pools' segments where the row counts them. */
static gint64
allocated_of_row (VsTrace *trace, gint64 device_id, gboolean pools, gint64 seq, gint64 allocated)
{
  if (!pools)
    return allocated;
  return MAX (allocated - vs_framework_pools_reserved_at (trace, device_id, seq), 0);
}

/* The state as the series' rows hold it (see vs_series_at_seq()). */
static gboolean
row_state_at_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                  VsSeriesPoint *out, GError **error)
{
  sqlite3_stmt *stmt;
  gint64 row_seq, row_ts;
  int rc;

  if (!vs_trace_series_row_at_seq (trace, device_id, allocator_id, seq, &row_seq, &row_ts, error))
    return FALSE;
  if (row_seq == 0)
    return initial_state (trace, device_id, allocator_id, out, error);
  stmt = vs_trace_series_statement (trace, point_sql, device_id, allocator_id, row_ts, row_seq,
                                    error);
  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_DONE)
    {
      sqlite3_reset (stmt);
      return initial_state (trace, device_id, allocator_id, out, error);
    }
  if (rc != SQLITE_ROW)
    return vs_trace_sql_error (trace, error);
  out->seq = sqlite3_column_int64 (stmt, 0);
  out->time_ns = vs_trace_rel (trace, sqlite3_column_int64 (stmt, 1));
  out->reserved_bytes = sqlite3_column_int64 (stmt, 2);
  out->allocated_bytes = sqlite3_column_int64 (stmt, 3);
  out->device_bytes = vs_column_int (stmt, 4);
  out->static_bytes = vs_column_int (stmt, 5);
  out->pinned_bytes = vs_column_int (stmt, 6);
  out->managed_bytes = vs_column_int (stmt, 7);
  if (allocator_id != 0) /* see vs_trace_series_id() */
    out->device_bytes = out->static_bytes = out->pinned_bytes = out->managed_bytes = VS_UNKNOWN;
  sqlite3_reset (stmt);
  return TRUE;
}

gboolean
vs_series_at_seq (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                  VsSeriesPoint *out, GError **error)
{
  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (vs_framework_pool_is (trace, allocator_id))
    {
      vs_pool_series_at (trace, allocator_id, seq, VS_UNKNOWN, out);
      return TRUE;
    }
  if (!row_state_at_seq (trace, device_id, allocator_id, seq, out, error))
    return FALSE;
  out->allocated_bytes
      = allocated_of_row (trace, device_id, counts_pools (trace, device_id, allocator_id), out->seq,
                          out->allocated_bytes);
  return TRUE;
}

gboolean
vs_series_at_time (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 time_ns,
                   VsSeriesPoint *out, GError **error)
{
  gint64 seq;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (vs_framework_pool_is (trace, allocator_id))
    {
      vs_pool_series_at (trace, allocator_id, VS_UNKNOWN, time_ns, out);
      return TRUE;
    }
  seq = vs_trace_seq_at_time (trace, device_id, allocator_id, time_ns, error);
  if (seq < 0)
    return FALSE;
  if (seq == 0)
    {
      if (!initial_state (trace, device_id, allocator_id, out, error))
        return FALSE;
      out->allocated_bytes = allocated_of_row (
          trace, device_id, counts_pools (trace, device_id, allocator_id), 0, out->allocated_bytes);
      return TRUE;
    }
  return vs_series_at_seq (trace, device_id, allocator_id, seq, out, error);
}

static gint64
floor_div (gint64 a, gint64 b)
{
  gint64 q = a / b;

  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static gint64
ceil_div (gint64 a, gint64 b)
{
  return -floor_div (-a, b);
}

static void
bucket_start (VsTimelineBucket *b, const VsSeriesPoint *carry)
{
  b->known = TRUE;
  b->min_reserved = b->max_reserved = b->last_reserved = carry->reserved_bytes;
  b->min_allocated = b->max_allocated = b->last_allocated = carry->allocated_bytes;
  b->max_device = carry->device_bytes;
  b->n_changes = 0;
}

static void
bucket_add (VsTimelineBucket *b, gint64 min_r, gint64 max_r, gint64 last_r, gint64 min_a,
            gint64 max_a, gint64 last_a, gint64 max_d)
{
  b->min_reserved = MIN (b->min_reserved, min_r);
  b->max_reserved = MAX (b->max_reserved, max_r);
  b->last_reserved = last_r;
  b->min_allocated = MIN (b->min_allocated, min_a);
  b->max_allocated = MAX (b->max_allocated, max_a);
  b->last_allocated = last_a;
  if (max_d != VS_UNKNOWN)
    b->max_device = b->max_device == VS_UNKNOWN ? max_d : MAX (b->max_device, max_d);
  b->n_changes++;
}

static const char *raw_sql = "SELECT ts, reserved_bytes, allocated_bytes, device_bytes FROM series"
                             " WHERE device_id = ?1 AND allocator_id = ?2 AND ts >= ?3 AND ts < ?4"
                             " ORDER BY ts, seq";

static const char *raw_seq_sql
    = "SELECT ts, reserved_bytes, allocated_bytes, device_bytes, seq FROM series"
      " WHERE device_id = ?1 AND allocator_id = ?2 AND ts >= ?3 AND ts < ?4"
      " ORDER BY ts, seq";

static const char *level_sql
    = "SELECT bucket, min_reserved, max_reserved, last_reserved, min_allocated,"
      " max_allocated, last_allocated, max_device FROM series_level"
      " WHERE device_id = ?1 AND allocator_id = ?2 AND shift = ?3"
      " AND bucket >= ?4 AND bucket <= ?5 ORDER BY bucket";

/* Checks that (device_id, allocator_id) names a series of the trace. */
static gboolean
check_series (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  if (vs_trace_lookup_device (trace, device_id) == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no device with id %" G_GINT64_FORMAT, trace->path, device_id);
      return FALSE;
    }
  if (allocator_id != 0 && vs_trace_lookup_allocator (trace, allocator_id) == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "%s has no allocator with id %" G_GINT64_FORMAT, trace->path, allocator_id);
      return FALSE;
    }
  return TRUE;
}

GArray *
vs_timeline_buckets_new (gint64 from_ns, gint64 to_ns, guint n_buckets)
{
  g_return_val_if_fail (from_ns < to_ns && n_buckets >= 1, NULL);
  gint64 span = to_ns - from_ns;
  GArray *out = g_array_sized_new (FALSE, TRUE, sizeof (VsTimelineBucket), n_buckets);

  g_array_set_size (out, n_buckets);
  for (guint i = 0; i < n_buckets; i++)
    {
      VsTimelineBucket *b = &g_array_index (out, VsTimelineBucket, i);

      /* from + span*i/n without overflow. */
      b->from_ns = from_ns + (span / n_buckets) * i + (span % n_buckets) * i / n_buckets;
      if (i > 0)
        g_array_index (out, VsTimelineBucket, i - 1).to_ns = b->from_ns;
    }
  g_array_index (out, VsTimelineBucket, n_buckets - 1).to_ns = to_ns;
  return out;
}

/* vs_timeline_query() of a framework pool seen only from the device
 * level (see vs-framework-pools.h): its reserved bytes from its segments,
 * its allocated bytes unknown (VS_UNKNOWN), into out's buckets; every
 * bucket unknown when the trace does not show its segments. */
static void
pool_buckets (VsTrace *trace, gint64 pool_id, GArray *out)
{
  g_autoptr (GArray) steps = vs_framework_pool_steps (trace, pool_id);
  VsSeriesPoint carry = { 0 };
  guint k = 0, cur = 0;

  carry.allocated_bytes = carry.device_bytes = VS_UNKNOWN;
  for (guint i = 0; i < out->len; i++)
    {
      VsTimelineBucket *b = &g_array_index (out, VsTimelineBucket, i);

      b->known = FALSE;
      b->min_reserved = b->max_reserved = b->last_reserved = VS_UNKNOWN;
      b->min_allocated = b->max_allocated = b->last_allocated = b->max_device = VS_UNKNOWN;
    }
  if (steps == NULL)
    return;
  /* The state entering the first bucket. */
  for (; k < steps->len; k++)
    {
      const VsPoolStep *st = &g_array_index (steps, VsPoolStep, k);

      if (st->ts != VS_UNKNOWN
          && st->ts >= vs_trace_abs (trace, g_array_index (out, VsTimelineBucket, 0).from_ns))
        break;
      carry.reserved_bytes = st->held;
      carry.seq = st->seq;
    }
  bucket_start (&g_array_index (out, VsTimelineBucket, 0), &carry);
  for (; k < steps->len; k++)
    {
      const VsPoolStep *st = &g_array_index (steps, VsPoolStep, k);
      gint64 t = vs_trace_rel (trace, st->ts);

      if (t >= g_array_index (out, VsTimelineBucket, out->len - 1).to_ns)
        break;
      while (cur + 1 < out->len && t >= g_array_index (out, VsTimelineBucket, cur).to_ns)
        bucket_start (&g_array_index (out, VsTimelineBucket, ++cur), &carry);
      bucket_add (&g_array_index (out, VsTimelineBucket, cur), st->held, st->held, st->held,
                  VS_UNKNOWN, VS_UNKNOWN, VS_UNKNOWN, VS_UNKNOWN);
      carry.reserved_bytes = st->held;
      carry.seq = st->seq;
    }
  while (cur + 1 < out->len)
    bucket_start (&g_array_index (out, VsTimelineBucket, ++cur), &carry);
  /* Before the pool's first segment it held nothing; known from then. */
  for (guint i = 0; i < out->len; i++)
    {
      VsTimelineBucket *b = &g_array_index (out, VsTimelineBucket, i);

      if (b->to_ns <= 0 && b->n_changes == 0)
        b->known = FALSE;
    }
}

GArray *
vs_timeline_query (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 from_ns,
                   gint64 to_ns, guint n_buckets, GError **error)
{
  g_autoptr (GArray) out = NULL;
  VsSeriesPoint carry;
  GArray *shifts;
  gint64 span, width, shift = -1;
  gboolean pools;
  g_auto (VsPoolHeld) held = { 0 };
  sqlite3_stmt *stmt;
  guint cur = 0;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  if (from_ns >= to_ns || n_buckets == 0 || n_buckets > 1000000)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "A timeline needs from < to and 1 to 1000000 buckets");
      return NULL;
    }
  if (!check_series (trace, device_id, allocator_id, error))
    return NULL;
  if (__builtin_sub_overflow (to_ns, from_ns, &span) || from_ns == G_MININT64 + 1)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "The timeline range is too wide");
      return NULL;
    }

  out = vs_timeline_buckets_new (from_ns, to_ns, n_buckets);
  if (vs_framework_pool_is (trace, allocator_id))
    {
      pool_buckets (trace, allocator_id, out);
      return g_steal_pointer (&out);
    }

  if (!vs_series_at_time (trace, device_id, allocator_id, from_ns - 1, &carry, error))
    return NULL;
  pools = counts_pools (trace, device_id, allocator_id);

  width = span / n_buckets;
  shifts = vs_trace_level_shifts (trace, device_id, allocator_id, error);
  if (shifts == NULL)
    return NULL;
  for (guint i = 0; i < shifts->len; i++)
    {
      gint64 s = g_array_index (shifts, gint64, i);

      if (s < 62 && (G_GINT64_CONSTANT (1) << s) * LEVEL_RATIO <= width && !pools)
        shift = s;
    }

  bucket_start (&g_array_index (out, VsTimelineBucket, 0), &carry);
  /* The pools' bytes for the raw rows, read once and walked with them
   * (rows come in replay order). */
  if (pools)
    vs_pool_held_init (&held, trace, device_id);
  if (shift < 0)
    {
      stmt = vs_trace_series_statement (trace, pools ? raw_seq_sql : raw_sql, device_id,
                                        allocator_id, vs_trace_abs (trace, from_ns),
                                        vs_trace_abs (trace, to_ns), error);
      if (stmt == NULL)
        return NULL;
    }
  else
    {
      stmt = vs_trace_series_statement (trace, level_sql, device_id, allocator_id, shift,
                                        floor_div (from_ns, G_GINT64_CONSTANT (1) << shift), error);
      if (stmt == NULL)
        return NULL;
      sqlite3_bind_int64 (stmt, 5, floor_div (to_ns - 1, G_GINT64_CONSTANT (1) << shift));
    }

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 t, min_r, max_r, last_r, min_a, max_a, last_a, max_d;
      VsTimelineBucket *b;

      if (shift < 0)
        {
          t = vs_trace_rel (trace, sqlite3_column_int64 (stmt, 0));
          min_r = max_r = last_r = sqlite3_column_int64 (stmt, 1);
          min_a = max_a = last_a = sqlite3_column_int64 (stmt, 2);
          max_d = vs_column_int (stmt, 3);
          if (pools)
            min_a = max_a = last_a
                = MAX (last_a - vs_pool_held_after (&held, sqlite3_column_int64 (stmt, 4)), 0);
        }
      else
        {
          t = MAX (from_ns, sqlite3_column_int64 (stmt, 0) << shift);
          min_r = sqlite3_column_int64 (stmt, 1);
          max_r = sqlite3_column_int64 (stmt, 2);
          last_r = sqlite3_column_int64 (stmt, 3);
          min_a = sqlite3_column_int64 (stmt, 4);
          max_a = sqlite3_column_int64 (stmt, 5);
          last_a = sqlite3_column_int64 (stmt, 6);
          max_d = vs_column_int (stmt, 7);
        }
      if (allocator_id != 0) /* see vs_trace_series_id() */
        max_d = VS_UNKNOWN;
      while (cur + 1 < n_buckets && t >= g_array_index (out, VsTimelineBucket, cur).to_ns)
        {
          cur++;
          bucket_start (&g_array_index (out, VsTimelineBucket, cur), &carry);
        }
      b = &g_array_index (out, VsTimelineBucket, cur);
      bucket_add (b, min_r, max_r, last_r, min_a, max_a, last_a, max_d);
      carry.reserved_bytes = last_r;
      carry.allocated_bytes = last_a;
      /* Levels keep only the maximum of device bytes; carrying it forward
       * overstates an empty following bucket at most by the drop inside. */
      carry.device_bytes = max_d;
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  while (cur + 1 < n_buckets)
    {
      cur++;
      bucket_start (&g_array_index (out, VsTimelineBucket, cur), &carry);
    }
  for (guint i = 0; i < n_buckets; i++)
    {
      VsTimelineBucket *b = &g_array_index (out, VsTimelineBucket, i);

      if (b->to_ns <= 0 && b->n_changes == 0)
        b->known = FALSE;
    }
  return g_steal_pointer (&out);
}

static gboolean extremes_rec (VsTrace *trace, gint64 device_id, gint64 allocator_id, GArray *shifts,
                              gint li, gint64 a, gint64 b, VsTimelineBucket *out, GError **error);

/* One summary-level bucket as its row holds it. */
typedef struct
{
  gint64 bucket, min_r, max_r, last_r, min_a, max_a, last_a, max_d;
} LevelRow;

/* Folds level li's buckets fb .. lb - 1 (of width 2^shift) of a device's
 * `all` series counting framework pools into out: a bucket in which no
 * pool took or gave back a segment has the pools' bytes of its start
 * taken out of its allocated bytes; one in which a pool changed is read
 * from finer levels (at the finest, its rows one by one).  The rows are
 * read first: the recursion reuses the statement. */
static gboolean
pooled_levels (VsTrace *trace, gint64 device_id, GArray *shifts, gint li, gint64 shift, gint64 fb,
               gint64 lb, VsTimelineBucket *out, GError **error)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (LevelRow));
  sqlite3_stmt *stmt = vs_trace_statement (trace, level_sql, error);
  gint64 w = G_GINT64_CONSTANT (1) << shift;
  int rc;

  if (stmt == NULL)
    return FALSE;
  vs_trace_bind_series (trace, stmt, device_id, 0);
  sqlite3_bind_int64 (stmt, 3, shift);
  sqlite3_bind_int64 (stmt, 4, fb);
  sqlite3_bind_int64 (stmt, 5, lb - 1);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      LevelRow r = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                     sqlite3_column_int64 (stmt, 2), sqlite3_column_int64 (stmt, 3),
                     sqlite3_column_int64 (stmt, 4), sqlite3_column_int64 (stmt, 5),
                     sqlite3_column_int64 (stmt, 6), vs_column_int (stmt, 7) };

      g_array_append_val (rows, r);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    {
      const LevelRow *r = &g_array_index (rows, LevelRow, i);
      gint64 from = vs_trace_abs (trace, r->bucket * w),
             to = vs_trace_abs (trace, (r->bucket + 1) * w);
      gint64 held;

      if (vs_framework_pools_change_within (trace, device_id, from, to))
        {
          if (!extremes_rec (trace, device_id, 0, shifts, li - 1, r->bucket * w,
                             (r->bucket + 1) * w, out, error))
            return FALSE;
          continue;
        }
      held = vs_framework_pools_reserved_before (trace, device_id, from);
      bucket_add (out, r->min_r, r->max_r, r->last_r, MAX (r->min_a - held, 0),
                  MAX (r->max_a - held, 0), MAX (r->last_a - held, 0), r->max_d);
    }
  return TRUE;
}

/* Folds the changes of [a, b) into out, using level li and finer. */
static gboolean
extremes_rec (VsTrace *trace, gint64 device_id, gint64 allocator_id, GArray *shifts, gint li,
              gint64 a, gint64 b, VsTimelineBucket *out, GError **error)
{
  sqlite3_stmt *stmt;
  gboolean pools;
  int rc;

  if (a >= b)
    return TRUE;
  if (li >= 0)
    {
      gint64 s = g_array_index (shifts, gint64, li);
      gint64 w, fb, lb;

      if (s >= 62)
        return extremes_rec (trace, device_id, allocator_id, shifts, li - 1, a, b, out, error);
      w = G_GINT64_CONSTANT (1) << s;
      fb = ceil_div (a, w);
      lb = floor_div (b, w);
      if (fb >= lb)
        return extremes_rec (trace, device_id, allocator_id, shifts, li - 1, a, b, out, error);
      if (counts_pools (trace, device_id, allocator_id))
        return pooled_levels (trace, device_id, shifts, li, s, fb, lb, out, error)
               && extremes_rec (trace, device_id, allocator_id, shifts, li - 1, a, fb * w, out,
                                error)
               && extremes_rec (trace, device_id, allocator_id, shifts, li - 1, lb * w, b, out,
                                error);
      stmt = vs_trace_series_statement (trace, level_sql, device_id, allocator_id, s, fb, error);
      if (stmt == NULL)
        return FALSE;
      sqlite3_bind_int64 (stmt, 5, lb - 1);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        bucket_add (out, sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
                    sqlite3_column_int64 (stmt, 3), sqlite3_column_int64 (stmt, 4),
                    sqlite3_column_int64 (stmt, 5), sqlite3_column_int64 (stmt, 6),
                    allocator_id != 0 ? VS_UNKNOWN : vs_column_int (stmt, 7));
      if (!vs_trace_step_done (trace, stmt, rc, error))
        return FALSE;
      return extremes_rec (trace, device_id, allocator_id, shifts, li - 1, a, fb * w, out, error)
             && extremes_rec (trace, device_id, allocator_id, shifts, li - 1, lb * w, b, out,
                              error);
    }

  stmt = vs_trace_series_statement (trace, raw_seq_sql, device_id, allocator_id,
                                    vs_trace_abs (trace, a), vs_trace_abs (trace, b), error);
  if (stmt == NULL)
    return FALSE;
  pools = counts_pools (trace, device_id, allocator_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 r = sqlite3_column_int64 (stmt, 1);
      gint64 al = allocated_of_row (trace, device_id, pools, sqlite3_column_int64 (stmt, 4),
                                    sqlite3_column_int64 (stmt, 2));

      bucket_add (out, r, r, r, al, al, al,
                  allocator_id != 0 ? VS_UNKNOWN : vs_column_int (stmt, 3));
    }
  return vs_trace_step_done (trace, stmt, rc, error);
}

gboolean
vs_series_extremes (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 from_ns,
                    gint64 to_ns, VsTimelineBucket *out, GError **error)
{
  VsSeriesPoint carry;
  GArray *shifts;
  gint64 last_r, last_a;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (from_ns > to_ns || to_ns == G_MAXINT64)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "An interval needs from <= to");
      return FALSE;
    }
  if (!check_series (trace, device_id, allocator_id, error))
    return FALSE;
  if (vs_framework_pool_is (trace, allocator_id))
    {
      /* A pool seen from below: its one bucket from its segments. */
      g_autoptr (GArray) one
          = vs_timeline_query (trace, device_id, allocator_id, from_ns, to_ns + 1, 1, error);

      if (one == NULL)
        return FALSE;
      *out = g_array_index (one, VsTimelineBucket, 0);
      out->to_ns = to_ns;
      return TRUE;
    }
  if (!vs_series_at_time (trace, device_id, allocator_id, from_ns - 1, &carry, error))
    return FALSE;
  shifts = vs_trace_level_shifts (trace, device_id, allocator_id, error);
  if (shifts == NULL)
    return FALSE;
  memset (out, 0, sizeof *out);
  out->from_ns = from_ns;
  out->to_ns = to_ns;
  bucket_start (out, &carry);
  if (!extremes_rec (trace, device_id, allocator_id, shifts, (gint)shifts->len - 1, from_ns,
                     to_ns + 1, out, error))
    return FALSE;
  /* Pieces are visited out of time order; the value at the end is the
   * state at to_ns. */
  if (!vs_series_at_time (trace, device_id, allocator_id, to_ns, &carry, error))
    return FALSE;
  last_r = carry.reserved_bytes;
  last_a = carry.allocated_bytes;
  out->last_reserved = last_r;
  out->last_allocated = last_a;
  return TRUE;
}

/* The first row of device_id's `all` series at time_ns (since start)
 * whose allocated bytes without the pools' segments are allocated, its
 * seq in *seq (left as it is when none). */
static gboolean
pooled_row_reaching (VsTrace *trace, gint64 device_id, gint64 time_ns, gint64 allocated,
                     gint64 *seq, GError **error)
{
  static const char *at_ts_sql = "SELECT seq, allocated_bytes FROM series"
                                 " WHERE device_id = ?1 AND allocator_id = ?2 AND ts = ?3"
                                 " ORDER BY seq";
  sqlite3_stmt *stmt = vs_trace_statement (trace, at_ts_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  vs_trace_bind_series (trace, stmt, device_id, 0);
  sqlite3_bind_int64 (stmt, 3, vs_trace_abs (trace, time_ns));
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 s = sqlite3_column_int64 (stmt, 0);

      if (allocated_of_row (trace, device_id, TRUE, s, sqlite3_column_int64 (stmt, 1)) == allocated)
        {
          *seq = s;
          break;
        }
    }
  return vs_trace_step_ended (trace, stmt, rc, error);
}

gboolean
vs_series_peak_between (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 from_ns,
                        gint64 to_ns, VsSeriesPoint *out, GError **error)
{
  /* The first row reaching the peak at time lo (ties broken by seq). */
  static const char *at_ts_sql = "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
                                 " AND ts = ?3 AND allocated_bytes = ?4 ORDER BY seq LIMIT 1";
  VsTimelineBucket ext;
  gint64 lo = from_ns, hi = to_ns, peak, seq = -1;
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (!vs_series_extremes (trace, device_id, allocator_id, from_ns, to_ns, &ext, error))
    return FALSE;
  if (!ext.known)
    return vs_series_at_time (trace, device_id, allocator_id, to_ns, out, error);
  peak = ext.max_allocated;
  /* Invariant: the maximum over [lo, hi] (the value entering lo included)
   * is the peak.  Halving keeps it; the value entering a right half is the
   * state at the end of the left half, already found below the peak, so
   * once lo == hi the peak is either reached by a change at lo or, only
   * when lo is from_ns, the value entering the interval.  Each probe is a
   * few summary-level reads, whatever the length of the interval. */
  while (lo < hi)
    {
      gint64 mid = lo + (hi - lo) / 2;
      VsTimelineBucket left;

      if (!vs_series_extremes (trace, device_id, allocator_id, lo, mid, &left, error))
        return FALSE;
      if (left.known && left.max_allocated == peak)
        hi = mid;
      else
        lo = mid + 1;
    }
  if (counts_pools (trace, device_id, allocator_id))
    {
      if (!pooled_row_reaching (trace, device_id, lo, peak, &seq, error))
        return FALSE;
    }
  else
    {
      stmt = vs_trace_series_statement (trace, at_ts_sql, device_id, allocator_id,
                                        vs_trace_abs (trace, lo), peak, error);
      if (stmt == NULL)
        return FALSE;
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        seq = sqlite3_column_int64 (stmt, 0);
      if (!vs_trace_step_ended (trace, stmt, rc, error))
        return FALSE;
    }
  if (seq >= 0)
    return vs_series_at_seq (trace, device_id, allocator_id, seq, out, error);
  return vs_series_at_time (trace, device_id, allocator_id, from_ns - 1, out, error);
}
