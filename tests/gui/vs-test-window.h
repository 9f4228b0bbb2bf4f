/* SPDX-License-Identifier: MIT */
/* vs-test-window.h — the set-up GUI tests share: a private home folder,
 * the viewer's application registered, its window made and presented, and
 * all of it taken down and removed after; a trace loaded as the viewer
 * loads it; the test data's files.
 */
#pragma once

#include "vs-document.h"
#include "vs-window.h"

/* Makes a private home folder from template (g_dir_make_tmp's, e.g.
 * "vs-blocks-XXXXXX") and points HOME, XDG_DATA_HOME and XDG_CACHE_HOME
 * at it, so that recent files, settings and imported snapshots are the
 * test's own, and picks GDK's X11 backend (the tests' input is XTest's).
 * Call before g_test_init(): GLib and GTK read these once, at their
 * start.  Returns the folder's path, valid until vs_test_window_finish()
 * removes the folder. */
const char *vs_test_home_enter (const char *template);

/* Initializes libadwaita, registers a viewer application and makes its
 * window, width × height when width > 0 (else its default size), and
 * presents it.  Call once, after g_test_init(). */
VsWindow *vs_test_window_new (int width, int height);

/* Whether the window of vs_test_window_new() shows the trace at path (a
 * const char *), settled; a vs_test_wait_until() condition. */
gboolean vs_test_window_shows (gpointer path);

/* After g_test_run(): destroys the window, drops the application and
 * removes the home folder with everything the test wrote in it.  Returns
 * status, g_test_run()'s, for main to return. */
int vs_test_window_finish (int status);

/* Loads the trace at path as the viewer does (vs_document_load_async,
 * its result waited for on the main loop, at most a minute); fails the
 * test on an error or when no result came.  Returns the document. */
VsDocument *vs_test_document_load (const char *path);

/* The file name (a path relative to the test data folder, $VS_DATA). */
GFile *vs_test_data_file (const char *name);
