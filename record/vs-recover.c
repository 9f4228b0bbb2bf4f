/* SPDX-License-Identifier: MIT */
/* vs-recover.c — `vramscope recover SPOOL_DIR -o FILE`: the trace a killed
 * `record` left.
 *
 * `record` keeps every process's trace in a spool directory while the
 * program runs (vs-spool.h) and merges it when the program ends.  When
 * record itself is killed (SIGKILL, a node going down) the spool stays:
 * process traces in WAL mode, committed by the collector at least every
 * 100 ms, and the PyTorch snapshots of processes that got to write one.
 * recover does what record would have done: imports the newest snapshot of
 * each process, symbolizes, merges and finalizes, into FILE.  It refuses
 * while the recording or one of its processes still runs on this host; a
 * spool recorded on another host is recovered with a warning.
 *
 * A process killed in the middle of a write leaves a WAL whose last
 * transaction has no commit frame, or whose last frame is torn: SQLite's
 * recovery, run when the merge opens the file read-write, keeps every
 * committed transaction and drops the rest, so what was committed is what
 * is recovered.
 *
 * A trace SQLite finds damaged (a full disk, a copy cut short) is left
 * out with one line, and the rest recovered.
 *
 * The trace is written under a temporary name beside FILE and renamed when
 * complete (removed at SIGINT, SIGTERM or SIGHUP); an existing FILE is
 * replaced only with --force, and a FILE inside the spool never.  recover
 * owns only the recording's own files of the spool (vs-spool-files.h): it
 * never writes through a link, leaves out what is not a process trace of
 * the recording, and once the trace is written removes the recording's
 * files, and the folder only when nothing else is in it, unless --keep.
 * docs/collector.md says exactly what it may delete.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-config.h"
#include "vs-framework-spool.h"
#include "vs-merge.h"
#include "vs-output.h"
#include "vs-recover.h"
#include "vs-window-rounds.h"
#include "vs-record-window.h"
#include "vs-spool.h"
#include "vs-spool-files.h"
#include "vs-spool-run.h"
#include "vs-symbol-cache.h"
#include "vs-symbolize.h"
#include "vs-trace-build.h"
#include "vs-torch-stream.h"

/* The temporary trace being written, removed at a signal (see
 * on_signal). */
static char temp_path[PATH_MAX + 64];

/* Set while recover writes in the spool (imports, symbolization,
 * replaying a process's log): a signal then waits for the step to end, so
 * that the spool is never left half written. */
static volatile sig_atomic_t deferring, deferred;

/* SIGINT, SIGTERM, SIGHUP: the temporary trace is removed and the process
 * ends as the signal would; while deferring, only once the step ends
 * (a second signal does not wait). */
static void
on_signal (int sig)
{
  if (deferring && !deferred)
    {
      deferred = sig;
      return;
    }
  if (temp_path[0] != '\0')
    vs_output_remove (temp_path);
  signal (sig, SIG_DFL);
  raise (sig);
}

/* Ends a step that writes in the spool: a signal that came meanwhile is
 * acted on now. */
static void
end_spool_step (void)
{
  deferring = 0;
  if (deferred)
    on_signal (deferred);
}

/* A trace of the spool that is the recording's: a vramscope trace of this
 * version's schema (the collector finalizes its own at a normal exit; a
 * trace of another schema, a compacted one included, was put there).
 * NULL, or why not. */
static const char *
not_an_input (sqlite3 *db, char *buf, size_t len)
{
  static const char *sql = "SELECT (SELECT application_id FROM pragma_application_id),"
                           " (SELECT user_version FROM pragma_user_version)";
  sqlite3_stmt *s = NULL;
  const char *why = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step (s) != SQLITE_ROW
      || sqlite3_column_int (s, 0) != VS_TRACE_APPLICATION_ID)
    why = "not a vramscope trace";
  else if (sqlite3_column_int (s, 1) != VS_TRACE_SCHEMA_VERSION)
    {
      snprintf (buf, len, "a trace of schema %d, not of this recording's %d",
                sqlite3_column_int (s, 1), VS_TRACE_SCHEMA_VERSION);
      why = buf;
    }
  sqlite3_finalize (s);
  return why;
}

/* Leaves out of files[0..n-1] the traces SQLite finds damaged (a process
 * killed mid-write never damages its file; a disk that filled up or a copy
 * cut short may) and the files that are not the recording's process
 * traces (another trace put there), each reported in one line: the rest
 * of the run is still recovered.  Opening a trace read-write first
 * replays its WAL; a link is never opened.  Returns the count left; sets
 * *dropped when one was left out. */
static size_t
drop_unusable (char **files, size_t n, bool *dropped)
{
  static const char *check_sql = "PRAGMA quick_check(1)";
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    {
      sqlite3 *db = NULL;
      sqlite3_stmt *s = NULL;
      const char *why = NULL, *foreign = NULL;
      char buf[128];
      g_autofree char *msg = NULL;
      if (sqlite3_open_v2 (files[i], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL)
              != SQLITE_OK
          || sqlite3_prepare_v2 (db, check_sql, -1, &s, NULL) != SQLITE_OK
          || sqlite3_step (s) != SQLITE_ROW)
        why = db ? sqlite3_errmsg (db) : "out of memory";
      else if (strcmp ((const char *)sqlite3_column_text (s, 0), "ok") != 0)
        why = (const char *)sqlite3_column_text (s, 0);
      if (why != NULL)
        msg = g_strdelimit (g_strdup (why), "\n", ' ');
      sqlite3_finalize (s);
      if (msg == NULL)
        foreign = not_an_input (db, buf, sizeof buf);
      sqlite3_close (db);
      if (msg != NULL || foreign != NULL)
        {
          if (msg != NULL)
            fprintf (stderr, "vramscope recover: %s is damaged (%s); it is left out\n", files[i],
                     msg);
          else
            fprintf (stderr, "vramscope recover: %s is %s; it is left out\n", files[i], foreign);
          free (files[i]);
          *dropped = true;
          continue;
        }
      files[kept++] = files[i];
    }
  return kept;
}

/* Whether recover writes the file of the spool named name (an import of
 * PyTorch's level, the live trace, or a side file of one). */
static bool
written_by_recover (const char *name)
{
  return g_str_has_prefix (name, VS_WINDOW_LIVE_TRACE)
         || (g_str_has_prefix (name, "torch-") && strstr (name, ".db") != NULL);
}

/* Says, one line each, which files of the spool named as the recording's
 * are links or not regular files: the recording wrote none of them, and
 * none is read or written.  False when one is a file recover would write
 * (it cannot be left out without changing the trace): recover stops. */
static bool
check_links (const char *spool)
{
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  const char *name;
  bool ok = true;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (spool, name, NULL);
      const char *why = NULL;
      if (!vs_spool_name_is_ours (name) || vs_spool_file_is_plain (path, &why))
        continue;
      if (written_by_recover (name))
        {
          fprintf (stderr,
                   "vramscope recover: %s is %s, which recover never writes through; move it "
                   "out of the spool and recover again\n",
                   path, why);
          ok = false;
        }
      else
        fprintf (stderr, "vramscope recover: %s is %s, not the recording's; it is left out\n", path,
                 why);
    }
  return ok;
}

/* Whether the file out would be inside the folder spool (the spool's
 * files, its folder itself, are removed once the trace is written). */
static bool
inside_spool (const char *spool, const char *out)
{
  g_autofree char *dir = g_path_get_dirname (out);
  char rs[PATH_MAX], rd[PATH_MAX];
  if (realpath (spool, rs) == NULL || realpath (dir, rd) == NULL)
    return false;
  size_t l = strlen (rs);
  return strcmp (rs, "/") == 0 || (strncmp (rd, rs, l) == 0 && (rd[l] == '\0' || rd[l] == '/'));
}

/* The pid of a process of the run that is still alive on this host and
 * still has its trace in the spool (process-PID-NS.db, NS when the
 * collector created it), or 0.  A process that started more than 10 s
 * after NS got the pid after the recording's process ended: not one. */
static gint64
running_writer (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      long long pid = 0, created = 0;
      int got = sscanf (name, "process-%lld-%lld", &pid, &created);
      if (got < 1 || pid <= 0 || pid > G_MAXINT || !vs_spool_pid_alive (pid))
        continue;
      gint64 started = vs_spool_pid_start_ns (pid);
      if (got == 2 && started > 0 && created < G_MAXINT64 - 10000000000LL
          && started > created + 10000000000LL)
        continue;
      return pid;
    }
  return 0;
}

static void
usage (FILE *f)
{
  fprintf (f, "Usage: vramscope recover SPOOL_DIR -o FILE [--force] [--keep] [--quiet]\n"
              "\n"
              "Writes the trace of a recording whose `vramscope record` was killed: merges\n"
              "and finalizes the per-process traces and PyTorch snapshots it left in\n"
              "SPOOL_DIR (.vramscope-spool-* beside the output it was writing).\n"
              "\n"
              "  -o, --output FILE   trace to write\n"
              "  -f, --force         replace FILE if it exists; recover even though the\n"
              "                      record pid in run.info runs, once it is not vramscope\n"
              "  --keep              keep SPOOL_DIR (it is removed once FILE is written)\n"
              "  -q, --quiet         print nothing unless something fails\n"
              "\n"
              "Examples:\n"
              "  vramscope recover .vramscope-spool-1234 -o run.db\n"
              "  vramscope recover .vramscope-spool-1234 -o run.db --force --keep\n");
}

/* Says what became of the spool once its trace is written: removed, or
 * kept and why. */
static void
finish_spool (const char *spool, bool owned, bool keep, bool kept, bool quiet)
{
  if (!keep && !kept && owned)
    {
      long left = vs_spool_remove (spool);
      if (left > 0)
        fprintf (stderr,
                 "vramscope: the recording's files are removed from %s; it is kept, with the "
                 "%ld files in it that are not the recording's\n",
                 spool, left);
    }
  else if (!keep && !kept && !quiet)
    fprintf (stderr,
             "vramscope: %s is kept: it has no run.info, so nothing tells which of its files "
             "are the recording's\n",
             spool);
  else if (!quiet)
    fprintf (stderr, "vramscope: the spool %s is kept\n", spool);
}

static int
fill_trace (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err, size_t errlen)
{
  VsSpoolFill *f = data;
  /* The handler removes the temporary from now on (signals were deferred
   * since before it was made). */
  snprintf (temp_path, sizeof temp_path, "%s", tmp);
  end_spool_step ();
  /* What the rounds brought into the live trace, and the rest. */
  int rc = vs_window_rounds_fill (f, tmp, fo->sink, NULL, NULL, err, errlen);
  return rc == 0 ? 0 : -1;
}

static int
window_trace (const char *tmp, void *data, char *err, size_t errlen)
{
  VsSpoolFill *f = data;
  return vs_record_apply_window (tmp, f->window_ns, f->quiet, NULL, err, errlen) ? 0 : -1;
}

/* From the commit on, the spool is removed: a signal waits. */
static void
committing (void *data)
{
  deferring = 1;
}

/* What recover does once the spool is checked: imports, symbolizes,
 * merges, windows and compacts into a temporary file beside out, commits
 * it, then removes the spool's own files.  The exit status. */
static int
recover_into (const char *spool, const char *out, const VsSpoolInfo *info, const char *host,
              bool force, bool quiet, bool keep, bool owned)
{
  char err[1024] = "";
  bool kept = false;
  const char *run_host = info->host ? info->host : host;
  long long window_ns = vs_spool_run_window_ns (spool);
  deferring = 1;
  int snapshots = vs_torch_stream_import_spool (spool, run_host, window_ns > 0, NULL, &kept);
  snapshots += vs_spool_run_import_snapshots (spool, run_host, &kept);
  vs_framework_spool_import (spool, run_host, &kept);
  if (window_ns == 0)
    vs_torch_stream_append_tails (spool, &kept);
  char **files = NULL;
  size_t n = vs_spool_run_list (spool, &files);
  n = drop_unusable (files, n, &kept);
  end_spool_step ();
  int status = 0;
  if (n > 0
      && vs_output_check (out, force, "--force", (const char *const *)files, n, err, sizeof err)
             < 0)
    {
      fprintf (stderr, "vramscope recover: %s\n", err);
      status = 1;
    }
  else if (n == 0)
    {
      fprintf (stderr,
               "vramscope recover: %s holds no trace of any process (no process of the "
               "run used CUDA): nothing to recover\n",
               spool);
      status = 1;
    }
  else
    {
      char *symbol_dir = vs_symbol_cache_default_dir ();
      vs_symbol_cache_set_dir (symbol_dir);
      free (symbol_dir);
      /* A live trace is symbolized as a whole (vs-window-rounds.h). */
      deferring = 1;
      if (!vs_window_rounds_in (spool))
        vs_symbolize_traces ((const char *const *)files, n, quiet);
      end_spool_step ();
      VsMergeRun run = { .main_pid = info->program_pid > 0 ? info->program_pid : -1,
                         .exit_status = VS_UNKNOWN,
                         .start_ns = info->start_ns > 0 ? info->start_ns : VS_UNKNOWN,
                         .end_ns = VS_UNKNOWN,
                         .command_line = NULL,
                         .host = run_host,
                         .tool_version = VS_VERSION };
      VsSpoolFill fill = { .spool = spool,
                           .files = (const char *const *)files,
                           .n = n,
                           .run = &run,
                           .quiet = quiet,
                           .window_ns = window_ns };
      /* A windowed recording is recovered windowed, as record would have. */
      VsTraceBuildOptions bo = { .output = out,
                                 .force = force,
                                 .force_flag = "--force",
                                 .finalize = true,
                                 .window = window_ns > 0 ? window_trace : NULL,
                                 .window_data = &fill,
                                 .committing = committing };
      /* The temporary is named to the handler whole, never half written
       * (fill_trace). */
      deferring = 1;
      if (vs_trace_build (&bo, fill_trace, &fill, NULL, 0, err, sizeof err) != 0)
        {
          status = 1;
          fprintf (stderr, "vramscope recover: cannot write %s: %s\n", out, err);
        }
      temp_path[0] = '\0';
    }
  size_t nproc = 0;
  for (size_t k = 0; k < n; k++)
    if (g_str_has_prefix (strrchr (files[k], '/') ? strrchr (files[k], '/') + 1 : files[k],
                          "process-"))
      nproc++;
  for (size_t k = 0; k < n; k++)
    free (files[k]);
  free (files);
  if (status == 0)
    {
      if (!quiet)
        fprintf (stderr, "vramscope: recovered %zu process trace%s%s from %s into %s\n", nproc,
                 nproc == 1 ? "" : "s",
                 snapshots > 0 ? (snapshots == 1 ? " (1 with PyTorch's allocator level)"
                                                 : " (with PyTorch's allocator level)")
                               : "",
                 spool, out);
      finish_spool (spool, owned, keep, kept, quiet);
    }
  end_spool_step ();
  return status;
}

/* `vramscope recover`: see the file comment.  argv[0] is "recover". */
int
vs_cmd_recover (int argc, char **argv)
{
  const char *out = NULL, *spool = NULL;
  bool force = false, keep = false, quiet = false;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "-o") == 0 || strcmp (a, "--output") == 0)
        {
          if (i + 1 >= argc)
            {
              fprintf (stderr, "vramscope recover: %s needs a file name\n", a);
              return 2;
            }
          out = argv[++i];
        }
      else if (g_str_has_prefix (a, "--output="))
        out = a + 9;
      else if (strcmp (a, "-f") == 0 || strcmp (a, "--force") == 0)
        force = true;
      else if (strcmp (a, "--keep") == 0)
        keep = true;
      else if (strcmp (a, "-q") == 0 || strcmp (a, "--quiet") == 0)
        quiet = true;
      else if (strcmp (a, "-h") == 0 || strcmp (a, "--help") == 0)
        {
          usage (stdout);
          return 0;
        }
      else if (a[0] == '-' && a[1] != '\0')
        {
          fprintf (stderr, "vramscope recover: unknown option %s (see vramscope recover --help)\n",
                   a);
          return 2;
        }
      else if (spool == NULL)
        spool = a;
      else
        {
          fprintf (stderr, "vramscope recover: one spool directory at a time ('%s' is extra)\n", a);
          return 2;
        }
    }
  if (spool == NULL || out == NULL || out[0] == '\0')
    {
      fprintf (stderr, "vramscope recover: %s (usage: vramscope recover SPOOL_DIR -o FILE)\n",
               spool == NULL ? "no spool directory given" : "no output file given (-o FILE)");
      return 2;
    }
  if (!g_file_test (spool, G_FILE_TEST_IS_DIR))
    {
      fprintf (stderr, "vramscope recover: %s: %s\n", spool,
               g_file_test (spool, G_FILE_TEST_EXISTS) ? "not a directory" : "no such directory");
      return 1;
    }
  if (!vs_spool_looks_like_spool (spool))
    {
      fprintf (stderr,
               "vramscope recover: %s is not a recording's spool directory (no process "
               "traces or PyTorch snapshots in it)\n",
               spool);
      return 1;
    }
  g_auto (VsSpoolInfo) info = { 0 };
  /* Only a folder with a run.info is a spool record made: only there are
   * the recording's files removed. */
  bool owned = vs_spool_read_info (spool, &info);
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  /* Pids name processes of this host only: a spool recorded on another
   * host (copied here, or on a shared filesystem) cannot be checked. */
  bool here = info.host == NULL || strcmp (info.host, host) == 0;
  gint64 writer = here ? running_writer (spool) : 0;
  if (!here && !quiet)
    fprintf (stderr,
             "vramscope recover: %s was recorded on %s: if its program still runs there, "
             "this trace stops where the spool stood\n",
             spool, info.host);
  if (writer > 0)
    {
      fprintf (stderr,
               "vramscope recover: process %lld of the recording is still running and "
               "writing to %s; recover it once it has ended\n",
               (long long)writer, spool);
      return 1;
    }
  if (here && vs_spool_is_active (spool))
    {
      /* A record that ended long ago: its pid may have been given to
       * another program since, which --force looks past. */
      gint64 owner = vs_spool_record_pid (spool);
      if (!force || vs_spool_pid_is_vramscope (owner))
        {
          fprintf (stderr,
                   "vramscope recover: the recording that owns %s is still running (process "
                   "%lld); it will write its trace itself%s\n",
                   spool, (long long)owner,
                   vs_spool_pid_is_vramscope (owner)
                       ? ""
                       : " (if that process is not its record, --force recovers anyway)");
          return 1;
        }
      if (!quiet)
        fprintf (stderr,
                 "vramscope recover: process %lld, which run.info names as the recording's, is "
                 "not vramscope (its pid was given again): recovering\n",
                 (long long)owner);
    }
  if (inside_spool (spool, out))
    {
      fprintf (stderr,
               "vramscope recover: %s is inside the spool %s, which is removed once the trace "
               "is written; write it elsewhere\n",
               out, spool);
      return 1;
    }
  char err[1024] = "";
  if (vs_output_check (out, force, "--force", NULL, 0, err, sizeof err) < 0)
    {
      fprintf (stderr, "vramscope recover: %s\n", err);
      return 1;
    }
  if (!check_links (spool))
    return 1;

  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  struct sigaction sa = { 0 }, old[3];
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  temp_path[0] = '\0';
  for (int k = 0; k < 3; k++)
    sigaction (sigs[k], &sa, &old[k]);
  int status = recover_into (spool, out, &info, host, force, quiet, keep, owned);
  for (int k = 0; k < 3; k++)
    sigaction (sigs[k], &old[k], NULL);
  return status;
}
