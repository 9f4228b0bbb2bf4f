/* SPDX-License-Identifier: MIT */
/* vs-record.c — `vramscope record`: run a program under the collector.
 *
 * Finds the collector library, starts the program with it injected
 * (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH) and a private spool
 * directory where each CUDA-using process of the run writes its own trace,
 * forwards termination signals, waits, merges the process traces into one,
 * finalizes it, prints a short summary and returns the program's own exit
 * status (128 + signal when a signal killed it).
 *
 * PyTorch programs (--torch=auto|on): the folder holding the PyTorch hook
 * (collector/python/sitecustomize.py, beside the collector) goes first on
 * PYTHONPATH.  Each process that imports torch leaves allocator snapshots
 * in the spool; the newest of each process is imported in process by the
 * snapshot importer (../import; several processes' at once, in threads,
 * while another thread symbolizes the process traces), tied to the
 * process's pid and GPUs by
 * uuid, and merged with the CUPTI events into the same trace; a process
 * that left no final snapshot (killed, aborted) gets its allocator stream
 * instead, and one whose final snapshot was taken at a signal gets the
 * stream's events after it too (vs-torch-stream.c).  The spool's run.info
 * says what `vramscope recover` (vs-recover.c) needs when record itself
 * is killed; a run in which no process used CUDA writes no trace.  The
 * summary at the end is read through libvramscope, as every report is.
 *
 * Runs inside the `vramscope` executable, which links GLib statically, so
 * it needs nothing on a GPU server beyond libc, the CUDA driver and
 * libsqlite3.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "vs-config.h"
#include "vs-import.h"
#include "vs-framework-spool.h"
#include "vs-merge.h"
#include "vs-output.h"
#include "vs-record-timings.h"
#include "vs-record-window.h"
#include "vs-window-live.h"
#include "vs-window-rounds.h"
#include "vs-recover.h"
#include "vs-spool.h"
#include "vs-spool-files.h"
#include "vs-summary.h"
#include "vs-symbol-cache.h"
#include "vs-symbolize.h"
#include "vs-fin-given.h"
#include "vs-trace-compact.h"
#include "vs-timings.h"
#include "vs-torch-follow.h"
#include "vs-torch-stream.h"
#include "vs-table.h"

int vs_cmd_record (int argc, char **argv);

#define COLLECTOR_NAME "libvramscope-collector.so"

static volatile sig_atomic_t child_pid;

static const char usage_line[]
    = "usage: vramscope record [-o FILE] [--force] [--no-kernels] "
      "[--torch=auto|on|off] [--job NAME] [--window DURATION] [--timings] [-q] -- "
      "PROGRAM [ARGS...]\n";

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Expands %p, %h, %q{VAR} and %% in pattern.  Returns false (with a
 * message) on a malformed pattern or an over-long result. */
static bool
expand_output (const char *pattern, char *out, size_t len)
{
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  size_t o = 0;
  for (const char *p = pattern; *p; p++)
    {
      char buf[64];
      const char *add = NULL;
      size_t addlen = 0;
      if (*p != '%')
        {
          add = p;
          addlen = 1;
        }
      else if (p[1] == 'p')
        {
          snprintf (buf, sizeof buf, "%ld", (long)getpid ());
          add = buf;
          p++;
        }
      else if (p[1] == 'h')
        {
          add = host;
          p++;
        }
      else if (p[1] == '%')
        {
          add = "%";
          p++;
        }
      else if (p[1] == 'q' && p[2] == '{')
        {
          const char *end = strchr (p + 3, '}');
          if (end == NULL || end == p + 3)
            {
              fprintf (stderr, "vramscope record: malformed %%q{VAR} in output name '%s'\n",
                       pattern);
              return false;
            }
          char var[256];
          size_t n = (size_t)(end - (p + 3));
          if (n >= sizeof var)
            n = sizeof var - 1;
          memcpy (var, p + 3, n);
          var[n] = '\0';
          add = getenv (var);
          if (add == NULL)
            add = "";
          p = end;
        }
      else
        {
          fprintf (stderr,
                   "vramscope record: unknown %%%c in output name '%s' "
                   "(use %%p, %%h, %%q{VAR} or %%%%)\n",
                   p[1] ? p[1] : ' ', pattern);
          return false;
        }
      if (addlen == 0)
        addlen = strlen (add);
      if (o + addlen >= len)
        {
          fprintf (stderr, "vramscope record: output name too long\n");
          return false;
        }
      memcpy (out + o, add, addlen);
      o += addlen;
    }
  out[o] = '\0';
  if (o == 0)
    {
      fprintf (stderr, "vramscope record: empty output name\n");
      return false;
    }
  return true;
}

/* Finds the collector library: $VRAMSCOPE_COLLECTOR, then next to this
 * executable, then where an install puts it relative to this executable
 * (bindir/../libdir/vramscope: right under any prefix or DESTDIR), then
 * ../collector (build tree), then the configured install directory
 * (prefix/libdir/vramscope).  Returns false when none exists. */
static bool
find_collector (char *out, size_t len)
{
  const char *env = getenv ("VRAMSCOPE_COLLECTOR");
  if (env != NULL && env[0] != '\0')
    {
      if (realpath (env, out) != NULL && access (out, R_OK) == 0)
        return true;
      fprintf (stderr, "vramscope record: VRAMSCOPE_COLLECTOR=%s is not readable\n", env);
      return false;
    }
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return false;
  exe[n] = '\0';
  char *slash = strrchr (exe, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  /* Beside this program, installed relative to it, in the build tree, then
   * at the configured prefix (meson's libdir, which is multiarch on
   * Debian). */
  char installed_dir[PATH_MAX + 256], build_dir[PATH_MAX + 16];
  snprintf (installed_dir, sizeof installed_dir, "%s/%s", exe, VS_COLLECTOR_RELATIVE_DIR);
  snprintf (build_dir, sizeof build_dir, "%s/../collector", exe);
  const char *dirs[] = { exe, VS_COLLECTOR_RELATIVE_DIR[0] ? installed_dir : exe, build_dir,
                         VS_COLLECTOR_INSTALL_DIR };
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    {
      char cand[PATH_MAX + 64];
      snprintf (cand, sizeof cand, "%s/" COLLECTOR_NAME, dirs[i]);
      if (access (cand, R_OK) == 0 && realpath (cand, out) != NULL && strlen (out) < len)
        return true;
    }
  return false;
}

/* Forwards a termination signal to the program, unless it came from the
 * terminal: the terminal already sent it to the whole process group. */
static void
forward_signal (int sig, siginfo_t *info, void *ctx)
{
  (void)ctx;
  if (child_pid > 0 && (info == NULL || info->si_code != SI_KERNEL))
    kill ((pid_t)child_pid, sig);
}

/* Removes the spool directory with the recording's files in it
 * (vs-spool-files.h); says so when it holds others, which stay. */
static void
remove_spool (const char *dir)
{
  if (vs_spool_remove (dir) > 0)
    fprintf (stderr, "vramscope record: %s is kept: it holds files that are not the recording's\n",
             dir);
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The traces in the spool directory that are the recording's
 * (process-PID-NS.db, torch-PID.db: vs-spool-files.h), sorted by name
 * (pid, then start time); links and files of other names are left out.
 * Returns the count; *out is malloc'd. */
static size_t
list_spool (const char *dir, char ***out)
{
  size_t n = 0, cap = 16;
  char **v = malloc (cap * sizeof *v);
  DIR *d = opendir (dir);
  if (d == NULL || v == NULL)
    {
      if (d)
        closedir (d);
      *out = v;
      return 0;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      size_t l = strlen (e->d_name);
      if (l < 4 || strcmp (e->d_name + l - 3, ".db") != 0 || !vs_spool_name_is_ours (e->d_name))
        continue;
      size_t plen = strlen (dir) + l + 2;
      char *path = malloc (plen);
      if (path == NULL)
        break;
      snprintf (path, plen, "%s/%s", dir, e->d_name);
      /* A link is not the recording's: never opened, to read or write. */
      if (!vs_spool_file_is_plain (path, NULL))
        {
          free (path);
          continue;
        }
      if (n == cap)
        {
          char **nv = realloc (v, 2 * cap * sizeof *v);
          if (nv == NULL)
            {
              free (path);
              break;
            }
          v = nv;
          cap *= 2;
        }
      v[n++] = path;
    }
  closedir (d);
  qsort (v, n, sizeof *v, compare_names);
  *out = v;
  return n;
}

typedef struct
{
  bool tty;
  const char *what;
  int last;
} VsProgress;

static bool
show_progress (uint64_t done, uint64_t total, void *data)
{
  VsProgress *p = data;
  if (!p->tty || total == 0)
    return true;
  int pct = (int)(done * 100 / total);
  if (pct > 100)
    pct = 100;
  if (pct != p->last)
    {
      fprintf (stderr, "\rvramscope: %s… %3d%%", p->what, pct);
      p->last = pct;
    }
  return true;
}

/* Prints where the trace is and, per device, the peaks and failures, read
 * through libvramscope as `report summary` reads them. */
static void
print_summary (const char *path)
{
  g_autoptr (GError) error = NULL;
  fprintf (stderr, "vramscope: trace written to %s\n", path);
  VsTrace *trace = vs_trace_open (path, &error);
  if (trace == NULL)
    {
      fprintf (stderr, "vramscope record: %s\n", error->message);
      return;
    }
  g_autoptr (GArray) rows = vs_summary_list (trace, 0, 0, &error);
  if (rows == NULL)
    fprintf (stderr, "vramscope record: %s\n", error->message);
  else if (rows->len == 0)
    fprintf (stderr, "vramscope: no process of the run used CUDA: the trace holds no events\n");
  for (guint k = 0; rows != NULL && k < rows->len; k++)
    {
      const VsSummary *r = &g_array_index (rows, VsSummary, k);
      if (r->allocator_id != 0)
        continue;
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, r->device_id);
      g_autofree char *res = vs_format_bytes (r->peak_reserved_bytes);
      g_autofree char *alloc = vs_format_bytes (r->peak_allocated_bytes);
      g_autofree char *dev = vs_format_bytes (r->peak_device_bytes);
      fprintf (stderr,
               "  GPU %lld %s: peak %s reserved, %s allocated (%s held from CUDA), "
               "%lld allocations",
               d ? (long long)d->idx : -1LL, d && d->name ? d->name : "", res, alloc, dev,
               (long long)r->alloc_count);
      if (r->failed_alloc_count > 0)
        fprintf (stderr, ", %lld failed", (long long)r->failed_alloc_count);
      fputc ('\n', stderr);
    }
  vs_trace_free (trace);
}

/* How often the allocator streams are read while the program runs, in
 * ms: $VRAMSCOPE_TORCH_FOLLOW_MS (0: not while it runs, all of each
 * stream once it has exited), 250 by default. */
static int
follow_interval_ms (void)
{
  const char *env = getenv ("VRAMSCOPE_TORCH_FOLLOW_MS");
  if (env == NULL || env[0] == '\0')
    return 250;
  return atoi (env) > 0 ? atoi (env) : 0;
}

/* Whether the followed imports hand their rows to the finalizer as they
 * write them (vs-fin-given.h): not $VRAMSCOPE_TORCH_FOLLOW_GIVE=0 (the
 * finalizer then reads every row back, as before), and not under a
 * window, which keeps the post-run path that reads the tables. */
static bool
follow_gives (int64_t window_ns)
{
  const char *env = getenv ("VRAMSCOPE_TORCH_FOLLOW_GIVE");
  return window_ns == 0 && (env == NULL || strcmp (env, "0") != 0);
}

/* The program's command line as one string, for the trace's meta. */
static char *
join_args (char **argv)
{
  size_t len = 1;
  for (char **a = argv; *a; a++)
    len += strlen (*a) + 1;
  char *s = malloc (len);
  if (s == NULL)
    return NULL;
  s[0] = '\0';
  for (char **a = argv; *a; a++)
    {
      if (a != argv)
        strcat (s, " ");
      strcat (s, *a);
    }
  return s;
}

/* The folder of the PyTorch hook beside the collector: python/ next to it
 * (build tree and installed alike).  False when it is missing. */
static bool
find_torch_hook (const char *collector, char *out, size_t len)
{
  char dir[PATH_MAX];
  snprintf (dir, sizeof dir, "%s", collector);
  char *slash = strrchr (dir, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  char file[PATH_MAX + 64];
  snprintf (file, sizeof file, "%s/python/sitecustomize.py", dir);
  if (access (file, R_OK) != 0)
    return false;
  return (size_t)snprintf (out, len, "%s/python", dir) < len;
}

/* Imports PICKLE into the raw (unfinalized) trace OUT: the merge
 * finalizes the run's trace once.  True when it succeeded; otherwise the
 * reason is printed. */
static bool
import_one (const char *pickle, const char *out)
{
  g_autoptr (GError) error = NULL;
  if (vs_import_snapshot (pickle, out, FALSE, NULL, NULL, NULL, &error))
    return true;
  fprintf (stderr, "vramscope record: %s: %s\n", pickle, error->message);
  return false;
}

/* Ties an imported snapshot trace to its process and GPUs: the process
 * row gets the pid and host, each device row (by PyTorch's device index)
 * the GPU's uuid, memory and name from the snapshot's .info file, so the
 * merge puts its events on the collector's process and device rows; the
 * file's "meta KEY VALUE" lines (the allocator's settings) go into meta.
 * Returns false with a message in err. */
static bool
tie_snapshot (const char *trace, const char *info, const char *host, char *err, size_t errlen)
{
  static const char *pid_sql = "UPDATE process SET pid = ?1, host = ?2";
  static const char *dev_sql
      = "UPDATE device SET uuid = ?2, total_bytes = ?3, name = ?4 WHERE idx = ?1";
  static const char *meta_sql = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)";
  FILE *f = fopen (info, "r");
  if (f == NULL)
    {
      snprintf (err, errlen, "cannot read %s: %s", info, strerror (errno));
      return false;
    }
  sqlite3 *db = NULL;
  bool ok = sqlite3_open_v2 (trace, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK;
  /* The import may be written meanwhile (the window's rounds tie it while
   * the follower imports): wait for its lock. */
  if (ok)
    sqlite3_busy_timeout (db, 10000);
  ok = ok && sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
  char line[8192];
  while (ok && fgets (line, sizeof line, f) != NULL)
    {
      line[strcspn (line, "\n")] = '\0';
      long long pid, idx, total;
      int used = 0;
      char uuid[64], key[128];
      sqlite3_stmt *s = NULL;
      if (sscanf (line, "meta %127s %n", key, &used) == 1 && used > 0)
        {
          /* The allocator's settings as the hook saw them (meta keys
           * pytorch.*), one "meta KEY VALUE" line each. */
          ok = sqlite3_prepare_v2 (db, meta_sql, -1, &s, NULL) == SQLITE_OK;
          if (ok)
            {
              sqlite3_bind_text (s, 1, key, -1, SQLITE_TRANSIENT);
              sqlite3_bind_text (s, 2, line + used, -1, SQLITE_TRANSIENT);
            }
        }
      else if (sscanf (line, "pid %lld", &pid) == 1)
        {
          ok = sqlite3_prepare_v2 (db, pid_sql, -1, &s, NULL) == SQLITE_OK;
          if (ok)
            {
              sqlite3_bind_int64 (s, 1, pid);
              sqlite3_bind_text (s, 2, host, -1, SQLITE_TRANSIENT);
            }
        }
      else if (sscanf (line, "device %lld %63s %lld %n", &idx, uuid, &total, &used) == 3
               && used > 0)
        {
          ok = sqlite3_prepare_v2 (db, dev_sql, -1, &s, NULL) == SQLITE_OK;
          if (ok)
            {
              sqlite3_bind_int64 (s, 1, idx);
              sqlite3_bind_text (s, 2, uuid, -1, SQLITE_TRANSIENT);
              sqlite3_bind_int64 (s, 3, total);
              sqlite3_bind_text (s, 4, line + used, -1, SQLITE_TRANSIENT);
            }
        }
      if (ok && s != NULL)
        ok = sqlite3_step (s) == SQLITE_DONE;
      sqlite3_finalize (s);
    }
  fclose (f);
  if (ok)
    ok = sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok)
    snprintf (err, errlen, "cannot update %s: %s", trace,
              db ? sqlite3_errmsg (db) : "out of memory");
  sqlite3_close (db);
  return ok;
}

/* The snapshots import_snapshots() imports, shared by its threads. */
typedef struct
{
  const char *spool, *host;
  long long *pid, *seq;
  size_t n;
  gint next;     /* the next one to take (atomic) */
  gint imported; /* how many were (atomic) */
  gint keep;     /* one failed: the spool is kept (atomic) */
} VsImportJobs;

/* Imports the snapshot of one process; false when it failed (reported). */
static bool
import_process (const char *spool, const char *host, long long pid, long long seq, bool *done)
{
  char pickle[PATH_MAX + 64], info[PATH_MAX + 64], trace[PATH_MAX + 64];
  snprintf (pickle, sizeof pickle, "%s/torch-%lld-%06lld.pickle", spool, pid, seq);
  snprintf (info, sizeof info, "%s/torch-%lld-%06lld.info", spool, pid, seq);
  snprintf (trace, sizeof trace, "%s/torch-%lld.db", spool, pid);
  *done = false;
  if (access (trace, F_OK) == 0)
    return true; /* its allocator stream, imported already (vs-torch-stream.c) */
  char err[1024] = "";
  if (!import_one (pickle, trace))
    {
      fprintf (stderr,
               "vramscope record: PyTorch's snapshot of process %lld could not be "
               "imported; it is kept in %s\n",
               pid, spool);
      unlink (trace);
      return false;
    }
  if (!tie_snapshot (trace, info, host, err, sizeof err))
    {
      fprintf (stderr, "vramscope record: %s\n", err);
      unlink (trace);
      return false;
    }
  *done = true;
  return true;
}

static gpointer
import_worker (gpointer data)
{
  VsImportJobs *jobs = data;
  /* The imports are one phase of record's: their own stages are not
   * marked, on whichever thread they run. */
  VsTimings *outer = vs_timings_set_active (NULL);
  for (;;)
    {
      gint k = g_atomic_int_add (&jobs->next, 1);
      if (k < 0 || (size_t)k >= jobs->n)
        {
          vs_timings_set_active (outer);
          return NULL;
        }
      bool done = false;
      if (!import_process (jobs->spool, jobs->host, jobs->pid[k], jobs->seq[k], &done))
        g_atomic_int_set (&jobs->keep, 1);
      if (done)
        g_atomic_int_inc (&jobs->imported);
    }
}

/* Imports, for each process that left PyTorch snapshots in the spool, the
 * newest one (named torch-PID-SEQ.pickle: the exit snapshot holds all the
 * history an earlier OOM snapshot holds) into spool/torch-PID.db, ready to
 * be merged after the process traces.  Returns how many were imported; a
 * snapshot that cannot be imported is reported and left in the spool
 * (*keep is then set). */
static int
import_snapshots (const char *spool, const char *host, bool *keep)
{
  DIR *d = opendir (spool);
  if (d == NULL)
    return 0;
  enum
  {
    MAX_PROCS = 1024
  };
  static struct
  {
    long long pid, seq;
  } newest[MAX_PROCS];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      long long pid, seq;
      int end = 0;
      if (sscanf (e->d_name, "torch-%lld-%lld.pickle%n", &pid, &seq, &end) != 2
          || e->d_name[end] != '\0')
        continue;
      size_t k = 0;
      while (k < n && newest[k].pid != pid)
        k++;
      if (k == n)
        {
          if (n == MAX_PROCS)
            continue;
          newest[n].pid = pid;
          newest[n].seq = seq;
          n++;
        }
      else if (seq > newest[k].seq)
        {
          newest[k].seq = seq;
        }
    }
  closedir (d);
  if (n == 0)
    return 0;
  /* One process's import does not wait for another's: each writes its own
   * torch-PID.db, in as many threads as there are processors. */
  VsImportJobs jobs = { .spool = spool, .host = host, .n = n };
  jobs.pid = malloc (n * sizeof *jobs.pid);
  jobs.seq = malloc (n * sizeof *jobs.seq);
  if (jobs.pid == NULL || jobs.seq == NULL)
    {
      free (jobs.pid);
      free (jobs.seq);
      fprintf (stderr, "vramscope record: out of memory\n");
      *keep = true;
      return 0;
    }
  for (size_t k = 0; k < n; k++)
    {
      jobs.pid[k] = newest[k].pid;
      jobs.seq[k] = newest[k].seq;
    }
  guint nthreads = MIN (MIN ((guint)n, g_get_num_processors ()), 8);
  const char *env = getenv ("VRAMSCOPE_IMPORT_THREADS");
  if (env != NULL && atoi (env) > 0)
    nthreads = MIN (nthreads, (guint)atoi (env));
  GThread *threads[64];
  guint started = 0;
  for (guint t = 1; t < nthreads && t < G_N_ELEMENTS (threads); t++)
    {
      threads[started] = g_thread_try_new ("vs-import", import_worker, &jobs, NULL);
      if (threads[started] != NULL)
        started++;
    }
  import_worker (&jobs);
  for (guint t = 0; t < started; t++)
    g_thread_join (threads[t]);
  free (jobs.pid);
  free (jobs.seq);
  if (jobs.keep)
    *keep = true;
  return jobs.imported;
}

/* The process traces of a spool, symbolized in a thread of their own
 * while the PyTorch histories are imported beside them (those write only
 * torch-PID.db files): the two are independent, and each can take
 * seconds on a large run. */
typedef struct
{
  char **files;
  size_t n;
  bool quiet;
  int64_t ns; /* how long it took */
} VsSymbolizeJob;

static gpointer
symbolize_job (gpointer data)
{
  VsSymbolizeJob *job = data;
  int64_t t0 = vs_timings_now ();
  vs_symbolize_traces ((const char *const *)job->files, job->n, job->quiet);
  job->ns = vs_timings_now () - t0;
  return NULL;
}

/* The spool's process traces (process-*.db), as list_spool lists. */
static size_t
list_process_traces (const char *spool, char ***out)
{
  size_t n = list_spool (spool, out), k = 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *base = strrchr ((*out)[i], '/');
      base = base ? base + 1 : (*out)[i];
      if (strncmp (base, "process-", 8) == 0)
        (*out)[k++] = (*out)[i];
      else
        free ((*out)[i]);
    }
  return k;
}

/* Takes out of files[0..*n-1] the largest imported allocator level
 * (torch-PID.db, written by record itself from a stream or a snapshot,
 * and written again from them by `recover` if need be) and returns it
 * (malloc'd), NULL when there is none. */
static char *
take_largest_import (char **files, size_t *n)
{
  size_t best = *n;
  off_t best_size = -1;
  for (size_t k = 0; k < *n; k++)
    {
      const char *base = strrchr (files[k], '/');
      base = base ? base + 1 : files[k];
      struct stat st;
      if (strncmp (base, "torch-", 6) == 0 && stat (files[k], &st) == 0 && st.st_size > best_size)
        {
          best = k;
          best_size = st.st_size;
        }
    }
  if (best == *n)
    return NULL;
  char *taken = files[best];
  memmove (files + best, files + best + 1, (*n - best - 1) * sizeof *files);
  (*n)--;
  return taken;
}

static void
free_list (char **files, size_t n)
{
  for (size_t k = 0; k < n; k++)
    free (files[k]);
  free (files);
}

/* `vramscope record`: see the file comment.  argv[0] is "record". */
int
vs_cmd_record (int argc, char **argv)
{
  g_autofree char *output = NULL, *torch_opt = NULL, *job = NULL, *window_opt = NULL;
  gboolean kernels = TRUE, no_kernels = FALSE, quiet = FALSE, force = FALSE, timings = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Trace to write (default vramscope-%h-%p.db; %p: pid of record, %h: host name, "
      "%q{VAR}: the value of environment variable VAR, %%: a %)",
      "FILE" },
    { "kernels", 0, 0, G_OPTION_ARG_NONE, &kernels, "Record kernels, copies and memsets (default)",
      NULL },
    { "no-kernels", 0, 0, G_OPTION_ARG_NONE, &no_kernels, "Record memory only", NULL },
    { "torch", 0, 0, G_OPTION_ARG_STRING, &torch_opt,
      "PyTorch's allocator level: auto (default: in every process that imports torch), on (the "
      "same, and say so when none did), off",
      "auto|on|off" },
    { "job", 0, 0, G_OPTION_ARG_STRING, &job,
      "The job the run belongs to, kept in the trace's meta (default: the launcher's or batch "
      "system's job id: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, PBS_JOBID, LSB_JOBID)",
      "NAME" },
    { "window", 0, 0, G_OPTION_ARG_STRING, &window_opt,
      "Flight recorder: keep full detail for the last DURATION (e.g. 30s, 10m, 2h) and around "
      "the peak and the first and last failures, and for the rest of the run aggregates per "
      "time slice, so the trace stays small however long the run",
      "DURATION" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace FILE when it exists", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print nothing unless something fails", NULL },
    { "timings", 0, 0, G_OPTION_ARG_NONE, &timings,
      "After the program exits, print the time each phase of writing the trace takes (on "
      "stderr) and keep it in the trace's meta (record_PHASE_ns)",
      NULL },
    { NULL }
  };
  g_set_prgname ("vramscope record");
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[--] PROGRAM [ARGS…]");
  g_option_context_set_description (
      ctx, "Examples:\n"
           "  vramscope record -o run.db -- python train.py --batch-size 64\n"
           "  vramscope record -o run.db --window 60s -- torchrun --nproc-per-node 2 train.py\n"
           "  vramscope record -- ./my_cuda_program\n");
  g_option_context_set_summary (ctx, "Run PROGRAM with the collector injected and write one trace "
                                     "of every\nprocess of the run that uses CUDA.  Exits with "
                                     "PROGRAM's exit status.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  /* Options end at the program's name: its own options are never ours. */
  g_option_context_set_strict_posix (ctx, TRUE);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "vramscope record: %s\n%s", error->message, usage_line);
      return 2;
    }
  const char *pattern = output ? output : "vramscope-%h-%p.db";
  const char *torch = torch_opt ? torch_opt : "auto";
  if (no_kernels)
    kernels = FALSE;
  if (strcmp (torch, "auto") != 0 && strcmp (torch, "on") != 0 && strcmp (torch, "off") != 0)
    {
      fprintf (stderr, "vramscope record: --torch takes auto, on or off, not '%s'\n%s", torch,
               usage_line);
      return 2;
    }
  int64_t window_ns = 0;
  if (window_opt != NULL && (window_ns = vs_record_parse_duration (window_opt)) < 0)
    {
      fprintf (stderr,
               "vramscope record: --window takes a duration such as 30s, 10m or 2h "
               "(a number above 0 and one of ms, s, m, h, d), not '%s'\n",
               window_opt);
      return 2;
    }
  if (job != NULL && job[0] == '\0')
    {
      fprintf (stderr, "vramscope record: --job wants a non-empty name\n%s", usage_line);
      return 2;
    }
  /* GOption leaves the "--" that ended the options in place. */
  int i = 1;
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  if (i >= argc)
    {
      fprintf (stderr, "vramscope record: no program given\n%s", usage_line);
      return 2;
    }
  char **prog = argv + i;

  char out[PATH_MAX], collector[PATH_MAX], tmp[PATH_MAX + 64] = "", err[1024] = "";
  if (!expand_output (pattern, out, sizeof out))
    return 1;
  /* Refused before the program runs, not after. */
  if (vs_output_check (out, force, "--force", NULL, 0, err, sizeof err) < 0)
    {
      fprintf (stderr, "vramscope record: %s\n", err);
      return 1;
    }
  if (!find_collector (collector, sizeof collector))
    {
      fprintf (stderr,
               "vramscope record: cannot find %s next to this program, in "
               "its folder's %s, ../collector or %s (set VRAMSCOPE_COLLECTOR)\n",
               COLLECTOR_NAME, VS_COLLECTOR_RELATIVE_DIR, VS_COLLECTOR_INSTALL_DIR);
      return 1;
    }

  /* The spool sits beside the output so large runs fill the disk the user
   * chose, not /tmp. */
  char outdir[PATH_MAX], spool[PATH_MAX + 64];
  snprintf (outdir, sizeof outdir, "%s", out);
  char *slash = strrchr (outdir, '/');
  if (slash == outdir)
    outdir[1] = '\0';
  else if (slash != NULL)
    *slash = '\0';
  else
    snprintf (outdir, sizeof outdir, ".");
  if (!quiet)
    vs_record_hint_leftovers (outdir);
  snprintf (spool, sizeof spool, "%s/" VS_SPOOL_PREFIX "%ld-XXXXXX", outdir, (long)getpid ());
  if (mkdtemp (spool) == NULL)
    {
      fprintf (stderr, "vramscope record: cannot create a directory in %s: %s\n", outdir,
               strerror (errno));
      return 1;
    }
  char spool_abs[PATH_MAX + 64];
  if (realpath (spool, spool_abs) == NULL)
    snprintf (spool_abs, sizeof spool_abs, "%s", spool);

  setenv ("CUDA_INJECTION64_PATH", collector, 1);
  setenv ("NVTX_INJECTION64_PATH", collector, 1);
  setenv ("VRAMSCOPE_SPOOL_DIR", spool_abs, 1);
  setenv ("VRAMSCOPE_KERNELS", kernels ? "1" : "0", 1);
  /* Every process of the run writes it into its meta (vs-identity.h). */
  if (job != NULL)
    setenv ("VRAMSCOPE_JOB_ID", job, 1);
  unsetenv ("VRAMSCOPE_OUTPUT");
  bool torch_on = strcmp (torch, "off") != 0;
  /* With a window the streams' records are given back to the disk as they
   * are imported (vs-window-live.h): their length then costs no disk, and
   * the default limit would end a days-long run's allocator level within
   * the hour.  A limit the user set is kept. */
  if (window_ns > 0 && torch_on && follow_interval_ms () > 0
      && getenv ("VRAMSCOPE_TORCH_STREAM_MAX_MB") == NULL
      && vs_window_live_can_give_back (spool_abs))
    setenv ("VRAMSCOPE_TORCH_STREAM_MAX_MB", G_STRINGIFY (VS_WINDOW_STREAM_MAX_MB), 1);
  char hook[PATH_MAX];
  if (torch_on && find_torch_hook (collector, hook, sizeof hook))
    {
      const char *old = getenv ("PYTHONPATH");
      size_t plen = strlen (hook) + (old ? strlen (old) : 0) + 2;
      char *path = malloc (plen);
      if (path != NULL)
        {
          snprintf (path, plen, "%s%s%s", hook, old && old[0] ? ":" : "", old && old[0] ? old : "");
          setenv ("PYTHONPATH", path, 1);
          free (path);
        }
      setenv ("VRAMSCOPE_TORCH", "1", 1);
    }
  else
    {
      if (torch_on)
        fprintf (stderr,
                 "vramscope record: the PyTorch hook (python/sitecustomize.py beside "
                 "%s) is missing: PyTorch's allocator level is not recorded\n",
                 collector);
      setenv ("VRAMSCOPE_TORCH", "0", 1);
    }

  int64_t start = now_ns ();
  int errpipe[2];
  if (pipe2 (errpipe, O_CLOEXEC) != 0)
    {
      fprintf (stderr, "vramscope record: %s\n", strerror (errno));
      remove_spool (spool);
      return 1;
    }
  /* Handlers go in before the fork, with the signals blocked until the
   * child's pid is known, so a signal sent at once is forwarded, not lost
   * and not fatal to record. */
  struct sigaction sa, old[4];
  static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
  sigset_t block, saved_mask;
  sigemptyset (&block);
  for (int k = 0; k < 4; k++)
    sigaddset (&block, fwd[k]);
  sigprocmask (SIG_BLOCK, &block, &saved_mask);
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset (&sa.sa_mask);
  for (int k = 0; k < 4; k++)
    sigaction (fwd[k], &sa, &old[k]);
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "vramscope record: cannot start %s: %s\n", prog[0], strerror (errno));
      for (int k = 0; k < 4; k++)
        sigaction (fwd[k], &old[k], NULL);
      sigprocmask (SIG_SETMASK, &saved_mask, NULL);
      remove_spool (spool);
      return 1;
    }
  if (pid == 0)
    {
      close (errpipe[0]);
      for (int k = 0; k < 4; k++)
        sigaction (fwd[k], &old[k], NULL);
      sigprocmask (SIG_SETMASK, &saved_mask, NULL);
      execvp (prog[0], prog);
      int e = errno;
      if (write (errpipe[1], &e, sizeof e) < 0)
        _exit (127);
      _exit (e == ENOENT ? 127 : 126);
    }
  close (errpipe[1]);
  child_pid = pid;
  /* PyTorch's allocator streams are imported as they grow, while record
   * waits (vs-torch-follow.c); its thread starts with the forwarded
   * signals blocked, so they all reach this one. */
  VsTorchFollowMode follow_mode = window_ns > 0              ? VS_TORCH_FOLLOW_WINDOW
                                  : follow_gives (window_ns) ? VS_TORCH_FOLLOW_GATHER
                                                             : VS_TORCH_FOLLOW_PLAIN;
  VsTorchFollow *follow
      = !torch_on || follow_interval_ms () <= 0
            ? NULL
            : vs_torch_follow_start (spool_abs, follow_interval_ms (), follow_mode);
  /* With a window, the window is applied as the program runs
   * (vs-window-rounds.h); its thread too starts with the signals blocked. */
  VsWindowRounds *rounds = window_ns > 0 ? vs_window_rounds_start (spool_abs, window_ns) : NULL;
  sigprocmask (SIG_SETMASK, &saved_mask, NULL);
  vs_record_write_run_info (spool_abs, (long)pid, (long long)start, out, (long long)window_ns);
  /* Each process writes its own file in the spool; the viewer can follow
   * one while it is written.  The program's own file is named after it. */
  if (!quiet)
    fprintf (stderr,
             "vramscope: recording; follow it live with: vramscope view %s/process-%ld-*.db\n",
             spool_abs, (long)pid);

  int exec_errno = 0;
  ssize_t got;
  do
    got = read (errpipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close (errpipe[0]);

  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  child_pid = 0;
  for (int k = 0; k < 4; k++)
    sigaction (fwd[k], &old[k], NULL);
  int64_t end = now_ns ();

  int code;
  if (WIFEXITED (status))
    code = WEXITSTATUS (status);
  else if (WIFSIGNALED (status))
    code = 128 + WTERMSIG (status);
  else
    code = 1;
  /* The round under way, if any, is cancelled: the end does the rest. */
  VsWindowRoundsStats rounds_st = { 0 };
  vs_window_rounds_stop (rounds, &rounds_st);
  if (rounds_st.error[0] != '\0')
    fprintf (stderr,
             "vramscope record: the window stopped being applied while the program ran (%s); "
             "it is applied at the end\n",
             rounds_st.error);
  if (got == (ssize_t)sizeof exec_errno)
    {
      fprintf (stderr, "vramscope record: cannot run %s: %s\n", prog[0], strerror (exec_errno));
      vs_torch_follow_free (follow);
      remove_spool (spool);
      return code;
    }

  /* --timings: every phase from here on is marked, the finalizer's too. */
  VsTimings tm;
  int64_t after_last_ns = -1, snapshot_ns = -1, take_ns = -1, write_ns = -1;
  if (timings)
    {
      vs_timings_start (&tm);
      vs_timings_set_active (&tm);
    }
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  bool keep_spool = false;
  /* What symbolizing finds is kept by build-id for the next run. */
  char *symbol_dir = vs_symbol_cache_default_dir ();
  vs_symbol_cache_set_dir (symbol_dir);
  free (symbol_dir);
  VsSymbolizeJob sym = { .quiet = quiet };
  /* A live trace is symbolized as a whole at the end (its frames came from
   * the traces before they were symbolized). */
  bool live = vs_window_rounds_in (spool);
  sym.n = live ? 0 : list_process_traces (spool, &sym.files);
  GThread *sym_thread
      = torch_on && sym.n > 0 ? g_thread_try_new ("vs-symbolize", symbolize_job, &sym, NULL) : NULL;
  if (sym_thread == NULL)
    {
      /* No PyTorch imports to overlap with (or no thread): in turn. */
      symbolize_job (&sym);
      vs_timings_phase ("symbolizing");
    }
  /* A window keeps PyTorch's events from the stream, whose every event
   * is there, not from a snapshot's history (a ring buffer). */
  if (follow != NULL)
    vs_torch_follow_stop (follow); /* after the pass under way, if any */
  int snapshots
      = torch_on ? vs_torch_stream_import_spool (spool, host, window_ns > 0, follow, &keep_spool)
                 : 0;
  int64_t live_records = follow != NULL ? vs_torch_follow_records (follow) : -1;
  if (follow != NULL)
    vs_torch_follow_drop_imports (follow);
  vs_timings_phase ("importing the allocator stream");
  snapshots += torch_on ? import_snapshots (spool, host, &keep_spool) : 0;
  vs_timings_phase ("importing snapshots");
  if (torch_on)
    vs_framework_spool_import (spool, host, &keep_spool);
  if (torch_on && window_ns == 0)
    vs_torch_stream_append_tails (spool, &keep_spool);
  vs_timings_phase ("appending stream tails");
  if (sym_thread != NULL)
    {
      g_thread_join (sym_thread);
      vs_timings_phase ("symbolizing (waiting after the imports)");
    }
  free_list (sym.files, sym.n);
  if (timings)
    {
      /* Measuring the exit is --timings' own work: charged to no phase. */
      char **all = NULL;
      size_t nall = list_spool (spool, &all);
      int64_t last = vs_record_last_event_ns (all, nall);
      for (size_t k = 0; k < nall; k++)
        free (all[k]);
      free (all);
      int64_t snap = vs_record_newest_snapshot_ns (spool, &take_ns, &write_ns);
      /* Events stamped outside the run (a clock other than the
       * collector's) say nothing about its exit. */
      if (last >= start && end >= last)
        after_last_ns = end - last;
      if (after_last_ns >= 0 && snap >= last)
        snapshot_ns = snap - last;
      vs_timings_skip (&tm);
    }
  if (strcmp (torch, "on") == 0 && snapshots == 0 && !keep_spool)
    fprintf (stderr, "vramscope record: --torch=on, but no process of the run used CUDA "
                     "through PyTorch's caching allocator\n");
  if (!keep_spool && vs_record_spool_is_empty (spool))
    {
      fprintf (stderr, "vramscope record: no process of the run used CUDA; no trace written\n");
      vs_torch_follow_free (follow);
      remove_spool (spool);
      return code;
    }
  /* Process traces sort before the torch-PID.db imports, so a snapshot's
   * process and devices already exist when it is merged. */
  char **files = NULL;
  size_t n = list_spool (spool, &files);
  /* Stacks: native frames to functions and lines (vs-symbolize.c); the
   * process traces are done already, this does the imported histories. */
  if (!live)
    vs_symbolize_traces ((const char *const *)files, n, quiet);
  vs_timings_phase ("symbolizing the imported histories");
  char *cmd = join_args (prog);
  char cwd[PATH_MAX];
  if (getcwd (cwd, sizeof cwd) == NULL)
    cwd[0] = '\0';
  /* The largest of record's own imports becomes the trace: the process
   * traces are copied into it rather than it into a new file. */
  char *adopt = live ? NULL : take_largest_import (files, &n);
  /* What its import handed to the finalizer while the program ran. */
  VsFinGiven *given
      = follow != NULL && adopt != NULL ? vs_torch_follow_take_given (follow, adopt) : NULL;
  vs_torch_follow_free (follow);
  int64_t given_rows = given ? vs_fin_given_rows (given) : 0;
  int64_t given_coded = given ? vs_fin_given_coded_rows (given) : 0;
  int64_t given_bytes = given ? (int64_t)vs_fin_given_bytes (given) : 0;
  VsMergeRun run = { .main_pid = pid,
                     .adopt = adopt,
                     .given = given,
                     .cwd = cwd[0] != '\0' ? cwd : NULL,
                     .exit_status = code,
                     .start_ns = start,
                     .end_ns = end,
                     .command_line = cmd,
                     .host = host,
                     .tool_version = VS_VERSION };
  VsProgress progress = { .tty = !quiet && isatty (2), .what = "writing the trace", .last = -1 };
  int rc = vs_output_temp (out, tmp, sizeof tmp, err, sizeof err);
  /* Compacted next: the finalizer codes series into chunks as it derives
   * them, unless a window is applied first (it reads series). */
  VsRowChunker chunker;
  vs_row_chunker_init (&chunker);
  run.sink = window_ns > 0 ? NULL : &chunker.sink;
  if (rc == 0)
    {
      rc = vs_window_rounds_finish (spool, (const char *const *)files, n, &run, tmp, quiet,
                                    show_progress, &progress, err, sizeof err);
      if (rc == 1)
        rc = vs_merge_traces (tmp, (const char *const *)files, n, &run, show_progress, &progress,
                              err, sizeof err);
      else if (rc == 0)
        vs_timings_phase ("merging: the rest into the live trace, symbolizing it");
    }
  run.sink = NULL;
  vs_row_chunker_clear (&chunker);
  if (!vs_fin_given_taken (given))
    given_rows = given_coded = given_bytes = 0;
  vs_fin_given_free (given);
  if (rc == 0 && window_ns > 0)
    {
      rc = vs_record_apply_window (tmp, window_ns, quiet, err, sizeof err) ? 0 : -1;
      vs_timings_phase ("window: the rest");
    }
  /* Last: the big tables into column chunks (vs-trace-compact.h). */
  if (rc == 0)
    rc = vs_trace_compact_file (tmp, err, sizeof err) < 0 ? -1 : 0;
  if (rc == 0)
    rc = vs_output_commit (tmp, out, force, "--force", err, sizeof err);
  vs_timings_phase ("committing the file");
  if (progress.tty && progress.last >= 0)
    fprintf (stderr, "\r\033[K");
  free (cmd);
  free (adopt);
  for (size_t k = 0; k < n; k++)
    free (files[k]);
  free (files);
  if (rc != 0)
    {
      if (tmp[0] != '\0')
        vs_output_remove (tmp);
      fprintf (stderr,
               "vramscope record: cannot write %s: %s (process traces kept in %s: "
               "vramscope recover writes the trace from them)\n",
               out, err, spool);
      return code != 0 ? code : 1;
    }
  if (!keep_spool)
    remove_spool (spool);
  vs_timings_phase ("removing the spool");
  if (!quiet)
    print_summary (out);
  vs_timings_phase ("printing the summary");
  if (timings)
    {
      vs_timings_set_active (NULL);
      vs_record_report_timings (&tm, end - start, after_last_ns, snapshot_ns, take_ns, write_ns,
                                sym_thread != NULL ? sym.ns : -1, live_records, out);
      vs_record_report_given (out, given_rows, given_coded, given_bytes);
      if (window_ns > 0)
        fprintf (stderr, "  %-42s %10lld rounds, %.2f s in all (longest %.2f s)\n",
                 "window applied while the program ran", (long long)rounds_st.rounds,
                 rounds_st.busy_ns / 1e9, rounds_st.longest_ns / 1e9);
    }
  return code;
}

/* For `vramscope recover` (vs-recover.h): the spool handled as record
 * handles it. */
int
vs_record_import_spool_snapshots (const char *spool, const char *host, bool *keep)
{
  return import_snapshots (spool, host, keep);
}

size_t
vs_record_list_spool (const char *spool, char ***out)
{
  return list_spool (spool, out);
}

bool
vs_record_tie_process (const char *trace, const char *info, const char *host, char *err,
                       size_t errlen)
{
  return tie_snapshot (trace, info, host, err, errlen);
}
