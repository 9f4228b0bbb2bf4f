/* SPDX-License-Identifier: MIT */
/* vs-trace-fuzz.c — libFuzzer entry point for reading traces.
 *
 * The input is not a file but a program of mutations, applied through
 * SQLite to a copy of a real committed trace: values of any column set to
 * integers at the edges of 64 bits, negative sizes, text, blobs, reals or
 * NULL; rows deleted or duplicated under a new id; whole columns scaled or
 * shifted; stack parents pointed at themselves or at other stacks; the
 * trace marked unfinalized (so the finalizer runs on the result); views,
 * triggers and tables rebuilt without their keys.  Byte-level damage is
 * already covered by the truncation tests; this reaches the values every
 * reader trusts.  Then the trace is opened and every report is built and
 * written as text and CSV, for every device and on the whole trace.
 *
 * Whatever the mutations, opening and reporting must return a result or an
 * error: a crash, an assertion, a sanitizer report or a hang (the query
 * time limit is set to 10 s here) is a bug.  Seed traces come from the
 * folder VS_FUZZ_TRACES (every *.db in it; the first byte of the input
 * picks one).  Built with clang -fsanitize=fuzzer,address,undefined by
 * fuzz/run-trace-fuzzer.sh, and linked with vs-fuzz-driver.c into a plain
 * program whose --random mode CI runs for a bounded number of inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "vs-analyzer.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The tables a mutation picks from, and for each the columns it may set. */
static const char *const tables[] = {
  "meta",       "device",    "allocator",   "process",      "frame",        "stack",
  "module",     "mem_event", "alloc_event", "pool_event",   "failed_alloc", "kernel",
  "nvtx_range", "block",     "series",      "series_level", "summary",
};

/* A reader of the mutation program: bytes run out as zeros. */
typedef struct
{
  const uint8_t *p;
  size_t left;
} Prog;

static guint
take (Prog *g)
{
  if (g->left == 0)
    return 0;
  g->left--;
  return *g->p++;
}

static guint64
take64 (Prog *g)
{
  guint64 v = 0;
  for (int i = 0; i < 8; i++)
    v = (v << 8) | take (g);
  return v;
}

/* A value at the edges of what columns hold, as SQL text. */
static char *
pick_value (Prog *g)
{
  static const char *const edges[] = {
    "NULL",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "4611686018427387903",
    "4294967295",
    "4294967296",
    "2147483648",
    "'x'",
    "''",
    "X'00ff'",
    "1.5e300",
    "-0.0",
    "'12abc'",
    "char(27) || '[31m' || char(10)",
    "65536",
  };
  guint k = take (g);

  if (k < 200)
    return g_strdup (edges[k % G_N_ELEMENTS (edges)]);
  return g_strdup_printf ("%" G_GINT64_FORMAT, (gint64)take64 (g));
}

/* The name of column i of table, or NULL. */
static char *
column_name (sqlite3 *db, const char *table, guint i)
{
  sqlite3_stmt *s = NULL;
  char *name = NULL;
  guint n = 0;

  if (sqlite3_prepare_v2 (db, "SELECT name FROM pragma_table_info (?1)", -1, &s, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (s, 1, table, -1, SQLITE_STATIC);
  while (sqlite3_step (s) == SQLITE_ROW)
    n++;
  if (n > 0)
    {
      guint want = i % n;
      sqlite3_reset (s);
      for (guint k = 0; sqlite3_step (s) == SQLITE_ROW; k++)
        if (k == want)
          {
            name = g_strdup ((const char *)sqlite3_column_text (s, 0));
            break;
          }
    }
  sqlite3_finalize (s);
  return name;
}

/* Applies one mutation; failures (constraints, missing tables) are
 * ignored: the next mutation starts from whatever is there. */
static void
mutate (sqlite3 *db, Prog *g)
{
  const char *t = tables[take (g) % G_N_ELEMENTS (tables)];
  g_autofree char *col = column_name (db, t, take (g));
  guint row = take (g);
  g_autofree char *sql = NULL;

  /* Values are what readers trust most: most mutations change them; the
   * schema is rebuilt or renamed rarely, as that is refused at the door. */
  static const guint8 weights[]
      = { 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 9, 10, 11 };

  if (col == NULL)
    return;
  switch (weights[take (g) % G_N_ELEMENTS (weights)])
    {
    case 0:
    case 1:
    case 2:
      {
        g_autofree char *v = pick_value (g);
        sql = g_strdup_printf ("UPDATE \"%s\" SET \"%s\" = %s WHERE rowid IN (SELECT rowid FROM"
                               " \"%s\" LIMIT 1 OFFSET %u)",
                               t, col, v, t, row);
      }
      break;
    case 3:
      sql = g_strdup_printf ("DELETE FROM \"%s\" WHERE rowid IN (SELECT rowid FROM \"%s\""
                             " LIMIT 1 OFFSET %u)",
                             t, t, row);
      break;
    case 4:
      /* A copy of a row under a new id (tables keyed otherwise keep
       * their key and the copy fails). */
      sql = g_strdup_printf (
          "CREATE TEMP TABLE dup AS SELECT * FROM \"%s\" LIMIT 1 OFFSET %u;"
          " UPDATE dup SET \"%s\" = \"%s\" + (SELECT max(rowid) FROM \"%s\") + 1 WHERE '%s' = 'id';"
          " INSERT OR IGNORE INTO \"%s\" SELECT * FROM dup; DROP TABLE dup",
          t, row, col, col, t, col, t);
      break;
    case 5:
      {
        static const char *const ops[] = { "* 1024", "+ 4611686018427387903", "* -1", "|| ''",
                                           "* 0",    "- 9223372036854775807" };
        sql = g_strdup_printf ("UPDATE \"%s\" SET \"%s\" = \"%s\" %s", t, col, col,
                               ops[take (g) % G_N_ELEMENTS (ops)]);
      }
      break;
    case 6:
      sql = g_strdup ("UPDATE meta SET value = 0 WHERE key = 'finalized'");
      break;
    case 7:
      sql = g_strdup_printf ("UPDATE stack SET parent_id = %s WHERE rowid IN (SELECT rowid FROM"
                             " stack LIMIT 1 OFFSET %u)",
                             take (g) & 1 ? "id" : "(SELECT max(id) FROM stack)", row);
      break;
    case 8:
      sql = g_strdup_printf ("CREATE TRIGGER IF NOT EXISTS fz%u AFTER INSERT ON summary BEGIN"
                             " DELETE FROM alloc_event; END",
                             row);
      break;
    case 9:
      sql = g_strdup_printf ("CREATE VIEW IF NOT EXISTS fzv%u AS WITH RECURSIVE r (x) AS"
                             " (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r",
                             row);
      break;
    case 10:
      /* The table rebuilt without its key and constraints, its rows
       * doubled. */
      sql = g_strdup_printf ("CREATE TEMP TABLE cp AS SELECT * FROM \"%s\"; DROP TABLE \"%s\";"
                             " CREATE TABLE \"%s\" AS SELECT * FROM cp UNION ALL SELECT * FROM cp;"
                             " DROP TABLE cp",
                             t, t, t);
      break;
    default:
      sql = g_strdup_printf ("ALTER TABLE \"%s\" RENAME COLUMN \"%s\" TO \"%s_x\"", t, col, col);
      break;
    }
  sqlite3_exec (db, sql, NULL, NULL, NULL);
}

/* The seed traces: every *.db in VS_FUZZ_TRACES, sorted. */
static GPtrArray *
seeds (void)
{
  static GPtrArray *list;
  const char *dir;
  GDir *d;
  const char *name;

  if (list != NULL)
    return list;
  list = g_ptr_array_new_with_free_func (g_free);
  dir = g_getenv ("VS_FUZZ_TRACES");
  d = dir != NULL ? g_dir_open (dir, 0, NULL) : NULL;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".db"))
      g_ptr_array_add (list, g_build_filename (dir, name, NULL));
  if (d != NULL)
    g_dir_close (d);
  g_ptr_array_sort (list, (GCompareFunc)g_strcmp0);
  if (list->len == 0)
    {
      fprintf (stderr, "vs-trace-fuzz: set VS_FUZZ_TRACES to a folder of traces\n");
      abort ();
    }
  return list;
}

/* Builds and prints every report on trace with opts. */
static void
run_reports (VsTrace *trace, VsReportOptions *opts)
{
  for (const char *const *n = vs_report_names (); *n != NULL; n++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (VsTable) table = vs_report_build (trace, *n, opts, &error);
      g_autoptr (GString) out = g_string_new (NULL);

      g_assert ((table == NULL) == (error != NULL));
      if (table == NULL)
        continue;
      vs_table_write_text (table, out);
      vs_table_write_csv (table, out);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GPtrArray *list = seeds ();
  Prog g = { data, size };
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsTrace) trace = NULL;
  gsize len;
  sqlite3 *db = NULL;
  int fd;

  g_setenv ("VRAMSCOPE_QUERY_LIMIT_S", "10", FALSE);
  fd = g_file_open_tmp ("vs-trace-fuzz-XXXXXX.db", &path, NULL);
  g_assert (fd >= 0);
  close (fd);
  g_assert (g_file_get_contents (list->pdata[take (&g) % list->len], &contents, &len, NULL));
  g_assert (g_file_set_contents (path, contents, (gssize)len, NULL));
  g_clear_pointer (&contents, g_free);

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
    {
      guint n = take (&g) % 8 + 1;
      for (guint i = 0; i < n; i++)
        mutate (db, &g);
    }
  sqlite3_close (db);

  trace = vs_trace_open (path, &error);
  g_assert ((trace == NULL) == (error != NULL));
  /* What became of the input, for a log that shows the mutations reach
   * the reports rather than all being refused at the door. */
  if (g_getenv ("VS_FUZZ_VERBOSE") != NULL)
    printf ("# %s\n", error != NULL ? error->message : "opened");
  if (trace != NULL)
    {
      VsReportOptions opts;
      const GPtrArray *devices = vs_trace_get_devices (trace);

      vs_report_options_init (&opts);
      run_reports (trace, &opts);
      for (guint i = 0; devices != NULL && i < devices->len && i < 2; i++)
        {
          const VsDeviceInfo *d = g_ptr_array_index (devices, i);

          vs_report_options_init (&opts);
          opts.device_id = d->id;
          opts.buckets = 7;
          run_reports (trace, &opts);
        }
    }
  g_clear_pointer (&trace, vs_trace_free);
  g_unlink (path);
  {
    g_autofree char *side = NULL;
    const char *suffixes[] = { "-wal", "-shm", "-journal" };
    for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
      {
        g_free (side);
        side = g_strconcat (path, suffixes[i], NULL);
        g_unlink (side);
      }
  }
  return 0;
}
