/* SPDX-License-Identifier: MIT */
/* vs-test-window.c — a GUI test's private home, application and window
 * (see vs-test-window.h). */
#include "vs-test-window.h"

#include "vs-application.h"
#include "vs-session.h"
#include "vs-test-wait.h"

static char *home;
static VsApplication *app;
static VsWindow *window;

const char *
vs_test_home_enter (const char *template)
{
  g_assert_null (home);
  home = g_dir_make_tmp (template, NULL);
  g_assert_nonnull (home);
  g_setenv ("HOME", home, TRUE);
  g_setenv ("XDG_DATA_HOME", home, TRUE);
  g_setenv ("XDG_CACHE_HOME", home, TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  return home;
}

VsWindow *
vs_test_window_new (int width, int height)
{
  g_autoptr (GError) error = NULL;

  g_assert_null (window);
  adw_init ();
  app = vs_application_new ();
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  window = vs_window_new (ADW_APPLICATION (app));
  if (width > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

gboolean
vs_test_window_shows (gpointer path)
{
  VsDocument *doc = vs_session_get_document (vs_window_get_session (window));
  g_autofree char *shown = doc != NULL ? g_file_get_path (vs_document_get_file (doc)) : NULL;

  return g_strcmp0 (shown, path) == 0 && vs_window_get_settled (window);
}

int
vs_test_window_finish (int status)
{
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  window = NULL;
  g_clear_object (&app);
  if (home != NULL)
    {
      /* The private home holds only what the test wrote. */
      const char *argv_rm[] = { "rm", "-rf", home, NULL };
      g_spawn_sync (NULL, (char **)argv_rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                    NULL);
    }
  g_clear_pointer (&home, g_free);
  return status;
}

VsDocument *
vs_test_document_load (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;
  VsDocument *doc;

  vs_document_load_async (file, NULL, NULL, NULL, vs_test_keep_result, &result);
  doc = vs_document_load_finish (vs_test_wait_result (&result, 60 * G_USEC_PER_SEC), &error);
  g_assert_no_error (error);
  return doc;
}

GFile *
vs_test_data_file (const char *name)
{
  g_autofree char *path = g_build_filename (g_getenv ("VS_DATA"), name, NULL);

  return g_file_new_for_path (path);
}
