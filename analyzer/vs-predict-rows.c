/* SPDX-License-Identifier: MIT */
/* vs-predict-rows.c — the rows of one allocator's history (its allocations
 * and completed frees, alloc_event by id), handed over in id order (see
 * vs-predict-private.h).
 *
 * Decoding the rows is most of the cost of reading a history: a large
 * history of a trace on disk is cut into ranges of ids that several
 * threads decode at once, each on a read-only connection of its own, while
 * the caller takes the decoded ranges in order.  Workers stay at most a
 * few ranges ahead of the caller, so memory stays bounded.  A small
 * history, a trace followed while it is recorded (its connection reads a
 * private copy), one machine core, or a file no second connection can
 * open, is read on the trace's own connection.
 */
#include "vs-predict-private.h"

/* Ids per range (a history of fewer than four ranges is read on one
 * thread), and the most threads. */
#define RANGE_IDS 131072
#define MAX_WORKERS 8

/* vs_predict_rows_set_parallel(): the tests' settings. */
static gint64 range_ids = RANGE_IDS;
static guint forced_workers;
static gint parallel_reads;

static const char *rows_sql
    = "SELECT op, address, requested_bytes, stream, stack_id, id, ts FROM alloc_event"
      " WHERE allocator_id = ?1 AND op IN (1, 3) AND id BETWEEN ?2 AND ?3 ORDER BY id";
static const char *span_sql = "SELECT min(id), max(id) FROM alloc_event";

static void
decode (sqlite3_stmt *stmt, VsPredictRow *r)
{
  r->op = sqlite3_column_int (stmt, 0);
  r->address = sqlite3_column_int64 (stmt, 1);
  r->size = sqlite3_column_int64 (stmt, 2);
  r->stream = vs_column_int (stmt, 3);
  r->stack_id = sqlite3_column_int64 (stmt, 4);
  r->id = sqlite3_column_int64 (stmt, 5);
  r->ts = sqlite3_column_int64 (stmt, 6);
}

/* Binds and steps stmt over the ids lo to hi of allocator_id, calling
 * func. */
static int
step_range (sqlite3_stmt *stmt, gint64 allocator_id, gint64 lo, gint64 hi, VsPredictRowFunc func,
            gpointer data, gboolean *func_ok, GError **error)
{
  int rc;

  sqlite3_bind_int64 (stmt, 1, allocator_id);
  sqlite3_bind_int64 (stmt, 2, lo);
  sqlite3_bind_int64 (stmt, 3, hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsPredictRow r;
      decode (stmt, &r);
      if (!(*func_ok = func (&r, data, error)))
        break;
    }
  sqlite3_reset (stmt);
  return rc;
}

typedef struct
{
  GArray *rows; /* VsPredictRow; NULL once taken */
  gboolean done;
  char *failure; /* SQLite's message, where decoding failed */
} Range;

typedef struct
{
  GMutex lock;
  GCond changed;
  Range *ranges;
  gint64 n_ranges, next, taken, lo, allocator_id;
  gint64 ahead; /* ranges a worker may decode past the one the caller takes */
  gboolean stop;
} Shared;

typedef struct
{
  Shared *s;
  sqlite3 *db;
  sqlite3_stmt *stmt;
} Worker;

static gboolean
append_row (const VsPredictRow *r, gpointer data, GError **error)
{
  (void)error;
  g_array_append_val ((GArray *)data, *r);
  return TRUE;
}

static gpointer
work (gpointer data)
{
  Worker *w = data;
  Shared *s = w->s;

  for (;;)
    {
      gint64 k;
      gboolean ok;
      g_mutex_lock (&s->lock);
      while (!s->stop && s->next < s->n_ranges && s->next >= s->taken + s->ahead)
        g_cond_wait (&s->changed, &s->lock);
      k = s->stop || s->next >= s->n_ranges ? -1 : s->next++;
      g_mutex_unlock (&s->lock);
      if (k < 0)
        return NULL;
      GArray *rows = g_array_sized_new (FALSE, FALSE, sizeof (VsPredictRow), range_ids / 2);
      int rc = step_range (w->stmt, s->allocator_id, s->lo + k * range_ids,
                           s->lo + (k + 1) * range_ids - 1, append_row, rows, &ok, NULL);
      g_mutex_lock (&s->lock);
      s->ranges[k].rows = rows;
      if (rc != SQLITE_DONE)
        s->ranges[k].failure = g_strdup (sqlite3_errmsg (w->db));
      s->ranges[k].done = TRUE;
      g_cond_broadcast (&s->changed);
      g_mutex_unlock (&s->lock);
    }
}

/* A read-only connection to file with rows_sql prepared, FALSE when none
 * can be made (the caller then reads on the trace's connection). */
static gboolean
open_worker (const char *file, gboolean immutable, Worker *w)
{
  g_autofree char *uri = NULL;
  int flags = SQLITE_OPEN_READONLY;

  if (immutable)
    {
      g_autofree char *escaped = g_uri_escape_string (file, "/", FALSE);
      uri = g_strconcat ("file:", escaped, "?immutable=1", NULL);
      flags |= SQLITE_OPEN_URI;
    }
  if (vs_trace_sqlite_open (uri != NULL ? uri : file, &w->db, flags) != SQLITE_OK
      || sqlite3_prepare_v2 (w->db, rows_sql, -1, &w->stmt, NULL) != SQLITE_OK)
    {
      g_clear_pointer (&w->db, sqlite3_close_v2);
      return FALSE;
    }
  return TRUE;
}

static void
close_worker (Worker *w)
{
  g_clear_pointer (&w->stmt, sqlite3_finalize);
  g_clear_pointer (&w->db, sqlite3_close_v2);
}

/* Takes the decoded ranges in order, the workers running. */
static gboolean
take_ranges (Shared *s, VsPredictRowFunc func, gpointer data, GError **error)
{
  for (gint64 k = 0; k < s->n_ranges; k++)
    {
      g_autoptr (GArray) rows = NULL;
      g_autofree char *failure = NULL;
      g_mutex_lock (&s->lock);
      while (!s->ranges[k].done)
        g_cond_wait (&s->changed, &s->lock);
      rows = g_steal_pointer (&s->ranges[k].rows);
      failure = g_steal_pointer (&s->ranges[k].failure);
      s->taken = k + 1;
      g_cond_broadcast (&s->changed);
      g_mutex_unlock (&s->lock);
      if (failure != NULL)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_FAILED,
                       "reading the allocation history failed: %s", failure);
          return FALSE;
        }
      for (guint i = 0; i < rows->len; i++)
        if (!func (&g_array_index (rows, VsPredictRow, i), data, error))
          return FALSE;
    }
  return TRUE;
}

/* Reads [lo, hi] on n_workers threads; *used FALSE (nothing read) when
 * the connections cannot be made. */
static gboolean
read_parallel (VsTrace *trace, gint64 allocator_id, gint64 lo, gint64 hi, guint n_workers,
               VsPredictRowFunc func, gpointer data, gboolean *used, GError **error)
{
  const char *file = sqlite3_db_filename (trace->db, "main");
  Worker workers[MAX_WORKERS] = { { 0 } };
  GThread *threads[MAX_WORKERS] = { 0 };
  Shared s = { 0 };
  gboolean immutable
      = sqlite3_db_readonly (trace->db, "main") == 1 && sqlite3_uri_boolean (file, "immutable", 0);
  gboolean ok;

  *used = FALSE;
  for (guint i = 0; i < n_workers; i++)
    {
      workers[i].s = &s;
      if (!open_worker (file, immutable, &workers[i]))
        {
          for (guint j = 0; j < i; j++)
            close_worker (&workers[j]);
          return TRUE;
        }
    }
  *used = TRUE;
  g_atomic_int_inc (&parallel_reads);
  g_mutex_init (&s.lock);
  g_cond_init (&s.changed);
  s.lo = lo;
  s.allocator_id = allocator_id;
  s.n_ranges = (hi - lo) / range_ids + 1;
  s.ranges = g_new0 (Range, s.n_ranges);
  s.ahead = 2 * n_workers;
  for (guint i = 0; i < n_workers; i++)
    threads[i] = g_thread_new ("vs-predict-rows", work, &workers[i]);
  ok = take_ranges (&s, func, data, error);
  g_mutex_lock (&s.lock);
  s.stop = TRUE;
  g_cond_broadcast (&s.changed);
  g_mutex_unlock (&s.lock);
  for (guint i = 0; i < n_workers; i++)
    {
      g_thread_join (threads[i]);
      close_worker (&workers[i]);
    }
  for (gint64 k = 0; k < s.n_ranges; k++)
    {
      g_clear_pointer (&s.ranges[k].rows, g_array_unref);
      g_free (s.ranges[k].failure);
    }
  g_free (s.ranges);
  g_mutex_clear (&s.lock);
  g_cond_clear (&s.changed);
  return ok;
}

gboolean
vs_predict_rows_read (VsTrace *trace, gint64 allocator_id, VsPredictRowFunc func, gpointer data,
                      GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, span_sql, error);
  gint64 lo, hi;
  gboolean func_ok = TRUE;
  int rc;

  if (stmt == NULL)
    return FALSE;
  rc = sqlite3_step (stmt);
  lo = rc == SQLITE_ROW ? sqlite3_column_int64 (stmt, 0) : 0;
  hi = rc == SQLITE_ROW ? sqlite3_column_int64 (stmt, 1) : -1;
  if (!vs_trace_step_ended (trace, stmt, rc, error))
    return FALSE;
  if (hi < lo)
    return TRUE;
  guint n_workers
      = forced_workers > 0 ? forced_workers : MIN ((guint)g_get_num_processors (), MAX_WORKERS);
  const char *file = sqlite3_db_filename (trace->db, "main");
  if (!trace->live && n_workers >= 2 && hi - lo >= 4 * range_ids && file != NULL && *file)
    {
      gboolean used;
      gboolean ok
          = read_parallel (trace, allocator_id, lo, hi, n_workers, func, data, &used, error);
      if (used)
        return ok;
    }
  stmt = vs_trace_statement (trace, rows_sql, error);
  if (stmt == NULL)
    return FALSE;
  rc = step_range (stmt, allocator_id, lo, hi, func, data, &func_ok, error);
  if (!func_ok)
    return FALSE;
  return rc == SQLITE_DONE || vs_trace_sql_error (trace, error);
}

void
vs_predict_rows_set_parallel (gint64 ids, guint workers)
{
  g_return_if_fail (ids >= 1 && workers <= MAX_WORKERS);
  range_ids = ids;
  forced_workers = workers;
}

guint
vs_predict_rows_get_parallel_reads (void)
{
  return (guint)g_atomic_int_get (&parallel_reads);
}
