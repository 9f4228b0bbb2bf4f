/* SPDX-License-Identifier: MIT */
/* vs-query-slot.c — at most one query in flight, the latest request
 * waiting. */
#include "vs-query-slot.h"

/* See vs-query-slot.h. */
gboolean
vs_query_slot_begin (VsQuerySlot *slot)
{
  g_assert (slot != NULL);
  if (slot->in_flight)
    {
      slot->pending = TRUE;
      return FALSE;
    }
  slot->in_flight = TRUE;
  return TRUE;
}

/* See vs-query-slot.h. */
gboolean
vs_query_slot_end (VsQuerySlot *slot, gboolean succeeded)
{
  gboolean again;

  g_assert (slot != NULL);
  g_assert (slot->in_flight);
  slot->in_flight = FALSE;
  if (succeeded)
    slot->loaded = TRUE;
  again = slot->pending;
  slot->pending = FALSE;
  return again;
}

/* See vs-query-slot.h. */
gboolean
vs_query_slot_is_idle (const VsQuerySlot *slot)
{
  g_assert (slot != NULL);
  return slot->loaded && !slot->in_flight && !slot->pending;
}

/* See vs-query-slot.h. */
void
vs_query_slot_reset (VsQuerySlot *slot)
{
  g_assert (slot != NULL);
  slot->in_flight = slot->pending = slot->loaded = FALSE;
}
