/* SPDX-License-Identifier: MIT */
/* vs-query-slot.h — one kind of query, at most one in flight.
 *
 * The viewer asks its VsDocument for the same kind of answer again and
 * again (a timeline's data while the user pans, the state at the selected
 * instant while the user clicks): a slot lets one query run at a time and
 * remembers that a newer request came in meanwhile, so the caller starts
 * it, with the parameters current by then, as soon as the running one
 * ends.  Older waiting requests are thereby replaced, never queued.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gboolean in_flight; /* a query is running */
  gboolean pending;   /* a request came in while it ran */
  gboolean loaded;    /* a query succeeded since the last reset */
} VsQuerySlot;

/* Asks for a query.  Returns TRUE when the caller must start it now (the
 * slot is then in flight); FALSE when one is already running, the request
 * being remembered. */
gboolean vs_query_slot_begin (VsQuerySlot *slot);

/* Ends the running query (succeeded: whether it gave a result).  Returns
 * TRUE when a request came in meanwhile: the caller should ask again
 * (vs_query_slot_begin() then starts it). */
gboolean vs_query_slot_end (VsQuerySlot *slot, gboolean succeeded);

/* Whether the slot has a result and nothing is running or waiting. */
gboolean vs_query_slot_is_idle (const VsQuerySlot *slot);

/* Forgets everything (a new document: late results are dropped by the
 * caller). */
void vs_query_slot_reset (VsQuerySlot *slot);

G_END_DECLS
