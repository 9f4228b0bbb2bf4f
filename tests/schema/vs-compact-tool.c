/* vs-compact-tool.c — compacts the trace file given (vs_trace_compact_file)
 * in place, for the tests that compare a trace before and after.
 *
 *   vs-compact-tool TRACE
 *
 * Exit status 0 when compacted, 3 when the trace was left as it was (not
 * a finalized schema-4 trace), 1 on failure with one line on stderr.
 */
#include "vs-trace-compact.h"

#include <stdio.h>

int
main (int argc, char **argv)
{
  char err[512] = "";

  if (argc != 2)
    {
      fprintf (stderr, "usage: vs-compact-tool TRACE\n");
      return 2;
    }
  int rc = vs_trace_compact_file (argv[1], err, sizeof err);
  if (rc < 0)
    {
      fprintf (stderr, "vs-compact-tool: %s\n", err);
      return 1;
    }
  return rc == 0 ? 0 : 3;
}
