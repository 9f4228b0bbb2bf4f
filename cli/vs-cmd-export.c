/* SPDX-License-Identifier: MIT */
/* vs-cmd-export.c — `vramscope export FILE --format
 * perfetto|snapshot|folded|sqlite [-o OUT]`.
 *
 * Writes the trace in a format another tool reads (vs-export.h); sqlite is
 * a copy with plain tables (a compacted trace expanded, vs-trace-compact.h)
 * for SQLite clients that cannot load the vramscope-sqlite extension.  The
 * output is written to a temporary file beside OUT and renamed into place
 * only when complete (removed on SIGINT, SIGTERM or SIGHUP: vs_output_guard);
 * an existing OUT is replaced only with --force.
 * `-o -` writes to standard output.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-cli.h"
#include "vs-export.h"
#include "vs-output.h"
#include "vs-trace-compact.h"

static const char usage_line[]
    = "usage: vramscope export FILE --format perfetto|snapshot|folded|sqlite [-o OUT] [--force]\n"
      "       [--device N] [--allocator NAME] [--at peak|exit]\n";

typedef enum
{
  FORMAT_PERFETTO,
  FORMAT_SNAPSHOT,
  FORMAT_FOLDED,
  FORMAT_SQLITE,
} Format;

static const struct
{
  const char *name;
  const char *extension;
} formats[] = {
  [FORMAT_PERFETTO] = { "perfetto", ".json" },
  [FORMAT_SNAPSHOT] = { "snapshot", ".pickle" },
  [FORMAT_FOLDED] = { "folded", ".folded" },
  [FORMAT_SQLITE] = { "sqlite", ".sqlite" },
};

/* The default output: the trace's name with its extension replaced by the
 * format's, in the current folder. */
static char *
default_output (const char *file, Format format)
{
  g_autofree char *base = g_path_get_basename (file);
  char *dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_strconcat (base, formats[format].extension, NULL);
}

/* Writes the export to out; returns FALSE with error set. */
static gboolean
write_export (VsTrace *trace, Format format, gint64 device_id, gint64 allocator_id,
              VsFoldedWhen when, FILE *out, GError **error)
{
  switch (format)
    {
    case FORMAT_PERFETTO:
      return vs_export_perfetto (trace, out, error);
    case FORMAT_SNAPSHOT:
      return vs_export_snapshot (trace, device_id, out, error);
    case FORMAT_FOLDED:
      return vs_export_folded (trace, device_id, allocator_id, when, out, error);
    case FORMAT_SQLITE:
      break;
    }
  g_assert_not_reached ();
}

/* Writes the export of trace (read from file) into the temporary tmp and
 * commits it to output.  Returns the exit status; tmp is gone either way. */
static int
write_file (VsTrace *trace, const char *file, Format format, gint64 device_id, gint64 allocator_id,
            VsFoldedWhen when, const char *output, const char *tmp, gboolean force)
{
  g_autoptr (GError) error = NULL;
  char err[1024];

  if (format == FORMAT_SQLITE)
    {
      /* The trace opened and validated above; the copy is written from
       * the file itself. */
      if (vs_trace_export_plain (file, tmp, err, sizeof err) < 0
          || vs_output_commit (tmp, output, force, "--force", err, sizeof err) < 0)
        {
          vs_output_remove (tmp);
          fprintf (stderr, "vramscope export: %s\n", err);
          return 1;
        }
      return 0;
    }
  FILE *out = g_fopen (tmp, "wb");
  if (out == NULL)
    {
      fprintf (stderr, "vramscope export: cannot write %s: %s\n", output, g_strerror (errno));
      vs_output_remove (tmp);
      return 1;
    }
  gboolean ok = write_export (trace, format, device_id, allocator_id, when, out, &error);
  gboolean write_failed = ferror (out) != 0;
  int saved = errno;
  if (fclose (out) != 0 && !write_failed)
    write_failed = TRUE, saved = errno;
  if (!ok || write_failed)
    {
      vs_output_remove (tmp);
      if (!ok)
        fprintf (stderr, "vramscope: %s\n", error->message);
      else
        fprintf (stderr, "vramscope export: cannot write %s: %s\n", output, g_strerror (saved));
      return 1;
    }
  if (vs_output_commit (tmp, output, force, "--force", err, sizeof err) < 0)
    {
      vs_output_remove (tmp);
      fprintf (stderr, "vramscope export: %s\n", err);
      return 1;
    }
  return 0;
}

/* Entry point of the subcommand; argv[0] is "export".  Returns the exit
 * status: 0 on success, 1 on bad input or failure, 2 on a usage error. */
int
vs_cmd_export (int argc, char **argv)
{
  g_autofree char *format_name = NULL, *output = NULL, *allocator = NULL, *at = NULL;
  gboolean force = FALSE;
  gint64 device = G_MININT64;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_name,
      "perfetto (Chrome/Perfetto JSON), snapshot (PyTorch snapshot pickle), folded (folded "
      "stacks) or sqlite (the trace with plain tables, for any SQLite client)",
      "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Write to OUT (default: the trace's name with .json, .pickle, .folded or .sqlite; - for "
      "standard output)",
      "OUT" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace OUT if it exists", NULL },
    { "device", 0, 0, G_OPTION_ARG_INT64, &device,
      "Only this device (snapshot, folded; its index, as in the device column)", "N" },
    VS_CLI_ALLOCATOR_ENTRY (allocator, "folded: "),
    { "at", 0, 0, G_OPTION_ARG_STRING, &at,
      "folded: the bytes live at the peak (default) or at exit", "peak|exit" },
    { NULL }
  };
  if (vs_cli_parse_options (
          "export", "FILE",
          "Write a trace in a format other tools open: perfetto (ui.perfetto.dev,\n"
          "chrome://tracing), snapshot (PyTorch's memory_viz), folded (flamegraph.pl,\n"
          "speedscope) or sqlite (plain tables: DuckDB, any SQLite client).",
          "FILE is a trace or a PyTorch snapshot (.pickle).\n\n"
          "Examples:\n"
          "  vramscope export run.db --format perfetto -o run.json\n"
          "  vramscope export run.db --format folded --at exit | flamegraph.pl > leaks.svg\n"
          "  vramscope export run.db --format snapshot -o run.pickle --force\n",
          entries, &argc, &argv, usage_line)
      != 0)
    return 2;
  g_autoptr (GError) error = NULL;
  if (argc != 2)
    {
      fprintf (stderr, "vramscope export: expected one trace file\n");
      fputs (usage_line, stderr);
      return 2;
    }
  Format format = FORMAT_PERFETTO;
  gboolean known = FALSE;
  for (guint i = 0; format_name != NULL && i < G_N_ELEMENTS (formats); i++)
    if (strcmp (format_name, formats[i].name) == 0)
      format = (Format)i, known = TRUE;
  if (!known)
    {
      fprintf (stderr, "vramscope export: %s\n",
               format_name ? "unknown --format (perfetto, snapshot, folded or sqlite)"
                           : "--format is required (perfetto, snapshot, folded or sqlite)");
      fputs (usage_line, stderr);
      return 2;
    }
  VsFoldedWhen when = VS_FOLDED_AT_PEAK;
  if (at != NULL && strcmp (at, "exit") == 0)
    when = VS_FOLDED_AT_EXIT;
  else if (at != NULL && strcmp (at, "peak") != 0)
    {
      fprintf (stderr, "vramscope export: --at takes peak or exit\n");
      return 2;
    }
  if ((at != NULL || allocator != NULL) && format != FORMAT_FOLDED)
    {
      fprintf (stderr, "vramscope export: --at and --allocator apply to --format folded only\n");
      return 2;
    }
  if (device != G_MININT64 && (format == FORMAT_PERFETTO || format == FORMAT_SQLITE))
    {
      fprintf (stderr,
               "vramscope export: --device does not apply to --format %s (it "
               "exports every device)\n",
               formats[format].name);
      return 2;
    }
  if (format == FORMAT_SQLITE && output != NULL && strcmp (output, "-") == 0)
    {
      fprintf (stderr, "vramscope export: --format sqlite writes a file, not standard output\n");
      return 2;
    }

  const char *file = argv[1];
  g_autoptr (VsTrace) trace = vs_cli_open_trace (file, &error);
  if (trace == NULL)
    {
      fprintf (stderr, "vramscope: %s\n", error->message);
      return 1;
    }
  gint64 device_id = 0, allocator_id = 0;
  if (device != G_MININT64)
    {
      const VsDeviceInfo *d = vs_trace_find_device_by_idx (trace, device);
      if (d == NULL)
        {
          fprintf (stderr, "vramscope: %s has no device %" G_GINT64_FORMAT "\n", file, device);
          return 1;
        }
      device_id = d->id;
    }
  if (allocator != NULL && strcmp (allocator, "all") != 0)
    {
      const GPtrArray *all = vs_trace_get_allocators (trace);
      const VsAllocatorInfo *match = NULL;
      for (guint i = 0; i < all->len; i++)
        {
          const VsAllocatorInfo *a = g_ptr_array_index (all, i);
          if (strcmp (a->name, allocator) != 0 || (device_id != 0 && a->device_id != device_id))
            continue;
          if (match != NULL)
            {
              fprintf (stderr,
                       "vramscope: %s has allocator %s on several devices: choose one "
                       "with --device\n",
                       file, allocator);
              return 1;
            }
          match = a;
        }
      if (match == NULL)
        {
          fprintf (stderr, "vramscope: %s has no allocator %s%s\n", file, allocator,
                   device_id != 0 ? " on that device" : "");
          return 1;
        }
      allocator_id = match->id;
    }

  if (output != NULL && strcmp (output, "-") == 0)
    {
      gboolean ok = write_export (trace, format, device_id, allocator_id, when, stdout, &error);
      if (!ok)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      if (fflush (stdout) != 0 || ferror (stdout))
        {
          fprintf (stderr, "vramscope export: cannot write to standard output: %s\n",
                   g_strerror (errno));
          return 1;
        }
      return 0;
    }

  if (output == NULL)
    output = default_output (file, format);
  char err[1024], tmp[4096];
  const char *inputs[] = { file };
  if (vs_output_check (output, force, "--force", inputs, 1, err, sizeof err) < 0
      || vs_output_temp (output, tmp, sizeof tmp, err, sizeof err) < 0)
    {
      fprintf (stderr, "vramscope export: %s\n", err);
      return 1;
    }
  /* Interrupted (SIGINT, SIGTERM, SIGHUP), the export removes its
   * temporary and ends as the signal would. */
  vs_output_guard (tmp, NULL);
  int status = write_file (trace, file, format, device_id, allocator_id, when, output, tmp, force);
  vs_output_guard_end ();
  return status;
}
