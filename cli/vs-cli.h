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
