/* vs-oom.c — failed allocations with the device's state at each.
 *
 * The state is taken after the last change of the device's `all` series at
 * or before the failure's timestamp; the same step is used for the
 * allocator that failed, so both views describe one instant.
 */
#include "vs-oom.h"
#include "vs-trace-private.h"

static const char *failed_sql
    = "SELECT id, ts, device_id, ifnull(allocator_id, 0), process_id, api,"
      " requested_bytes, error, error_name, device_free_bytes,"
      " device_total_bytes, ifnull(stack_id, 0)"
      " FROM failed_alloc"
      " WHERE (?1 = 0 OR device_id = ?1) AND (?2 = 0 OR allocator_id = ?2)"
      " ORDER BY ts, id";

static void
oom_free (gpointer data)
{
  VsOom *o = data;

  g_free (o->api);
  g_free (o->error_name);
  g_free (o);
}

static void
fragmentation_unknown (VsFragmentation *f, gint64 device_id, gint64 allocator_id)
{
  f->device_id = device_id;
  f->allocator_id = allocator_id;
  f->seq = VS_UNKNOWN;
  f->time_ns = VS_UNKNOWN;
  f->reserved_bytes = f->allocated_bytes = f->free_bytes = VS_UNKNOWN;
  f->segment_count = f->segment_free_bytes = f->largest_free_bytes = VS_UNKNOWN;
}

GPtrArray *
vs_oom_list (VsTrace *trace, gint64 device_id, gint64 allocator_id, GError **error)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (oom_free);
  sqlite3_stmt *stmt;
  int rc;

  g_return_val_if_fail (trace != NULL, NULL);
  stmt = vs_trace_statement (trace, failed_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, allocator_id);
  /* Rows are read first: the state queries below reuse the connection. */
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsOom *o = g_new0 (VsOom, 1);

      o->id = sqlite3_column_int64 (stmt, 0);
      o->time_ns = vs_trace_rel (trace, sqlite3_column_int64 (stmt, 1));
      o->device_id = vs_column_int (stmt, 2);
      o->allocator_id = sqlite3_column_int64 (stmt, 3);
      o->process_id = vs_column_int (stmt, 4);
      o->api = vs_column_dup (stmt, 5);
      o->requested_bytes = vs_column_int (stmt, 6);
      o->error = vs_column_int (stmt, 7);
      o->error_name = vs_column_dup (stmt, 8);
      o->device_free_bytes = vs_column_int (stmt, 9);
      o->device_total_bytes = vs_column_int (stmt, 10);
      o->stack_id = sqlite3_column_int64 (stmt, 11);
      g_ptr_array_add (list, o);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      vs_trace_sql_error (trace, error);
      return NULL;
    }

  for (guint i = 0; i < list->len; i++)
    {
      VsOom *o = g_ptr_array_index (list, i);

      if (o->device_id == VS_UNKNOWN || vs_trace_lookup_device (trace, o->device_id) == NULL)
        {
          o->seq = VS_UNKNOWN;
          fragmentation_unknown (&o->all, o->device_id, 0);
          fragmentation_unknown (&o->allocator, o->device_id, o->allocator_id);
          continue;
        }
      o->seq = vs_trace_seq_at_time (trace, o->device_id, 0, o->time_ns, error);
      if (o->seq < 0 || !vs_fragmentation_at (trace, o->device_id, 0, o->seq, &o->all, NULL, error))
        return NULL;
      if (o->allocator_id == 0)
        o->allocator = o->all;
      else if (!vs_fragmentation_at (trace, o->device_id, o->allocator_id, o->seq, &o->allocator,
                                     NULL, error))
        return NULL;
      /* The step of the state, not of the allocator's last change. */
      o->all.seq = o->allocator.seq = o->seq;
    }
  return g_steal_pointer (&list);
}
