/* SPDX-License-Identifier: MIT */
/* vs-progress.h — the progress of work running in a worker thread,
 * reported to the caller's callback on the caller's main context (a
 * document's load and what-if replay, a snapshot's import).
 */
#pragma once

#include "vs-document.h"

G_BEGIN_DECLS

typedef struct
{
  VsDocumentProgressFunc func; /* NULL: nothing is reported */
  gpointer data;
  GMainContext *context; /* the caller's: where func is called */
} VsProgress;

/* Sets progress up on the caller's thread: func (may be NULL) called
 * with data on this thread's default main context.  Release it with
 * vs_progress_clear(). */
void vs_progress_init (VsProgress *progress, VsDocumentProgressFunc func, gpointer data);

/* Releases what vs_progress_init() took. */
void vs_progress_clear (VsProgress *progress);

/* From any thread: has progress's func called with (what, fraction) on
 * its context, later.  Does nothing when progress or its func is NULL. */
void vs_progress_report (const VsProgress *progress, const char *what, double fraction);

G_END_DECLS
