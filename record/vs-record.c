/* SPDX-License-Identifier: MIT */
/* vs-record.c — `vramscope record`: run a program under the collector.
 *
 * options → launch → wait → build.  The launcher (vs-record-launch.c)
 * starts the program with the collector injected (CUDA_INJECTION64_PATH,
 * NVTX_INJECTION64_PATH) and a private spool directory where each
 * CUDA-using process of the run writes its own trace, forwards
 * termination signals and waits.  Then the allocator levels are imported
 * into the spool (vs-spool-run.h), and the trace is built
 * (vs-trace-build.h: the process traces merged, finalized, windowed,
 * compacted, committed); record prints a short summary and returns the
 * program's own exit status (128 + signal when a signal killed it).
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
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "vs-config.h"
#include "vs-fin-given.h"
#include "vs-framework-spool.h"
#include "vs-merge.h"
#include "vs-output.h"
#include "vs-record-launch.h"
#include "vs-record-timings.h"
#include "vs-record-window.h"
#include "vs-spool-run.h"
#include "vs-summary.h"
#include "vs-symbol-cache.h"
#include "vs-symbolize.h"
#include "vs-table.h"
#include "vs-timings.h"
#include "vs-torch-follow.h"
#include "vs-torch-stream.h"
#include "vs-trace-build.h"
#include "vs-window-rounds.h"

int vs_cmd_record (int argc, char **argv);

static const char usage_line[]
    = "usage: vramscope record [-o FILE] [--force] [--no-kernels] "
      "[--torch=auto|on|off] [--job NAME] [--window DURATION] [--timings] [-q] -- "
      "PROGRAM [ARGS...]\n";

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

/* What the command line asked for. */
typedef struct
{
  char *output, *torch, *job, *window; /* as given (GOption's), NULL: not */
  gboolean kernels, no_kernels, quiet, force, timings;
  int64_t window_ns;
  char **prog; /* the program and its arguments */
  char out[PATH_MAX];
} VsRecordOptions;

static void
options_clear (VsRecordOptions *o)
{
  g_free (o->output);
  g_free (o->torch);
  g_free (o->job);
  g_free (o->window);
}

/* Parses record's options into o (argv[0] is "record"; the program's
 * own options are never ours).  Returns -1 when they are good, else the
 * exit status (2, with the usage line printed). */
static int
parse_options (int argc, char **argv, VsRecordOptions *o)
{
  o->kernels = TRUE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output,
      "Trace to write (default vramscope-%h-%p.db; %p: pid of record, %h: host name, "
      "%q{VAR}: the value of environment variable VAR, %%: a %)",
      "FILE" },
    { "kernels", 0, 0, G_OPTION_ARG_NONE, &o->kernels,
      "Record kernels, copies and memsets (default)", NULL },
    { "no-kernels", 0, 0, G_OPTION_ARG_NONE, &o->no_kernels, "Record memory only", NULL },
    { "torch", 0, 0, G_OPTION_ARG_STRING, &o->torch,
      "PyTorch's allocator level: auto (default: in every process that imports torch), on (the "
      "same, and say so when none did), off",
      "auto|on|off" },
    { "job", 0, 0, G_OPTION_ARG_STRING, &o->job,
      "The job the run belongs to, kept in the trace's meta (default: the launcher's or batch "
      "system's job id: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, PBS_JOBID, LSB_JOBID)",
      "NAME" },
    { "window", 0, 0, G_OPTION_ARG_STRING, &o->window,
      "Flight recorder: keep full detail for the last DURATION (e.g. 30s, 10m, 2h) and around "
      "the peak and the first and last failures, and for the rest of the run aggregates per "
      "time slice, so the trace stays small however long the run",
      "DURATION" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &o->force, "Replace FILE when it exists", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "Print nothing unless something fails", NULL },
    { "timings", 0, 0, G_OPTION_ARG_NONE, &o->timings,
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
  const char *torch = o->torch ? o->torch : "auto";
  if (o->no_kernels)
    o->kernels = FALSE;
  if (strcmp (torch, "auto") != 0 && strcmp (torch, "on") != 0 && strcmp (torch, "off") != 0)
    {
      fprintf (stderr, "vramscope record: --torch takes auto, on or off, not '%s'\n%s", torch,
               usage_line);
      return 2;
    }
  if (o->window != NULL && (o->window_ns = vs_record_parse_duration (o->window)) < 0)
    {
      fprintf (stderr,
               "vramscope record: --window takes a duration such as 30s, 10m or 2h "
               "(a number above 0 and one of ms, s, m, h, d), not '%s'\n",
               o->window);
      return 2;
    }
  if (o->job != NULL && o->job[0] == '\0')
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
  o->prog = argv + i;
  return -1;
}

/* What record finds and measures once the program has ended. */
typedef struct
{
  VsTimings tm;
  VsTimings *timings; /* &tm with --timings, else NULL */
  char host[256];
  bool keep_spool; /* something could not be imported: the spool stays */
  bool live;       /* the spool holds a live trace (the window's rounds) */
  int snapshots;   /* processes whose allocator level was imported */
  VsSymbolizeJob sym;
  bool sym_threaded; /* the process traces were symbolized beside the imports */
  int64_t live_records;
  /* --timings: the program's exit, and the rows handed to the finalizer */
  int64_t after_last_ns, snapshot_ns, take_ns, write_ns;
  int64_t given_rows, given_coded, given_bytes;
} VsRecordAfter;

/* Imports every process's PyTorch allocator level (its stream, its
 * newest snapshot, the other frameworks' events) into the spool while
 * the process traces are symbolized in a thread beside. */
static void
import_levels (const VsRecordOptions *o, VsRecordLaunch *l, VsRecordAfter *a)
{
  const char *spool = l->spool;
  bool torch_on = l->torch;
  /* What symbolizing finds is kept by build-id for the next run. */
  char *symbol_dir = vs_symbol_cache_default_dir ();
  vs_symbol_cache_set_dir (symbol_dir);
  free (symbol_dir);
  a->sym.quiet = o->quiet;
  /* A live trace is symbolized as a whole at the end (its frames came from
   * the traces before they were symbolized). */
  a->live = vs_window_rounds_in (spool);
  a->sym.n = a->live ? 0 : vs_spool_run_list_processes (spool, &a->sym.files);
  GThread *sym_thread = torch_on && a->sym.n > 0
                            ? g_thread_try_new ("vs-symbolize", symbolize_job, &a->sym, NULL)
                            : NULL;
  a->sym_threaded = sym_thread != NULL;
  if (sym_thread == NULL)
    {
      /* No PyTorch imports to overlap with (or no thread): in turn. */
      symbolize_job (&a->sym);
      vs_timings_phase (a->timings, "symbolizing");
    }
  /* A window keeps PyTorch's events from the stream, whose every event
   * is there, not from a snapshot's history (a ring buffer). */
  if (l->follow != NULL)
    vs_torch_follow_stop (l->follow); /* after the pass under way, if any */
  a->snapshots = torch_on ? vs_torch_stream_import_spool (spool, a->host, l->window_ns > 0,
                                                          l->follow, &a->keep_spool)
                          : 0;
  a->live_records = l->follow != NULL ? vs_torch_follow_records (l->follow) : -1;
  if (l->follow != NULL)
    vs_torch_follow_drop_imports (l->follow);
  vs_timings_phase (a->timings, "importing the allocator stream");
  a->snapshots += torch_on ? vs_spool_run_import_snapshots (spool, a->host, &a->keep_spool) : 0;
  vs_timings_phase (a->timings, "importing snapshots");
  if (torch_on)
    vs_framework_spool_import (spool, a->host, &a->keep_spool);
  if (torch_on && l->window_ns == 0)
    vs_torch_stream_append_tails (spool, &a->keep_spool);
  vs_timings_phase (a->timings, "appending stream tails");
  if (sym_thread != NULL)
    {
      g_thread_join (sym_thread);
      vs_timings_phase (a->timings, "symbolizing (waiting after the imports)");
    }
  vs_spool_run_free_list (a->sym.files, a->sym.n);
  a->sym.files = NULL;
}

/* --timings: how long the program took to exit after its last event and
 * its last snapshot.  Measuring it is --timings' own work: charged to no
 * phase. */
static void
measure_exit (const VsRecordLaunch *l, VsRecordAfter *a)
{
  char **all = NULL;
  size_t nall = vs_spool_run_list (l->spool, &all);
  int64_t last = vs_record_last_event_ns (all, nall);
  vs_spool_run_free_list (all, nall);
  int64_t snap = vs_record_newest_snapshot_ns (l->spool, &a->take_ns, &a->write_ns);
  /* Events stamped outside the run (a clock other than the collector's)
   * say nothing about its exit. */
  if (last >= l->start_ns && l->end_ns >= last)
    a->after_last_ns = l->end_ns - last;
  if (a->after_last_ns >= 0 && snap >= last)
    a->snapshot_ns = snap - last;
  vs_timings_skip (&a->tm);
}

/* The fill of record's trace (vs-window-rounds.h), and what comes after
 * the run. */
typedef struct
{
  VsSpoolFill spool;
  VsRecordAfter *a;
} VsRecordFill;

static int
fill_trace (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err, size_t errlen)
{
  VsRecordFill *f = data;
  VsMergeRun *run = f->spool.run;
  run->timings = fo->timings;
  bool live = vs_window_rounds_in (f->spool.spool);
  int rc = vs_window_rounds_fill (&f->spool, tmp, fo->sink, fo->progress, fo->progress_data, err,
                                  errlen);
  if (rc == 0 && live)
    vs_timings_phase (fo->timings, "merging: the rest into the live trace, symbolizing it");
  /* What the followed import handed to the finalizer, and whether it
   * took it. */
  VsFinGiven *given = run->given;
  if (!vs_fin_given_taken (given))
    f->a->given_rows = f->a->given_coded = f->a->given_bytes = 0;
  vs_fin_given_free (given);
  run->given = NULL;
  return rc;
}

static int
window_trace (const char *tmp, void *data, char *err, size_t errlen)
{
  VsRecordFill *f = data;
  int rc
      = vs_record_apply_window (tmp, f->spool.window_ns, f->spool.quiet, f->a->timings, err, errlen)
            ? 0
            : -1;
  vs_timings_phase (f->a->timings, "window: the rest");
  return rc;
}

/* Writes the run's trace from the spool (vs-trace-build.h): the process
 * traces and the imported levels merged, finalized, windowed, compacted
 * and committed under o->out.  0, or -1 with err filled. */
static int
write_trace (const VsRecordOptions *o, VsRecordLaunch *l, VsRecordAfter *a, char *err,
             size_t errlen)
{
  /* Process traces sort before the torch-PID.db imports, so a snapshot's
   * process and devices already exist when it is merged. */
  char **files = NULL;
  size_t n = vs_spool_run_list (l->spool, &files);
  /* Stacks: native frames to functions and lines (vs-symbolize.c); the
   * process traces are done already, this does the imported histories. */
  if (!a->live)
    vs_symbolize_traces ((const char *const *)files, n, o->quiet);
  vs_timings_phase (a->timings, "symbolizing the imported histories");
  char *cmd = join_args (o->prog);
  char cwd[PATH_MAX];
  if (getcwd (cwd, sizeof cwd) == NULL)
    cwd[0] = '\0';
  /* The largest of record's own imports becomes the trace: the process
   * traces are copied into it rather than it into a new file. */
  char *adopt = a->live ? NULL : vs_spool_run_take_largest_import (files, &n);
  /* What its import handed to the finalizer while the program ran. */
  VsFinGiven *given
      = l->follow != NULL && adopt != NULL ? vs_torch_follow_take_given (l->follow, adopt) : NULL;
  vs_torch_follow_free (l->follow);
  l->follow = NULL;
  a->given_rows = given ? vs_fin_given_rows (given) : 0;
  a->given_coded = given ? vs_fin_given_coded_rows (given) : 0;
  a->given_bytes = given ? (int64_t)vs_fin_given_bytes (given) : 0;
  VsMergeRun run = { .main_pid = l->pid,
                     .adopt = adopt,
                     .given = given,
                     .cwd = cwd[0] != '\0' ? cwd : NULL,
                     .exit_status = l->code,
                     .start_ns = l->start_ns,
                     .end_ns = l->end_ns,
                     .command_line = cmd,
                     .host = a->host,
                     .tool_version = VS_VERSION };
  VsProgress progress = { .tty = !o->quiet && isatty (2), .what = "writing the trace", .last = -1 };
  VsRecordFill fill = { .spool = { .spool = l->spool,
                                   .files = (const char *const *)files,
                                   .n = n,
                                   .run = &run,
                                   .quiet = o->quiet,
                                   .window_ns = l->window_ns },
                        .a = a };
  VsTraceBuildOptions bo = { .output = o->out,
                             .force = o->force,
                             .force_flag = "--force",
                             .finalize = true,
                             .window = l->window_ns > 0 ? window_trace : NULL,
                             .window_data = &fill,
                             .progress = show_progress,
                             .progress_data = &progress,
                             .timings = a->timings };
  int rc = vs_trace_build (&bo, fill_trace, &fill, NULL, 0, err, errlen);
  /* A build that failed before its fill leaves what was handed over. */
  vs_fin_given_free (run.given);
  vs_timings_phase (a->timings, "committing the file");
  if (progress.tty && progress.last >= 0)
    fprintf (stderr, "\r\033[K");
  free (cmd);
  free (adopt);
  vs_spool_run_free_list (files, n);
  return rc;
}

/* --timings: the post-run phases, the rows handed over, the rounds. */
static void
report_timings (const VsRecordLaunch *l, VsRecordAfter *a)
{
  vs_record_report_timings (&a->tm, l->end_ns - l->start_ns, a->after_last_ns, a->snapshot_ns,
                            a->take_ns, a->write_ns, a->sym_threaded ? a->sym.ns : -1,
                            a->live_records, l->out);
  vs_record_report_given (l->out, a->given_rows, a->given_coded, a->given_bytes);
  if (l->window_ns > 0)
    fprintf (stderr, "  %-42s %10lld rounds, %.2f s in all (longest %.2f s)\n",
             "window applied while the program ran", (long long)l->rounds_st.rounds,
             l->rounds_st.busy_ns / 1e9, l->rounds_st.longest_ns / 1e9);
}

/* Everything after the program's end: the imports, the trace, the
 * spool's removal, the summary.  Returns record's exit status. */
static int
after_run (const VsRecordOptions *o, VsRecordLaunch *l)
{
  VsRecordAfter a = { .after_last_ns = -1, .snapshot_ns = -1, .take_ns = -1, .write_ns = -1 };
  /* --timings: every phase from here on is marked, the finalizer's too. */
  if (o->timings)
    {
      vs_timings_start (&a.tm);
      a.timings = &a.tm;
    }
  snprintf (a.host, sizeof a.host, "localhost");
  gethostname (a.host, sizeof a.host - 1);
  import_levels (o, l, &a);
  if (o->timings)
    measure_exit (l, &a);
  if (o->torch != NULL && strcmp (o->torch, "on") == 0 && a.snapshots == 0 && !a.keep_spool)
    fprintf (stderr, "vramscope record: --torch=on, but no process of the run used CUDA "
                     "through PyTorch's caching allocator\n");
  if (!a.keep_spool && vs_spool_run_is_empty (l->spool))
    {
      fprintf (stderr, "vramscope record: no process of the run used CUDA; no trace written\n");
      vs_torch_follow_free (l->follow);
      vs_spool_run_remove (l->spool);
      return l->code;
    }
  char err[1024] = "";
  if (write_trace (o, l, &a, err, sizeof err) != 0)
    {
      fprintf (stderr,
               "vramscope record: cannot write %s: %s (process traces kept in %s: "
               "vramscope recover writes the trace from them)\n",
               o->out, err, l->spool);
      return l->code != 0 ? l->code : 1;
    }
  if (!a.keep_spool)
    vs_spool_run_remove (l->spool);
  vs_timings_phase (a.timings, "removing the spool");
  if (!o->quiet)
    print_summary (o->out);
  vs_timings_phase (a.timings, "printing the summary");
  if (o->timings)
    report_timings (l, &a);
  return l->code;
}

/* `vramscope record`: options → launch → wait → build (see the file
 * comment).  argv[0] is "record". */
int
vs_cmd_record (int argc, char **argv)
{
  VsRecordOptions o = { 0 };
  int status = parse_options (argc, argv, &o);
  if (status >= 0)
    {
      options_clear (&o);
      return status;
    }
  char err[1024] = "";
  /* Refused before the program runs, not after. */
  if (!expand_output (o.output ? o.output : "vramscope-%h-%p.db", o.out, sizeof o.out))
    status = 1;
  else if (vs_output_check (o.out, o.force, "--force", NULL, 0, err, sizeof err) < 0)
    {
      fprintf (stderr, "vramscope record: %s\n", err);
      status = 1;
    }
  VsRecordLaunch l = { .prog = o.prog,
                       .out = o.out,
                       .job = o.job,
                       .kernels = o.kernels,
                       .torch = o.torch == NULL || strcmp (o.torch, "off") != 0,
                       .quiet = o.quiet,
                       .window_ns = o.window_ns };
  if (status < 0)
    status = vs_record_launch (&l);
  if (status == 0)
    {
      vs_record_wait (&l);
      if (l.exec_errno != 0)
        {
          fprintf (stderr, "vramscope record: cannot run %s: %s\n", o.prog[0],
                   strerror (l.exec_errno));
          vs_torch_follow_free (l.follow);
          vs_spool_run_remove (l.spool);
          status = l.code;
        }
      else
        status = after_run (&o, &l);
    }
  options_clear (&o);
  return status;
}
