/* SPDX-License-Identifier: MIT */
/* vs-torch-stream.h — reading the PyTorch allocator stream a process left.
 *
 * The PyTorch hook streams every caching-allocator event of a process to
 * spool/torch-PID.stream (format: collector/python/vs_torch_stream.cpp),
 * with spool/torch-PID.stream.info beside it (pid and GPUs, as a
 * snapshot's .info) and, when the hook could build it with Python's
 * headers, spool/torch-PID.stacks (the events' Python stacks,
 * vs-torch-stacks.h).  Unlike the snapshot dumped when Python exits, the
 * stream survives every way the process ends.  The import is
 * vs-torch-stream.c's, the spool's streams vs-torch-spool.c's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct VsTorchFollow VsTorchFollow;

/* One stream's import into a raw trace, done in steps while the stream
 * grows (its process still running) and closed once it is complete. */
typedef struct VsStreamImport VsStreamImport;

/* Starts the import of the stream file at path into a new raw trace out
 * (replacing a file there), with the Python stacks of the stacks file
 * stacks_path (NULL: none; it may not exist yet): reads the header and
 * writes the process row.  NULL with err filled when path is no stream
 * this version reads (a file still shorter than its header included) or
 * out cannot be written. */
VsStreamImport *vs_stream_import_open (const char *path, const char *stacks_path, const char *out,
                                       char *err, size_t errlen);

/* Imports the records completed since the last step (up to the first
 * that is not completely written yet, or never will be) and commits them.
 * Returns how many records it read, or -1 with err filled (the import is
 * then only good for vs_stream_import_abort()). */
int64_t vs_stream_import_step (VsStreamImport *im, char *err, size_t errlen);

/* Makes im's file a lasting record of what it imported, for `record
 * --window`, which gives the imported records' space back to the disk
 * while the program runs (vs-window-live.c): from here on every step
 * commits, with the records, where the import stands (a checkpoint), its
 * file is never removed (vs_stream_import_abort() leaves it), and a
 * recording killed at any point is read on from it
 * (vs_stream_import_resume()).  0, or -1 with err filled. */
int vs_stream_import_keep (VsStreamImport *im, char *err, size_t errlen);

/* Resumes the kept import out of the stream file at path where its last
 * checkpoint stands (what a failed step wrote past it is cut).  NULL with
 * err filled when out is no such import of path. */
VsStreamImport *vs_stream_import_resume (const char *path, const char *stacks_path, const char *out,
                                         char *err, size_t errlen);

/* How many records from the first of the stream file at path were given
 * back to the disk once imported (their space read as zeros; only
 * spool/torch-PID.db, the kept import, holds them): 0 when none. */
int64_t vs_torch_stream_punched (const char *path);

/* The records read so far. */
int64_t vs_stream_import_consumed (const VsStreamImport *im);

/* From now on (before any record is imported) im also hands the
 * alloc_event rows it writes to the finalizer (vs-fin-given.h): their
 * events kept in memory, their chunks coded as they fill. */
struct VsFinGiven;
void vs_stream_import_gather (VsStreamImport *im);

/* Ends the import and frees im: with upto_snapshot, what came at and
 * after the stream's last snapshot marker is left out, as
 * vs_torch_stream_import() leaves it out; then the meta and the file are
 * written.  *events and *stopped as vs_torch_stream_import() sets them;
 * *given (may be NULL) the rows handed to the finalizer when im gathered
 * them (vs_stream_import_gather) and could keep every one, else NULL.
 * Returns 0, or -1 with err filled (the file is removed). */
int vs_stream_import_close (VsStreamImport *im, bool upto_snapshot, int64_t *events, bool *stopped,
                            struct VsFinGiven **given, char *err, size_t errlen);

/* Gives up the import (NULL: nothing) and removes its file, unless it
 * is kept (vs_stream_import_keep()). */
void vs_stream_import_abort (VsStreamImport *im);

/* Writes the raw (unfinalized) trace out from the stream file at path: a
 * process row (the stream's pid), per device a `pytorch` allocator and its
 * events, an `oom` as a failed allocation, each with its Python stack from
 * the stacks file stacks_path (NULL or absent: none; one that cannot be
 * read is said on stderr and the events kept without stacks); meta source
 * 'import', so the merge puts it on the collector's process row of the
 * same pid.  Stops at the first record not completely written, or with
 * upto_snapshot at the last snapshot marker (the final snapshot's).  A
 * stream whose first records were given back (vs_torch_stream_punched())
 * is read on from out, its kept import, which is then never removed.
 * *events (may be NULL) gets the number of records read, *stopped (may
 * be NULL) whether the stream stopped at its size limit before its
 * process ended.  Returns 0, or -1 with err filled. */
int vs_torch_stream_import (const char *path, const char *stacks_path, const char *out,
                            bool upto_snapshot, int64_t *events, bool *stopped, char *err,
                            size_t errlen);

/* Whether name (a spool entry) is a process's stream, torch-PID.stream;
 * *pid gets the PID. */
bool vs_torch_stream_name_pid (const char *name, long long *pid);

/* The name of the next process's stream in the spool directory being read
 * through dir (a GDir; NULL: none), its PID in *pid; NULL at the end. */
struct _GDir;
const char *vs_torch_stream_next (struct _GDir *dir, long long *pid);

/* For each process that left a stream in spool, imports the stream and
 * its Python stacks (spool/torch-PID.stacks) into spool/torch-PID.db tied
 * to its process and GPUs, unless PyTorch recorded its history (the
 * stream's .info says `history 1`, or says nothing of it) and the process
 * left a final snapshot, taken at exit or at a signal: that snapshot is
 * then taken instead (and a torch-PID.db an earlier import left is
 * removed).  A stream that follow (may be NULL) imported while the program
 * ran has only its tail read here.  A stream imported for a process that exited
 * normally stops at the exit snapshot's marker.  With every, each stream
 * is imported whatever snapshot its process left (record --window takes
 * every event from the stream).  Returns how many were
 * imported; a stream that cannot be is reported and *keep set. */
int vs_torch_stream_import_spool (const char *spool, const char *host, bool every,
                                  VsTorchFollow *follow, bool *keep);

/* For each process whose final snapshot, taken at a termination signal,
 * was imported (spool/torch-PID.db) and that left a stream too, adds to
 * that trace the stream's events that came after the snapshot (the
 * program ran on while it was taken): per device, those after the
 * stream's last snapshot marker (not where the stream itself is the
 * process's level, see vs_torch_stream_import_spool).  A snapshot taken
 * at a normal exit gets
 * none: what Python frees as it shuts down would hide what was live at
 * exit.  Returns how many traces were extended; a failure is reported
 * and *keep set. */
int vs_torch_stream_append_tails (const char *spool, bool *keep);
