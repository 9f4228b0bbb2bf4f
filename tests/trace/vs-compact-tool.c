/* SPDX-License-Identifier: MIT */
/* vs-compact-tool.c — compacts the trace file given in place, for the
 * tests that compare a trace before and after and for
 * bench/compact-bench.sh.
 *
 *   vs-compact-tool TRACE               vs_trace_compact_file()
 *   vs-compact-tool --finalize TRACE    finalizes TRACE first, with its
 *                                       series coded into chunks as the
 *                                       finalizer derives them (what
 *                                       record does), then compacts it
 *   vs-compact-tool --plain TRACE       only finalizes TRACE (schema 4)
 *
 * Prints the milliseconds of each step ("finalize_ms N", "compact_ms N")
 * with --finalize.  Exit status 0 when compacted, 3 when the trace was
 * left as it was (not a finalized schema-4 trace), 1 on failure with one
 * line on stderr.
 */
#include "vs-timings.h"
#include "vs-trace-compact.h"
#include "vs-trace-finalize.h"
#include "vs-trace-writer.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* Finalizes the trace at path, with the series chunker active when
 * chunked. */
static int
finalize_trace (const char *path, bool chunked, char *err, size_t errlen)
{
  sqlite3 *db = NULL;
  VsRowChunker chunker;
  int rc;

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      snprintf (err, errlen, "cannot open %s", path);
      sqlite3_close (db);
      return -1;
    }
  vs_row_chunker_init (&chunker);
  VsFinalizeOptions fo = { .sink = chunked ? &chunker.sink : NULL };
  rc = vs_trace_finalize_with (db, &fo, err, errlen);
  vs_row_chunker_clear (&chunker);
  if (sqlite3_close (db) != SQLITE_OK && rc == 0)
    {
      snprintf (err, errlen, "cannot close %s", path);
      rc = -1;
    }
  return rc;
}

int
main (int argc, char **argv)
{
  char err[512] = "";
  bool plain = argc == 3 && strcmp (argv[1], "--plain") == 0;
  bool finalize = plain || (argc == 3 && strcmp (argv[1], "--finalize") == 0);
  const char *path = argv[argc - 1];

  if (argc != 2 && !finalize)
    {
      fprintf (stderr, "usage: vs-compact-tool [--finalize | --plain] TRACE\n");
      return 2;
    }
  int64_t t0 = vs_timings_now ();
  if (finalize && finalize_trace (path, !plain, err, sizeof err) < 0)
    {
      fprintf (stderr, "vs-compact-tool: %s\n", err);
      return 1;
    }
  int64_t t1 = vs_timings_now ();
  if (plain)
    {
      printf ("finalize_ms %lld\n", (long long)((t1 - t0) / 1000000));
      return 0;
    }
  int rc = vs_trace_compact_file (path, err, sizeof err);
  int64_t t2 = vs_timings_now ();
  if (rc < 0)
    {
      fprintf (stderr, "vs-compact-tool: %s\n", err);
      return 1;
    }
  if (finalize)
    printf ("finalize_ms %lld\ncompact_ms %lld\n", (long long)((t1 - t0) / 1000000),
            (long long)((t2 - t1) / 1000000));
  return rc == 0 ? 0 : 3;
}
