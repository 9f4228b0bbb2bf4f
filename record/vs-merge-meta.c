/* SPDX-License-Identifier: MIT */
/* vs-merge-meta.c — the run-wide meta of a merged trace, and the end of
 * each of its processes, gathered over the process traces (see
 * vs-merge-meta.h).
 */
#include "vs-merge-meta.h"

#include <stdio.h>
#include <string.h>

/* Whether db's meta has key. */
static bool
has_meta (sqlite3 *db, const char *key)
{
  static const char *sql = "SELECT 1 FROM meta WHERE key = ?1";
  sqlite3_stmt *s = NULL;
  bool found = false;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
      found = sqlite3_step (s) == SQLITE_ROW;
    }
  sqlite3_finalize (s);
  return found;
}

/* Meta keys summed over processes: the collector's own cost. */
static bool
summed_key (const char *key)
{
  return strncmp (key, "collector_", 10) == 0 && strcmp (key, "collector_kernels") != 0
         && strcmp (key, "collector_device_buffer_bytes") != 0;
}

/* Meta keys the JAX/XLA and CuPy hook writes (vs_frameworks.py): the
 * frameworks' settings and statistics, the program's last error. */
static bool
vs_merge_meta_is_framework_key (const char *key)
{
  return strncmp (key, "xla.", 4) == 0 || strncmp (key, "cupy.", 5) == 0
         || strncmp (key, "rmm.", 4) == 0 || strncmp (key, "program.", 8) == 0;
}

/* Meta keys describing a process's allocator settings (written by the
 * PyTorch hook and the snapshot importer) and the job it ran in (written
 * by the collector), copied as they are. */
static bool
carried_key (const char *key)
{
  return strncmp (key, "pytorch.", 8) == 0 || vs_merge_meta_is_framework_key (key)
         || strcmp (key, "time_axis") == 0 || strcmp (key, "job_id") == 0
         || strcmp (key, "job_id_source") == 0;
}

int64_t
vs_merge_meta (VsWriter *w, sqlite3 *db, const char *sql, VsMergeMeta *rm)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return VS_UNKNOWN;
  int64_t pend = vs_merge_meta_rows (w, s, rm);
  sqlite3_finalize (s);
  return pend;
}

int
vs_merge_meta_forget_carried (VsWriter *w)
{
  /* The keys carried_key() names. */
  static const char *sql = "DELETE FROM meta WHERE substr(key, 1, 8) = 'pytorch.'"
                           " OR substr(key, 1, 4) IN ('xla.', 'rmm.')"
                           " OR substr(key, 1, 5) = 'cupy.' OR substr(key, 1, 8) = 'program.'"
                           " OR key IN ('time_axis', 'job_id', 'job_id_source')";
  return sqlite3_exec (vs_writer_db (w), sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int64_t
vs_merge_meta_rows (VsWriter *w, sqlite3_stmt *s, VsMergeMeta *rm)
{
  int64_t pend = VS_UNKNOWN;
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      const char *key = vs_merge_col_text (s, 0);
      int64_t v = vs_merge_col_i64 (s, 1);
      /* The allocator settings and time axis of each process (pytorch.*,
       * time_axis): kept, the first process's when several. */
      if (key != NULL && carried_key (key))
        {
          const char *text = vs_merge_col_text (s, 1);
          if (text != NULL && !has_meta (vs_writer_db (w), key))
            vs_writer_set_meta (w, key, text);
          continue;
        }
      if (key == NULL || sqlite3_column_type (s, 1) != SQLITE_INTEGER)
        continue;
      if (strcmp (key, "start_ns") == 0 && (rm->start_ns == VS_UNKNOWN || v < rm->start_ns))
        rm->start_ns = v;
      else if (strcmp (key, "end_ns") == 0)
        {
          pend = v;
          if (rm->end_ns == VS_UNKNOWN || v > rm->end_ns)
            rm->end_ns = v;
        }
      else if (summed_key (key))
        {
          size_t j = 0;
          while (j < rm->nsums && strcmp (rm->sums[j].key, key) != 0)
            j++;
          if (j == rm->nsums && rm->nsums < 32)
            {
              snprintf (rm->sums[j].key, sizeof rm->sums[j].key, "%s", key);
              rm->sums[j].value = 0;
              rm->nsums++;
            }
          /* costs summed over the inputs; an input's value near 2^63
           * saturates rather than wrapping */
          if (j < rm->nsums && __builtin_add_overflow (rm->sums[j].value, v, &rm->sums[j].value))
            rm->sums[j].value = v > 0 ? INT64_MAX : INT64_MIN;
        }
      else if (strcmp (key, "collector_device_buffer_bytes") == 0
               || strcmp (key, "cupti_version") == 0 || strcmp (key, "collector_kernels") == 0)
        {
          vs_writer_set_meta_int (w, key, v);
        }
    }
  return pend;
}

/* The process rows were written when each process started; its end (the
 * input's, pend) and, for the program record started, its exit status
 * are known now: set on process row id. */
void
vs_merge_end_process (VsWriter *w, int64_t id, int64_t pend, const VsMergeRun *run)
{
  static const char *end_sql
      = "UPDATE process SET end_ns = coalesce(end_ns, ?1),"
        " exit_status = CASE WHEN pid = ?2 THEN ?3 ELSE exit_status END WHERE id = ?4";
  sqlite3_stmt *p = NULL;
  if (sqlite3_prepare_v2 (vs_writer_db (w), end_sql, -1, &p, NULL) != SQLITE_OK)
    return;
  if (pend != VS_UNKNOWN)
    sqlite3_bind_int64 (p, 1, pend);
  sqlite3_bind_int64 (p, 2, run ? run->main_pid : -1);
  if (run && run->exit_status != VS_UNKNOWN)
    sqlite3_bind_int64 (p, 3, run->exit_status);
  sqlite3_bind_int64 (p, 4, id);
  sqlite3_step (p);
  sqlite3_finalize (p);
}

void
vs_merge_run_meta (VsWriter *w, const VsMergeMeta *rm, size_t merged, const VsMergeRun *run)
{
  int64_t start_ns = rm->start_ns, end_ns = rm->end_ns;
  for (size_t j = 0; j < rm->nsums; j++)
    vs_writer_set_meta_int (w, rm->sums[j].key, rm->sums[j].value);
  vs_writer_set_meta (w, "source", "collector");
  vs_writer_set_meta (w, "clock", "CLOCK_REALTIME");
  vs_writer_set_meta_int (w, "processes", (int64_t)merged);
  if (start_ns == VS_UNKNOWN && run)
    start_ns = run->start_ns;
  if (end_ns == VS_UNKNOWN && run)
    end_ns = run->end_ns;
  if (start_ns != VS_UNKNOWN)
    vs_writer_set_meta_int (w, "start_ns", start_ns);
  if (end_ns != VS_UNKNOWN)
    vs_writer_set_meta_int (w, "end_ns", end_ns);
  if (run)
    {
      if (run->command_line)
        vs_writer_set_meta (w, "command_line", run->command_line);
      if (run->host)
        vs_writer_set_meta (w, "host", run->host);
      if (run->cwd)
        vs_writer_set_meta (w, "cwd", run->cwd);
      if (run->tool_version)
        vs_writer_set_meta (w, "tool_version", run->tool_version);
      if (run->exit_status != VS_UNKNOWN)
        vs_writer_set_meta_int (w, "exit_status", run->exit_status);
    }
}
