/* SPDX-License-Identifier: MIT */
/* vs-spool-run.c — a run's spool as `record` and `recover` take it
 * (vs-spool-run.h): run.info, the list of its traces, the PyTorch
 * snapshots' import and tie, its removal. */
#include "vs-spool-run.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "vs-import.h"
#include "vs-spool.h"
#include "vs-spool-files.h"

void
vs_spool_run_remove (const char *dir)
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
size_t
vs_spool_run_list (const char *dir, char ***out)
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
bool
vs_spool_run_tie (const char *trace, const char *info, const char *host, char *err, size_t errlen)
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

/* The snapshots vs_spool_run_import_snapshots() imports, shared by its threads. */
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
  if (!vs_spool_run_tie (trace, info, host, err, sizeof err))
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
  for (;;)
    {
      gint k = g_atomic_int_add (&jobs->next, 1);
      if (k < 0 || (size_t)k >= jobs->n)
        return NULL;
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
int
vs_spool_run_import_snapshots (const char *spool, const char *host, bool *keep)
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

size_t
vs_spool_run_list_processes (const char *spool, char ***out)
{
  size_t n = vs_spool_run_list (spool, out), k = 0;
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
char *
vs_spool_run_take_largest_import (char **files, size_t *n)
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

void
vs_spool_run_free_list (char **files, size_t n)
{
  for (size_t k = 0; k < n; k++)
    free (files[k]);
  free (files);
}

/* record --window's DURATION in ns from spool/run.info, 0 without one. */
long long
vs_spool_run_window_ns (const char *spool)
{
  g_autofree char *path = g_build_filename (spool, VS_SPOOL_RUN_INFO, NULL);
  g_autofree char *text = NULL;
  long long v = 0;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  const char *line = strstr (text, "\nwindow_ns ");
  if (line == NULL || sscanf (line + 1, "window_ns %lld", &v) != 1 || v < 0)
    return 0;
  return v;
}

void
vs_spool_run_write_info (const char *spool, long program_pid, long long start_ns,
                         const char *output, long long window_ns)
{
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  g_autofree char *abs = g_canonicalize_filename (output, NULL);
  g_autofree char *window
      = window_ns > 0 ? g_strdup_printf ("window_ns %lld\n", window_ns) : g_strdup ("");
  g_autofree char *text
      = g_strdup_printf ("host %s\nrecord_pid %ld\nprogram_pid %ld\nstart_ns %lld\noutput %s\n%s",
                         host, (long)getpid (), program_pid, start_ns, abs, window);
  g_autofree char *path = g_build_filename (spool, VS_SPOOL_RUN_INFO, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, text, -1, &error))
    fprintf (stderr, "vramscope record: %s\n", error->message);
}

bool
vs_spool_run_is_empty (const char *spool)
{
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if ((g_str_has_prefix (name, "process-") && g_str_has_suffix (name, ".db"))
        || (g_str_has_prefix (name, "torch-")
            && (g_str_has_suffix (name, ".pickle") || g_str_has_suffix (name, ".db"))))
      return false;
  return true;
}

void
vs_spool_run_hint_leftovers (const char *dir)
{
  g_autofree char *hint = vs_spool_leftover_hint (dir);
  if (hint != NULL)
    fprintf (stderr, "vramscope: %s\n", hint);
}
