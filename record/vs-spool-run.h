/* SPDX-License-Identifier: MIT */
/* vs-spool-run.h — what `record` and `recover` do with a run's spool.
 *
 * A spool (vs-spool.h) is the folder where every process of a recording
 * writes its own trace, and the PyTorch hook its snapshots and streams.
 * Once the program has ended, `record` (vs-record.c) turns it into one
 * trace; when record was killed, `recover` (vs-recover.c) does the same
 * from what is left.  Both take the spool through the functions here:
 * its run.info, the list of its traces, the import of PyTorch's snapshots
 * and their tie to the process and GPUs that made them, and its removal
 * once the trace is written.  Which files are the recording's is
 * vs-spool-files.h's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Writes spool/run.info (vs-spool.h) for the program record started;
 * window_ns > 0: record --window's, for recover to apply it too. */
void vs_spool_run_write_info (const char *spool, long program_pid, long long start_ns,
                              const char *output, long long window_ns);

/* record --window's DURATION in ns from spool/run.info, 0 without one. */
long long vs_spool_run_window_ns (const char *spool);

/* True when no process of the run left a trace or a PyTorch snapshot in
 * spool: the program never used CUDA. */
bool vs_spool_run_is_empty (const char *spool);

/* Prints, on stderr, how to recover the spools that killed recordings
 * left in dir (the folder of the output), if there are any. */
void vs_spool_run_hint_leftovers (const char *dir);

/* The traces in spool that are the recording's (process-PID-NS.db, then
 * torch-PID.db: vs-spool-files.h), sorted by name (pid, then start
 * time); links and files of other names are left out.  Returns the
 * count; *out and its strings are malloc'd (vs_spool_run_free_list). */
size_t vs_spool_run_list (const char *spool, char ***out);

/* The spool's process traces (process-*.db) alone, as
 * vs_spool_run_list() lists them. */
size_t vs_spool_run_list_processes (const char *spool, char ***out);

/* Takes out of files[0..*n-1] the largest imported allocator level
 * (torch-PID.db) and returns it (malloc'd), NULL when there is none. */
char *vs_spool_run_take_largest_import (char **files, size_t *n);

/* Frees files[0..n-1] and files. */
void vs_spool_run_free_list (char **files, size_t n);

/* Ties the raw trace of one process's PyTorch allocator level (an
 * imported snapshot or stream) to its process and GPUs, as named by the
 * .info file beside it (pid; per device index, uuid, memory and name;
 * "meta KEY VALUE" lines, the allocator's settings) and host.  Returns
 * false with a message in err. */
bool vs_spool_run_tie (const char *trace, const char *info, const char *host, char *err,
                       size_t errlen);

/* Imports the newest PyTorch snapshot of each process in spool into
 * spool/torch-PID.db (raw: the merge finalizes the run's trace once),
 * tied to its process (host) and GPUs, several processes at once in
 * threads.  A process whose allocator stream was imported already keeps
 * that.  Returns how many were imported; sets *keep when one could not
 * be (it is reported, and left in the spool). */
int vs_spool_run_import_snapshots (const char *spool, const char *host, bool *keep);

/* Removes the recording's files from spool and the folder once empty
 * (vs_spool_remove); says so on stderr when it holds others, which
 * stay. */
void vs_spool_run_remove (const char *spool);
