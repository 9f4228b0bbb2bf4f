/* SPDX-License-Identifier: MIT */
/* test-hash-table.c — common/vs-hash-table.h against a reference: random
 * inserts, lookups and removals checked against a plain array, and what
 * the optional parameters promise: the bound on entries of one hash
 * (VS_HT_CHAIN_MAX), the oldest of several matching entries found first,
 * through growth too, an allocator that refuses (VS_HT_ALLOC), and the
 * load bound (VS_HT_LOAD_SHIFT).  check() is run after every change.
 */
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* ----------------------------------------------------- integer keys -- */

typedef struct
{
  uint64_t key, val;
} IntEntry;

/* A poor hash on purpose: eight keys in a row have the same, so probe
 * runs are long and some wrap around the end of the array. */
static inline uint64_t
poor_hash (uint64_t k)
{
  uint64_t x = (k / 8) * 0x9e3779b97f4a7c15u;
  return x ^ (x >> 29);
}

#define VS_HT_TYPE IntMap
#define VS_HT_FN(n) int_map_##n
#define VS_HT_ENTRY IntEntry
#define VS_HT_KEY_TYPE uint64_t
#define VS_HT_KEY(e) ((e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = (k))
#define VS_HT_HASH(k) poor_hash (k)
#define VS_HT_EQUAL(a, b) ((a) == (b))
#define VS_HT_IS_EMPTY(e) ((e)->key == 0)
#include "vs-hash-table.h"

/* ------------------------------------------ a memory bound (ALLOC) -- */

typedef struct
{
  size_t used, limit;
} Budget;

static void *
budget_alloc (Budget *b, size_t n)
{
  if (n > b->limit - b->used)
    return NULL;
  b->used += n;
  return g_malloc0 (n);
}

static void
budget_free (Budget *b, void *p, size_t n)
{
  g_assert_cmpuint (n, <=, b->used);
  b->used -= n;
  g_free (p);
}

/* Integer keys again, with a hash of its own per key, a quarter full at
 * most and memory from a Budget. */
#define VS_HT_TYPE BoundMap
#define VS_HT_FN(n) bound_map_##n
#define VS_HT_ENTRY IntEntry
#define VS_HT_KEY_TYPE uint64_t
#define VS_HT_KEY(e) ((e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = (k))
#define VS_HT_HASH(k) poor_hash ((k)*8)
#define VS_HT_EQUAL(a, b) ((a) == (b))
#define VS_HT_IS_EMPTY(e) ((e)->key == 0)
#define VS_HT_LOAD_SHIFT 2
#define VS_HT_OWNER Budget *
#define VS_HT_ALLOC(t, bytes) budget_alloc ((t)->owner, bytes)
#define VS_HT_FREE(t, p, bytes) budget_free ((t)->owner, p, bytes)
#include "vs-hash-table.h"

/* ------------------------------- prefixes: several entries may match -- */

/* Entries refer to strings of an array the key points to; a key matches
 * every entry whose string is a prefix of the key's, as the pickle
 * reader's spans match the input that starts with their bytes.  The
 * hash is the first byte's, and kept in the entry. */
#define CHAIN_MAX 4

typedef struct
{
  uint32_t hash, ref; /* ref: index in the strings + 1; 0: empty */
} RefEntry;

typedef struct
{
  uint32_t hash;
  const char *s;
  const char *const *strings;
} PrefixKey;

static inline bool
prefix_matches (const RefEntry *e, const PrefixKey *k)
{
  const char *p = k->strings[e->ref - 1];
  return e->hash == k->hash && g_str_has_prefix (k->s, p);
}

#define VS_HT_TYPE PrefixMap
#define VS_HT_FN(n) prefix_map_##n
#define VS_HT_ENTRY RefEntry
#define VS_HT_KEY_TYPE const PrefixKey *
#define VS_HT_SET_KEY(e, k) ((e)->hash = (k)->hash, (e)->ref = UINT32_MAX)
#define VS_HT_HASH(k) ((k)->hash)
#define VS_HT_MATCH(e, k) prefix_matches (e, k)
#define VS_HT_ENTRY_HASH(e) ((e)->hash)
#define VS_HT_IS_EMPTY(e) ((e)->ref == 0)
#define VS_HT_CHAIN_MAX CHAIN_MAX
#include "vs-hash-table.h"

/* The strings of a PrefixMap and the key of s, which must be one of them
 * or start like one.  The hash is 63 for strings starting with 'a', so
 * their run starts at the last slot of a 64-slot array and wraps. */
static const char *prefix_strings[64];
static guint n_prefix_strings;

static PrefixKey
prefix_key (const char *s)
{
  return (PrefixKey){ s[0] == 'a' ? 63 : (uint32_t)(unsigned char)s[0], s, prefix_strings };
}

/* One string for each of 48 other hashes: enough to make a 64-slot
 * array grow (past 32 entries). */
static const char *const other_strings[]
    = { "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
        "s", "t", "u", "v", "w", "x", "y", "z", "C", "D", "E", "F", "G", "H", "I", "J",
        "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z" };

/* Inserts s; returns its entry (NULL: refused), *added as insert. */
static RefEntry *
prefix_add (PrefixMap *t, const char *s, bool *added)
{
  g_assert_cmpuint (n_prefix_strings, <, G_N_ELEMENTS (prefix_strings));
  PrefixKey k = prefix_key (s);
  RefEntry *e = prefix_map_insert (t, &k, added);
  if (e != NULL && *added)
    {
      prefix_strings[n_prefix_strings++] = s;
      e->ref = n_prefix_strings;
    }
  g_assert_true (prefix_map_check (t));
  return e;
}

static const char *
prefix_lookup (const PrefixMap *t, const char *s)
{
  PrefixKey k = prefix_key (s);
  const RefEntry *e = prefix_map_find (t, &k);
  return e != NULL ? prefix_strings[e->ref - 1] : NULL;
}

/* ------------------------------------------------------------- tests -- */

/* Random inserts, finds and removals of colliding keys give what a plain
 * array of present keys gives, and keep the invariants. */
static void
test_matches_reference (void)
{
  enum
  {
    KEYS = 2000
  };
  IntMap t = { 0 };
  uint64_t *val = g_new0 (uint64_t, KEYS + 1); /* 0: absent */
  size_t present = 0;
  GRand *r = g_rand_new_with_seed (16);
  for (int step = 0; step < 60000; step++)
    {
      uint64_t k = (uint64_t)g_rand_int_range (r, 1, KEYS + 1);
      int op = g_rand_int_range (r, 0, 3);
      if (op == 0)
        {
          bool added = false;
          IntEntry *e = int_map_insert (&t, k, &added);
          g_assert_nonnull (e);
          g_assert_cmpint (added, ==, val[k] == 0);
          present += added;
          e->val = val[k] = (uint64_t)step + 1;
        }
      else if (op == 1)
        {
          IntEntry *e = int_map_find (&t, k);
          g_assert_cmpint (e != NULL, ==, val[k] != 0);
          if (e != NULL)
            {
              g_assert_cmpuint (e->val, ==, val[k]);
              int_map_remove (&t, e);
              val[k] = 0;
              present--;
            }
        }
      else
        {
          const IntEntry *e = int_map_find (&t, k);
          g_assert_cmpint (e != NULL, ==, val[k] != 0);
          if (e != NULL)
            g_assert_cmpuint (e->val, ==, val[k]);
        }
      g_assert_cmpuint (int_map_count (&t), ==, present);
      if (step % 97 == 0)
        g_assert_true (int_map_check (&t));
    }
  g_assert_true (int_map_check (&t));
  for (uint64_t k = 1; k <= KEYS; k++)
    g_assert_cmpint (int_map_find (&t, k) != NULL, ==, val[k] != 0);
  int_map_clear (&t);
  g_assert_true (int_map_check (&t));
  g_assert_null (int_map_find (&t, 1));
  g_rand_free (r);
  g_free (val);
}

/* VS_HT_LOAD_SHIFT 2 keeps the table a quarter full at most. */
static void
test_load_bound (void)
{
  Budget b = { 0, SIZE_MAX };
  BoundMap t = { .owner = &b };
  for (uint64_t k = 1; k <= 5000; k++)
    {
      g_assert_nonnull (bound_map_insert (&t, k, NULL));
      g_assert_cmpuint (bound_map_count (&t) * 4, <=, t.cap);
    }
  g_assert_true (bound_map_check (&t));
  /* reserve gives room for n without growing again */
  g_assert_true (bound_map_reserve (&t, 100000));
  size_t cap = t.cap;
  g_assert_cmpuint (cap, >=, 400000);
  for (uint64_t k = 5001; k <= 100000; k++)
    g_assert_nonnull (bound_map_insert (&t, k, NULL));
  g_assert_cmpuint (t.cap, ==, cap);
  g_assert_true (bound_map_check (&t));
  g_assert_cmpuint (b.used, ==, cap * sizeof (IntEntry));
  bound_map_clear (&t);
  g_assert_cmpuint (b.used, ==, 0);
}

/* An allocator that refuses: insert returns NULL and the table is left
 * as it was; every byte allocated is given back. */
static void
test_alloc_refused (void)
{
  Budget b = { 0, 64 * 1024 };
  BoundMap t = { .owner = &b };
  uint64_t k = 1;
  while (bound_map_insert (&t, k, NULL) != NULL)
    k++;
  g_assert_cmpuint (b.used, ==, t.cap * sizeof (IntEntry));
  g_assert_cmpuint (bound_map_count (&t), ==, k - 1);
  /* growing to the next power of two would pass the limit */
  g_assert_cmpuint (b.used + 2 * t.cap * sizeof (IntEntry), >, b.limit);
  g_assert_true (bound_map_check (&t));
  for (uint64_t j = 1; j < k; j++)
    g_assert_nonnull (bound_map_find (&t, j));
  g_assert_null (bound_map_find (&t, k));
  bound_map_clear (&t);
  g_assert_cmpuint (b.used, ==, 0);
}

/* At most CHAIN_MAX entries of one hash: a new key of a full hash is
 * refused, others are not, and the bound holds through growth. */
static void
test_chain_max (void)
{
  static const char *const same[] = { "ba", "bb", "bc", "bd", "be" };
  PrefixMap t = { 0 };
  n_prefix_strings = 0;
  bool added;
  for (guint i = 0; i < CHAIN_MAX; i++)
    {
      g_assert_nonnull (prefix_add (&t, same[i], &added));
      g_assert_true (added);
    }
  g_assert_null (prefix_add (&t, same[CHAIN_MAX], &added));
  g_assert_cmpuint (prefix_map_count (&t), ==, CHAIN_MAX);
  g_assert_null (prefix_lookup (&t, same[CHAIN_MAX]));
  /* present keys are still found, and found by insert */
  for (guint i = 0; i < CHAIN_MAX; i++)
    {
      g_assert_cmpstr (prefix_lookup (&t, same[i]), ==, same[i]);
      g_assert_nonnull (prefix_add (&t, same[i], &added));
      g_assert_false (added);
    }
  /* other hashes go in, through growth */
  for (guint i = 0; i < G_N_ELEMENTS (other_strings); i++)
    {
      g_assert_nonnull (prefix_add (&t, other_strings[i], &added));
      g_assert_true (added);
    }
  g_assert_cmpuint (t.cap, >, 64);
  g_assert_null (prefix_add (&t, same[CHAIN_MAX], &added));
  /* a removal makes room for one */
  prefix_map_remove (&t, prefix_map_find (&t, &(PrefixKey){ 'b', "bb", prefix_strings }));
  g_assert_true (prefix_map_check (&t));
  g_assert_null (prefix_lookup (&t, "bb"));
  g_assert_nonnull (prefix_add (&t, same[CHAIN_MAX], &added));
  g_assert_true (added);
  g_assert_cmpstr (prefix_lookup (&t, "be"), ==, "be");
  prefix_map_clear (&t);
}

/* Of several entries that match a key, the oldest is found, also after
 * growing the array when their probe run wrapped around its end. */
static void
test_oldest_first (void)
{
  PrefixMap t = { 0 };
  n_prefix_strings = 0;
  bool added;
  /* None is a prefix of an older one, so each is added; "abcd" starts
   * with all three. */
  g_assert_nonnull (prefix_add (&t, "abc", &added));
  g_assert_nonnull (prefix_add (&t, "ab", &added));
  g_assert_nonnull (prefix_add (&t, "a", &added));
  g_assert_cmpuint (prefix_map_count (&t), ==, 3);
  g_assert_cmpuint (t.cap, ==, 64);
  /* their run starts at slot 63 and wraps to 0 and 1 */
  g_assert_cmpuint (t.entries[63].ref, ==, 1);
  g_assert_cmpuint (t.entries[0].ref, ==, 2);
  g_assert_cmpstr (prefix_lookup (&t, "abcd"), ==, "abc");
  g_assert_cmpstr (prefix_lookup (&t, "abd"), ==, "ab");
  g_assert_cmpstr (prefix_lookup (&t, "ax"), ==, "a");
  /* a fourth that starts like the older ones is not new */
  g_assert_nonnull (prefix_add (&t, "abcx", &added));
  g_assert_false (added);
  for (guint i = 0; i < G_N_ELEMENTS (other_strings); i++)
    g_assert_nonnull (prefix_add (&t, other_strings[i], &added));
  g_assert_cmpuint (t.cap, >=, 128);
  g_assert_cmpstr (prefix_lookup (&t, "abcd"), ==, "abc");
  g_assert_cmpstr (prefix_lookup (&t, "abd"), ==, "ab");
  /* and after a removal before them in the run shifts them back */
  prefix_map_remove (&t, prefix_map_find (&t, &(PrefixKey){ 63, "abc", prefix_strings }));
  g_assert_true (prefix_map_check (&t));
  g_assert_cmpstr (prefix_lookup (&t, "abcd"), ==, "ab");
  prefix_map_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hash-table/matches-reference", test_matches_reference);
  g_test_add_func ("/hash-table/load-bound", test_load_bound);
  g_test_add_func ("/hash-table/alloc-refused", test_alloc_refused);
  g_test_add_func ("/hash-table/chain-max", test_chain_max);
  g_test_add_func ("/hash-table/oldest-first", test_oldest_first);
  return g_test_run ();
}
