/* SPDX-License-Identifier: MIT */
/* vs-recover.h — turning a killed recording's spool into a trace.
 *
 * `vramscope recover` (vs-recover.c) finishes what `vramscope record`
 * (vs-record.c) would have done with the spool; both take the spool
 * through vs-spool-run.h and build the trace through vs-trace-build.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* `vramscope recover SPOOL_DIR -o FILE`; argv[0] is "recover".  Returns
 * the exit status: 0, 1 on bad input or failure, 2 on a usage error. */
int vs_cmd_recover (int argc, char **argv);
