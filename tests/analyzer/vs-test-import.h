/* SPDX-License-Identifier: MIT */
/* vs-test-import.h — a committed PyTorch snapshot imported into a trace
 * of its own, for the analyzer tests that read real runs. */
#pragma once

#include <glib.h>

/* Imports tests/data/SUBDIR/NAME.pickle (found through G_TEST_DIST) into
 * NAME.db in a new temporary folder, finalized; fails the test when the
 * import fails.  Returns the trace's path: remove it with
 * vs_test_import_remove(). */
char *vs_test_import_snapshot (const char *subdir, const char *name);

/* Deletes the trace at path, its folder and path itself. */
void vs_test_import_remove (char *path);
