/* vs-cli.h — the subcommands of the `vramscope` executable.
 *
 * Each takes the arguments after `vramscope` (argv[0] is the subcommand's
 * name) and returns the process exit status: 0 success, 1 bad input (one
 * line on stderr), 2 usage error.
 */
#pragma once

int vs_cmd_report (int argc, char **argv);
int vs_cmd_import (int argc, char **argv);
int vs_cmd_export (int argc, char **argv);
int vs_cmd_record (int argc, char **argv);
int vs_cmd_recover (int argc, char **argv);
int vs_cmd_diff (int argc, char **argv);
int vs_cmd_whatif (int argc, char **argv);

/* The width text output is fitted to: requested when > 0, else the
 * terminal's when standard output is one, else $COLUMNS, else 100. */
unsigned int vs_cli_text_width (int requested);
