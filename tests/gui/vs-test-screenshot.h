/* SPDX-License-Identifier: MIT */
/* vs-test-screenshot.h — the viewer's `--screenshot` in GUI tests: the
 * command run, its picture read back as pixels, pixels of a colour
 * counted. */
#pragma once

#include <gtk/gtk.h>

/* Runs argv, a viewer command line that saves a screenshot to png, in
 * envp (NULL: this process's environment), its output to /dev/null;
 * fails the test unless it exits 0.  Returns the picture as *width ×
 * *height pixels of 4 bytes in gdk_texture_download()'s order (B G R A
 * in memory), rows of *width × 4 bytes, which the caller frees. */
guchar *vs_test_screenshot (const char *const *argv, const char *const *envp, const char *png,
                            int *width, int *height);

/* How many of the n pixels (B G R A, as vs_test_screenshot gives them)
 * have each of red, green and blue within tolerance (0 to 1) of c's. */
guint vs_test_count_colour (const guchar *pixels, gsize n, const GdkRGBA *c, double tolerance);
