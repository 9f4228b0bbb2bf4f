/* SPDX-License-Identifier: MIT */
/* vs-screenshot.h — `vramscope view FILE --screenshot PNG`: saves a window
 * as a PNG once it shows its trace fully drawn, then closes it.
 *
 * Drives a VsWindow from outside: waits for its "settled" property (the
 * trace, the timelines and the panes are loaded), sizes it to the picture
 * asked for, renders the next frame into a texture and saves it.  A load
 * or query failure (the window's "error") fails the screenshot instead,
 * with one line on stderr.  Either way the window is destroyed at the
 * end.
 */
#pragma once

#include "vs-window.h"

G_BEGIN_DECLS

#define VS_TYPE_SCREENSHOT (vs_screenshot_get_type ())
G_DECLARE_FINAL_TYPE (VsScreenshot, vs_screenshot, VS, SCREENSHOT, GObject)

/* Starts watching window (not yet showing anything): path is the PNG to
 * write; width and height (> 0) the picture's size, 0 to keep the
 * window's. */
VsScreenshot *vs_screenshot_new (VsWindow *window, const char *path, int width, int height);

/* Whether the PNG may replace an existing regular file (--force); it
 * never replaces anything else.  The picture is written under a temporary
 * name beside path and renamed (vs-output.h). */
void vs_screenshot_set_force (VsScreenshot *self, gboolean force);

/* Whether the screenshot failed: nothing was saved, whatever the reason. */
gboolean vs_screenshot_get_failed (VsScreenshot *self);

G_END_DECLS
