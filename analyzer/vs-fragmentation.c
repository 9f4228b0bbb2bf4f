/* vs-fragmentation.c — free memory inside reserved memory at an instant.
 *
 * Segments (level-3 blocks) live at the step are merged into extents when
 * they touch (an expandable segment is mapped in adjacent chunks), then the
 * live allocator blocks (level 2, at their rounded size when known) are
 * swept through each extent in address order; what they leave uncovered are
 * the free gaps.
 */
#include "vs-fragmentation.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

#include <string.h>

typedef struct
{
  gint64 id, allocator_id, lo, hi;
} Span;

static const char *segments_sql
    = "SELECT id, allocator_id, address, bytes FROM block"
      " WHERE device_id = ?1 AND level = 3 AND (?2 = 0 OR allocator_id = ?2)"
      " AND alloc_seq <= ?3 AND (free_seq IS NULL OR free_seq > ?3)"
      " ORDER BY allocator_id, address, id";

static const char *blocks_bins_sql
    = "SELECT b.id, b.allocator_id, b.address,"
      " b.address + coalesce(b.block_bytes, b.bytes)"
      " FROM (WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv"
      " WHERE l < 47) SELECT l FROM lv) lv JOIN block b INDEXED BY block_bin"
      " ON b.device_id = ?1 AND b.span_bin = (lv.l << 48) | (?3 >> lv.l)"
      " WHERE b.alloc_seq <= ?3 AND (b.free_seq IS NULL OR b.free_seq > ?3)"
      " AND b.level = 2"
      " AND (?2 = 0 OR b.allocator_id = ?2)"
      " ORDER BY b.allocator_id, b.address, b.id";

static const char *blocks_plain_sql
    = "SELECT id, allocator_id, address, address + coalesce(block_bytes, bytes)"
      " FROM block WHERE device_id = ?1 AND level = 2"
      " AND (?2 = 0 OR allocator_id = ?2)"
      " AND alloc_seq <= ?3 AND (free_seq IS NULL OR free_seq > ?3)"
      " ORDER BY allocator_id, address, id";

/* A compacted trace (schema 5): live blocks through block.live_seq. */
static const char *blocks_chunked_sql
    = "SELECT id, allocator_id, address, address + coalesce(block_bytes, bytes)"
      " FROM block WHERE live_seq = ?3 AND device_id = ?1 AND level = 2"
      " AND (?2 = 0 OR allocator_id = ?2)"
      " ORDER BY allocator_id, address, id";

/* Refuses sizes whose sums do not fit 64 bits; returns FALSE. */
static gboolean
sizes_overflow (VsTrace *trace, GError **error)
{
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
               "%s is inconsistent: its sizes add up to more than 2^63 bytes", trace->path);
  return FALSE;
}

static GArray *
read_spans (VsTrace *trace, const char *sql, gint64 device_id, gint64 allocator_id, gint64 seq,
            gboolean is_segment, GError **error)
{
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (Span));
  sqlite3_stmt *stmt = vs_trace_statement (trace, sql, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, seq);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Span s;

      s.id = sqlite3_column_int64 (stmt, 0);
      s.allocator_id = sqlite3_column_int64 (stmt, 1);
      s.lo = sqlite3_column_int64 (stmt, 2);
      s.hi = sqlite3_column_int64 (stmt, 3);
      /* The sweep below subtracts and adds addresses: a range must lie in
       * 0..2^63 (device addresses are far below). */
      if (s.lo < 0 || s.hi < 0 || (is_segment && __builtin_add_overflow (s.hi, s.lo, &s.hi))
          || s.hi < s.lo || sqlite3_column_type (stmt, 3) != SQLITE_INTEGER)
        {
          sqlite3_reset (stmt);
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                       "%s is inconsistent: block %" G_GINT64_FORMAT
                       " has a negative address or size, or ends past 2^63",
                       trace->path, s.id);
          return NULL;
        }
      g_array_append_val (spans, s);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      return NULL;
    }
  return g_steal_pointer (&spans);
}

/* Whether allocator (of the device) holds free memory the segment sweep
 * cannot locate: reserved above allocated but no live segment. */
static gboolean
has_unlocated_free (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                    GArray *segments, gboolean *result, GError **error)
{
  VsSeriesPoint p;

  for (guint i = 0; i < segments->len; i++)
    if (g_array_index (segments, Span, i).allocator_id == allocator_id)
      {
        *result = FALSE;
        return TRUE;
      }
  if (!vs_series_at_seq (trace, device_id, allocator_id, seq, &p, error))
    return FALSE;
  *result = p.reserved_bytes > p.allocated_bytes;
  return TRUE;
}

gboolean
vs_fragmentation_at (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                     VsFragmentation *out, GArray *gaps, GError **error)
{
  g_autoptr (GArray) segments = NULL;
  g_autoptr (GArray) blocks = NULL;
  VsSeriesPoint point;
  gboolean unknown = FALSE;
  guint bi = 0;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (!vs_series_at_seq (trace, device_id, allocator_id, seq, &point, error))
    return FALSE;
  memset (out, 0, sizeof *out);
  out->device_id = device_id;
  out->allocator_id = allocator_id;
  out->seq = point.seq;
  out->time_ns = point.time_ns;
  out->reserved_bytes = point.reserved_bytes;
  out->allocated_bytes = point.allocated_bytes;
  if (__builtin_sub_overflow (point.reserved_bytes, point.allocated_bytes, &out->free_bytes))
    return sizes_overflow (trace, error);

  segments = read_spans (trace, segments_sql, device_id, allocator_id, seq, TRUE, error);
  if (segments == NULL)
    return FALSE;
  blocks = read_spans (trace,
                       vs_trace_is_compacted (trace)        ? blocks_chunked_sql
                       : vs_trace_can_use_bins (trace, seq) ? blocks_bins_sql
                                                            : blocks_plain_sql,
                       device_id, allocator_id, seq, FALSE, error);
  if (blocks == NULL)
    return FALSE;

  /* Both lists are sorted by (allocator, address): one merge pass. */
  for (guint si = 0; si < segments->len;)
    {
      Span ext = g_array_index (segments, Span, si);
      gint64 cursor;

      for (si++; si < segments->len; si++)
        {
          const Span *n = &g_array_index (segments, Span, si);

          if (n->allocator_id != ext.allocator_id || n->lo > ext.hi)
            break;
          ext.hi = MAX (ext.hi, n->hi);
        }
      out->segment_count++;
      cursor = ext.lo;
      while (bi < blocks->len)
        {
          const Span *b = &g_array_index (blocks, Span, bi);

          if (b->allocator_id < ext.allocator_id
              || (b->allocator_id == ext.allocator_id && b->lo < ext.lo))
            {
              bi++; /* a block outside every live segment */
              continue;
            }
          if (b->allocator_id != ext.allocator_id || b->lo >= ext.hi)
            break;
          if (b->lo > cursor)
            {
              VsFreeGap gap = { ext.id, cursor, b->lo - cursor };

              if (__builtin_add_overflow (out->segment_free_bytes, gap.bytes,
                                          &out->segment_free_bytes))
                return sizes_overflow (trace, error);
              out->largest_free_bytes = MAX (out->largest_free_bytes, gap.bytes);
              if (gaps != NULL)
                g_array_append_val (gaps, gap);
            }
          cursor = MAX (cursor, MIN (b->hi, ext.hi));
          bi++;
        }
      if (ext.hi > cursor)
        {
          VsFreeGap gap = { ext.id, cursor, ext.hi - cursor };

          if (__builtin_add_overflow (out->segment_free_bytes, gap.bytes, &out->segment_free_bytes))
            return sizes_overflow (trace, error);
          out->largest_free_bytes = MAX (out->largest_free_bytes, gap.bytes);
          if (gaps != NULL)
            g_array_append_val (gaps, gap);
        }
    }

  /* Free memory outside known segments (a pool's) cannot be located. */
  if (allocator_id != 0)
    {
      if (!has_unlocated_free (trace, device_id, allocator_id, seq, segments, &unknown, error))
        return FALSE;
    }
  else
    {
      const GPtrArray *allocators = vs_trace_get_allocators (trace);

      for (guint i = 0; i < allocators->len && !unknown; i++)
        {
          const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

          if (a->device_id == device_id
              && !has_unlocated_free (trace, device_id, a->id, seq, segments, &unknown, error))
            return FALSE;
        }
    }
  if (unknown)
    out->largest_free_bytes = VS_UNKNOWN;
  return TRUE;
}

GArray *
vs_fragmentation_segments (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                           GError **error)
{
  static const char *pieces_sql
      = "SELECT id, allocator_id, address, bytes, alloc_ts FROM block"
        " WHERE device_id = ?1 AND level = 3 AND (?2 = 0 OR allocator_id = ?2)"
        " AND alloc_seq <= ?3 AND (free_seq IS NULL OR free_seq > ?3)"
        " ORDER BY allocator_id, address, id";
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (VsSegment));
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, pieces_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  sqlite3_bind_int64 (stmt, 3, seq);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      gint64 alloc = sqlite3_column_int64 (stmt, 1);
      gint64 lo = sqlite3_column_int64 (stmt, 2);
      gint64 hi = lo + sqlite3_column_int64 (stmt, 3);
      VsSegment *last = out->len > 0 ? &g_array_index (out, VsSegment, out->len - 1) : NULL;

      /* The same merge as vs_fragmentation_at(): touching pieces of one
       * allocator (an expandable segment's mapped chunks) are one extent,
       * named by its first piece, as VsFreeGap.segment_id is. */
      if (last != NULL && last->allocator_id == alloc && lo <= last->address + last->bytes)
        {
          last->bytes = MAX (last->address + last->bytes, hi) - last->address;
          last->pieces++;
          continue;
        }
      {
        VsSegment seg
            = { id, alloc, lo, hi - lo, 1, vs_trace_rel (trace, vs_column_int (stmt, 4)) };

        g_array_append_val (out, seg);
      }
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      return NULL;
    }
  return g_steal_pointer (&out);
}

typedef struct
{
  gint64 bucket;
  gint64 bound; /* max_reserved − min_allocated: no row of the bucket exceeds it */
} Bound;

static gint
bound_cmp (gconstpointer a, gconstpointer b)
{
  const Bound *x = a, *y = b;

  if (x->bound != y->bound)
    return x->bound > y->bound ? -1 : 1;
  return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* The seq of the largest reserved − allocated, reading the series rows
 * of only the summary buckets whose bound could beat the best found so
 * far (largest bound first).  Sets *seq to 0 when there are no levels or
 * no rows. */
static gboolean
worst_by_levels (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 *seq, GError **error)
{
  static const char *levels_sql = "SELECT bucket, max_reserved - min_allocated FROM series_level"
                                  " WHERE device_id = ?1 AND allocator_id = ?2 AND shift = ?3";
  static const char *rows_sql
      = "SELECT seq, reserved_bytes - allocated_bytes FROM series"
        " WHERE device_id = ?1 AND allocator_id = ?2 AND ts >= ?3 AND ts < ?4";
  GArray *shifts = vs_trace_level_shifts (trace, device_id, allocator_id, error);
  g_autoptr (GArray) bounds = NULL;
  gint64 duration = vs_trace_get_duration_ns (trace), start = vs_trace_get_start_abs_ns (trace);
  gint64 shift = -1, best = G_MININT64;
  sqlite3_stmt *stmt;
  int rc;

  *seq = 0;
  if (shifts == NULL)
    return FALSE;
  if (shifts->len == 0)
    return TRUE;
  /* The finest level with at most a few thousand buckets. */
  for (guint i = 0; i < shifts->len && shift < 0; i++)
    if ((duration >> g_array_index (shifts, gint64, i)) < 4096)
      shift = g_array_index (shifts, gint64, i);
  if (shift < 0)
    shift = g_array_index (shifts, gint64, shifts->len - 1);

  stmt = vs_trace_statement (trace, levels_sql, error);
  if (stmt == NULL)
    return FALSE;
  vs_trace_bind_series (trace, stmt, device_id, allocator_id);
  sqlite3_bind_int64 (stmt, 3, shift);
  bounds = g_array_new (FALSE, FALSE, sizeof (Bound));
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Bound b = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1) };

      g_array_append_val (bounds, b);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
  g_array_sort (bounds, bound_cmp);
  for (guint i = 0; i < bounds->len; i++)
    {
      const Bound *b = &g_array_index (bounds, Bound, i);

      /* Equal bounds may hold an earlier step of the same value; with
       * nothing free anywhere the answer is the series' first row. */
      if (b->bound < best || (b->bound == best && best <= 0))
        break;
      stmt = vs_trace_statement (trace, rows_sql, error);
      if (stmt == NULL)
        return FALSE;
      vs_trace_bind_series (trace, stmt, device_id, allocator_id);
      sqlite3_bind_int64 (stmt, 3, start + (b->bucket << shift));
      sqlite3_bind_int64 (stmt, 4, start + ((b->bucket + 1) << shift));
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          gint64 s = sqlite3_column_int64 (stmt, 0), v = sqlite3_column_int64 (stmt, 1);

          if (v > best || (v == best && s < *seq))
            {
              best = v;
              *seq = s;
            }
        }
      sqlite3_reset (stmt);
      if (rc != SQLITE_DONE)
        return vs_trace_sql_error (trace, error);
    }
  if (best <= 0)
    {
      /* Nothing free anywhere: the first step of the series. */
      static const char *first_sql
          = "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
            " ORDER BY ts, seq LIMIT 1";

      stmt = vs_trace_statement (trace, first_sql, error);
      if (stmt == NULL)
        return FALSE;
      vs_trace_bind_series (trace, stmt, device_id, allocator_id);
      rc = sqlite3_step (stmt);
      *seq = rc == SQLITE_ROW ? sqlite3_column_int64 (stmt, 0) : 0;
      sqlite3_reset (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vs_trace_sql_error (trace, error);
    }
  return TRUE;
}

gboolean
vs_fragmentation_worst (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsFragmentation *out,
                        GError **error)
{
  static const char *worst_sql = "SELECT seq FROM series WHERE device_id = ?1 AND allocator_id = ?2"
                                 " ORDER BY reserved_bytes - allocated_bytes DESC, ts, seq LIMIT 1";
  sqlite3_stmt *stmt;
  gint64 seq = 0;
  int rc;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (!worst_by_levels (trace, device_id, allocator_id, &seq, error))
    return FALSE;
  if (seq == 0)
    {
      /* No summary levels (a small trace): one pass over the series. */
      stmt = vs_trace_statement (trace, worst_sql, error);
      if (stmt == NULL)
        return FALSE;
      vs_trace_bind_series (trace, stmt, device_id, allocator_id);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        seq = sqlite3_column_int64 (stmt, 0);
      sqlite3_reset (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return vs_trace_sql_error (trace, error);
    }
  return vs_fragmentation_at (trace, device_id, allocator_id, seq, out, NULL, error);
}
