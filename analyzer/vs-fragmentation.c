/* SPDX-License-Identifier: MIT */
/* vs-fragmentation.c — free memory inside reserved memory at an instant.
 *
 * Segments (level-3 blocks) live at the step are merged into extents when
 * they are touching mapped pieces of one expandable segment (segment_map
 * events); segments of their own (segment_alloc, one cudaMalloc each) are
 * never merged, even where CUDA placed them end to end, since no block
 * spans two of them.  Then the
 * live allocator blocks (level 2, at their rounded size when known) are
 * swept through each extent in address order; what they leave uncovered are
 * the free gaps.
 */
#include "vs-fragmentation.h"
#include "vs-blocks-private.h"
#include "vs-framework-pools.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"

#include <string.h>

typedef struct
{
  gint64 id, allocator_id, lo, hi;
  gboolean mapped; /* a mapped piece of an expandable segment */
} Span;

/* Column 4: whether the piece was mapped (segment_map,
 * VS_ALLOC_OP_SEGMENT_MAP, or what a partial segment_unmap left of one: a
 * block the unmap event begins) rather than allocated whole
 * (segment_alloc). */
static const char *segments_sql
    = "SELECT id, allocator_id, address, bytes,"
      " ifnull((SELECT op IN (6, 7) FROM alloc_event WHERE alloc_event.id = block.alloc_event_id), "
      "0)"
      " FROM block"
      " WHERE device_id = ?1 AND level = 3 AND (?2 = 0 OR allocator_id = ?2)"
      " AND alloc_seq <= ?3 AND (free_seq IS NULL OR free_seq > ?3)"
      " ORDER BY allocator_id, address, id";

/* Whether piece n continues extent ext (n follows it in address order):
 * both mapped pieces of one allocator's expandable segment, touching or
 * overlapping. */
static gboolean
continues_extent (const Span *ext, const Span *n)
{
  return n->allocator_id == ext->allocator_id && ext->mapped && n->mapped && n->lo <= ext->hi;
}

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
  sqlite3_stmt *stmt = vs_blocks_live_statement (trace, sql, device_id, allocator_id, seq, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Span s;

      s.id = sqlite3_column_int64 (stmt, 0);
      s.allocator_id = sqlite3_column_int64 (stmt, 1);
      s.lo = sqlite3_column_int64 (stmt, 2);
      s.hi = sqlite3_column_int64 (stmt, 3);
      s.mapped = is_segment && sqlite3_column_int (stmt, 4) != 0;
      /* The sweep below subtracts and adds addresses: a range must lie in
       * 0..2^63 (device addresses are far below). */
      if (s.lo < 0 || s.hi < 0 || (is_segment && __builtin_add_overflow (s.hi, s.lo, &s.hi))
          || s.hi < s.lo || sqlite3_column_type (stmt, 3) != SQLITE_INTEGER)
        {
          vs_trace_corrupt_error (
              trace, stmt, error,
              "block %" G_GINT64_FORMAT " has a negative address or size, or ends past 2^63", s.id);
          return NULL;
        }
      g_array_append_val (spans, s);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
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
  /* A pool seen from the device level: what it handed out is unknown. */
  *result = p.allocated_bytes != VS_UNKNOWN ? p.reserved_bytes > p.allocated_bytes
                                            : p.reserved_bytes > 0;
  return TRUE;
}

/* Starts *out at the step of series (device_id, series_id) at or before
 * seq, as allocator_id's state: zeroed, its ids, the step's seq and time
 * (and the step itself in *point). */
static gboolean
state_start (VsTrace *trace, gint64 device_id, gint64 series_id, gint64 allocator_id, gint64 seq,
             VsSeriesPoint *point, VsFragmentation *out, GError **error)
{
  if (!vs_series_at_seq (trace, device_id, series_id, seq, point, error))
    return FALSE;
  memset (out, 0, sizeof *out);
  out->device_id = device_id;
  out->allocator_id = allocator_id;
  out->seq = point->seq;
  out->time_ns = point->time_ns;
  return TRUE;
}

/* A framework pool seen only from the device level (vs-framework-pools.h)
 * after step seq: its segments' bytes reserved, what it handed out inside
 * them unknown, so its free memory and largest free block too. */
static gboolean
pool_at (VsTrace *trace, gint64 device_id, gint64 pool_id, gint64 seq, VsFragmentation *out,
         GError **error)
{
  VsSeriesPoint point;

  /* The device's step at or before seq, for its time. */
  if (!state_start (trace, device_id, 0, pool_id, seq, &point, out, error))
    return FALSE;
  out->reserved_bytes = vs_framework_pool_reserved_at (trace, pool_id, seq);
  out->allocated_bytes = out->free_bytes = out->largest_free_bytes = VS_UNKNOWN;
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
  if (vs_framework_pool_is (trace, allocator_id))
    return pool_at (trace, device_id, allocator_id, seq, out, error);
  if (!state_start (trace, device_id, allocator_id, allocator_id, seq, &point, out, error))
    return FALSE;
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

          if (!continues_extent (&ext, n))
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

      /* A pool seen from the device level has no known layout. */
      unknown = vs_framework_pools_reserved_at (trace, device_id, seq) > 0;
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
      = "SELECT id, allocator_id, address, bytes, alloc_ts,"
        " ifnull((SELECT op IN (6, 7) FROM alloc_event WHERE alloc_event.id = "
        "block.alloc_event_id), 0)"
        " FROM block WHERE device_id = ?1 AND level = 3 AND (?2 = 0 OR allocator_id = ?2)"
        " AND alloc_seq <= ?3 AND (free_seq IS NULL OR free_seq > ?3)"
        " ORDER BY allocator_id, address, id";
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (VsSegment));
  Span ext = { 0 }; /* the extent out's last segment covers */
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_blocks_live_statement (trace, pieces_sql, device_id, allocator_id, seq, error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      gint64 alloc = sqlite3_column_int64 (stmt, 1);
      gint64 lo = sqlite3_column_int64 (stmt, 2);
      gint64 hi = lo + sqlite3_column_int64 (stmt, 3);
      Span piece = { id, alloc, lo, hi, sqlite3_column_int (stmt, 5) != 0 };
      VsSegment *last = out->len > 0 ? &g_array_index (out, VsSegment, out->len - 1) : NULL;

      /* The same merge as vs_fragmentation_at(): touching mapped pieces
       * of one allocator's expandable segment are one extent, named by its
       * first piece, as VsFreeGap.segment_id is. */
      if (last != NULL && continues_extent (&ext, &piece))
        {
          ext.hi = MAX (ext.hi, hi);
          last->bytes = ext.hi - last->address;
          last->pieces++;
          continue;
        }
      ext = piece;
      {
        VsSegment seg
            = { id, alloc, lo, hi - lo, 1, vs_trace_rel (trace, vs_column_int (stmt, 4)) };

        g_array_append_val (out, seg);
      }
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&out);
}

/* Requests the free blocks could not serve: each segment taken (its
 * first step) and each failed request (at its time, after every step of
 * that time).  PyTorch's 2 MiB segments are its small pool's, which only
 * requests of at most 1 MiB use: free memory of the large pool never
 * serves those, so their growth is not fragmentation's doing. */
static const char *missed_sql
    = "SELECT alloc_ts, alloc_seq FROM block WHERE device_id = ?1 AND level = 3"
      " AND (?2 = 0 OR allocator_id = ?2) AND alloc_seq IS NOT NULL AND alloc_ts IS NOT NULL"
      " AND NOT (bytes = 2097152"
      "  AND allocator_id IN (SELECT id FROM allocator WHERE kind = 'pytorch'))"
      " UNION ALL"
      " SELECT ts, 9223372036854775807 FROM failed_alloc WHERE device_id = ?1"
      " AND (?2 = 0 OR allocator_id = ?2)";

/* The series row just before (ts, seq), its free memory inside reserved:
 * column 2 less column 3 (allocated bytes), taken as
 * vs_series_at_seq() takes them where they count a framework pool's
 * segments. */
static const char *before_sql
    = "SELECT seq, reserved_bytes, allocated_bytes FROM series"
      " WHERE device_id = ?1 AND allocator_id = ?2 AND ts <= ?3 AND NOT (ts = ?3 AND seq >= ?4)"
      " ORDER BY ts DESC, seq DESC LIMIT 1";

/* The step just before a missed request with the most free memory inside
 * reserved (the earliest of equals); 0 when none had any free. */
static gboolean
worst_missed (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 *seq, GError **error)
{
  g_autoptr (GArray) missed = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  gboolean pools = allocator_id == 0 && vs_framework_pools_hold_segments (trace, device_id);
  gint64 best = 0;
  sqlite3_stmt *stmt;
  int rc;

  *seq = 0;
  stmt = vs_trace_statement (trace, missed_sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 at[2] = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1) };

      g_array_append_vals (missed, at, 1);
    }
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return FALSE;
  for (guint i = 0; i < missed->len; i++)
    {
      const gint64 *at = (const gint64 *)(gpointer)(missed->data + i * sizeof (gint64) * 2);

      stmt = vs_trace_series_statement (trace, before_sql, device_id, allocator_id, at[0], at[1],
                                        error);
      if (stmt == NULL)
        return FALSE;
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          gint64 s = sqlite3_column_int64 (stmt, 0), v = sqlite3_column_int64 (stmt, 1);
          gint64 allocated = sqlite3_column_int64 (stmt, 2);

          if (pools)
            allocated = MAX (allocated - vs_framework_pools_reserved_at (trace, device_id, s), 0);
          v -= allocated;

          if (v > best || (v == best && v > 0 && s < *seq))
            {
              best = v;
              *seq = s;
            }
        }
      if (!vs_trace_step_ended (trace, stmt, rc, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
vs_fragmentation_worst (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsFragmentation *out,
                        GError **error)
{
  gint64 seq = 0;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  if (!worst_missed (trace, device_id, allocator_id, &seq, error))
    return FALSE;
  if (seq == 0)
    {
      memset (out, 0, sizeof *out);
      out->device_id = device_id;
      out->allocator_id = allocator_id;
      return TRUE;
    }
  return vs_fragmentation_at (trace, device_id, allocator_id, seq, out, NULL, error);
}
