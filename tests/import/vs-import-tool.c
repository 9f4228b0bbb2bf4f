/* SPDX-License-Identifier: MIT */
/* vs-import-tool.c — the import subcommand as a program of its own, so the
 * import tests do not depend on the rest of the CLI:
 *   vs-import-tool SNAPSHOT.pickle -o FILE   ≡ vramscope import …
 *   vs-import-tool --dump PICKLE             prints the pickle's value
 * The dump writes a canonical text form (the same as test-pickle.py's
 * canon()) for comparing the reader with Python's own unpickler; it walks
 * with an explicit stack and at most 1,000,000 values. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "vs-pickle.h"

int vs_cmd_import (int argc, char **argv);

/* One step of the dump: a value to print, or a literal to emit. */
typedef struct
{
  VsPickleRef ref;
  const char *lit; /* non-NULL: print this instead */
} Step;

static void
print_str (const char *s, gsize len, gboolean bytes)
{
  putchar (bytes ? 'b' : 's');
  putchar ('\'');
  for (gsize i = 0; i < len; i++)
    printf ("%02x", (guchar)s[i]);
  putchar ('\'');
}

static int
dump (const char *path)
{
  GError *error = NULL;
  VsPickle *p = vs_pickle_load_file (path, NULL, NULL, &error);
  if (p == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      g_error_free (error);
      return 1;
    }
  GArray *st = g_array_new (FALSE, FALSE, sizeof (Step));
  Step s0 = { vs_pickle_root (p), NULL };
  g_array_append_val (st, s0);
  guint budget = 1000000;
  while (st->len && budget--)
    {
      if (st->len > 4000000)
        {
          fputs ("...", stdout); /* shared or cyclic values expand without end */
          break;
        }
      Step s = g_array_index (st, Step, st->len - 1);
      g_array_set_size (st, st->len - 1);
      if (s.lit)
        {
          fputs (s.lit, stdout);
          continue;
        }
      gint64 i;
      double f;
      gsize len;
      const char *str;
      VsPickleIter it;
      VsPickleRef k, v;
      VsPickleType t = vs_pickle_type (p, s.ref);
      switch (t)
        {
        case VS_PICKLE_NONE:
          fputs ("N", stdout);
          break;
        case VS_PICKLE_TOKEN:
          fputs ("?", stdout);
          break; /* only with a hook */
        case VS_PICKLE_BOOL:
          vs_pickle_get_int (p, s.ref, &i);
          fputs (i ? "T" : "F", stdout);
          break;
        case VS_PICKLE_INT:
          vs_pickle_get_int (p, s.ref, &i);
          printf ("i%" G_GINT64_FORMAT, i);
          break;
        case VS_PICKLE_UINT64:
          {
            guint64 u = 0;
            vs_pickle_get_uint64 (p, s.ref, &u);
            printf ("i%" G_GUINT64_FORMAT, u);
          }
          break;
        case VS_PICKLE_FLOAT:
          {
            guint64 bits;
            vs_pickle_get_double (p, s.ref, &f);
            memcpy (&bits, &f, sizeof bits);
            printf ("f%016" G_GINT64_MODIFIER "x", bits);
          }
          break;
        case VS_PICKLE_STR:
        case VS_PICKLE_BYTES:
          str = vs_pickle_get_str (p, s.ref, &len);
          print_str (str, len, t == VS_PICKLE_BYTES);
          break;
        case VS_PICKLE_LIST:
        case VS_PICKLE_TUPLE:
        case VS_PICKLE_DICT:
          {
            /* Push in reverse: closing bracket, then items last to first. */
            GArray *items = g_array_new (FALSE, FALSE, sizeof (VsPickleRef));
            vs_pickle_iter_init (&it, p, s.ref);
            while (vs_pickle_iter_next (&it, &v))
              g_array_append_val (items, v);
            fputs (t == VS_PICKLE_LIST ? "[" : t == VS_PICKLE_TUPLE ? "(" : "{", stdout);
            Step close = { 0, t == VS_PICKLE_LIST ? "]" : t == VS_PICKLE_TUPLE ? ")" : "}" };
            g_array_append_val (st, close);
            for (guint j = items->len; j-- > 0;)
              {
                Step item = { g_array_index (items, VsPickleRef, j), NULL };
                Step sep = { 0, t == VS_PICKLE_DICT && j % 2 == 0 ? ":" : "," };
                g_array_append_val (st, sep);
                g_array_append_val (st, item);
              }
            g_array_free (items, TRUE);
            (void)k;
          }
          break;
        }
    }
  putchar ('\n');
  g_array_free (st, TRUE);
  vs_pickle_free (p);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "--dump") == 0)
    return dump (argv[2]);
  argv[0] = (char *)"import";
  return vs_cmd_import (argc, argv);
}
