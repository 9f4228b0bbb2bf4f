/* SPDX-License-Identifier: MIT */
/* vs-instant.h — the state of one device at one instant, for the panes.
 *
 * Everything the attribution, allocations and fragmentation panes show for
 * the selected instant, gathered by the analyzer in one worker pass: the
 * live allocated blocks with their rendered sites, the top-down and
 * bottom-up trees, the fragmentation numbers, free gaps and live
 * segments.  For a selected range the instant is the range's peak of
 * allocated memory.  Immutable once built; reference-counted so list items can keep
 * it alive.  Strings that come from the analyzer's stack cache stay valid
 * as long as the VsDocument that made the instant (the instant holds it).
 */
#pragma once

#include <glib-object.h>

#include "vs-analyzer.h"

G_BEGIN_DECLS

typedef struct
{
  GObject *document; /* the VsDocument; keeps the stack strings alive */
  gint64 device_id;
  gint64 time_ns;            /* the instant */
  gint64 seq;                /* replay step the state is taken after */
  gint64 range_t0, range_t1; /* blocks restricted to this allocation range; t1 <= t0: none */
  VsSeriesPoint point;       /* reserved / allocated at the instant */
  GArray *blocks;            /* VsBlock, largest first */
  GPtrArray *sites;          /* const char *, parallel to blocks (stack cache) */
  GPtrArray *stacks;         /* const VsStackInfo *, parallel to blocks (stack cache) */
  GPtrArray *kinds;          /* const char *, parallel to blocks: the allocator's
                          name for allocator blocks ("pytorch", "pool:0x…"),
                          the memory kind for device-level ones ("device") */
  VsTreeNode *top_down;
  VsTreeNode *bottom_up;
  VsTreeNode *top_down_user; /* the same with only the user's own frames */
  VsTreeNode *bottom_up_user;
  gboolean have_fragmentation;
  VsFragmentation frag;
  GArray *gaps;     /* VsFreeGap */
  GArray *segments; /* VsSegment (vs_fragmentation_segments), by address */
} VsInstant;

#define VS_TYPE_INSTANT (vs_instant_get_type ())
GType vs_instant_get_type (void) G_GNUC_CONST;

/* A new empty instant holding a reference to document.  The builder fills
 * the fields; afterwards it is read-only. */
VsInstant *vs_instant_new (GObject *document);
VsInstant *vs_instant_ref (VsInstant *instant);
void vs_instant_unref (VsInstant *instant);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsInstant, vs_instant_unref)

G_END_DECLS
