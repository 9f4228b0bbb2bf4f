/* SPDX-License-Identifier: MIT */
/* vs-hash-table-int.h — vs-hash-table.h instantiated for entries keyed by
 * one integer field: hashed with vs_hash_mix64(), compared with ==.
 *
 * Define VS_HT_TYPE, VS_HT_FN(n), VS_HT_ENTRY and VS_HT_KEY_TYPE as
 * vs-hash-table.h takes them, and
 *
 *   VS_HTI_KEY    the name of the entry's key field
 *   VS_HTI_USED   (optional) the name of a flag field the table sets in
 *                 every taken entry, for keys that may be 0; without it a
 *                 key of 0 marks an empty entry and is never a real key
 *
 * then include this file (any number of times, with other parameters).
 */
#define VS_HT_KEY(e) ((e)->VS_HTI_KEY)
#define VS_HT_HASH(k) vs_hash_mix64 ((uint64_t)(k))
#define VS_HT_EQUAL(a, b) ((a) == (b))
#ifdef VS_HTI_USED
#define VS_HT_SET_KEY(e, k) ((e)->VS_HTI_KEY = (k), (e)->VS_HTI_USED = 1)
#define VS_HT_IS_EMPTY(e) (!(e)->VS_HTI_USED)
#else
#define VS_HT_SET_KEY(e, k) ((e)->VS_HTI_KEY = (k))
#define VS_HT_IS_EMPTY(e) ((e)->VS_HTI_KEY == 0)
#endif
#include "vs-hash-table.h"
#undef VS_HTI_KEY
#undef VS_HTI_USED
