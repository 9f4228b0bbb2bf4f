/* SPDX-License-Identifier: MIT */
/* vs-cmd-import.c — `vramscope import SNAPSHOT.pickle [-o FILE]`.
 *
 * Turns a PyTorch memory snapshot into a trace (vs-import.c).  The trace is
 * written to a temporary file beside FILE and renamed into place only when
 * complete, so an interrupted or failed import never leaves a half-written
 * trace under FILE.  On a terminal, a progress line is shown for snapshots
 * large enough to take a moment; Ctrl-C cancels cleanly.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "vs-cli.h"
#include "vs-import.h"
#include "vs-output.h"
#include "vs-pickle.h"
#include "vs-timings.h"
#include "vs-trace-build.h"

/* The first SIGINT, SIGTERM or SIGHUP cancels the import, which then
 * removes its temporary file; a second one removes it at once and ends the
 * process as the signal would (vs_output_guard). */
static volatile sig_atomic_t interrupted;

typedef struct
{
  gboolean show;
  gint64 last_us;
  int last_pct;
} Progress;

/* Prints "importing NN% (stage)" on stderr at most every 100 ms; returns
 * FALSE once the user interrupted. */
static gboolean
on_progress (const char *stage, double fraction, gpointer data)
{
  Progress *pr = data;
  if (interrupted)
    return FALSE;
  if (pr->show)
    {
      gint64 now = g_get_monotonic_time ();
      int pct = (int)(fraction * 100.0);
      if (pct != pr->last_pct && now - pr->last_us > 100000)
        {
          fprintf (stderr, "\rimporting %3d%% (%s)   ", pct, stage);
          fflush (stderr);
          pr->last_us = now;
          pr->last_pct = pct;
        }
    }
  return TRUE;
}

typedef struct
{
  const char *snapshot;
  gpointer progress;
  VsTimings *timings; /* --timings: the import's stages too */
  VsImportStats stats;
  GError *error;     /* the import's failure */
  gboolean imported; /* the import finished */
} ImportFill;

/* Fills the trace at tmp from the snapshot (VsTraceFill), guarding tmp
 * against the signals that end a command meanwhile. */
static int
import_fill (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err, size_t errlen)
{
  ImportFill *f = data;
  vs_output_guard (tmp, &interrupted);
  gboolean ok
      = vs_import_snapshot_full (f->snapshot, tmp, fo != NULL, fo != NULL ? fo->sink : NULL,
                                 f->timings, on_progress, f->progress, &f->stats, &f->error);
  f->imported = ok;
  if (!ok)
    snprintf (err, errlen, "%s", f->error != NULL ? f->error->message : "cannot import");
  else if (interrupted)
    snprintf (err, errlen, "interrupted");
  return ok && !interrupted ? 0 : -1;
}

/* The default output: the snapshot's name with .pickle/.pkl replaced by
 * .db, in the current folder. */
static char *
default_output (const char *snapshot)
{
  g_autofree char *base = g_path_get_basename (snapshot);
  const char *exts[] = { ".pickle", ".pkl", ".pk" };
  for (gsize i = 0; i < G_N_ELEMENTS (exts); i++)
    if (g_str_has_suffix (base, exts[i]) && strlen (base) > strlen (exts[i]))
      {
        base[strlen (base) - strlen (exts[i])] = '\0';
        break;
      }
  return g_strconcat (base, ".db", NULL);
}

/* Entry point of the subcommand; argv[0] is "import".  Returns the exit
 * status: 0 on success, 1 on bad input or failure, 2 on a usage error, 130
 * when interrupted. */
int
vs_cmd_import (int argc, char **argv)
{
  g_autofree char *output = NULL;
  gboolean quiet = FALSE, timings = FALSE, no_finalize = FALSE, force = FALSE;
  GOptionEntry entries[]
      = { { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
            "Write the trace to FILE (default: the snapshot's name with .db)", "FILE" },
          { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace FILE when it exists", NULL },
          { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print nothing but errors", NULL },
          { "timings", 0, 0, G_OPTION_ARG_NONE, &timings,
            "Print the time spent reading, importing and finalizing, and each "
            "pass of finalizing, on stderr",
            NULL },
          { "no-finalize", 0, 0, G_OPTION_ARG_NONE, &no_finalize,
            "Write the raw events only, to merge into another trace (readers "
            "finalize such a trace when they first open it)",
            NULL },
          { NULL } };
  g_set_prgname ("vramscope import");
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SNAPSHOT.pickle");
  g_option_context_set_summary (
      ctx, "Convert a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot)\n"
           "into a vramscope trace.  Other commands also take a snapshot directly\n"
           "(vramscope report snapshot.pickle), importing it into the user's cache.");
  g_option_context_set_description (ctx, "Examples:\n"
                                         "  vramscope import snapshot.pickle -o run.db\n"
                                         "  vramscope import snapshot.pickle -o run.db --force\n");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "vramscope import: %s (usage: vramscope import SNAPSHOT.pickle -o FILE)\n",
               error->message);
      return 2;
    }
  if (argc != 2)
    {
      fprintf (stderr, "vramscope import: expected one snapshot file "
                       "(usage: vramscope import SNAPSHOT.pickle -o FILE)\n");
      return 2;
    }
  const char *snapshot = argv[1];
  GStatBuf in;
  if (g_stat (snapshot, &in) != 0 || !S_ISREG (in.st_mode))
    {
      fprintf (stderr, "vramscope import: %s: %s\n", snapshot,
               g_stat (snapshot, &in) != 0 ? g_strerror (errno) : "not a regular file");
      return 1;
    }
  if (output == NULL)
    output = default_output (snapshot);

  char err[1024] = "";
  const char *inputs[] = { snapshot };
  if (vs_output_check (output, force, "--force", inputs, 1, err, sizeof err) < 0)
    {
      fprintf (stderr, "vramscope import: %s\n", err);
      return 1;
    }

  GStatBuf sb;
  Progress pr = { .last_pct = -1 };
  pr.show
      = !quiet && isatty (STDERR_FILENO) && g_stat (snapshot, &sb) == 0 && sb.st_size >= (16 << 20);

  /* --timings: the import's stages, the finalizer's passes and the
   * compaction are marked into this recorder. */
  VsTimings phases;
  if (timings)
    vs_timings_start (&phases);
  ImportFill fill = { .snapshot = snapshot, .progress = &pr, .timings = timings ? &phases : NULL };
  VsTraceBuildOptions bo = { .output = output,
                             .force = force,
                             .force_flag = "--force",
                             .finalize = !no_finalize,
                             .timings = timings ? &phases : NULL,
                             .cancel = &interrupted };
  int rc = vs_trace_build (&bo, import_fill, &fill, NULL, 0, err, sizeof err);
  vs_output_guard_end ();
  if (pr.show)
    fprintf (stderr, "\r%40s\r", "");

  int status = 0;
  if (rc == 0)
    ;
  else if (fill.imported && !interrupted)
    {
      /* Imported, but not compacted or not put in place. */
      fprintf (stderr, "vramscope import: %s\n", err);
      status = 1;
    }
  else if (interrupted || fill.imported
           || g_error_matches (fill.error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_CANCELLED)
           || g_error_matches (fill.error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_CANCELLED))
    {
      fprintf (stderr, "vramscope import: interrupted; no trace written\n");
      status = 130;
    }
  else
    {
      fprintf (stderr, "vramscope import: %s: %s\n", snapshot, fill.error->message);
      status = 1;
    }
  VsImportStats stats = fill.stats;
  g_clear_error (&fill.error);

  if (status == 0 && timings)
    {
      fprintf (stderr,
               "vramscope import: reading %.2f s, importing %.2f s, "
               "finalizing %.2f s\n",
               stats.reading_us / 1e6, stats.importing_us / 1e6, stats.finalizing_us / 1e6);
      vs_timings_print (&phases, stderr);
    }
  if (status == 0 && !quiet)
    {
      printf ("%s: %" G_GUINT64_FORMAT " history entries on %u device%s", output, stats.entries,
              stats.devices, stats.devices == 1 ? "" : "s");
      if (stats.synthetic_events)
        printf ("; memory live before the history reconstructed");
      if (stats.history_overflow)
        printf ("; the history is incomplete (ring buffer overflow or "
                "recording started late): counts before its first entry are "
                "unknown");
      if (stats.event_order)
        printf ("; the history has no timestamps: times are event numbers");
      if (stats.skipped)
        printf ("; %" G_GUINT64_FORMAT " entr%s or annotations not imported (kinds and counts in "
                "meta import_skipped)",
                stats.skipped, stats.skipped == 1 ? "y" : "ies");
      printf ("\n");
    }
  return status;
}
