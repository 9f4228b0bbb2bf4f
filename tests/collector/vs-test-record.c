/* SPDX-License-Identifier: MIT */
/* vs-test-record.c — `vramscope record` as a program of its own, for tests.
 *
 * The shipped command is `vramscope record` (cli/vs-cli-main.c dispatches to
 * vs_cmd_record); tests call the same function through this small program
 * so the record path is tested without the rest of the CLI.  It accepts
 * `vs-test-record record ARGS…` like the CLI, and finds the collector
 * through VRAMSCOPE_COLLECTOR.
 */
#include <locale.h>
#include <string.h>

int vs_cmd_record (int argc, char **argv);

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, ""); /* as the CLI's main does */
  if (argc > 1 && strcmp (argv[1], "record") == 0)
    return vs_cmd_record (argc - 1, argv + 1);
  return vs_cmd_record (argc, argv);
}
