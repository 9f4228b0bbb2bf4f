/* SPDX-License-Identifier: MIT */
/* vs-instant.c — the reference-counted state of a device at an instant. */
#include "vs-instant.h"

#include "vs-rc-box.h"

/* Releases what an instant owns; called by g_atomic_rc_box. */
static void
instant_clear (gpointer p)
{
  VsInstant *in = p;

  g_clear_pointer (&in->blocks, g_array_unref);
  g_clear_pointer (&in->sites, g_ptr_array_unref);
  g_clear_pointer (&in->stacks, g_ptr_array_unref);
  g_clear_pointer (&in->kinds, g_ptr_array_unref);
  g_clear_pointer (&in->top_down, vs_tree_node_free);
  g_clear_pointer (&in->top_down_user, vs_tree_node_free);
  g_clear_pointer (&in->bottom_up_user, vs_tree_node_free);
  g_clear_pointer (&in->bottom_up, vs_tree_node_free);
  g_clear_pointer (&in->gaps, g_array_unref);
  g_clear_pointer (&in->segments, g_array_unref);
  g_clear_object (&in->document);
}

VS_DEFINE_RC_BOX_TYPE (VsInstant, vs_instant, instant_clear)

/* See vs-instant.h. */
VsInstant *
vs_instant_new (GObject *document)
{
  VsInstant *in = g_atomic_rc_box_new0 (VsInstant);

  in->document = g_object_ref (document);
  in->range_t0 = in->range_t1 = -1;
  in->gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  in->segments = g_array_new (FALSE, FALSE, sizeof (VsSegment));
  in->sites = g_ptr_array_new ();
  in->stacks = g_ptr_array_new ();
  in->kinds = g_ptr_array_new ();
  return in;
}
