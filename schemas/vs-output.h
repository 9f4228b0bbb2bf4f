/* vs-output.h — writing an output file (a trace, a picture) safely: the
 * rules every command that writes a file follows.
 *
 *   - An existing file is replaced only when the user said so (--force);
 *     a path that exists and is not a regular file (a device, a folder, a
 *     FIFO) is never replaced, even then.
 *   - An input of the command is never written onto.
 *   - The output is written under a temporary name in the destination's
 *     folder and renamed into place only when complete, so a failed or
 *     interrupted run leaves nothing under the output's name.
 *
 * Plain C (no GLib): `vramscope record` uses it on GPU servers.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Checks that path may be written: fails when it exists and is not a
 * regular file, when it exists and force is false (the message names
 * force_flag), or when it is the same file as one of the n inputs.
 * Returns 0, or -1 with a one-line message in err. */
int vs_output_check (const char *path, bool force, const char *force_flag,
                     const char *const *inputs, size_t n, char *err, size_t errlen);

/* Creates a new empty temporary file beside path, named
 * "PATH.tmp-HOST-PID-XXXXXX", and writes its name to tmp.  Temporaries that
 * earlier runs on this host, killed before they could clean up, left
 * beside path (their PID no longer runs) are removed first, with their
 * SQLite side files.
 * Returns 0, or -1 with err set. */
int vs_output_temp (const char *path, char *tmp, size_t tmplen, char *err, size_t errlen);

/* Moves the complete file tmp to path.  Without force this never replaces
 * a file that appeared at path meanwhile; with force it replaces only a
 * regular file.  Stale SQLite side files of an earlier trace at path are
 * removed.  On failure tmp is left for the caller to remove.  Returns 0,
 * or -1 with err set. */
int vs_output_commit (const char *tmp, const char *path, bool force, const char *force_flag,
                      char *err, size_t errlen);

/* Removes path and the SQLite side files (-wal, -shm, -journal) beside
 * it.  Async-signal-safe when path is not longer than 4000 bytes. */
void vs_output_remove (const char *path);
