/* SPDX-License-Identifier: MIT */
/* vs-pickle-fuzz.c — libFuzzer entry point for the restricted pickle reader.
 *
 * Parses the input twice: plainly, and with an append hook that streams
 * list items as the importer does (reads them with dict_fetch, items and
 * stable, gives containers tokens and shared tokens, and takes, keeps or
 * refuses batches in turn), so the reclaiming of taken values and the
 * recognition of repeated containers run on every input.  After each
 * parse it walks every value reachable from the root with an explicit stack
 * and a visit budget (values may be shared or cyclic), so the reader's
 * accessors are exercised on whatever the parser accepted.  Built
 * with clang -fsanitize=fuzzer,address by fuzz/run-fuzzer.sh, and linked
 * with vs-fuzz-driver.c into a plain program for the corpus smoke test.
 */
#include <stdint.h>
#include <stddef.h>

#include "vs-pickle.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const fetch_names[] = { "action", "filename", "line" };

/* Reads a value as a consumer would, with the accessors made for hooks. */
static void
touch (const VsPickle *p, VsPickleRef v, VsPickleKeys *keys)
{
  VsPickleValue vals[G_N_ELEMENTS (fetch_names)];
  gsize n;
  guint32 t;
  gboolean dict = vs_pickle_dict_fetch (p, v, keys, vals);
  g_assert (dict == (vs_pickle_type (p, v) == VS_PICKLE_DICT));
  for (gsize i = 0; i < G_N_ELEMENTS (vals); i++)
    if (vals[i].s != NULL)
      {
        volatile char sink = vals[i].len ? vals[i].s[vals[i].len - 1] : 0;
        (void)sink;
      }
  const VsPickleRef *h = vs_pickle_items (p, v, &n);
  if (h != NULL)
    {
      vs_pickle_stable (p, h, n);
      for (gsize i = 0; i < n; i++)
        vs_pickle_type (p, h[i]);
    }
  if (vs_pickle_get_token (p, v, &t))
    g_assert (t <= VS_PICKLE_TOKEN_MAX);
}

typedef struct
{
  guint calls;
  VsPickleKeys keys;
} HookState;

/* Streams list items: gives most items a token or a shared token (and the
 * first item inside each a shared one), and takes three batches in four;
 * every 64th call fails. */
static VsPickleAppend
hook (VsPickle *p, VsPickleRef list, const VsPickleRef *items, gsize n, gpointer data,
      GError **error)
{
  HookState *st = data;
  st->calls++;
  touch (p, list, &st->keys);
  for (gsize i = 0; i < n; i++)
    {
      touch (p, items[i], &st->keys);
      VsPickleIter it;
      VsPickleRef inner;
      vs_pickle_iter_init (&it, p, items[i]);
      if (vs_pickle_iter_next (&it, &inner))
        {
          touch (p, inner, &st->keys);
          vs_pickle_set_token_shared (p, inner, st->calls);
        }
      if (i % 3 == 0)
        vs_pickle_set_token (p, items[i], (guint32)i);
      else if (i % 3 == 1)
        vs_pickle_set_token_shared (p, items[i], (guint32)i);
    }
  if (st->calls % 64 == 0)
    {
      g_set_error_literal (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
                           "refused by the hook");
      return VS_PICKLE_APPEND_ERROR;
    }
  return st->calls % 4 == 0 ? VS_PICKLE_APPEND_KEEP : VS_PICKLE_APPEND_TAKEN;
}

static void walk (VsPickle *p);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const uint8_t empty[1];
  for (int pass = 0; pass < 2; pass++)
    {
      GError *error = NULL;
      HookState st = { 0 };
      vs_pickle_keys_init (&st.keys, fetch_names, G_N_ELEMENTS (fetch_names));
      VsPickle *p = vs_pickle_parse_full (size ? data : empty, size, NULL, NULL, pass ? hook : NULL,
                                          &st, &error);
      if (p == NULL)
        {
          g_assert (error != NULL && error->message[0] != '\0');
          g_error_free (error);
          continue;
        }
      walk (p);
    }
  return 0;
}

/* Visits every value reachable from the root (within a budget), then frees
 * p. */
static void
walk (VsPickle *p)
{
  VsPickleKeys keys;
  vs_pickle_keys_init (&keys, fetch_names, G_N_ELEMENTS (fetch_names));
  GArray *pending = g_array_new (FALSE, FALSE, sizeof (VsPickleRef));
  VsPickleRef r = vs_pickle_root (p), k, v;
  guint budget = 100000;
  g_array_append_val (pending, r);
  while (pending->len && pending->len < 4000000 && budget--)
    {
      r = g_array_index (pending, VsPickleRef, pending->len - 1);
      g_array_set_size (pending, pending->len - 1);
      gint64 i;
      double f;
      gsize len;
      VsPickleIter it;
      switch (vs_pickle_type (p, r))
        {
        case VS_PICKLE_INT:
        case VS_PICKLE_BOOL:
          g_assert (vs_pickle_get_int (p, r, &i));
          break;
        case VS_PICKLE_UINT64:
          {
            guint64 u;
            g_assert (!vs_pickle_get_int (p, r, &i));
            g_assert (vs_pickle_get_uint64 (p, r, &u) && (u >> 63) == 1);
          }
          break;
        case VS_PICKLE_FLOAT:
          g_assert (vs_pickle_get_double (p, r, &f));
          break;
        case VS_PICKLE_STR:
        case VS_PICKLE_BYTES:
          {
            const char *s = vs_pickle_get_str (p, r, &len);
            g_assert (s != NULL);
            volatile char sink = len ? s[len - 1] : 0;
            (void)sink;
          }
          break;
        case VS_PICKLE_DICT:
          vs_pickle_dict_get (p, r, "segments");
          touch (p, r, &keys);
          vs_pickle_iter_init (&it, p, r);
          while (vs_pickle_iter_next_pair (&it, &k, &v))
            {
              g_array_append_val (pending, k);
              g_array_append_val (pending, v);
            }
          break;
        case VS_PICKLE_LIST:
        case VS_PICKLE_TUPLE:
          vs_pickle_iter_init (&it, p, r);
          while (vs_pickle_iter_next (&it, &v))
            g_array_append_val (pending, v);
          break;
        default:
          break;
        }
    }
  g_array_free (pending, TRUE);
  vs_pickle_free (p);
}
