/* SPDX-License-Identifier: MIT */
/* vs-snapshot-open.h — opening a PyTorch memory snapshot in the viewer.
 *
 * A snapshot (.pickle) is imported into a trace in a worker thread, with
 * progress, into the user's cache folder, keyed by the snapshot's content
 * and the version of vramscope (import/vs-snapshot-cache.h): the same
 * content opens the same trace, and nothing is written beside the user's
 * file.
 */
#pragma once

#include <gio/gio.h>

#include "vs-document.h"

G_BEGIN_DECLS

/* TRUE when file is to be imported rather than opened as a trace: its
 * first bytes are a pickle's (protocol 2 to 5), or, when it cannot be
 * read, its name ends in .pickle or .pkl. */
gboolean vs_snapshot_open_is_snapshot (GFile *file);

/* Imports the snapshot at file in a thread, or finds its cached trace;
 * progress (may be NULL) is called on the caller's main context.  Finish
 * with vs_snapshot_open_finish(): the trace's file, or NULL with an error
 * whose message is what `vramscope import` prints after its name: "PATH:
 * what is wrong". */
void vs_snapshot_open_async (GFile *file, GCancellable *cancellable,
                             VsDocumentProgressFunc progress, gpointer progress_data,
                             GAsyncReadyCallback callback, gpointer user_data);
GFile *vs_snapshot_open_finish (GAsyncResult *result, GError **error);

G_END_DECLS
