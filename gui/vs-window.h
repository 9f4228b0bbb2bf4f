/* SPDX-License-Identifier: MIT */
/* vs-window.h — the viewer's main window: one trace, its device timelines
 * above the panes for the selected instant or range.
 *
 * Opening (button, recent files, drag and drop, the command line) loads the
 * trace in a thread with a progress bar; a file that is not a trace shows
 * the analyzer's message in the window.  What is shown lives in the
 * window's VsSession, which the panes bind.  Properties: "session",
 * "settled" (a trace is shown and diagnosed, and nothing is being fetched: what a
 * screenshot waits for, see vs-screenshot.h), "error" (the last failure)
 * and "following" (a recording in progress is read again every second).
 */
#pragma once

#include <adwaita.h>

#include "vs-comparison.h"
#include "vs-session.h"

G_BEGIN_DECLS

#define VS_TYPE_WINDOW (vs_window_get_type ())
G_DECLARE_FINAL_TYPE (VsWindow, vs_window, VS, WINDOW, AdwApplicationWindow)

VsWindow *vs_window_new (AdwApplication *application);

/* Starts loading file into the window (replacing what it shows). */
void vs_window_open (VsWindow *self, GFile *file);

/* The session the window and its panes show (owned by the window). */
VsSession *vs_window_get_session (VsWindow *self);

/* Whether a trace is shown with every timeline's data and the selected
 * instant's state, and nothing more is being fetched. */
gboolean vs_window_get_settled (VsWindow *self);

/* The last load or query failure since the last open, NULL when none. */
const char *vs_window_get_error (VsWindow *self);

/* Shows the pane named name ("attribution", "flame", "allocations",
 * "fragmentation" or "oom"; "state": Fragmentation stepping through the
 * allocators' events, vs_state_pane_start_stepping).  Returns FALSE for
 * an unknown name. */
gboolean vs_window_show_pane (VsWindow *self, const char *name);

/* Replays PyTorch's caching allocator of the trace shown under alloc_conf
 * (PYTORCH_CUDA_ALLOC_CONF text; the settings must parse) and limit_bytes
 * (VS_UNKNOWN: the trace's own limit) and draws its reserved line on the
 * timelines, as choosing it in the "What If…" popover does; with no trace
 * shown yet, once the next one is. */
void vs_window_choose_whatif (VsWindow *self, const char *alloc_conf, gint64 limit_bytes);

/* Compares the shown trace (A) with the trace or snapshot in file (B):
 * B's lines on the timelines and the Comparison pane (the analyzer's
 * diff as a table, what differs between the runs); a toast when file
 * cannot be compared, the last comparison kept.  With no trace shown
 * yet, once the next one is. */
void vs_window_compare_with (VsWindow *self, GFile *file);

/* Ends the comparison: B leaves the timelines, the pane is hidden. */
void vs_window_stop_comparing (VsWindow *self);

/* The comparison shown, NULL when none (tests). */
VsComparison *vs_window_get_comparison (VsWindow *self);

/* The text of the last comparison made, as `vramscope diff` writes it
 * (NULL: none yet), and whether one is being made (tests). */
const char *vs_window_get_comparison_text (VsWindow *self);
gboolean vs_window_is_comparing (VsWindow *self);

G_END_DECLS
