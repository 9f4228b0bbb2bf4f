/* SPDX-License-Identifier: MIT */
/* vs-hash-table.h — one open-addressing hash table, instantiated per key
 * and entry type by the includer (header-only, plain C, no GLib: the
 * collector uses it inside profiled processes, the importer and the
 * analyzer outside).
 *
 * Linear probing over a power-of-two array of entries kept at most half
 * full (or a quarter: VS_HT_LOAD_SHIFT); deletion by backward shift, so
 * probe chains never hold tombstones.  An entry is empty when
 * VS_HT_IS_EMPTY says so; empty entries are all zero bytes (the array is
 * allocated zeroed and removal zeroes), so a key type must have a zero
 * value that is never a real key (address 0, id 0, a NULL string) — or the
 * entry must carry a `used` flag that VS_HT_IS_EMPTY reads.
 *
 * Entries of equal hash stay in the order they were added, in probe order
 * (growing moves every probe run whole, from its start; removal shifts
 * without reordering), so a lookup meets the oldest first.
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
 *   VS_HT_HASH(k)     a well-mixed hash of key k (up to 64 bits)
 *   VS_HT_EQUAL(a, b) key equality
 *   VS_HT_IS_EMPTY(e) true for an empty entry
 *
 * and, optionally:
 *
 *   VS_HT_MATCH(e, k)    true when entry e holds key k, in place of
 *                        VS_HT_EQUAL (and, with VS_HT_ENTRY_HASH, of
 *                        VS_HT_KEY): for entries that refer to their key
 *                        rather than hold it (an offset into a buffer the
 *                        key type points to).
 *   VS_HT_ENTRY_HASH(e)  VS_HT_HASH of e's key, kept in the entry by
 *                        VS_HT_SET_KEY: used when growing and removing
 *                        in place of hashing VS_HT_KEY (e) again.
 *   VS_HT_CHAIN_MAX      insert refuses a new key when this many entries
 *                        of its hash are in the table already: a lookup
 *                        then calls VS_HT_MATCH on at most this many
 *                        entries of its own hash, whatever keys a hostile
 *                        input chooses (growing keeps entries of one hash
 *                        together, so the bound survives it).
 *   VS_HT_LOAD_SHIFT     at most cap >> VS_HT_LOAD_SHIFT entries (default
 *                        1, half full; 2, a quarter: shorter probes for
 *                        twice the memory).
 *   VS_HT_OWNER          the type of a member `owner` of the table, set
 *                        by the includer, that the two below may read.
 *   VS_HT_ALLOC(t, bytes)   zeroed memory for table t's entry array, or
 *                           NULL to refuse it (a memory bound); default
 *                           calloc.
 *   VS_HT_FREE(t, p, bytes) frees array p of that many bytes, from
 *                           VS_HT_ALLOC; default free.
 *
 * It defines the table type (zero-initialised = empty, but for `owner`)
 * and:
 *
 *   VS_HT_ENTRY *FN(find) (const T *t, VS_HT_KEY_TYPE k)   the entry or NULL
 *   VS_HT_ENTRY *FN(insert) (T *t, VS_HT_KEY_TYPE k, bool *added)
 *       the entry of k, added (key set, rest zero) when absent, *added
 *       telling which (added may be NULL); NULL, with nothing changed,
 *       when the array had to grow and could not (out of memory, or
 *       VS_HT_ALLOC refused; k may be present) or k is absent and
 *       VS_HT_CHAIN_MAX entries have its hash.  The pointer is valid
 *       until the next insert or remove.
 *   void FN(remove) (T *t, VS_HT_ENTRY *e)   e from find/insert
 *   bool FN(reserve) (T *t, size_t n)        room for n entries
 *   void FN(clear) (T *t)                    frees the array
 *   size_t FN(count) (const T *t)
 *   bool FN(check) (const T *t)   the invariants, walking every entry (tests)
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
    || !defined(VS_HT_KEY_TYPE) || !defined(VS_HT_SET_KEY) || !defined(VS_HT_HASH)                 \
    || !defined(VS_HT_IS_EMPTY)
#error "vs-hash-table.h: define every VS_HT_ parameter before including it"
#endif
#if !defined(VS_HT_MATCH) && (!defined(VS_HT_KEY) || !defined(VS_HT_EQUAL))
#error "vs-hash-table.h: define VS_HT_MATCH, or VS_HT_KEY and VS_HT_EQUAL"
#endif
#if !defined(VS_HT_ENTRY_HASH) && !defined(VS_HT_KEY)
#error "vs-hash-table.h: define VS_HT_ENTRY_HASH or VS_HT_KEY"
#endif
#if defined(VS_HT_ALLOC) != defined(VS_HT_FREE)
#error "vs-hash-table.h: define both VS_HT_ALLOC and VS_HT_FREE, or neither"
#endif

#ifndef VS_HT_MATCH
#define VS_HT_MATCH(e, k) (VS_HT_EQUAL (VS_HT_KEY (e), (k)))
#endif
#ifdef VS_HT_ENTRY_HASH
#define VS_HT_HASH_KEPT_ 1
#else
#define VS_HT_HASH_KEPT_ 0
#define VS_HT_ENTRY_HASH(e) (VS_HT_HASH (VS_HT_KEY (e)))
#endif
#ifndef VS_HT_LOAD_SHIFT
#define VS_HT_LOAD_SHIFT 1
#endif
#if VS_HT_LOAD_SHIFT < 1
#error "vs-hash-table.h: VS_HT_LOAD_SHIFT must leave the table at most half full"
#endif
#ifndef VS_HT_ALLOC
#define VS_HT_ALLOC(t, bytes) calloc (1, (bytes))
#define VS_HT_FREE(t, p, bytes) free (p)
#endif

typedef struct
{
  VS_HT_ENTRY *entries;
  size_t cap; /* 0 or a power of two */
  size_t count;
#ifdef VS_HT_OWNER
  VS_HT_OWNER owner;
#endif
} VS_HT_TYPE;

static inline size_t
VS_HT_FN (count) (const VS_HT_TYPE *t)
{
  return t->count;
}

/* The slot of k, whose hash is h, or of the empty slot where it would go;
 * with VS_HT_CHAIN_MAX, *same (when not NULL) gets the number of entries of
 * hash h passed on the way.  The table must have an array. */
static inline size_t
VS_HT_FN (slot_) (const VS_HT_TYPE *t, VS_HT_KEY_TYPE k, uint64_t h, size_t *same)
{
  assert (t->cap > 0 && (t->cap & (t->cap - 1)) == 0);
  assert (t->count <= t->cap >> VS_HT_LOAD_SHIFT);
  size_t i = (size_t)h & (t->cap - 1);
#ifdef VS_HT_CHAIN_MAX
  size_t n = 0;
  while (!VS_HT_IS_EMPTY (&t->entries[i]) && !(VS_HT_MATCH (&t->entries[i], k)))
    {
      n += (uint64_t)(VS_HT_ENTRY_HASH (&t->entries[i])) == h;
      i = (i + 1) & (t->cap - 1);
    }
  if (same != NULL)
    *same = n;
#else
  (void)same;
  while (!VS_HT_IS_EMPTY (&t->entries[i]) && !(VS_HT_MATCH (&t->entries[i], k)))
    i = (i + 1) & (t->cap - 1);
#endif
  return i;
}

static inline VS_HT_ENTRY *
VS_HT_FN (find) (const VS_HT_TYPE *t, VS_HT_KEY_TYPE k)
{
  if (t->cap == 0)
    return NULL;
  VS_HT_ENTRY *e = &t->entries[VS_HT_FN (slot_) (t, k, (uint64_t)(VS_HT_HASH (k)), NULL)];
  return VS_HT_IS_EMPTY (e) ? NULL : e;
}

static inline void
VS_HT_FN (clear) (VS_HT_TYPE *t)
{
  if (t->entries != NULL)
    VS_HT_FREE (t, t->entries, t->cap * sizeof (VS_HT_ENTRY));
  t->entries = NULL;
  t->cap = t->count = 0;
}

static inline bool
VS_HT_FN (reserve) (VS_HT_TYPE *t, size_t n)
{
  if (n <= t->cap >> VS_HT_LOAD_SHIFT)
    return true;
  size_t cap = t->cap ? t->cap : 64;
  while (cap >> VS_HT_LOAD_SHIFT < n)
    {
      if (cap > SIZE_MAX / 2 / sizeof (VS_HT_ENTRY))
        return false;
      cap *= 2;
    }
  VS_HT_ENTRY *entries = VS_HT_ALLOC (t, cap * sizeof (VS_HT_ENTRY));
  if (entries == NULL)
    return false;
  /* Every probe run moved whole, from its start (after an empty slot):
   * entries of one hash keep their order.  Keys are distinct, so each
   * goes to the first empty slot from its home. */
  size_t start = 0;
  if (t->count > 0)
    while (!VS_HT_IS_EMPTY (&t->entries[start]))
      start++;
  size_t moved = 0;
  for (size_t m = 0; m < t->cap; m++)
    {
      const VS_HT_ENTRY *e = &t->entries[(start + m) & (t->cap - 1)];
      if (VS_HT_IS_EMPTY (e))
        continue;
      size_t j = (size_t)(VS_HT_ENTRY_HASH (e)) & (cap - 1);
      while (!VS_HT_IS_EMPTY (&entries[j]))
        j = (j + 1) & (cap - 1);
      entries[j] = *e;
      moved++;
    }
  assert (moved == t->count);
  if (t->entries != NULL)
    VS_HT_FREE (t, t->entries, t->cap * sizeof (VS_HT_ENTRY));
  t->entries = entries;
  t->cap = cap;
  assert (t->count <= cap >> VS_HT_LOAD_SHIFT);
  return true;
}

static inline VS_HT_ENTRY *
VS_HT_FN (insert) (VS_HT_TYPE *t, VS_HT_KEY_TYPE k, bool *added)
{
  if (!VS_HT_FN (reserve) (t, t->count + 1))
    return NULL;
  uint64_t h = (uint64_t)(VS_HT_HASH (k));
  size_t same = 0;
  VS_HT_ENTRY *e = &t->entries[VS_HT_FN (slot_) (t, k, h, &same)];
  bool fresh = VS_HT_IS_EMPTY (e);
  if (fresh)
    {
#ifdef VS_HT_CHAIN_MAX
      if (same >= VS_HT_CHAIN_MAX)
        return NULL;
#endif
      VS_HT_SET_KEY (e, k);
      assert (!VS_HT_IS_EMPTY (e));
      assert (!VS_HT_HASH_KEPT_ || (uint64_t)(VS_HT_ENTRY_HASH (e)) == h);
      t->count++;
      assert (t->count <= t->cap >> VS_HT_LOAD_SHIFT);
    }
  if (added != NULL)
    *added = fresh;
  return e;
}

static inline void
VS_HT_FN (remove) (VS_HT_TYPE *t, VS_HT_ENTRY *e)
{
  assert (e >= t->entries && e < t->entries + t->cap && !VS_HT_IS_EMPTY (e));
  assert (t->count > 0);
  size_t i = (size_t)(e - t->entries);
  memset (e, 0, sizeof *e);
  t->count--;
  for (size_t j = (i + 1) & (t->cap - 1); !VS_HT_IS_EMPTY (&t->entries[j]);
       j = (j + 1) & (t->cap - 1))
    {
      size_t home = (size_t)(VS_HT_ENTRY_HASH (&t->entries[j])) & (t->cap - 1);
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

/* True when t's invariants hold: a power-of-two array (or none) within
 * the load bound, count entries, each reached from its home without an
 * empty slot between, and, with VS_HT_CHAIN_MAX, at most that many of
 * one hash in a probe run.  Walks the whole array: for tests. */
static inline bool
VS_HT_FN (check) (const VS_HT_TYPE *t)
{
  if (t->cap == 0)
    return t->entries == NULL && t->count == 0;
  if ((t->cap & (t->cap - 1)) != 0 || t->count > t->cap >> VS_HT_LOAD_SHIFT)
    return false;
  size_t n = 0;
  for (size_t i = 0; i < t->cap; i++)
    {
      const VS_HT_ENTRY *e = &t->entries[i];
      if (VS_HT_IS_EMPTY (e))
        continue;
      n++;
      uint64_t h = (uint64_t)(VS_HT_ENTRY_HASH (e));
      size_t same = 0;
      for (size_t j = (size_t)h & (t->cap - 1); j != i; j = (j + 1) & (t->cap - 1))
        {
          if (VS_HT_IS_EMPTY (&t->entries[j]))
            return false;
          same += (uint64_t)(VS_HT_ENTRY_HASH (&t->entries[j])) == h;
        }
#ifdef VS_HT_CHAIN_MAX
      if (same >= VS_HT_CHAIN_MAX)
        return false;
#else
      (void)same;
#endif
    }
  return n == t->count;
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
#undef VS_HT_MATCH
#undef VS_HT_ENTRY_HASH
#undef VS_HT_HASH_KEPT_
#undef VS_HT_CHAIN_MAX
#undef VS_HT_LOAD_SHIFT
#undef VS_HT_OWNER
#undef VS_HT_ALLOC
#undef VS_HT_FREE
