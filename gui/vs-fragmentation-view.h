/* SPDX-License-Identifier: MIT */
/* vs-fragmentation-view.h — free memory inside reserved memory at an
 * instant: each live segment as a bar with its allocated blocks and free
 * gaps, the largest free block highlighted, under a line of totals. */
#pragma once

#include <gtk/gtk.h>

#include "vs-instant.h"

G_BEGIN_DECLS

#define VS_TYPE_FRAGMENTATION_VIEW (vs_fragmentation_view_get_type ())
G_DECLARE_FINAL_TYPE (VsFragmentationView, vs_fragmentation_view, VS, FRAGMENTATION_VIEW, GtkWidget)

/* Shows instant's segments (NULL clears). */
void vs_fragmentation_view_set_instant (VsFragmentationView *self, VsInstant *instant);

/* Marks [address, address + bytes) with a bar under its segment (the
 * event a stepped state follows); bytes 0 clears the mark. */
void vs_fragmentation_view_set_mark (VsFragmentationView *self, gint64 address, gint64 bytes);

/* Where address is drawn, in the view's coordinates: the middle of its
 * segment's bar, height-wise, at the address's place along it.  FALSE
 * when no segment shown holds address. */
gboolean vs_fragmentation_view_locate (VsFragmentationView *self, gint64 address, double *x,
                                       double *y);

G_END_DECLS
