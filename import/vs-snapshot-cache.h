/* SPDX-License-Identifier: MIT */
/* vs-snapshot-cache.h — PyTorch snapshots opened where a trace is expected.
 *
 * `report`, `diff`, `whatif`, `export` and the viewer take a snapshot
 * (.pickle) wherever they take a trace.  The snapshot is imported once
 * into the user's cache folder ($XDG_CACHE_HOME/vramscope/snapshots, else
 * ~/.cache/vramscope/snapshots), under a name made of the SHA-256 of its
 * content and the version of vramscope that imported it: the same content
 * opens the same trace wherever the file lies and whatever it is called,
 * and an edited or replaced snapshot is imported anew.  Nothing is written
 * beside the user's file.  An import is written under a temporary name
 * and renamed into place, so a failed or cancelled one never leaves a
 * trace that looks complete; deleting the folder is always safe.
 */
#pragma once

#include <glib.h>

#include "vs-import.h"

G_BEGIN_DECLS

/* Whether the file at path is a snapshot to import rather than a trace:
 * its first bytes are a pickle's (protocol 2 to 5), or, when it cannot be
 * read, its name ends in .pickle or .pkl. */
gboolean vs_snapshot_cache_is_snapshot (const char *path);

/* The trace in the user's cache for the snapshot at path (the file need
 * not exist yet).  Reads the whole snapshot to hash it.  Returns a new
 * string, or NULL with error set when the snapshot cannot be read. */
char *vs_snapshot_cache_path (const char *path, GError **error);

/* The trace of the snapshot at path: the cached one, or a new import into
 * the cache (with progress, which may be NULL and may cancel it).
 * Returns a new path, or NULL with error set: a message that names path
 * ("PATH: what is wrong"), the error's domain and code the importer's
 * (VS_PICKLE_ERROR for a malformed snapshot; VS_IMPORT_ERROR_CANCELLED
 * when progress cancelled) or G_IO_ERROR / G_FILE_ERROR for a file or
 * folder that cannot be read or written. */
char *vs_snapshot_cache_import (const char *path, VsImportProgress progress, gpointer progress_data,
                                GError **error);

G_END_DECLS
