/* SPDX-License-Identifier: MIT */
/* vs-test-wait.h — waiting in GUI tests for something the main loop will
 * bring about (a load settled, a pane shown, an asynchronous call's
 * result), with a deadline.
 */
#pragma once

#include <gio/gio.h>

/* Runs the default main context until done (data) holds or timeout_us
 * (times VS_TEST_WAIT_SCALE, 1 to 100, when set) passed, waking at least
 * every 10 ms so that done is re-checked.  Returns whether done held. */
gboolean vs_test_wait_until (gboolean (*done) (gpointer data), gpointer data, gint64 timeout_us);

/* A GAsyncReadyCallback for tests: keeps a reference to result in
 * *(GAsyncResult **)data, which must be NULL until then. */
void vs_test_keep_result (GObject *source, GAsyncResult *result, gpointer data);
/* Waits as vs_test_wait_until does until *slot holds a result (put there
 * by vs_test_keep_result) and returns it; fails the test if none came by
 * timeout_us. */
GAsyncResult *vs_test_wait_result (GAsyncResult **slot, gint64 timeout_us);
