/* SPDX-License-Identifier: MIT */
/* vs-pickle-load.c — the pickle reader's entry points (see vs-pickle.h):
 * checking the protocol, setting the memory bound (charged in
 * vs-pickle-mem.c), mapping a file, running the parser (vs-pickle.c) and
 * freeing what it built.
 */
#include "vs-pickle-private.h"

/* Parses data[0..len) (see vs_pickle_parse_full); release_input: data is
 * a private read-only mapping of a file that the parser may give back as
 * it goes (vs_pickle_release_input()). */
static VsPickle *
parse_full (const guint8 *data, gsize len, VsPickleProgress progress, gpointer progress_data,
            VsPickleAppendHook hook, gpointer hook_data, gboolean release_input, GError **error)
{

  static gint serials;
  VsPickle *p = g_new0 (VsPickle, 1);
  do
    p->serial = (guint)g_atomic_int_add (&serials, 1) + 1;
  while (p->serial == 0);
  p->data = data;
  p->size = len;
  p->mem_limit = (gsize)64 << 20;
  if (len < (G_MAXSIZE - p->mem_limit) / VS_PICKLE_MEM_FACTOR)
    p->mem_limit += len * VS_PICKLE_MEM_FACTOR;
  else
    p->mem_limit = G_MAXSIZE;

  if (len < 2 || data[0] != 0x80 || data[1] < 2 || data[1] > 5)
    {
      if (len >= 2 && data[0] == 0x80)
        g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
                     "unsupported pickle protocol %d (2 to 5 are read)", data[1]);
      else
        g_set_error_literal (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_MALFORMED,
                             "not a pickle of protocol 2 to 5");
      vs_pickle_free (p);
      return NULL;
    }

  Parser ps = { .p = p,
                .error = error,
                .hook = hook,
                .hook_data = hook_data,
                .fresh_min = G_MAXUINT32,
                .shared_index = { .owner = p },
                .span_index = { .owner = p },
                .release_input = release_input };
  gboolean ok = vs_pickle_parser_run (&ps, progress, progress_data);
  g_free (ps.stack.data);
  g_free (ps.marks.data);
  g_free (ps.memo.data);
  g_free (ps.memo_log.data);
  g_free (ps.tokens.data);
  g_free (ps.live.data);
  g_free (ps.tokmap.data);
  g_free (ps.shared.data);
  shared_index_clear (&ps.shared_index);
  g_free (ps.spans.data);
  g_free (ps.span_values.data);
  span_index_clear (&ps.span_index);
  p->mem -= (ps.shared.cap * sizeof (guint32) + ps.spans.cap * sizeof (Span)
             + ps.span_values.cap * sizeof (guint32));
  p->mem -= (ps.stack.cap * sizeof (guint32) + ps.marks.cap * sizeof (gsize)
             + ps.memo.cap * sizeof (guint32) + ps.memo_log.cap * sizeof (gsize)
             + ps.tokens.cap * sizeof (Token) + ps.live.cap * sizeof (guint32)
             + ps.tokmap.cap * sizeof (guint32));
  if (!ok)
    {
      vs_pickle_free (p);
      return NULL;
    }
  return p;
}

VsPickle *
vs_pickle_parse_full (const guint8 *data, gsize len, VsPickleProgress progress,
                      gpointer progress_data, VsPickleAppendHook hook, gpointer hook_data,
                      GError **error)
{
  g_return_val_if_fail (data != NULL || len == 0, NULL);
  return parse_full (data, len, progress, progress_data, hook, hook_data, FALSE, error);
}

VsPickle *
vs_pickle_load_file (const char *path, VsPickleProgress progress, gpointer progress_data,
                     GError **error)
{
  return vs_pickle_load_file_full (path, progress, progress_data, NULL, NULL, error);
}

VsPickle *
vs_pickle_load_file_full (const char *path, VsPickleProgress progress, gpointer progress_data,
                          VsPickleAppendHook hook, gpointer hook_data, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  GError *local = NULL;
  GMappedFile *f = g_mapped_file_new (path, FALSE, &local);
  if (f == NULL)
    {
      g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_IO, "%s", local->message);
      g_error_free (local);
      return NULL;
    }
  const guint8 *data = (const guint8 *)g_mapped_file_get_contents (f);
  gsize len = g_mapped_file_get_length (f);
  static const guint8 empty[1];
  VsPickle *p = parse_full (data ? data : empty, len, progress, progress_data, hook, hook_data,
                            data != NULL, error);
  if (p == NULL)
    {
      g_mapped_file_unref (f);
      return NULL;
    }
  p->file = f;
  return p;
}

void
vs_pickle_free (VsPickle *p)
{
  if (p == NULL)
    return;
  g_free (p->nodes.data);
  g_free (p->pool.data);
  g_free (p->chunks.data);
  if (p->file)
    g_mapped_file_unref (p->file);
  g_free (p);
}

VsPickleRef
vs_pickle_root (const VsPickle *p)
{
  return p->root;
}
