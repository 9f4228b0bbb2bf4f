/* SPDX-License-Identifier: MIT */
/* vs-instant.c — the reference-counted state of a device at an instant. */
#include "vs-instant.h"

G_DEFINE_BOXED_TYPE (VsInstant, vs_instant, vs_instant_ref, vs_instant_unref)

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

/* See vs-instant.h. */
VsInstant *
vs_instant_ref (VsInstant *instant)
{
  return g_atomic_rc_box_acquire (instant);
}

/* See vs-instant.h. */
void
vs_instant_unref (VsInstant *instant)
{
  g_atomic_rc_box_release_full (instant, instant_clear);
}
