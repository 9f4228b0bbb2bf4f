/* SPDX-License-Identifier: MIT */
/* vs-allocations-pane.h — the allocations live at an instant, as a
 * virtualized, sortable list filtered by size, kind and site. */
#pragma once

#include "vs-pane.h"

G_BEGIN_DECLS

#define VS_TYPE_ALLOCATIONS_PANE (vs_allocations_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsAllocationsPane, vs_allocations_pane, VS, ALLOCATIONS_PANE, VsPane)

/* Lists instant's blocks (NULL clears): the "instant" property. */
void vs_allocations_pane_set_instant (VsAllocationsPane *self, VsInstant *instant);

/* Rows shown after filtering (tests). */
guint vs_allocations_pane_get_n_shown (VsAllocationsPane *self);

G_END_DECLS
