/* SPDX-License-Identifier: MIT */
/* vs-test-wait.c — see vs-test-wait.h. */
#include "vs-test-wait.h"

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

gboolean
vs_test_wait_until (gboolean (*done) (gpointer data), gpointer data, gint64 timeout_us)
{
  /* A sanitized build runs several times slower (scripts/test-asan-gui). */
  const char *env = g_getenv ("VS_TEST_WAIT_SCALE");
  gint64 scale = env != NULL ? g_ascii_strtoll (env, NULL, 10) : 1;
  gint64 deadline = g_get_monotonic_time () + timeout_us * CLAMP (scale, 1, 100);
  guint tick = g_timeout_add (10, wake, NULL);
  gboolean ok;

  while (!(ok = done (data)) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  return ok;
}

void
vs_test_keep_result (GObject *source, GAsyncResult *result, gpointer data)
{
  GAsyncResult **slot = data;

  g_assert_null (*slot);
  *slot = g_object_ref (result);
}

static gboolean
has_result (gpointer data)
{
  return *(GAsyncResult **)data != NULL;
}

GAsyncResult *
vs_test_wait_result (GAsyncResult **slot, gint64 timeout_us)
{
  g_assert_true (vs_test_wait_until (has_result, slot, timeout_us));
  return *slot;
}
