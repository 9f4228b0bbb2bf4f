/* vs-pickle-fuzz.c — libFuzzer entry point for the restricted pickle reader.
 *
 * Parses the input, then walks every value reachable from the root with an
 * explicit stack and a visit budget (values may be shared or cyclic), so the
 * reader's accessors are exercised on whatever the parser accepted.  Built
 * with clang -fsanitize=fuzzer,address by fuzz/run-fuzzer.sh, and linked
 * with vs-fuzz-driver.c into a plain program for the corpus smoke test.
 */
#include <stdint.h>
#include <stddef.h>

#include "vs-pickle.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const uint8_t empty[1];
  GError *error = NULL;
  VsPickle *p = vs_pickle_parse (size ? data : empty, size, NULL, NULL, &error);
  if (p == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  GArray *todo = g_array_new (FALSE, FALSE, sizeof (VsPickleRef));
  VsPickleRef r = vs_pickle_root (p), k, v;
  guint budget = 100000;
  g_array_append_val (todo, r);
  while (todo->len && todo->len < 4000000 && budget--)
    {
      r = g_array_index (todo, VsPickleRef, todo->len - 1);
      g_array_set_size (todo, todo->len - 1);
      gint64 i;
      double f;
      gsize len;
      VsPickleIter it;
      switch (vs_pickle_type (p, r))
        {
        case VS_PICKLE_INT: case VS_PICKLE_BOOL:
          g_assert (vs_pickle_get_int (p, r, &i));
          break;
        case VS_PICKLE_FLOAT:
          g_assert (vs_pickle_get_double (p, r, &f));
          break;
        case VS_PICKLE_STR: case VS_PICKLE_BYTES:
          {
            const char *s = vs_pickle_get_str (p, r, &len);
            g_assert (s != NULL);
            volatile char sink = len ? s[len - 1] : 0;
            (void) sink;
          }
          break;
        case VS_PICKLE_DICT:
          vs_pickle_dict_get (p, r, "segments");
          vs_pickle_iter_init (&it, p, r);
          while (vs_pickle_iter_next_pair (&it, &k, &v))
            {
              g_array_append_val (todo, k);
              g_array_append_val (todo, v);
            }
          break;
        case VS_PICKLE_LIST: case VS_PICKLE_TUPLE:
          vs_pickle_iter_init (&it, p, r);
          while (vs_pickle_iter_next (&it, &v))
            g_array_append_val (todo, v);
          break;
        default:
          break;
        }
    }
  g_array_free (todo, TRUE);
  vs_pickle_free (p);
  return 0;
}
