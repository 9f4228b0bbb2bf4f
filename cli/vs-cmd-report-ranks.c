/* SPDX-License-Identifier: MIT */
/* vs-cmd-report-ranks.c — `vramscope report` on the ranks of a run: the
 * `ranks` report, and the diagnosis of several traces.
 *
 * Every trace is opened before anything is printed, so one that cannot be
 * read gives one line naming it and status 1, never half a report; so
 * does one file named twice (by any name or link), which would count its
 * ranks twice.
 *   ranks      the rank comparison (vs-ranks.h): text is a two-line
 *              headline (the worst rank, the ranks that failed, the spread)
 *              over the table; CSV and JSON the table.
 *   diagnose   with several traces: text is the rank comparison, then the
 *              diagnosis of the rank to look at first — the first that
 *              failed a request, else the worst — on its device; CSV and
 *              JSON are every trace's findings, each row led by its trace.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

/* Writes out to standard output unpaged (data for programs).  Returns the
 * exit status. */
static int
write_data (GString *out, const char *what)
{
  if (fwrite (out->str, 1, out->len, stdout) != out->len || fflush (stdout) != 0)
    {
      fprintf (stderr, "vramscope: cannot write the %s: %s\n", what, g_strerror (errno));
      return 1;
    }
  return 0;
}

/* The diagnosis, as text, of the rank a comparison points at first. */
static gboolean
write_rank_diagnosis (VsRankComparison *ranks, VsTrace **traces, guint width, gboolean colored,
                      GString *out, GError **error)
{
  const VsRank *r = vs_rank_comparison_get_first_failed (ranks);
  const char *why = "is the first rank that failed a request";
  g_autoptr (VsDiagnosis) dx = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *label = NULL;
  const VsDeviceInfo *d;
  VsTrace *trace;

  if (r == NULL)
    {
      r = vs_rank_comparison_get_worst (ranks);
      why = "peaks highest";
    }
  if (r == NULL)
    return TRUE;
  trace = traces[r->trace_index];
  d = vs_trace_find_device_by_idx (trace, r->device_idx);
  g_assert (d != NULL);
  dx = vs_diagnose (trace, d->id, error);
  if (dx == NULL)
    return FALSE;
  label = vs_rank_comparison_dup_label (ranks, r);
  g_string_append_printf (out, "\n%s on device %" G_GINT64_FORMAT " %s:\n\n", label, r->device_idx,
                          why);
  vs_diagnosis_write_text (trace, dx, width, text);
  if (colored)
    vs_cli_colorize (text, VS_CLI_TEXT_DIAGNOSIS);
  g_string_append_len (out, text->str, (gssize)text->len);
  return TRUE;
}

/* Whether the files at a and b hold the same bytes (sizes already equal):
 * read side by side up to the first difference, so two traces of
 * different runs cost a page or two. */
static gboolean
same_content (const char *a, const char *b)
{
  FILE *fa = fopen (a, "rb"), *fb = fopen (b, "rb");
  gboolean same = fa != NULL && fb != NULL;
  static char ba[65536], bb[65536];

  while (same)
    {
      size_t na = fread (ba, 1, sizeof ba, fa), nb = fread (bb, 1, sizeof bb, fb);

      same = na == nb && memcmp (ba, bb, na) == 0 && !ferror (fa) && !ferror (fb);
      if (na < sizeof ba)
        break;
    }
  if (fa != NULL)
    fclose (fa);
  if (fb != NULL)
    fclose (fb);
  return same;
}

/* Whether two of files are one trace: the same file (device and inode,
 * through any name or link) or a copy of it (the same bytes).  Each rank
 * would be counted twice.  Says so in one line. */
static gboolean
same_file_twice (char **files, guint n_files)
{
  g_autofree GStatBuf *st = g_new0 (GStatBuf, n_files);

  for (guint i = 0; i < n_files; i++)
    {
      /* the traces opened: a name that cannot be stat()ed now is not
       * compared */
      if (g_stat (files[i], &st[i]) != 0)
        continue;
      for (guint j = 0; j < i; j++)
        {
          gboolean same_inode
              = st[j].st_ino == st[i].st_ino && st[j].st_dev == st[i].st_dev && st[i].st_ino != 0;

          if (same_inode || (st[j].st_size == st[i].st_size && same_content (files[j], files[i])))
            {
              fprintf (stderr, "vramscope: %s and %s are %s: give each rank's trace once\n",
                       files[j], files[i], same_inode ? "the same file" : "copies of one trace");
              return TRUE;
            }
        }
    }
  return FALSE;
}

/* Whether the compared traces are the ranks of one job: every row knows
 * its rank, and no two traces name different jobs. */
static gboolean
ranks_of_one_job (const VsRankComparison *ranks)
{
  const char *job = NULL;

  for (guint i = 0; i < vs_rank_comparison_get_n_ranks (ranks); i++)
    {
      const VsRank *r = vs_rank_comparison_get_rank (ranks, i);

      if (r->rank == VS_UNKNOWN)
        return FALSE;
      if (r->job_id != NULL && job != NULL && strcmp (r->job_id, job) != 0)
        return FALSE;
      if (r->job_id != NULL)
        job = r->job_id;
    }
  return TRUE;
}

int
vs_cli_report_traces (char **files, guint n_files, const char *report,
                      const VsCliReportSettings *how)
{
  g_autoptr (GPtrArray) traces = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_trace_free);
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean diagnose = strcmp (report, "diagnose") == 0;

  g_assert (n_files >= 1);
  g_assert (diagnose || strcmp (report, "ranks") == 0);
  for (guint i = 0; i < n_files; i++)
    {
      VsTrace *t = vs_cli_open_trace (files[i], &error);

      if (t == NULL)
        {
          fprintf (stderr, "vramscope: %s\n", error->message);
          return 1;
        }
      vs_stack_set_full_paths (t, how->full_paths);
      g_ptr_array_add (traces, t);
    }
  if (same_file_twice (files, n_files))
    return 1;
  if (how->allocator != NULL && strcmp (how->allocator, "all") != 0)
    {
      gboolean found = FALSE;

      for (guint i = 0; i < traces->len && !found; i++)
        {
          const GPtrArray *as = vs_trace_get_allocators (g_ptr_array_index (traces, i));

          for (guint k = 0; k < as->len && !found; k++)
            found = strcmp (((const VsAllocatorInfo *)g_ptr_array_index (as, k))->name,
                            how->allocator)
                    == 0;
        }
      if (!found)
        {
          fprintf (stderr, "vramscope: %s no allocator '%s'\n",
                   n_files > 1 ? "none of the traces has" : "the trace has", how->allocator);
          return 1;
        }
    }

  if (diagnose && (how->csv || how->json))
    {
      g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_table_free);
      g_autoptr (VsTable) all = NULL;

      for (guint i = 0; i < traces->len; i++)
        {
          VsTrace *t = g_ptr_array_index (traces, i);
          g_autoptr (VsDiagnosis) dx = vs_diagnose (t, 0, &error);

          if (dx == NULL)
            {
              fprintf (stderr, "vramscope: %s\n", error->message);
              return 1;
            }
          g_ptr_array_add (tables, vs_diagnosis_table (t, dx));
        }
      all = vs_table_concat ((VsTable *const *)tables->pdata, (const char *const *)files,
                             tables->len, "trace");
      if (how->csv)
        vs_table_write_csv (all, out);
      else
        vs_table_write_json (all, "diagnose", out);
      return write_data (out, "report");
    }

  {
    g_autoptr (VsRankComparison) ranks
        = vs_ranks_compare ((VsTrace *const *)traces->pdata, traces->len, how->allocator, &error);
    g_autoptr (VsTable) table = NULL;
    g_autoptr (GString) text = g_string_new (NULL);

    if (ranks == NULL)
      {
        fprintf (stderr, "vramscope: %s\n", error->message);
        return 1;
      }
    table = vs_rank_comparison_table (ranks, !how->csv && !how->json);
    {
      /* Times are event numbers only if every trace's are (imported
       * snapshots without timestamps). */
      gboolean event_order = TRUE;

      for (guint i = 0; i < traces->len; i++)
        event_order = event_order && vs_trace_time_is_event_order (g_ptr_array_index (traces, i));
      vs_table_set_event_order (table, event_order);
    }
    if (how->csv || how->json)
      {
        if (how->limit > 0 && (guint)how->limit < vs_table_get_n_rows (table))
          vs_table_truncate (table, (guint)how->limit);
        if (how->csv)
          vs_table_write_csv (table, out);
        else
          vs_table_write_json (table, "ranks", out);
        return write_data (out, "report");
      }
    {
      /* The headline's lines wrapped to the width. */
      g_autoptr (GString) headline = g_string_new (NULL);
      g_auto (GStrv) lines = NULL;

      vs_rank_comparison_write_headline (ranks, headline);
      lines = g_strsplit (headline->str, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (lines[i][0] != '\0')
          vs_cli_wrap (lines[i], how->width, text);
    }
    g_string_append (text, "\n");
    vs_report_set_text_layout ("ranks", table);
    vs_table_write_text_fitted (table, text, how->limit < 0 ? 20 : (guint)how->limit, how->width);
    if (n_files > 1 && !ranks_of_one_job (ranks))
      {
        g_autofree char *note = g_strdup_printf (
            "These traces are not the ranks of one job (%s): compared as ranks above. To "
            "compare two runs side by side, use vramscope diff %s %s.",
            "a trace without a rank, or different jobs", files[0], files[1]);

        g_string_append_c (text, '\n');
        vs_cli_wrap (note, MIN (how->width, 100), text);
      }
    if (how->colored)
      vs_cli_colorize (text, VS_CLI_TEXT_TABLE);
    g_string_append_len (out, text->str, (gssize)text->len);
    if (diagnose
        && !write_rank_diagnosis (ranks, (VsTrace **)traces->pdata, MIN (how->width, 100),
                                  how->colored, out, &error))
      {
        fprintf (stderr, "vramscope: %s\n", error->message);
        return 1;
      }
  }
  return vs_cli_emit (out->str, out->len, "report");
}
