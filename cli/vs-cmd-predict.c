/* SPDX-License-Identifier: MIT */
/* vs-cmd-predict.c — `vramscope predict RUN.db@B1 [RUN2.db@B2] [--batch N]...
 * [--limit BYTES|FRACTION] [--format text|csv|json]`.
 *
 * For each PyTorch caching allocator of the first run (paired in order
 * with the second run's): one `recorded` row per input, one `predicted`
 * row per --batch, and the `largest` batch whose replay fits the limit
 * (vs-predict.h says how).  The limit is --limit (the cap
 * set_per_process_memory_fraction sets, in bytes or as a fraction of the
 * device), else the device's capacity less the memory the first run held
 * outside the allocator at its peak; without either, fits is empty and no
 * largest row is written.  Inputs may be PyTorch snapshots (.pickle): they
 * are imported once into the user's cache, keyed by their content.
 * Failures are one line on stderr: status 2 for a usage error, 1 for an
 * input that cannot be read or two runs that do not match.
 */
#include <errno.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vs-analyzer.h"
#include "vs-cli.h"
#include "vs-import.h"
#include "vs-predict.h"

static const char usage_line[] = "usage: vramscope predict RUN.db@B1 [RUN2.db@B2] [--batch N]... "
                                 "[--limit BYTES|FRACTION] [--format text|csv|json] [--width N]\n";

/* The largest batch searched for. */
#define MAX_BATCH ((gint64)1 << 24)

typedef struct
{
  char *path;
  gint64 batch;
  VsTrace *trace;
  GArray *allocators;
} Input;

static void
input_clear (Input *in)
{
  g_free (in->path);
  g_clear_pointer (&in->trace, vs_trace_free);
  g_clear_pointer (&in->allocators, g_array_unref);
}

/* "FILE@B": the file and the batch (>= 1), split at the last '@'. */
static gboolean
parse_input (const char *arg, Input *in)
{
  const char *at = strrchr (arg, '@');
  guint64 v;

  if (at == NULL || at == arg || !g_ascii_string_to_unsigned (at + 1, 10, 1, G_MAXINT32, &v, NULL))
    return FALSE;
  in->path = g_strndup (arg, at - arg);
  in->batch = (gint64)v;
  return TRUE;
}

/* The default limit for allocator id of trace: the device's capacity less
 * what the run held outside the allocator at the device's peak; VS_UNKNOWN
 * when the capacity is unknown. */
static gint64
default_limit (VsTrace *trace, gint64 id)
{
  const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, id);
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, a->device_id);
  VsSummary all, mine;

  if (dev == NULL || dev->total_bytes == VS_UNKNOWN)
    return VS_UNKNOWN;
  if (!vs_summary_get (trace, a->device_id, 0, &all, NULL)
      || !vs_summary_get (trace, a->device_id, id, &mine, NULL))
    return dev->total_bytes;
  return dev->total_bytes - MAX (0, all.peak_reserved_bytes - mine.peak_reserved_bytes);
}

static void
add_row (VsTable *table, VsTrace *trace, gint64 id, gint64 batch, const char *kind,
         gint64 allocated, gint64 reserved, int fits, const char *basis)
{
  const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, id);
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, a->device_id);

  vs_table_add_row (table);
  vs_table_set_int (table, 0, dev != NULL ? dev->idx : VS_UNKNOWN);
  vs_table_set_text (table, 1, a->name);
  vs_table_set_int (table, 2, batch);
  vs_table_set_text (table, 3, kind);
  vs_table_set_int (table, 4, allocated);
  vs_table_set_int (table, 5, reserved);
  if (fits >= 0)
    vs_table_set_text (table, 6, fits ? "yes" : "no");
  vs_table_set_text (table, 7, basis);
}

/* The rows of one allocator pair.  Returns FALSE with error set. */
static gboolean
predict_allocator (VsTable *table, Input *in, guint n_in, guint k, GArray *batches,
                   gint64 limit_bytes, double fraction, GError **error)
{
  VsTrace *t1 = in[0].trace;
  gint64 id1 = g_array_index (in[0].allocators, gint64, k);
  g_autoptr (VsPredictModel) m = NULL;
  g_autofree char *basis = NULL;
  gint64 limit = limit_bytes;
  gboolean is_fraction = limit_bytes != VS_UNKNOWN || fraction > 0.0;

  m = vs_predict_model_new (t1, id1, in[0].batch, n_in > 1 ? in[1].trace : NULL,
                            n_in > 1 ? g_array_index (in[1].allocators, gint64, k) : 0,
                            n_in > 1 ? in[1].batch : 0, error);
  if (m == NULL)
    return FALSE;
  if (fraction > 0.0)
    {
      if (vs_predict_model_get_device_total (m) == VS_UNKNOWN)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                       "%s does not know its device's capacity: give --limit in bytes", in[0].path);
          return FALSE;
        }
      /* set_per_process_memory_fraction's own arithmetic */
      limit = (gint64)(fraction * (double)vs_predict_model_get_device_total (m));
    }
  else if (limit == VS_UNKNOWN)
    limit = default_limit (t1, id1);
  for (guint i = 0; i < n_in; i++)
    {
      gint64 id = g_array_index (in[i].allocators, gint64, k);
      VsSummary s;
      if (!vs_summary_get (in[i].trace, vs_trace_lookup_allocator (in[i].trace, id)->device_id, id,
                           &s, error))
        return FALSE;
      add_row (table, in[i].trace, id, in[i].batch, "recorded", s.peak_allocated_bytes,
               s.peak_reserved_bytes, limit == VS_UNKNOWN ? -1 : s.peak_reserved_bytes <= limit,
               "recorded run");
    }
  if (vs_predict_model_get_basis (m) == VS_PREDICT_TWO_RUNS)
    basis = g_strdup_printf ("fit of two runs (%" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                             "; %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                             " allocations vary, %" G_GINT64_FORMAT " in one run only), replayed",
                             in[0].batch, in[1].batch, vs_predict_model_get_n_varying (m),
                             vs_predict_model_get_n_allocations (m),
                             vs_predict_model_get_n_unmatched (m));
  else
    basis = g_strdup_printf ("one run (%" G_GINT64_FORMAT "; %" G_GINT64_FORMAT
                             " of %" G_GINT64_FORMAT " allocations scaled: activations), replayed",
                             in[0].batch, vs_predict_model_get_n_varying (m),
                             vs_predict_model_get_n_allocations (m));
  if (!vs_predict_model_prepare (m, (const gint64 *)batches->data, batches->len, limit, is_fraction,
                                 limit != VS_UNKNOWN, error))
    return FALSE;
  for (guint i = 0; i < batches->len; i++)
    {
      gint64 b = g_array_index (batches, gint64, i);
      VsPredictPoint p, capped;
      int fit = -1;
      if (!vs_predict_model_replay (m, b, VS_UNKNOWN, FALSE, &p, error))
        return FALSE;
      if (limit != VS_UNKNOWN)
        {
          if (!vs_predict_model_replay (m, b, limit, is_fraction, &capped, error))
            return FALSE;
          fit = capped.failed_alloc_count == 0;
        }
      add_row (table, t1, id1, b, "predicted", p.peak_allocated_bytes, p.peak_reserved_bytes, fit,
               basis);
    }
  if (limit != VS_UNKNOWN)
    {
      VsPredictPoint p = { 0 };
      gint64 best = vs_predict_model_largest (m, limit, is_fraction, MAX_BATCH, &p, error);
      g_autofree char *why = NULL;
      if (best < 0)
        return FALSE;
      why = g_strdup_printf ("largest batch whose replay fits %" G_GINT64_FORMAT " bytes (%s); %s",
                             limit,
                             is_fraction ? "--limit"
                                         : "device capacity less memory outside "
                                           "the allocator",
                             basis);
      if (best == 0)
        add_row (table, t1, id1, 0, "largest", VS_UNKNOWN, VS_UNKNOWN, 0, why);
      else
        add_row (table, t1, id1, best, "largest", p.peak_allocated_bytes, p.peak_reserved_bytes, 1,
                 why);
    }
  return TRUE;
}

static int
fail (const char *message)
{
  fprintf (stderr, "vramscope: %s\n", message);
  return 1;
}

/* The columns of the table it prints. */
static const VsColumnSpec predict_columns[] = {
  { "device", VS_COLUMN_INT },
  { "allocator", VS_COLUMN_TEXT },
  { "batch", VS_COLUMN_INT },
  { "kind", VS_COLUMN_TEXT },
  { "peak_allocated_bytes", VS_COLUMN_BYTES },
  { "peak_reserved_bytes", VS_COLUMN_BYTES },
  { "fits", VS_COLUMN_TEXT },
  { "basis", VS_COLUMN_TEXT },
};

int
vs_cmd_predict (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *limit_text = NULL;
  g_auto (GStrv) batch_texts = NULL;
  int width = 0;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "batch", 0, 0, G_OPTION_ARG_STRING_ARRAY, &batch_texts,
      "A batch size (or sequence length) to predict (repeatable)", "N" },
    { "limit", 0, 0, G_OPTION_ARG_STRING, &limit_text,
      "The cap: bytes, or a fraction of the device (0.5) as set_per_process_memory_fraction "
      "takes (default: the device's capacity less memory held outside the allocator)",
      "BYTES|FRACTION" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "Output format: text (default), csv or json",
      "FORMAT" },
    VS_CLI_WIDTH_ENTRY (width),
    VS_CLI_OPERANDS_ENTRIES (rest),
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) batches = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (VsTable) table = NULL;
  g_autoptr (GString) out = NULL;
  Input in[2] = { { 0 } };
  guint n_in;
  gint64 limit_bytes;
  double fraction;
  gboolean csv = FALSE, json = FALSE;
  int status = 0;

  /* Each connection of this command is used by one thread at a time (the
   * two runs are read on two threads, each from its own trace): SQLite's
   * locking of every call can go, a sixth of the reading of a history.
   * Fails, changing nothing, where SQLite was already initialised. */
  sqlite3_config (SQLITE_CONFIG_MULTITHREAD);
  if (vs_cli_parse_options (
          "predict", "RUN.db@B1 [RUN2.db@B2]",
          "Predict the peak allocated and reserved memory of a PyTorch run at other batch\n"
          "sizes (or sequence lengths), from one or two runs recorded at known ones, and\n"
          "the largest batch that fits.",
          "Two runs: their allocations are matched and each size fitted as a + b*batch.\n"
          "One run: the activations are scaled with the batch.  Either way the allocation\n"
          "history is replayed through the caching-allocator model (see docs/predict.md).\n"
          "\n"
          "Examples:\n"
          "  vramscope predict b16.db@16 b32.db@32 --batch 64 --batch 128\n"
          "  vramscope predict run.db@32 --batch 16 --limit 0.5\n"
          "  vramscope predict snapshot.pickle@8 --batch 12 --format csv",
          entries, &argc, &argv, usage_line)
      != 0)
    return 2;
  n_in = rest != NULL ? g_strv_length (rest) : 0;
  if (n_in < 1 || n_in > 2)
    return vs_cli_usage_error ("predict", usage_line, "expected one or two RUN@BATCH inputs");
  for (guint i = 0; i < n_in; i++)
    if (!parse_input (rest[i], &in[i]))
      {
        g_autofree char *msg
            = g_strdup_printf ("'%s': expected FILE@BATCH with BATCH a whole number >= 1", rest[i]);
        input_clear (&in[0]);
        return vs_cli_usage_error ("predict", usage_line, msg);
      }
  if (n_in == 2 && in[0].batch == in[1].batch)
    status = vs_cli_usage_error ("predict", usage_line, "the two runs must have different batches");
  for (char **b = batch_texts; status == 0 && b != NULL && *b != NULL; b++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (*b, 10, 1, MAX_BATCH, &v, NULL))
        status = vs_cli_usage_error ("predict", usage_line, "--batch takes a whole number >= 1");
      else
        g_array_append_val (batches, v);
    }
  if (status == 0 && limit_text != NULL
      && !vs_cli_parse_limit (limit_text, &limit_bytes, &fraction))
    status = vs_cli_usage_error (
        "predict", usage_line,
        "--limit takes a number of bytes or a fraction in (0, 1] such as 0.5");
  if (limit_text == NULL)
    {
      limit_bytes = VS_UNKNOWN;
      fraction = 0.0;
    }
  if (status == 0 && !vs_cli_parse_format (format, &csv, &json))
    status = vs_cli_usage_error ("predict", usage_line, "--format must be text, csv or json");
  if (status == 0 && (width < 0 || (width > 0 && width < 40)))
    status = vs_cli_usage_error ("predict", usage_line, "--width must be at least 40");
  /* An earlier input sorted first: the replayed history is the smaller run's. */
  if (n_in == 2 && in[1].batch < in[0].batch)
    {
      Input t = in[0];
      in[0] = in[1];
      in[1] = t;
    }
  for (guint i = 0; status == 0 && i < n_in; i++)
    {
      in[i].trace = vs_cli_open_trace (in[i].path, &error);
      if (in[i].trace == NULL)
        status = fail (error->message);
      else
        {
          in[i].allocators = vs_whatif_allocators (in[i].trace);
          if (in[i].allocators->len == 0)
            {
              g_autofree char *msg = g_strdup_printf (
                  "%s has no PyTorch caching allocator events (record with --torch, or use a "
                  "snapshot)",
                  in[i].path);
              status = fail (msg);
            }
        }
    }
  if (status == 0 && n_in == 2 && in[0].allocators->len != in[1].allocators->len)
    {
      g_autofree char *msg = g_strdup_printf (
          "the two runs are not the same program at two sizes: %s has %u PyTorch allocators, "
          "%s has %u",
          in[0].path, in[0].allocators->len, in[1].path, in[1].allocators->len);
      status = fail (msg);
    }
  if (status == 0)
    {
      table = vs_table_new ("Predicted peaks per batch (recorded runs, predictions, and the "
                            "largest batch that fits)");
      vs_table_add_columns (table, predict_columns, G_N_ELEMENTS (predict_columns));
      for (guint k = 0; status == 0 && k < in[0].allocators->len; k++)
        if (!predict_allocator (table, in, n_in, k, batches, limit_bytes, fraction, &error))
          {
            g_autofree char *msg
                = g_strdup_printf ("%s%s%s: %s", in[0].path, n_in > 1 ? " and " : "",
                                   n_in > 1 ? in[1].path : "", error->message);
            status = fail (msg);
          }
    }
  if (status == 0)
    {
      out = g_string_new (NULL);
      if (csv)
        vs_table_write_csv (table, out);
      else if (json)
        vs_table_write_json (table, "predict", out);
      else
        vs_table_write_text_fitted (table, out, 0, vs_cli_text_width (width));
      if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
        status = fail ("cannot write the result");
    }
  input_clear (&in[0]);
  input_clear (&in[1]);
  return status;
}
