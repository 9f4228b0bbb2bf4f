/* SPDX-License-Identifier: MIT */
/* vs-window-rounds.c — the window applied while the program runs (see
 * vs-window-rounds.h). */
#include "vs-window-rounds.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "vs-clock.h"
#include "vs-merge-append.h"
#include "vs-spool-run.h"
#include "vs-spool-files.h"
#include "vs-symbolize.h"
#include "vs-trace-window.h"

/* The newest event each input held at the last round. */
typedef struct
{
  char *path;
  int64_t newest;
  bool tied; /* an import tied to its process and GPUs */
} Seen;

struct VsWindowRounds
{
  Seen *seen;
  size_t nseen;
  int64_t newest; /* the newest event of any input: the run's now */
  char *spool, *live;
  int64_t window_ns, interval_ms, lag_ns;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  atomic_bool stop;
  VsMergeAppend *app;
  VsWindowRoundsStats st;
};

static int64_t
env_ms (const char *name, int64_t fallback)
{
  const char *v = getenv (name);
  if (v == NULL || *v == '\0')
    return fallback;
  char *end;
  long long n = strtoll (v, &end, 10);
  return *end == '\0' && n >= 0 ? n : fallback;
}

static void
free_list (char **v, size_t n)
{
  for (size_t k = 0; k < n; k++)
    free (v[k]);
  free (v);
}

/* A round goes on while the rounds are not stopped. */
static bool
going (uint64_t done, uint64_t total, void *data)
{
  (void)done;
  (void)total;
  VsWindowRounds *r = data;
  return !atomic_load (&r->stop);
}

/* Whether path is one of record's imports of a PyTorch stream
 * (torch-PID.db), which are tied to their process before they are
 * appended. */
static bool
is_import (const char *path)
{
  const char *base = strrchr (path, '/');
  return strncmp (base ? base + 1 : path, "torch-", 6) == 0;
}

/* Ties an import to its process and GPUs (the stream's .info file: pid,
 * host, each device's uuid, memory and name), as the import after the exit
 * does, so that its rows are appended on the collector's process and GPU
 * rows.  False while it cannot be, or a GPU of it is still unnamed: it
 * waits for a later round. */
static bool
tie_import (const char *path)
{
  size_t l = strlen (path);
  char *info = malloc (l + 16);
  if (info == NULL || l < 3)
    {
      free (info);
      return false;
    }
  snprintf (info, l + 16, "%.*s.stream.info", (int)(l - 3), path);
  char host[256] = "localhost", err[512];
  gethostname (host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  bool ok = access (info, R_OK) == 0 && vs_spool_run_tie (path, info, host, err, sizeof err);
  free (info);
  sqlite3 *db = NULL;
  if (ok && sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, 10000);
      sqlite3_stmt *s = NULL;
      ok = sqlite3_prepare_v2 (db, "SELECT count(*) FROM device WHERE uuid IS NULL", -1, &s, NULL)
               == SQLITE_OK
           && sqlite3_step (s) == SQLITE_ROW && sqlite3_column_int64 (s, 0) == 0;
      sqlite3_finalize (s);
    }
  else
    ok = false;
  sqlite3_close (db);
  return ok;
}

/* The first column of the first row of sql, with ?1 bound to arg where
 * it has one, on the trace at path opened for writing (waiting up to 10 s
 * for another writer); fallback when there is no row, the value is NULL or
 * the query cannot run. */
static int64_t
trace_query_int (const char *path, const char *sql, int64_t arg, int64_t fallback)
{
  sqlite3 *db = NULL;
  int64_t v = fallback;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, 10000);
      sqlite3_stmt *s = NULL;
      if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK)
        {
          if (sqlite3_bind_parameter_count (s) > 0)
            sqlite3_bind_int64 (s, 1, arg);
          if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
            v = sqlite3_column_int64 (s, 0);
        }
      sqlite3_finalize (s);
    }
  sqlite3_close (db);
  return v;
}

/* The newest event time in the trace at path (the tables' rows not yet
 * taken); INT64_MIN when it holds none or cannot be read. */
static int64_t
newest_event (const char *path)
{
  static const char *sql
      = "SELECT max(m) FROM (SELECT max(ts) AS m FROM alloc_event UNION ALL SELECT max(ts)"
        " FROM mem_event UNION ALL SELECT max(ts) FROM failed_alloc UNION ALL"
        " SELECT max(start_ns) FROM kernel_exec)";
  return trace_query_int (path, sql, 0, INT64_MIN);
}

/* The frontier this round: of each input that wrote something newer since
 * the last round, its newest event less the lag (a CUPTI record or a
 * stream's record comes in well within it); the least of them.  An input
 * that wrote nothing new holds nothing back: what it writes next is newer
 * than the frontier, or counted late.  INT64_MIN when no input moved. */
static int64_t
frontier (VsWindowRounds *r, char **inputs, size_t n)
{
  int64_t f = INT64_MAX;
  for (size_t k = 0; k < n; k++)
    {
      int64_t t = newest_event (inputs[k]);
      size_t i = 0;
      while (i < r->nseen && strcmp (r->seen[i].path, inputs[k]) != 0)
        i++;
      if (i == r->nseen)
        {
          Seen *ns = realloc (r->seen, (r->nseen + 1) * sizeof *ns);
          char *p = strdup (inputs[k]);
          if (ns == NULL || p == NULL)
            {
              free (p);
              if (ns != NULL)
                r->seen = ns;
              return INT64_MIN;
            }
          r->seen = ns;
          r->seen[r->nseen++] = (Seen){ p, INT64_MIN, false };
        }
      if (t > r->seen[i].newest)
        {
          r->seen[i].newest = t;
          if (t - r->lag_ns < f)
            f = t - r->lag_ns;
        }
      if (t > r->newest)
        r->newest = t;
    }
  return f == INT64_MAX ? INT64_MIN : f;
}

/* Whether the input at path (seen this round) may be appended: a process
 * trace always, an import once tied (tied once). */
static bool
appendable (VsWindowRounds *r, const char *path)
{
  if (!is_import (path))
    return true;
  for (size_t i = 0; i < r->nseen; i++)
    if (strcmp (r->seen[i].path, path) == 0)
      return r->seen[i].tied || (r->seen[i].tied = tie_import (path));
  return false;
}

/* Adds n to the events that came behind the frontier, kept in the live
 * trace's meta (window_live_late_events); returns the total. */
static int64_t
add_late (const char *path, int64_t n)
{
  static const char *sql
      = "INSERT OR REPLACE INTO meta (key, value) VALUES ('window_live_late_events',"
        " ifnull((SELECT CAST(value AS INTEGER) FROM meta"
        " WHERE key = 'window_live_late_events'), 0) + ?1)"
        " RETURNING CAST(value AS INTEGER)";
  return trace_query_int (path, sql, n, n);
}

/* One round (see vs-window-rounds.h).  0, 1 when cancelled, -1 with err. */
static int
round_once (VsWindowRounds *r, char *err, size_t errlen)
{
  int64_t before = r->st.frontier_ns;
  char **inputs = NULL;
  size_t n = vs_spool_run_list (r->spool, &inputs);
  int64_t f = frontier (r, inputs, n), now = r->newest;
  /* Each input's rows commit as it is appended: a round cut short leaves
   * the live trace as far as it went, which the next open continues. */
  int64_t late = 0;
  int rc = vs_merge_append_begin (r->app, going, r, err, errlen);
  for (size_t k = 0; k < n && rc == 0; k++)
    if (appendable (r, inputs[k]))
      rc = vs_merge_append_input (r->app, inputs[k], before, f, &late, err, errlen);
  if (rc == 0)
    rc = vs_merge_append_end (r->app, NULL, going, r, err, errlen);
  if (rc == 0 && late > 0)
    add_late (r->live, late);
  if (atomic_load (&r->stop))
    rc = 1;
  if (rc == 0 && f != INT64_MIN)
    {
      sqlite3 *db = NULL;
      if (sqlite3_open_v2 (r->live, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        {
          snprintf (err, errlen, "cannot open %s: %s", r->live,
                    db ? sqlite3_errmsg (db) : "out of memory");
          rc = -1;
        }
      else
        {
          sqlite3_busy_timeout (db, 10000);
          VsTraceTrimStats ts;
          rc = vs_trace_window_trim (db, r->window_ns, f, now, &ts, err, errlen);
          if (rc == 0)
            r->st.frontier_ns = ts.to;
        }
      sqlite3_close (db);
    }
  /* What the live trace holds (committed) is let go of by its inputs. */
  for (size_t k = 0; k < n && rc == 0; k++)
    rc = vs_merge_append_release (r->app, inputs[k], err, errlen);
  free_list (inputs, n);
  return rc;
}

static void *
rounds_main (void *data)
{
  VsWindowRounds *r = data;
  for (;;)
    {
      pthread_mutex_lock (&r->lock);
      struct timespec until;
      clock_gettime (CLOCK_REALTIME, &until);
      until.tv_sec += r->interval_ms / 1000;
      until.tv_nsec += (r->interval_ms % 1000) * 1000000;
      if (until.tv_nsec >= 1000000000)
        {
          until.tv_sec++;
          until.tv_nsec -= 1000000000;
        }
      while (!atomic_load (&r->stop)
             && pthread_cond_timedwait (&r->wake, &r->lock, &until) != ETIMEDOUT)
        ;
      pthread_mutex_unlock (&r->lock);
      if (atomic_load (&r->stop))
        break;
      int64_t t0 = vs_clock_ns (CLOCK_MONOTONIC);
      char err[512] = "";
      int rc = round_once (r, err, sizeof err);
      int64_t took = vs_clock_ns (CLOCK_MONOTONIC) - t0;
      if (rc == 1)
        break;
      r->st.busy_ns += took;
      if (took > r->st.longest_ns)
        r->st.longest_ns = took;
      if (rc < 0)
        {
          /* Stopped for good: the end appends and windows the rest. */
          snprintf (r->st.error, sizeof r->st.error, "%s", err);
          break;
        }
      r->st.rounds++;
    }
  return NULL;
}

VsWindowRounds *
vs_window_rounds_start (const char *spool, int64_t window_ns)
{
  int64_t interval = window_ns / 4 / 1000000;
  if (interval < 5000)
    interval = 5000;
  interval = env_ms ("VRAMSCOPE_WINDOW_LIVE_MS", interval);
  if (interval <= 0 || window_ns <= 0)
    return NULL;
  VsWindowRounds *r = calloc (1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->spool = strdup (spool);
  size_t l = strlen (spool) + sizeof VS_WINDOW_LIVE_TRACE + 2;
  r->live = malloc (l);
  if (r->spool == NULL || r->live == NULL)
    goto fail;
  snprintf (r->live, l, "%s/%s", spool, VS_WINDOW_LIVE_TRACE);
  r->window_ns = window_ns;
  r->newest = INT64_MIN;
  r->interval_ms = interval;
  r->lag_ns = env_ms ("VRAMSCOPE_WINDOW_LIVE_LAG_MS", 10000) * 1000000;
  char err[512];
  r->app = vs_merge_append_open (r->live, err, sizeof err);
  if (r->app == NULL)
    {
      fprintf (stderr, "vramscope record: the window is applied at the end only: %s\n", err);
      goto fail;
    }
  pthread_mutex_init (&r->lock, NULL);
  pthread_cond_init (&r->wake, NULL);
  if (pthread_create (&r->thread, NULL, rounds_main, r) != 0)
    {
      pthread_mutex_destroy (&r->lock);
      pthread_cond_destroy (&r->wake);
      vs_merge_append_free (r->app);
      goto fail;
    }
  return r;
fail:
  free (r->spool);
  free (r->live);
  free (r);
  return NULL;
}

void
vs_window_rounds_stop (VsWindowRounds *r, VsWindowRoundsStats *stats)
{
  if (r == NULL)
    return;
  pthread_mutex_lock (&r->lock);
  atomic_store (&r->stop, true);
  pthread_cond_signal (&r->wake);
  pthread_mutex_unlock (&r->lock);
  pthread_join (r->thread, NULL);
  if (stats)
    *stats = r->st;
  vs_merge_append_free (r->app);
  for (size_t k = 0; k < r->nseen; k++)
    free (r->seen[k].path);
  free (r->seen);
  pthread_mutex_destroy (&r->lock);
  pthread_cond_destroy (&r->wake);
  free (r->spool);
  free (r->live);
  free (r);
}

static char *
live_path (const char *spool)
{
  size_t l = strlen (spool) + sizeof VS_WINDOW_LIVE_TRACE + 2;
  char *p = malloc (l);
  if (p != NULL)
    snprintf (p, l, "%s/%s", spool, VS_WINDOW_LIVE_TRACE);
  return p;
}

bool
vs_window_rounds_in (const char *spool)
{
  char *p = live_path (spool);
  bool yes = p != NULL && access (p, F_OK) == 0;
  free (p);
  return yes;
}

/* Where the aggregates kept in the live trace end (vs-trace-window.h);
 * INT64_MIN when it keeps none. */
static int64_t
aggregated_to (const char *path)
{
  sqlite3 *db = NULL;
  int64_t t = INT64_MIN;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
    t = vs_trace_window_trimmed_to (db);
  sqlite3_close (db);
  return t;
}

/* The events that came behind the frontier in all the rounds and the
 * last append (late), said in one line when there were any. */
static void
note_late (const char *path, int64_t late, int64_t frontier)
{
  late = add_late (path, late);
  if (late > 0)
    fprintf (stderr,
             "vramscope record: %lld events came more than the window's lag late (before "
             "%.3f s into the run's aggregates): the slices before the window may miss them; "
             "set VRAMSCOPE_WINDOW_LIVE_LAG_MS higher\n",
             (long long)late, frontier / 1e9);
}

/* Copies the file at from (opened without following a link) to to: over
 * its content when it exists (a temporary file made for it), else as a
 * new file.  0, or -1 with err filled. */
static int
copy_file (const char *from, const char *to, bool exists, char *err, size_t errlen)
{
  int in = open (from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  int out
      = in < 0
            ? -1
            : open (to, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | (exists ? O_TRUNC : O_CREAT | O_EXCL),
                    0644);
  int rc = in >= 0 && out >= 0 ? 0 : -1;
  char buf[1 << 16];
  while (rc == 0)
    {
      ssize_t got = read (in, buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        {
          rc = got < 0 ? -1 : 0;
          break;
        }
      for (ssize_t put = 0; put < got && rc == 0;)
        {
          ssize_t w = write (out, buf + put, (size_t)(got - put));
          if (w > 0)
            put += w;
          else if (w == 0 || errno != EINTR)
            rc = -1;
        }
    }
  if (rc != 0)
    snprintf (err, errlen, "cannot copy %s to %s: %s", from, to, strerror (errno));
  if (in >= 0)
    close (in);
  if (out >= 0 && close (out) != 0 && rc == 0)
    rc = -1;
  return rc;
}

/* Copies the live trace, with its log or journal (what a killed round
 * left, replayed or rolled back when the copy is opened), to out: the
 * live trace itself is only read, and stays in the spool until the trace
 * is committed.  A live trace that is a link is not the recording's: it
 * is never opened.  0, or -1 with err filled. */
static int
copy_live (const char *live, const char *out, char *err, size_t errlen)
{
  static const char *const sides[] = { "-wal", "-journal" };
  const char *why = NULL;
  if (!vs_spool_file_is_plain (live, &why))
    {
      snprintf (err, errlen, "%s is %s, not the recording's live trace: it is never written", live,
                why);
      return -1;
    }
  if (copy_file (live, out, true, err, errlen) != 0)
    return -1;
  for (size_t k = 0; k < sizeof sides / sizeof sides[0]; k++)
    {
      size_t l = strlen (live) + strlen (out) + 16;
      char *from = malloc (l), *to = malloc (l);
      int rc = from != NULL && to != NULL ? 0 : -1;
      if (rc == 0)
        {
          snprintf (from, l, "%s%s", live, sides[k]);
          snprintf (to, l, "%s%s", out, sides[k]);
          if (access (from, F_OK) == 0)
            rc = copy_file (from, to, false, err, errlen);
        }
      else
        snprintf (err, errlen, "out of memory");
      free (from);
      free (to);
      if (rc != 0)
        return -1;
    }
  return 0;
}

int
vs_window_rounds_finish (const char *spool, const char *const *inputs, size_t n,
                         const VsMergeRun *run, const char *out, bool quiet,
                         VsProgressFunc progress, void *progress_data, char *err, size_t errlen)
{
  if (!vs_window_rounds_in (spool))
    return 1;
  char *live = live_path (spool);
  if (live == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  /* The rest is appended to a copy: a failure or a signal from here on
   * leaves the spool as the rounds left it, for a later recover. */
  int rc = copy_live (live, out, err, errlen);
  free (live);
  if (rc != 0)
    return -1;
  int64_t late = 0, frontier = aggregated_to (out);
  VsMergeAppend *app = vs_merge_append_open (out, err, errlen);
  rc = app != NULL ? vs_merge_append_begin (app, progress, progress_data, err, errlen) : -1;
  for (size_t k = 0; k < n && rc == 0; k++)
    rc = vs_merge_append_input (app, inputs[k], frontier, INT64_MAX, &late, err, errlen);
  if (rc == 0)
    rc = vs_merge_append_end (app, run, progress, progress_data, err, errlen);
  vs_merge_append_free (app);
  if (rc == 0)
    {
      const char *one[] = { out };
      vs_symbolize_traces (one, 1, quiet);
      note_late (out, late, frontier);
    }
  return rc;
}

int
vs_window_rounds_fill (const VsSpoolFill *f, const char *out, struct VsRowSink *sink,
                       VsProgressFunc progress, void *progress_data, char *err, size_t errlen)
{
  f->run->sink = sink;
  int rc = vs_window_rounds_finish (f->spool, f->files, f->n, f->run, out, f->quiet, progress,
                                    progress_data, err, errlen);
  if (rc == 1)
    rc = vs_merge_traces (out, f->files, f->n, f->run, progress, progress_data, err, errlen);
  f->run->sink = NULL;
  return rc;
}
