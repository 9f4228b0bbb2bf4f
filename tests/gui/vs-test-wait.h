/* SPDX-License-Identifier: MIT */
/* vs-test-wait.h — waiting in GUI tests for something the main loop will
 * bring about (a load settled, a pane shown), with a deadline.
 */
#pragma once

#include <glib.h>

/* Runs the default main context until done (data) holds or timeout_us
 * (times VS_TEST_WAIT_SCALE, 1 to 100, when set) passed, waking at least
 * every 10 ms so that done is re-checked.  Returns whether done held. */
gboolean vs_test_wait_until (gboolean (*done) (gpointer data), gpointer data, gint64 timeout_us);
