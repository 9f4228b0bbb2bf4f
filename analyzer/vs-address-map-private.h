/* SPDX-License-Identifier: MIT */
/* vs-address-map-private.h — live allocations by their recorded address,
 * each with what the reader made of it (a non-NULL pointer): the replay's
 * block (vs-whatif.c), the history's allocation (vs-predict-history.c).
 *
 * An instance of common/vs-hash-table.h (a GHashTable costs a third of a
 * replay's time on large traces); addresses may be 0.  Zero-initialised:
 * empty; vs_address_map_clear() frees it (the values stay the caller's).
 */
#pragma once

#include <glib.h>

typedef struct
{
  gint64 address;
  gpointer value;
  gboolean used;
} VsAddressEntry;

#define VS_HT_TYPE VsAddressMap
#define VS_HT_FN(n) vs_address_map_##n
#define VS_HT_ENTRY VsAddressEntry
#define VS_HT_KEY_TYPE gint64
#define VS_HTI_KEY address
#define VS_HTI_USED used
#include "vs-hash-table-int.h"

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsAddressMap, vs_address_map_clear)

/* address's value, NULL when it is not live. */
static inline gpointer
vs_address_map_get (const VsAddressMap *m, gint64 address)
{
  VsAddressEntry *e = vs_address_map_find (m, address);

  return e != NULL ? e->value : NULL;
}

/* Sets address's value (not NULL), replacing any: an address allocated
 * again replaces an allocation never freed. */
static inline void
vs_address_map_put (VsAddressMap *m, gint64 address, gpointer value)
{
  VsAddressEntry *e;

  g_assert (value != NULL);
  e = vs_address_map_insert (m, address, NULL);
  if (e == NULL)
    g_error ("out of memory");
  e->value = value;
}

/* Removes address; returns its value, or NULL when it was not live. */
static inline gpointer
vs_address_map_take (VsAddressMap *m, gint64 address)
{
  VsAddressEntry *e = vs_address_map_find (m, address);
  gpointer found;

  if (e == NULL)
    return NULL;
  found = e->value;
  vs_address_map_remove (m, e);
  return found;
}
