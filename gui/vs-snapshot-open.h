/* vs-snapshot-open.h — opening a PyTorch memory snapshot in the viewer.
 *
 * A snapshot (.pickle) is imported into a trace in a worker thread, with
 * progress, and the trace is cached: beside the snapshot
 * (NAME.pickle.vramscope.db), or in the user's cache folder when the
 * snapshot's folder cannot be written.  The cache is reused while the
 * snapshot keeps its size and modification time and the trace was written
 * by this version of vramscope.
 */
#pragma once

#include <gio/gio.h>

#include "vs-document.h"

G_BEGIN_DECLS

/* TRUE when file is to be imported rather than opened as a trace: its
 * first bytes are a pickle's (protocol 2 to 5), or, when it cannot be
 * read, its name ends in .pickle or .pkl. */
gboolean vs_snapshot_open_is_snapshot (GFile *file);

/* The cache beside the snapshot at path, and the one in the user's cache
 * folder (both newly allocated). */
char *vs_snapshot_open_cache_beside (const char *path);
char *vs_snapshot_open_cache_in_user_dir (const char *path);

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
