/* SPDX-License-Identifier: MIT */
/* vs-test-screenshot.c — screenshots taken and read in GUI tests (see
 * vs-test-screenshot.h). */
#include "vs-test-screenshot.h"

#include <math.h>

guchar *
vs_test_screenshot (const char *const *argv, const char *const *envp, const char *png, int *width,
                    int *height)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  guchar *pixels;
  int status;

  g_assert_nonnull (argv[0]);
  g_assert_true (g_spawn_sync (NULL, (char **)argv, (char **)envp, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  texture = gdk_texture_new_from_filename (png, &error);
  g_assert_no_error (error);
  *width = gdk_texture_get_width (texture);
  *height = gdk_texture_get_height (texture);
  pixels = g_malloc ((gsize)*width * *height * 4);
  gdk_texture_download (texture, pixels, (gsize)*width * 4);
  return pixels;
}

guint
vs_test_count_colour (const guchar *pixels, gsize n, const GdkRGBA *c, double tolerance)
{
  guint count = 0;

  for (gsize i = 0; i < n; i++)
    {
      const guchar *p = pixels + i * 4; /* B G R A */
      if (fabs (p[2] / 255.0 - c->red) < tolerance && fabs (p[1] / 255.0 - c->green) < tolerance
          && fabs (p[0] / 255.0 - c->blue) < tolerance)
        count++;
    }
  return count;
}
