/* SPDX-License-Identifier: MIT */
/* vs-test-source.h — checks that a reader left a trace file untouched.
 *
 * Shared by the analyzer's live-trace tests and the viewer's follow test:
 * both read a trace while another process writes it, and must prove that
 * only the writer changed the file.
 */
#pragma once

#include <glib.h>

/* The SHA-256, size and modification time of path and of its WAL ("absent"
 * for a missing file), as one string to compare before and after a read.
 * Free with g_free(). */
char *vs_test_source_fingerprint (const char *path);

/* The trace's meta 'finalized' read with a plain read-only connection, or
 * -1 when the key is missing. */
gint64 vs_test_source_finalized (const char *path);
