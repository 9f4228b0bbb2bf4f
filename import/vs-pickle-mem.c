/* SPDX-License-Identifier: MIT */
/* vs-pickle-mem.c — the pickle reader's memory bound, and its error
 * domain (VS_PICKLE_ERROR: every part of the reader raises it, and this,
 * the part all others call, defines it).
 *
 * Everything the reader allocates grows through vs_pickle_vec_grow(), or
 * for the parser's hash indexes vs_pickle_mem_alloc0(), which charge it to
 * the VsPickle's bound, VS_PICKLE_MEM_FACTOR × the input size + 64 MiB
 * (set by vs-pickle-load.c).  A mapped file's pages are given back as the
 * parser passes them (vs_pickle_release_input()), so that a large file
 * does not stay resident as a whole.
 */
#include "vs-pickle-private.h"

#include <sys/mman.h>
#include <unistd.h>

/* The quark's name is one string of words and dashes, as GLib spells
 * its own; clang-format would space the dashes. */
/* clang-format off */
G_DEFINE_QUARK (vs-pickle-error-quark, vs_pickle_error)
/* clang-format on */

/* ------------------------------------------------------------ vectors -- */

/* Makes room for extra more elements of elt bytes in v, charging the growth
 * to p's memory bound.  Returns FALSE with error set when over the bound. */
gboolean
vs_pickle_vec_grow (VsPickle *p, Vec *v, gsize elt, gsize extra, GError **error)
{
  gsize need = v->len + extra;
  if (need < v->len || need > G_MAXSIZE / elt / 2)
    goto over;
  gsize cap = v->cap ? v->cap : 256;
  while (cap < need)
    cap *= 2;
  gsize grow = (cap - v->cap) * elt;
  if (p->mem + grow > p->mem_limit)
    goto over;
  gpointer data = g_try_realloc (v->data, cap * elt);
  if (data == NULL)
    goto over;
  v->data = data;
  p->mem += grow;
  v->cap = cap;
  return TRUE;

over:
  g_set_error (error, VS_PICKLE_ERROR, VS_PICKLE_ERROR_LIMIT,
               "pickle needs more memory than the reader allows for a "
               "%" G_GSIZE_FORMAT "-byte file",
               p->size);
  return FALSE;
}

gpointer
vs_pickle_mem_alloc0 (VsPickle *p, gsize n)
{
  g_assert (p->mem <= p->mem_limit);
  if (n > p->mem_limit - p->mem)
    return NULL;
  gpointer mem = g_try_malloc0 (n);
  if (mem != NULL)
    p->mem += n;
  return mem;
}

void
vs_pickle_mem_free (VsPickle *p, gpointer mem, gsize n)
{
  g_assert (mem == NULL || n <= p->mem);
  if (mem != NULL)
    p->mem -= n;
  g_free (mem);
}

/* Input bytes kept mapped behind the parser's position: a little of
 * what was just read is commonly read again (memoized strings). */
#define RELEASE_LAG (4u << 20)

void
vs_pickle_release_input (Parser *ps, gsize at)
{
#ifdef MADV_DONTNEED
  const VsPickle *p = ps->p;
  gsize page = (gsize)sysconf (_SC_PAGESIZE);
  if (at < RELEASE_LAG || page == 0 || (gsize)p->data % page != 0)
    return;
  gsize upto = (at - RELEASE_LAG) / page * page;
  /* A private read-only mapping of a file: dropped pages are read from
   * the file again when touched, with the same contents at the same
   * addresses. */
  if (upto > ps->released
      && madvise ((void *)(p->data + ps->released), upto - ps->released, MADV_DONTNEED) == 0)
    ps->released = upto;
#endif
}
