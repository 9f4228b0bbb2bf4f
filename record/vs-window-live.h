/* SPDX-License-Identifier: MIT */
/* vs-window-live.h — `record --window`: the spool kept small while the
 * program runs.
 *
 * The follower (vs-torch-follow.c) imports each process's PyTorch
 * allocator stream while the program runs.  With a window, each import is
 * kept (vs_stream_import_keep: it commits where it stands with every
 * step, and its file outlives any failure), and once a step is committed
 * the stream's records it imported give their space back to the disk: a
 * hole is punched over them (FALLOC_FL_PUNCH_HOLE), the file keeps its
 * length, and the process's tracker appends past them as before.  The
 * stream's header says how many records were given back, so every later
 * reader (the import after the exit, `vramscope recover`) reads on from
 * the kept import instead of the stream's start.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "vs-torch-stream.h"

typedef struct VsWindowLive VsWindowLive;

/* The streams' length limit in MiB (VRAMSCOPE_TORCH_STREAM_MAX_MB) that
 * record --window gives the program where their records are given back:
 * a length that then costs no disk, about 22 billion events, days of a
 * training loop (the default, 4096, is about an hour of one). */
#define VS_WINDOW_STREAM_MAX_MB 1048576

/* Whether the file system of the folder dir gives punched space back
 * (probed with a small file of its own there, removed). */
bool vs_window_live_can_give_back (const char *dir);

/* The spool's give-back state (one per follower).  Never NULL. */
VsWindowLive *vs_window_live_new (void);

void vs_window_live_free (VsWindowLive *live);

/* Called once the import im of a stream is open, before its first step:
 * keeps it.  False with err filled (the import is then given up). */
bool vs_window_live_opened (VsWindowLive *live, VsStreamImport *im, char *err, size_t errlen);

/* Called after each committed step of im, the import of process pid's
 * stream file at path: gives back the space of the records it holds, in
 * whole blocks of the file system.  A file system that cannot punch holes
 * is left as it is (and not asked again). */
void vs_window_live_stepped (VsWindowLive *live, VsStreamImport *im, long long pid,
                             const char *path);

/* The bytes given back so far, over every stream. */
long long vs_window_live_given_back (const VsWindowLive *live);
