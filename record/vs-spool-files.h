/* SPDX-License-Identifier: MIT */
/* vs-spool-files.h — the files of a spool that are the recording's own.
 *
 * A spool (vs-spool.h) holds what `record`, the collector and the PyTorch
 * hook write, each under a name of its own (run.info, process-PID-NS.db,
 * torch-PID-SEQ.pickle and .info, torch-PID.stream, .stream.info and
 * .stacks, torch-PID.db, live.trace, the hook's built vs_torch_stream-*.so
 * and its log, the SQLite side files -wal, -shm and -journal of the
 * traces).  Nothing else in the folder is the recording's: it is never
 * read, written or removed.  A file named like the recording's that is a
 * link (symbolic, or a second name of a file elsewhere) or not a regular
 * file was not written by the recording either: it is never opened to
 * write, and never removed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether name (a file name, no folder) is one the recording writes in
 * its spool. */
bool vs_spool_name_is_ours (const char *name);

/* Whether path is a regular file with one name, as the recording writes
 * them, and so are the SQLite side files beside it (-wal, -shm, -journal)
 * that exist.  When not, *why (may be NULL) says why in a few words: "a
 * symbolic link", "a second name of another file", "not a regular file",
 * "missing". */
bool vs_spool_file_is_plain (const char *path, const char **why);

/* Removes from the spool dir the files that are the recording's own
 * (named as above, regular files of one name), then the folder when it is
 * left empty.  Nothing else is removed.  Returns how many entries are left
 * in it (0: the folder is gone), or -1 when it cannot be read. */
long vs_spool_remove (const char *dir);
