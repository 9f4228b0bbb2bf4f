/* SPDX-License-Identifier: MIT */
/* vs-cmd-whatif.c — `vramscope whatif FILE [--alloc-conf CONF]... [--limit
 * BYTES|FRACTION] [--format text|csv|json] [--device N] [--width N]`.
 *
 * For each device's PyTorch caching allocator: one row replaying the
 * trace under its own settings and the limit derived from it (which
 * reproduces the recorded run), then one per --alloc-conf (or one with the
 * trace's own settings when only --limit is given), under --limit when
 * given.  With neither, the settings the diagnosis considers: the trace's
 * own with expandable_segments:True, with garbage_collection_threshold:0.8
 * (each unless already in effect), and the trace's own with no cap below
 * the device's capacity.  Failures are one line on stderr: status 2 for a usage error
 * (unparsable CONF or limit), 1 for a trace that cannot be read or has no
 * PyTorch allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

static const char usage_line[] = "usage: vramscope whatif FILE [--alloc-conf CONF]... "
                                 "[--limit BYTES|FRACTION] [--format text|csv|json] [--device N] "
                                 "[--width N]\n";

static const char examples[]
    = "Examples:\n"
      "  vramscope whatif run.db\n"
      "      the settings the diagnosis considers: expandable segments, a garbage\n"
      "      collection threshold, no cap below the device's memory\n"
      "  vramscope whatif run.db --alloc-conf expandable_segments:True\n"
      "  vramscope whatif run.db --alloc-conf \"\" --limit 0.5 --format csv\n"
      "  vramscope whatif snapshot.pickle --format json\n";

/* The settings tried when none is given: what the diagnosis's remedies
 * propose, each added to the trace's own settings. */
static const char *const diagnosis_keys[] = { VS_ALLOC_CONF_EXPANDABLE, VS_ALLOC_CONF_GC };

static void
add_row (VsTable *table, VsTrace *trace, const VsWhatifResult *r)
{
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, r->device_id);

  vs_table_add_row (table);
  vs_table_set_int (table, 0, dev != NULL ? dev->idx : VS_UNKNOWN);
  vs_table_set_text (table, 1, vs_trace_allocator_name (trace, r->allocator_id));
  vs_table_set_text (table, 2, r->alloc_conf);
  vs_table_set_int (table, 3, r->limit_bytes);
  vs_table_set_int (table, 4, r->peak_reserved_bytes);
  vs_table_set_int (table, 5, r->peak_allocated_bytes);
  vs_table_set_int (table, 6, r->failed_alloc_count);
  vs_table_set_int (table, 7, r->first_failure_time_ns);
}

/* Adds one row per setting of allocator id replayed from plan (the
 * replays run at once).  Returns FALSE with error set when a replay
 * fails. */
static gboolean
add_setting_rows (VsTable *table, VsTrace *trace, VsWhatifPlan *plan,
                  const VsWhatifSetting *settings, guint n, GError **error)
{
  g_autofree VsWhatifResult *results = g_new0 (VsWhatifResult, n);

  if (!vs_whatif_plan_run (plan, settings, n, results, error))
    return FALSE;
  for (guint k = 0; k < n; k++)
    {
      add_row (table, trace, &results[k]);
      vs_whatif_result_clear (&results[k]);
    }
  return TRUE;
}

/* Adds the rows of allocator id replayed under the settings the diagnosis
 * considers: its own (the first row), its own with each of
 * diagnosis_keys not already in effect, and its own under the device's
 * capacity when the limit derived from the trace is below it.  Returns
 * FALSE with error set when a replay fails. */
static gboolean
add_diagnosis_rows (VsTable *table, VsTrace *trace, gint64 id, const VsDeviceInfo *dev,
                    GError **error)
{
  g_autofree char *own = vs_whatif_own_alloc_conf (trace, id, error);
  g_autoptr (GPtrArray) confs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) settings = g_array_new (FALSE, FALSE, sizeof (VsWhatifSetting));
  g_autoptr (VsWhatifPlan) plan = NULL;
  VsWhatifSetting own_derived = { NULL, VS_UNKNOWN };

  if (own == NULL)
    return FALSE;
  for (guint k = 0; k < G_N_ELEMENTS (diagnosis_keys); k++)
    {
      g_autofree char *key = g_strndup (diagnosis_keys[k], strcspn (diagnosis_keys[k], ":"));

      if (strstr (own, diagnosis_keys[k]) != NULL
          || (strstr (own, key) != NULL && strcmp (key, "expandable_segments") == 0))
        continue;
      g_ptr_array_add (confs, own[0] != '\0' ? g_strconcat (own, ",", diagnosis_keys[k], NULL)
                                             : g_strdup (diagnosis_keys[k]));
    }
  plan = vs_whatif_plan_new (trace, id, VS_WHATIF_NONE, error);
  if (plan == NULL)
    return FALSE;
  g_array_append_val (settings, own_derived);
  for (guint k = 0; k < confs->len; k++)
    {
      VsWhatifSetting s = { g_ptr_array_index (confs, k), VS_UNKNOWN };
      g_array_append_val (settings, s);
    }
  gint64 derived = vs_whatif_plan_limit (plan);
  if (dev != NULL && dev->total_bytes != VS_UNKNOWN && derived != VS_UNKNOWN
      && derived < dev->total_bytes)
    {
      VsWhatifSetting at_cap = { NULL, dev->total_bytes };
      g_array_append_val (settings, at_cap);
    }
  return add_setting_rows (table, trace, plan, (VsWhatifSetting *)settings->data, settings->len,
                           error);
}

/* Adds the rows of allocator id: its own settings under the derived
 * limit, then each of the n confs (NULL: its own) under limit (VS_UNKNOWN:
 * the derived one).  Returns FALSE with error set when a replay fails. */
static gboolean
add_asked_rows (VsTable *table, VsTrace *trace, gint64 id, const char *const *confs, guint n,
                gint64 limit, GError **error)
{
  g_autoptr (VsWhatifPlan) plan = vs_whatif_plan_new (trace, id, VS_WHATIF_NONE, error);
  g_autofree VsWhatifSetting *settings = g_new0 (VsWhatifSetting, n + 1);

  if (plan == NULL)
    return FALSE;
  settings[0] = (VsWhatifSetting){ NULL, VS_UNKNOWN };
  for (guint k = 0; k < n; k++)
    settings[k + 1] = (VsWhatifSetting){ confs[k], limit };
  return add_setting_rows (table, trace, plan, settings, n + 1, error);
}

/* The columns of the table it prints. */
static const VsColumnSpec whatif_columns[] = {
  { "device", VS_COLUMN_INT },
  { "allocator", VS_COLUMN_TEXT },
  { "alloc_conf", VS_COLUMN_TEXT },
  { "limit_bytes", VS_COLUMN_BYTES },
  { "peak_reserved_bytes", VS_COLUMN_BYTES },
  { "peak_allocated_bytes", VS_COLUMN_BYTES },
  { "failed_alloc_count", VS_COLUMN_INT },
  { "first_failure_time_ns", VS_COLUMN_TIME },
};

int
vs_cmd_whatif (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *limit_text = NULL;
  g_auto (GStrv) confs = NULL;
  g_auto (GStrv) rest = NULL;
  gint64 device = G_MININT64;
  gint width = 0;
  GOptionEntry entries[] = {
    { "alloc-conf", 0, 0, G_OPTION_ARG_STRING_ARRAY, &confs,
      "Settings to replay, in PYTORCH_CUDA_ALLOC_CONF syntax (repeatable; \"\" = defaults)",
      "CONF" },
    { "limit", 0, 0, G_OPTION_ARG_STRING, &limit_text,
      "The allocator's cap: bytes, or a fraction of the device (0.5) as "
      "set_per_process_memory_fraction takes",
      "BYTES|FRACTION" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      "Output format: text (aligned, human units; the default), csv or json", "FORMAT" },
    { "device", 0, 0, G_OPTION_ARG_INT64, &device, "Only this device (its index)", "N" },
    VS_CLI_WIDTH_ENTRY (width),
    VS_CLI_OPERANDS_ENTRIES (rest),
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsTable) table = NULL;
  g_autoptr (GString) out = NULL;
  g_autoptr (GArray) allocators = NULL;
  gint64 limit_bytes;
  double fraction;
  gboolean csv, json;
  gboolean defaults;

  /* Each connection of this command is used by one thread at a time (the
   * replays run on threads, each through its own connection): SQLite's
   * locking of every call can go, as for predict.  Fails, changing
   * nothing, where SQLite was already initialised. */
  sqlite3_config (SQLITE_CONFIG_MULTITHREAD);
  {
    g_autofree char *description = g_strconcat (
        "The first row of each device replays the trace's own settings under the limit\n"
        "derived from the trace; it reproduces the recorded run.  Times are ns since\n"
        "the trace's start; in CSV an empty field means unknown (no failure, no limit).\n"
        "With no --alloc-conf and no --limit: the settings the diagnosis considers.\n\n"
        "FILE is a trace or a PyTorch snapshot (.pickle).\n\n",
        examples, NULL);

    if (vs_cli_parse_options (
            "whatif", "FILE",
            "Replay a trace's PyTorch caching allocator under other settings: the reserved\n"
            "peak and the failed requests each setting would have given.",
            description, entries, &argc, &argv, usage_line)
        != 0)
      return 2;
  }
  if (rest == NULL || g_strv_length (rest) != 1)
    return vs_cli_usage_error ("whatif", usage_line, "expected one trace file");
  if (!vs_cli_parse_format (format, &csv, &json))
    return vs_cli_usage_error ("whatif", usage_line, "--format must be text, csv or json");
  if (width < 0 || (width > 0 && width < 40))
    return vs_cli_usage_error ("whatif", usage_line, "--width must be at least 40");
  defaults = confs == NULL && limit_text == NULL;
  limit_bytes = VS_UNKNOWN;
  fraction = 0.0;
  if (limit_text != NULL && !vs_cli_parse_limit (limit_text, &limit_bytes, &fraction))
    return vs_cli_usage_error (
        "whatif", usage_line,
        "--limit takes a number of bytes or a fraction in (0, 1] such as 0.5");
  for (char **c = confs; c != NULL && *c != NULL; c++)
    {
      VsAllocConf conf;
      if (!vs_alloc_conf_parse (*c, &conf, &error))
        {
          g_autofree char *msg = g_strdup_printf ("--alloc-conf '%s': %s", *c, error->message);
          return vs_cli_usage_error ("whatif", usage_line, msg);
        }
    }

  trace = vs_cli_open_trace (rest[0], &error);
  if (trace == NULL)
    {
      fprintf (stderr, "vramscope: %s\n", error->message);
      return 1;
    }
  allocators = vs_whatif_allocators (trace);
  table = vs_table_new ("What-if: PyTorch's caching allocator replayed under each setting "
                        "(first row per device: the trace's own settings and limit)");
  vs_table_add_columns (table, whatif_columns, G_N_ELEMENTS (whatif_columns));
  guint rows = 0;
  for (guint i = 0; i < allocators->len; i++)
    {
      gint64 id = g_array_index (allocators, gint64, i);
      const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, id);
      const VsDeviceInfo *dev = vs_trace_lookup_device (trace, a->device_id);
      if (device != G_MININT64 && (dev == NULL || dev->idx != device))
        continue;
      gint64 limit = limit_bytes;
      if (fraction > 0.0)
        {
          if (dev == NULL || dev->total_bytes == VS_UNKNOWN)
            {
              fprintf (stderr,
                       "vramscope: %s does not know device %" G_GINT64_FORMAT
                       "'s capacity: give --limit in bytes\n",
                       rest[0], dev != NULL ? dev->idx : (gint64)0);
              return 1;
            }
          /* set_per_process_memory_fraction's own arithmetic */
          limit = (gint64)(fraction * (double)dev->total_bytes);
        }
      if (defaults)
        {
          if (!add_diagnosis_rows (table, trace, id, dev, &error))
            {
              fprintf (stderr, "vramscope: %s\n", error->message);
              return 1;
            }
          rows++;
          continue;
        }
      guint n = confs != NULL ? g_strv_length (confs) : (limit_text != NULL ? 1 : 0);
      const char *own_only[] = { NULL };
      const char *const *asked = confs != NULL ? (const char *const *)confs : own_only;
      if (!add_asked_rows (table, trace, id, asked, n, limit, &error))
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      rows++;
    }
  if (rows == 0)
    {
      if (device != G_MININT64)
        fprintf (stderr,
                 "vramscope: %s has no PyTorch caching allocator on device %" G_GINT64_FORMAT "\n",
                 rest[0], device);
      else
        fprintf (stderr,
                 "vramscope: %s has no PyTorch caching allocator events to replay (record "
                 "with --torch, or import a snapshot)\n",
                 rest[0]);
      return 1;
    }
  out = g_string_new (NULL);
  if (csv)
    vs_table_write_csv (table, out);
  else if (json)
    vs_table_write_json (table, "whatif", out);
  else
    vs_table_write_text_fitted (table, out, 0, vs_cli_text_width (width));
  if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the result: %s\n", g_strerror (errno));
      return 1;
    }
  return 0;
}
