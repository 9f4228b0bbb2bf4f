/* SPDX-License-Identifier: MIT */
/* vs-record-timings.c — `vramscope record --timings` (vs-record-timings.h).
 */
#include "vs-record-timings.h"

#include <dirent.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The latest event time (CLOCK_REALTIME ns) in the traces of the spool,
 * -1 when none: when the program's recorded work ended. */
int64_t
vs_record_last_event_ns (char **files, size_t n)
{
  static const char *sql
      = "SELECT max(m) FROM (SELECT max(ts) AS m FROM mem_event"
        " UNION ALL SELECT max(end_ns) FROM kernel UNION ALL SELECT max(ts) FROM alloc_event)";
  int64_t last = -1;
  for (size_t k = 0; k < n; k++)
    {
      sqlite3 *db = NULL;
      sqlite3_stmt *s = NULL;
      if (sqlite3_open_v2 (files[k], &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
          && sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK
          && sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) == SQLITE_INTEGER
          && sqlite3_column_int64 (s, 0) > last)
        last = sqlite3_column_int64 (s, 0);
      sqlite3_finalize (s);
      sqlite3_close (db);
    }
  return last;
}

/* When the newest PyTorch snapshot of the spool was written (its mtime,
 * CLOCK_REALTIME ns), -1 when there is none; *take_ns and *write_ns get
 * what its .info says taking and writing it cost (-1: not said). */
int64_t
vs_record_newest_snapshot_ns (const char *spool, int64_t *take_ns, int64_t *write_ns)
{
  int64_t newest = -1;
  char newest_info[PATH_MAX + 256] = "";
  *take_ns = *write_ns = -1;
  DIR *d = opendir (spool);
  if (d == NULL)
    return -1;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      size_t l = strlen (e->d_name);
      if (strncmp (e->d_name, "torch-", 6) != 0 || l < 8
          || strcmp (e->d_name + l - 7, ".pickle") != 0)
        continue;
      char p[PATH_MAX + 256];
      struct stat st;
      snprintf (p, sizeof p, "%s/%s", spool, e->d_name);
      if (stat (p, &st) == 0)
        {
          int64_t t = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
          if (t > newest)
            {
              newest = t;
              snprintf (newest_info, sizeof newest_info, "%.*s.info", (int)(strlen (p) - 7), p);
            }
        }
    }
  closedir (d);
  FILE *f = newest_info[0] ? fopen (newest_info, "r") : NULL;
  char line[512];
  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    {
      long long v;
      if (sscanf (line, "timing take_ns %lld", &v) == 1)
        *take_ns = v;
      else if (sscanf (line, "timing write_ns %lld", &v) == 1)
        *write_ns = v;
    }
  if (f != NULL)
    fclose (f);
  return newest;
}

/* The meta key of a phase: record_NAME_ns, NAME in lower case with every
 * run of other characters one '_'. */
static void
timing_key (const char *name, char *out, size_t len)
{
  size_t o = (size_t)snprintf (out, len, "record_");
  bool sep = false;
  for (const char *p = name; *p && o + 4 < len; p++)
    {
      char c = *p;
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
        {
          if (sep && out[o - 1] != '_')
            out[o++] = '_';
          out[o++] = c;
          sep = false;
        }
      else if (c >= 'A' && c <= 'Z')
        {
          if (sep && out[o - 1] != '_')
            out[o++] = '_';
          out[o++] = (char)(c - 'A' + 'a');
          sep = false;
        }
      else
        sep = true;
    }
  snprintf (out + o, len - o, "_ns");
}

/* --timings: prints each post-run phase (wall ms, share of the post-run
 * total), the exit figures and the total against the program's own run,
 * and keeps them in the trace's meta as record_PHASE_ns.  program_ns is
 * the program's run (start to exit); after_last_ns and snapshot_ns the
 * time from its last recorded event to its exit and to its exit snapshot
 * (-1: unknown), take_ns and write_ns what taking and writing that
 * snapshot cost, as the hook measured them (-1: unknown); beside_ns how long the process traces' symbolization
 * ran beside the imports (-1: it did not), of which only the wait after
 * them is a phase; live_records the allocator stream records imported
 * while the program ran (-1: the streams were not followed). */
void
vs_record_report_timings (const VsTimings *t, int64_t program_ns, int64_t after_last_ns,
                          int64_t snapshot_ns, int64_t take_ns, int64_t write_ns, int64_t beside_ns,
                          int64_t live_records, const char *trace)
{
  static const char *meta_sql = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)";
  int64_t total = vs_timings_total (t);
  fprintf (stderr, "vramscope record: timings (wall time)\n");
  fprintf (stderr, "  %-42s %10.1f ms\n", "program run (start to exit)", program_ns / 1e6);
  if (after_last_ns >= 0)
    fprintf (stderr, "  %-42s %10.1f ms\n", "program exit after its last recorded event",
             after_last_ns / 1e6);
  if (snapshot_ns >= 0)
    fprintf (stderr, "  %-42s %10.1f ms\n", "  of which until the exit snapshot was written",
             snapshot_ns / 1e6);
  if (take_ns >= 0)
    fprintf (stderr, "  %-42s %10.1f ms\n", "    taking the snapshot (_snapshot)", take_ns / 1e6);
  if (write_ns >= 0)
    fprintf (stderr, "  %-42s %10.1f ms\n", "    writing it (pickle)", write_ns / 1e6);
  if (beside_ns >= 0)
    fprintf (stderr, "  %-42s %10.1f ms\n", "symbolizing, beside the imports", beside_ns / 1e6);
  if (live_records >= 0)
    fprintf (stderr, "  %-42s %10lld records\n", "allocator stream imported while it ran",
             (long long)live_records);
  vs_timings_print (t, stderr);
  fprintf (stderr, "  %-42s %10.1f ms (%.2f× the program's run)\n", "post-run total", total / 1e6,
           program_ns > 0 ? (double)total / (double)program_ns : 0.0);

  sqlite3 *db = NULL;
  if (trace == NULL || sqlite3_open_v2 (trace, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
      || sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    {
      sqlite3_close (db);
      return;
    }
  struct
  {
    const char *name;
    int64_t ns;
  } extra[] = { { "program run", program_ns },
                { "exit after last event", after_last_ns },
                { "exit snapshot after last event", snapshot_ns },
                { "exit snapshot take", take_ns },
                { "exit snapshot write", write_ns },
                { "symbolizing beside the imports", beside_ns },
                { "post run", total } };
  const int nextra = (int)(sizeof extra / sizeof extra[0]);
  sqlite3_stmt *s = NULL;
  bool ok = sqlite3_prepare_v2 (db, meta_sql, -1, &s, NULL) == SQLITE_OK;
  for (int i = 0; ok && i < t->n + nextra; i++)
    {
      const char *name = i < t->n ? t->phase[i].name : extra[i - t->n].name;
      int64_t ns = i < t->n ? t->phase[i].ns : extra[i - t->n].ns;
      if (ns < 0)
        continue;
      char key[128];
      timing_key (name, key, sizeof key);
      sqlite3_reset (s);
      sqlite3_bind_text (s, 1, key, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64 (s, 2, ns);
      ok = sqlite3_step (s) == SQLITE_DONE;
    }
  sqlite3_finalize (s);
  if (ok && live_records >= 0 && sqlite3_prepare_v2 (db, meta_sql, -1, &s, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (s, 1, "record_stream_live_records", -1, SQLITE_STATIC);
      sqlite3_bind_int64 (s, 2, live_records);
      ok = sqlite3_step (s) == SQLITE_DONE;
      sqlite3_finalize (s);
    }
  if (!ok || sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    fprintf (stderr, "vramscope record: cannot keep the timings in %s: %s\n", trace,
             sqlite3_errmsg (db));
  sqlite3_close (db);
}

void
vs_record_report_given (const char *trace, int64_t rows, int64_t coded_rows, int64_t bytes)
{
  static const char *meta_sql = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)";
  fprintf (stderr, "  %-42s %10lld rows (%lld coded, %.1f MB)\n",
           "allocator events handed to the finalizer", (long long)rows, (long long)coded_rows,
           bytes / 1e6);
  const char *keys[] = { "record_given_rows", "record_given_coded_rows", "record_given_bytes" };
  const int64_t values[] = { rows, coded_rows, bytes };
  sqlite3 *db = NULL;
  bool ok = trace != NULL && sqlite3_open_v2 (trace, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK
            && sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
  for (size_t i = 0; ok && i < sizeof keys / sizeof keys[0]; i++)
    {
      sqlite3_stmt *s = NULL;
      ok = sqlite3_prepare_v2 (db, meta_sql, -1, &s, NULL) == SQLITE_OK
           && sqlite3_bind_text (s, 1, keys[i], -1, SQLITE_STATIC) == SQLITE_OK
           && sqlite3_bind_int64 (s, 2, values[i]) == SQLITE_OK && sqlite3_step (s) == SQLITE_DONE;
      sqlite3_finalize (s);
    }
  if (!ok || sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    fprintf (stderr, "vramscope record: cannot keep the timings in %s: %s\n", trace,
             db ? sqlite3_errmsg (db) : "out of memory");
  sqlite3_close (db);
}
