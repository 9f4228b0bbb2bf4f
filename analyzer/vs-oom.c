/* SPDX-License-Identifier: MIT */
/* vs-oom.c — failed allocations with the device's state at each.
 *
 * The state is taken after the last change of the device's `all` series at
 * or before the failure's timestamp; the same step is used for the
 * allocator that failed, so both views describe one instant.
 */
#include "vs-config.h"

#include "vs-oom.h"

#include <glib/gi18n-lib.h>

#include "vs-format.h"
#include "vs-framework-pools.h"
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
  if (!vs_trace_step_done (trace, stmt, rc, error))
    return NULL;

  for (guint i = 0; i < list->len; i++)
    {
      VsOom *o = g_ptr_array_index (list, i);
      gint64 pool = 0;

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
      /* A framework pool's failure (the error it raised, or its own
       * cudaMalloc failing): the pool's state, its allocated memory
       * unknown from the device level. */
      if (o->allocator_id == 0 && vs_framework_pool_failure (trace, o, &pool)
          && vs_framework_pool_is (trace, pool))
        {
          if (!vs_fragmentation_at (trace, o->device_id, pool, o->seq, &o->allocator, NULL, error))
            return NULL;
        }
      else if (o->allocator_id == 0)
        o->allocator = o->all;
      else if (!vs_fragmentation_at (trace, o->device_id, o->allocator_id, o->seq, &o->allocator,
                                     NULL, error))
        return NULL;
      /* The step of the state, not of the allocator's last change. */
      o->all.seq = o->allocator.seq = o->seq;
    }
  return g_steal_pointer (&list);
}

const char *
vs_oom_cause_name (VsOomCause cause)
{
  switch (cause)
    {
    case VS_OOM_CAUSE_DEVICE_FULL:
      return "oom-device-full";
    case VS_OOM_CAUSE_ALLOCATOR_LIMIT:
      return "oom-allocator-limit";
    case VS_OOM_CAUSE_FRAGMENTATION:
      return "oom-fragmentation";
    case VS_OOM_CAUSE_UNKNOWN:
    default:
      return "";
    }
}

/* A device-level failure (allocator 0) of o's process at or before o and
 * after the previous failure of o's allocator: PyTorch's cudaMalloc that
 * failed before it reported its own out-of-memory error. */
static const VsOom *
device_failure_before (const VsOom *o, const GPtrArray *all)
{
  const VsOom *found = NULL;

  for (guint i = 0; i < all->len; i++)
    {
      const VsOom *x = g_ptr_array_index (all, i);

      if (x->time_ns > o->time_ns)
        break;
      if (x == o || x->id == o->id)
        continue;
      if (x->allocator_id == o->allocator_id)
        found = NULL; /* an earlier failure of the allocator: start again */
      else if (x->allocator_id == 0
               && (x->process_id == o->process_id || x->process_id == VS_UNKNOWN
                   || o->process_id == VS_UNKNOWN))
        found = x;
    }
  return found;
}

VsOomCause
vs_oom_classify (VsTrace *trace, const VsOom *o, const GPtrArray *all_failures, gint64 limit_bytes,
                 char **evidence)
{
  const VsFragmentation *f = &o->allocator;
  gint64 capacity = vs_oom_capacity (trace, o);
  g_autofree char *request = vs_format_bytes (o->requested_bytes);
  g_autofree char *reserved = vs_format_bytes (MAX (f->reserved_bytes, 0));
  g_autofree char *free_in = vs_format_bytes (MAX (f->free_bytes, 0));
  g_autofree char *largest = vs_format_bytes (MAX (f->largest_free_bytes, 0));
  g_autofree char *device_free = vs_format_bytes (MAX (o->device_free_bytes, 0));
  g_autofree char *cap = vs_format_bytes (MAX (capacity, 0));
  const VsOom *cuda = all_failures != NULL && o->allocator_id != 0
                          ? device_failure_before (o, all_failures)
                          : NULL;
  char *text = NULL;
  VsOomCause cause = VS_OOM_CAUSE_UNKNOWN;

  g_return_val_if_fail (trace != NULL && o != NULL, VS_OOM_CAUSE_UNKNOWN);
  if (o->device_free_bytes != VS_UNKNOWN && o->device_free_bytes < o->requested_bytes)
    {
      cause = VS_OOM_CAUSE_DEVICE_FULL;
      if (capacity != VS_UNKNOWN)
        text = g_strdup_printf (_("CUDA reported %s free of %s when %s was requested"),
                                device_free, cap, request);
      else
        text = g_strdup_printf (_("CUDA reported %s free when %s was requested"), device_free,
                                request);
    }
  else if (cuda != NULL)
    {
      g_autofree char *asked = vs_format_bytes (cuda->requested_bytes);

      cause = VS_OOM_CAUSE_DEVICE_FULL;
      text = g_strdup_printf (_("the allocator asked CUDA for %s (%s) and CUDA had no room; "
                                "%s reserved by the allocator"),
                              asked, cuda->api != NULL ? cuda->api : "cudaMalloc", reserved);
    }
  else if (f->free_bytes != VS_UNKNOWN && f->free_bytes >= o->requested_bytes
           && f->largest_free_bytes != VS_UNKNOWN && f->largest_free_bytes < o->requested_bytes
           && f->free_bytes * 10 >= f->reserved_bytes)
    {
      cause = VS_OOM_CAUSE_FRAGMENTATION;
      text = g_strdup_printf (_("%s free inside %s reserved, but the largest free block is %s, "
                                "smaller than the %s requested"),
                              free_in, reserved, largest, request);
    }
  else if (o->allocator_id != 0 && limit_bytes != VS_UNKNOWN && f->reserved_bytes != VS_UNKNOWN
           && f->reserved_bytes + o->requested_bytes > limit_bytes)
    {
      g_autofree char *limit = vs_format_bytes (limit_bytes);

      cause = VS_OOM_CAUSE_ALLOCATOR_LIMIT;
      text = g_strdup_printf (_("%s reserved + %s requested exceed the allocator's limit of %s "
                                "(per-process memory fraction) on a %s device"),
                              reserved, request, limit, cap);
      if (o->device_free_bytes != VS_UNKNOWN)
        {
          char *more
              = capacity != VS_UNKNOWN
                    ? g_strdup_printf (_("%s; CUDA had %s free of %s"), text, device_free, cap)
                    : g_strdup_printf (_("%s; CUDA had %s free"), text, device_free);

          g_free (text);
          text = more;
        }
    }
  else if (o->allocator_id != 0
           && (o->device_free_bytes != VS_UNKNOWN
               || (vs_trace_has_device_level (trace) && capacity != VS_UNKNOWN
                   && f->reserved_bytes != VS_UNKNOWN
                   && f->reserved_bytes + o->requested_bytes <= capacity)))
    {
      cause = VS_OOM_CAUSE_ALLOCATOR_LIMIT;
      if (o->device_free_bytes != VS_UNKNOWN && capacity != VS_UNKNOWN)
        text = g_strdup_printf (_("CUDA had %s free of %s, enough for the %s requested, but the "
                                  "allocator refused at %s reserved"),
                                device_free, cap, request, reserved);
      else if (o->device_free_bytes != VS_UNKNOWN)
        text = g_strdup_printf (_("CUDA had %s free, enough for the %s requested, but the "
                                  "allocator refused at %s reserved"),
                                device_free, request, reserved);
      else
        text = g_strdup_printf (_("no CUDA allocation failed: the allocator refused %s by itself "
                                  "at %s reserved, far below the device's %s"),
                                request, reserved, cap);
    }
  else if (capacity != VS_UNKNOWN && o->all.reserved_bytes != VS_UNKNOWN
           && o->all.reserved_bytes + o->requested_bytes > capacity)
    {
      g_autofree char *all = vs_format_bytes (o->all.reserved_bytes);

      cause = VS_OOM_CAUSE_DEVICE_FULL;
      text = g_strdup_printf (_("%s reserved on the device + %s requested exceed its %s"), all,
                              request, cap);
    }
  if (evidence != NULL)
    *evidence = text;
  else
    g_free (text);
  return cause;
}

gint64
vs_oom_capacity (VsTrace *trace, const VsOom *o)
{
  const VsDeviceInfo *d;

  g_return_val_if_fail (trace != NULL && o != NULL, VS_UNKNOWN);
  d = o->device_id != VS_UNKNOWN ? vs_trace_lookup_device (trace, o->device_id) : NULL;
  /* Snapshots of some versions carry a total of 0: unknown. */
  if (o->device_total_bytes > 0)
    return o->device_total_bytes;
  return d != NULL && d->total_bytes > 0 ? d->total_bytes : VS_UNKNOWN;
}

char *
vs_oom_torch_size (gint64 bytes)
{
  /* c10/cuda/CUDACachingAllocator.cpp format_size(): each unit up to and
   * including 1024 of the next smaller one. */
  if (bytes == VS_UNKNOWN)
    return g_strdup ("-");
  if (bytes <= 1024)
    return g_strdup_printf ("%" G_GINT64_FORMAT " bytes", bytes);
  if (bytes <= 1048576)
    return g_strdup_printf ("%.2f KiB", (double)bytes / 1024.0);
  if (bytes <= 1073741824)
    return g_strdup_printf ("%.2f MiB", (double)bytes / 1048576.0);
  return g_strdup_printf ("%.2f GiB", (double)bytes / 1073741824.0);
}
