/* vs-hash-table.h — one open-addressing hash table, instantiated per key
 * and entry type by the includer (header-only, plain C, no GLib: the
 * collector uses it inside profiled processes, the importer and the
 * analyzer outside).
 *
 * Linear probing over a power-of-two array of entries kept at most half
 * full; deletion by backward shift, so probe chains never hold tombstones.
 * An entry is empty when VS_HT_IS_EMPTY says so; empty entries are all
 * zero bytes (the array is calloc'ed and removal zeroes), so a key type
 * must have a zero value that is never a real key (address 0, id 0, a NULL
 * string) — or the entry must carry a `used` flag that VS_HT_IS_EMPTY
 * reads.
 *
 * To instantiate, define these, then include this file (any number of
 * times per translation unit, with other parameters):
 *
 *   VS_HT_TYPE        name of the table type, e.g. VsAddrMap
 *   VS_HT_FN(n)       name of its function n, e.g. vs_addr_map_##n
 *   VS_HT_ENTRY       the entry type (a struct holding the key)
 *   VS_HT_KEY_TYPE    the key type as passed to find/insert
 *   VS_HT_KEY(e)      the key of entry pointer e, as VS_HT_KEY_TYPE
 *   VS_HT_SET_KEY(e, k) stores key k in the empty entry e
 *   VS_HT_HASH(k)     a well-mixed 64-bit hash of key k
 *   VS_HT_EQUAL(a, b) key equality
 *   VS_HT_IS_EMPTY(e) true for an empty entry
 *
 * It defines the table type (zero-initialised = empty) and:
 *
 *   VS_HT_ENTRY *FN(find) (const T *t, VS_HT_KEY_TYPE k)   the entry or NULL
 *   VS_HT_ENTRY *FN(insert) (T *t, VS_HT_KEY_TYPE k, bool *added)
 *       the entry of k, added (key set, rest zero) when absent, *added
 *       telling which (added may be NULL); NULL when out of memory.  The
 *       pointer is valid until the next insert or remove.
 *   void FN(remove) (T *t, VS_HT_ENTRY *e)   e from find/insert
 *   bool FN(reserve) (T *t, size_t n)        room for n entries
 *   void FN(clear) (T *t)                    frees the array
 *   size_t FN(count) (const T *t)
 *
 * Iterate with: for (size_t i = 0; i < t.cap; i++) if (!VS_HT_IS_EMPTY
 * (&t.entries[i])) …
 */
#ifndef VS_HASH_TABLE_COMMON
#define VS_HASH_TABLE_COMMON
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A 64-bit finalizer (MurmurHash3's fmix64): spreads integer keys such as
 * addresses, whose low bits are mostly zero. */
static inline uint64_t
vs_hash_mix64 (uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* FNV-1a over n bytes, then mixed: for string and byte-string keys. */
static inline uint64_t
vs_hash_bytes (const void *data, size_t n)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return vs_hash_mix64 (h);
}
#endif

#if !defined(VS_HT_TYPE) || !defined(VS_HT_FN) || !defined(VS_HT_ENTRY)                            \
    || !defined(VS_HT_KEY_TYPE) || !defined(VS_HT_KEY) || !defined(VS_HT_SET_KEY)                  \
    || !defined(VS_HT_HASH) || !defined(VS_HT_EQUAL) || !defined(VS_HT_IS_EMPTY)
#error "vs-hash-table.h: define every VS_HT_ parameter before including it"
#endif

typedef struct
{
  VS_HT_ENTRY *entries;
  size_t cap; /* 0 or a power of two */
  size_t count;
} VS_HT_TYPE;

static inline size_t
VS_HT_FN (count) (const VS_HT_TYPE *t)
{
  return t->count;
}

/* The slot of k, or of the empty slot where it would go.  The table must
 * have at least one empty slot. */
static inline size_t
VS_HT_FN (slot_) (const VS_HT_TYPE *t, VS_HT_KEY_TYPE k)
{
  assert (t->cap > 0 && (t->cap & (t->cap - 1)) == 0);
  assert (t->count < t->cap);
  size_t i = (size_t)(VS_HT_HASH (k)) & (t->cap - 1);
  while (!VS_HT_IS_EMPTY (&t->entries[i]) && !(VS_HT_EQUAL (VS_HT_KEY (&t->entries[i]), k)))
    i = (i + 1) & (t->cap - 1);
  return i;
}

static inline VS_HT_ENTRY *
VS_HT_FN (find) (const VS_HT_TYPE *t, VS_HT_KEY_TYPE k)
{
  if (t->cap == 0)
    return NULL;
  VS_HT_ENTRY *e = &t->entries[VS_HT_FN (slot_) (t, k)];
  return VS_HT_IS_EMPTY (e) ? NULL : e;
}

static inline void
VS_HT_FN (clear) (VS_HT_TYPE *t)
{
  free (t->entries);
  t->entries = NULL;
  t->cap = t->count = 0;
}

static inline bool
VS_HT_FN (reserve) (VS_HT_TYPE *t, size_t n)
{
  if (n * 2 <= t->cap)
    return true;
  size_t cap = t->cap ? t->cap : 64;
  while (cap < n * 2)
    {
      if (cap > SIZE_MAX / 2 / sizeof (VS_HT_ENTRY))
        return false;
      cap *= 2;
    }
  VS_HT_TYPE n_t = { calloc (cap, sizeof (VS_HT_ENTRY)), cap, 0 };
  if (n_t.entries == NULL)
    return false;
  for (size_t i = 0; i < t->cap; i++)
    if (!VS_HT_IS_EMPTY (&t->entries[i]))
      {
        size_t j = VS_HT_FN (slot_) (&n_t, VS_HT_KEY (&t->entries[i]));
        n_t.entries[j] = t->entries[i];
        n_t.count++;
      }
  assert (n_t.count == t->count);
  free (t->entries);
  *t = n_t;
  return true;
}

static inline VS_HT_ENTRY *
VS_HT_FN (insert) (VS_HT_TYPE *t, VS_HT_KEY_TYPE k, bool *added)
{
  if (!VS_HT_FN (reserve) (t, t->count + 1))
    return NULL;
  VS_HT_ENTRY *e = &t->entries[VS_HT_FN (slot_) (t, k)];
  bool fresh = VS_HT_IS_EMPTY (e);
  if (fresh)
    {
      VS_HT_SET_KEY (e, k);
      assert (!VS_HT_IS_EMPTY (e));
      t->count++;
    }
  if (added != NULL)
    *added = fresh;
  return e;
}

static inline void
VS_HT_FN (remove) (VS_HT_TYPE *t, VS_HT_ENTRY *e)
{
  assert (e >= t->entries && e < t->entries + t->cap && !VS_HT_IS_EMPTY (e));
  size_t i = (size_t)(e - t->entries);
  memset (e, 0, sizeof *e);
  t->count--;
  for (size_t j = (i + 1) & (t->cap - 1); !VS_HT_IS_EMPTY (&t->entries[j]);
       j = (j + 1) & (t->cap - 1))
    {
      size_t home = (size_t)(VS_HT_HASH (VS_HT_KEY (&t->entries[j]))) & (t->cap - 1);
      /* Entry j moves back to the hole i unless its home lies cyclically
       * in (i, j]. */
      bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays)
        {
          t->entries[i] = t->entries[j];
          memset (&t->entries[j], 0, sizeof t->entries[j]);
          i = j;
        }
    }
}

#undef VS_HT_TYPE
#undef VS_HT_FN
#undef VS_HT_ENTRY
#undef VS_HT_KEY_TYPE
#undef VS_HT_KEY
#undef VS_HT_SET_KEY
#undef VS_HT_HASH
#undef VS_HT_EQUAL
#undef VS_HT_IS_EMPTY
