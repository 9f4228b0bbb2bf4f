/* SPDX-License-Identifier: MIT */
/* vs-state-pane.h — the Fragmentation pane: the segment map of the
 * selected instant, and the allocators' state stepped event by event.
 *
 * The map (VsFragmentationView) follows the session's instant.  Previous
 * Event and Next Event (buttons; [ and ], Alt+Left and Alt+Right) step to
 * the device's allocator events around it — an allocation, a free, a
 * segment allocated, freed, mapped or unmapped, a failed request — and
 * show the state after each (vs_alloc_steps_state), the event and its
 * stack, the user's own frames first.  Each step selects the event's
 * time in the session, so the timelines mark it and Attribution shows
 * it; that selection does not move the step.  Selecting another instant
 * leaves stepping.
 */
#pragma once

#include <gtk/gtk.h>

#include "vs-alloc-steps.h"
#include "vs-fragmentation-view.h"

G_BEGIN_DECLS

#define VS_TYPE_STATE_PANE (vs_state_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsStatePane, vs_state_pane, VS, STATE_PANE, GtkBox)

/* Stepping mode: at the session's instant and every instant selected
 * from then on, the last allocator event at or before it is shown with
 * the state after it (loaded in a worker thread first when needed). */
void vs_state_pane_start_stepping (VsStatePane *self);

/* Steps to the previous (delta -1) or next (+1) event, starting to step
 * at the instant when not stepping yet. */
void vs_state_pane_step (VsStatePane *self, int delta);

/* Whether events are being loaded (the window is not settled meanwhile);
 * notified as the "loading" property. */
gboolean vs_state_pane_is_loading (VsStatePane *self);

/* Whether the last step's time waits to be selected in the session (until
 * stepping pauses; the window is not settled meanwhile); notified as the
 * "selecting" property. */
gboolean vs_state_pane_is_selecting (VsStatePane *self);

/* The event shown (NULL when not stepping), and the view drawing the
 * state (tests). */
const VsAllocStep *vs_state_pane_get_step (VsStatePane *self);
VsFragmentationView *vs_state_pane_get_view (VsStatePane *self);
/* The event line, and the stack shown (NULL when hidden) (tests). */
const char *vs_state_pane_get_event_text (VsStatePane *self);
const char *vs_state_pane_get_stack_text (VsStatePane *self);

G_END_DECLS
