/* SPDX-License-Identifier: MIT */
/* vs-oom-pane.h — every failed allocation request with the state of its
 * device at that instant (reserved, allocated, free inside reserved, the
 * largest free block, what CUDA reported free) and what would have fitted.
 * Emits "instant-selected" when the user asks to see one on the timeline. */
#pragma once

#include <gtk/gtk.h>

#include "vs-document.h"

G_BEGIN_DECLS

#define VS_TYPE_OOM_PANE (vs_oom_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsOomPane, vs_oom_pane, VS, OOM_PANE, GtkBox)

/* Lists document's failed allocations (NULL clears). */
void vs_oom_pane_set_document (VsOomPane *self, VsDocument *document);

/* Number of failed allocations listed (tests). */
guint vs_oom_pane_get_n_rows (VsOomPane *self);

G_END_DECLS
