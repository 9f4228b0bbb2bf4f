/* SPDX-License-Identifier: MIT */
/* vs-recover.h — turning a killed recording's spool into a trace.
 *
 * `vramscope recover` (vs-recover.c) finishes what `vramscope record`
 * (vs-record.c) would have done with the spool; both use the functions
 * below, which live in vs-record.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* `vramscope recover SPOOL_DIR -o FILE`; argv[0] is "recover".  Returns
 * the exit status: 0, 1 on bad input or failure, 2 on a usage error. */
int vs_cmd_recover (int argc, char **argv);

/* Imports the newest PyTorch snapshot of each process in spool into
 * spool/torch-PID.db, tied to its process (host) and GPUs.  Returns how
 * many were imported; sets *keep when one could not be (it is reported). */
int vs_record_import_spool_snapshots (const char *spool, const char *host, bool *keep);

/* The traces in spool (process traces, then imported snapshots), sorted
 * by name.  Returns the count; *out and its strings are malloc'd. */
size_t vs_record_list_spool (const char *spool, char ***out);

/* Writes spool/run.info (vs-spool.h) for the program record started;
 * window_ns > 0: record --window's, for recover to apply it too. */
void vs_record_write_run_info (const char *spool, long program_pid, long long start_ns,
                               const char *output, long long window_ns);

/* True when no process of the run left a trace or a PyTorch snapshot in
 * spool: the program never used CUDA. */
bool vs_record_spool_is_empty (const char *spool);

/* Prints, on stderr, how to recover the spools that killed recordings
 * left in dir (the folder of the output), if there are any. */
void vs_record_hint_leftovers (const char *dir);

/* Ties the raw trace of one process's PyTorch allocator level (an
 * imported snapshot or stream) to its process and GPUs, as named by the
 * .info file beside it (pid; per device index, uuid, memory and name) and
 * host.  Returns false with a message in err. */
bool vs_record_tie_process (const char *trace, const char *info, const char *host, char *err,
                            size_t errlen);
