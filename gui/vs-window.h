/* vs-window.h — the viewer's main window: one trace, its device timelines
 * above the panes for the selected instant or range.
 *
 * Opening (button, recent files, drag and drop, the command line) loads the
 * trace in a thread with a progress bar; a file that is not a trace shows
 * the analyzer's message in the window.  With a screenshot path set, the
 * window saves a PNG of itself once the trace and the panes are drawn and
 * then closes (`vramscope view --screenshot`).
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define VS_TYPE_WINDOW (vs_window_get_type ())
G_DECLARE_FINAL_TYPE (VsWindow, vs_window, VS, WINDOW, AdwApplicationWindow)

VsWindow *vs_window_new (AdwApplication *application);

/* Starts loading file into the window (replacing what it shows). */
void vs_window_open (VsWindow *self, GFile *file);

/* Makes the window save itself to path as a PNG once a loaded trace is
 * fully drawn, then close; the application's exit status is then 0, or 1
 * (with one line on stderr) when loading or saving failed.  width and
 * height (> 0) are the picture's size; 0 keeps the window's. */
void vs_window_set_screenshot (VsWindow *self, const char *path, int width, int height);

/* Shows the pane named name ("attribution", "flame", "allocations",
 * "fragmentation" or "oom").  Returns FALSE for an unknown name. */
gboolean vs_window_show_pane (VsWindow *self, const char *name);

/* Whether the last screenshot or load failed (for the exit status). */
gboolean vs_window_get_failed (VsWindow *self);

G_END_DECLS
