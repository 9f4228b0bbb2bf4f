/* SPDX-License-Identifier: MIT */
/* vs-output.h — writing an output file (a trace, a picture) safely: the
 * rules every command that writes a file follows.
 *
 *   - An existing file is replaced only when the user said so (--force);
 *     a path that exists and is not a regular file (a device, a folder, a
 *     FIFO) is never replaced, even then.
 *   - An input of the command is never written onto.
 *   - The output is written under a temporary name in the destination's
 *     folder and renamed into place only when complete, so a failed or
 *     interrupted run leaves nothing under the output's name; a SIGINT,
 *     SIGTERM or SIGHUP meanwhile removes the temporary (vs_output_guard).
 *   - The output's mode is 0666 less the process's umask, as any tool
 *     creates files (0644 under the usual umask 022), whatever made it
 *     (SQLite, stdio); the temporary stays 0600 until it is complete.
 *
 * Plain C (no GLib): `vramscope record` uses it on GPU servers.
 */
#pragma once

#include <signal.h>
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

/* Guards the temporary tmp (from vs_output_temp) against the signals that
 * end a command — SIGINT, SIGTERM, SIGHUP — until vs_output_guard_end().
 * With cancel NULL the first such signal removes tmp (vs_output_remove)
 * and ends the process as the signal would have.  With cancel given, the
 * first sets *cancel to 1 (the command stops at its next look and removes
 * tmp itself) and a second one removes tmp and ends the process.  One
 * guard at a time per process; tmp is copied (at most 4000 bytes).  A
 * signal the process ignores (nohup) stays ignored.
 * Returns 0, or -1 when tmp is too long to be guarded. */
int vs_output_guard (const char *tmp, volatile sig_atomic_t *cancel);

/* Restores the signal handlers vs_output_guard replaced; tmp is no longer
 * removed on a signal (committed, or removed by the caller). */
void vs_output_guard_end (void);
