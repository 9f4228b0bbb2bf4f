/* SPDX-License-Identifier: MIT */
/* vs-blocks-pane.h — the "Over Time" pane: allocations over time
 * (VsBlocksChart) with a line saying what the selected band is.
 *
 * Signal "band-selected" (device_id, time_ns, site): the user selected a
 * band; the window selects that instant on the timeline and the site in
 * Attribution.
 */
#pragma once

#include "vs-blocks-chart.h"
#include "vs-pane.h"

G_BEGIN_DECLS

#define VS_TYPE_BLOCKS_PANE (vs_blocks_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsBlocksPane, vs_blocks_pane, VS, BLOCKS_PANE, VsPane)

VsBlocksChart *vs_blocks_pane_get_chart (VsBlocksPane *self);

G_END_DECLS
