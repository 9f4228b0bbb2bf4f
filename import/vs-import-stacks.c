/* SPDX-License-Identifier: MIT */
/* vs-import-stacks.c — interning a snapshot's frames and stacks as the
 * trace's frames and stacks.
 *
 * Workload: every history entry has a frames list of tens of frame dicts,
 * nearly all repeats.  Frames and stacks shared through the pickle memo
 * are recognised by identity (tokens), not rehashed; frames and stacks
 * repeated as new dicts and lists of the same memoized strings get shared
 * tokens, so the reader hands over the token instead of building them
 * again (vs_pickle_set_token_shared); the rest are matched by the
 * addresses of their keys and strings (VsPickleKeys, FrameTable,
 * HandleTable) before any text is hashed.  The lookups of a frame are
 * inline in frame_id(), which runs for every frame of every entry.
 */
#include "vs-import-private.h"

#include <string.h>

/* A NUL-terminated, valid UTF-8 copy of s[0..len). */
static char *
utf8_dup (const char *s, gsize len)
{
  return g_utf8_make_valid (s, (gssize)len);
}

guint
vs_import_frame_key_hash (gconstpointer p)
{
  const FrameKey *k = p;
  guint h = (guint)k->line * 2654435761u;
  for (gsize i = 0; i < k->file_len; i++)
    h = h * 31 + (guchar)k->file[i];
  for (gsize i = 0; i < k->name_len; i++)
    h = h * 31 + (guchar)k->name[i];
  return h;
}

gboolean
vs_import_frame_key_equal (gconstpointer a, gconstpointer b)
{
  const FrameKey *x = a, *y = b;
  return x->line == y->line && x->file_len == y->file_len && x->name_len == y->name_len
         && memcmp (x->file, y->file, x->file_len) == 0
         && memcmp (x->name, y->name, x->name_len) == 0;
}

/* The frame id of k, or 0. */
static inline gint64
frame_table_get (const FrameTable *t, const FrameKey *k)
{
  const FrameSlot *e = frame_table_find (t, k);
  return e != NULL ? e->id : 0;
}

/* Defines fn (Table *t, const Key *k, gint64 id), which records k → id
 * (id >= 1) in a table whose entries (Slot) have an id: one for each of
 * the tables below. */
#define DEFINE_TABLE_ADD(fn, Table, Slot, Key, insert)                                             \
  static void fn (Table *t, const Key *k, gint64 id)                                               \
  {                                                                                                \
    Slot *e = insert (t, k, NULL);                                                                 \
    if (e == NULL)                                                                                 \
      g_error ("out of memory");                                                                   \
    e->id = id;                                                                                    \
  }

DEFINE_TABLE_ADD (frame_table_add, FrameTable, FrameSlot, FrameKey, frame_table_insert)
DEFINE_TABLE_ADD (handle_table_add, HandleTable, HandleSlot, VsPickleRef, handle_table_insert)

guint
vs_import_stack_key_hash (gconstpointer p)
{
  return ((const StackKey *)p)->hash;
}

gboolean
vs_import_stack_key_equal (gconstpointer a, gconstpointer b)
{
  const StackKey *x = a, *y = b;
  return x->hash == y->hash && x->n == y->n && memcmp (x->ids, y->ids, x->n * sizeof (gint64)) == 0;
}

/* Marks a value the pickle reader is handing over (see
 * vs_import_on_append) so that a later reference to it reads as id; a
 * no-op for other values. */
void
vs_import_give_token (Ctx *c, VsPickleRef v, gint64 id, guint kind)
{
  if (id < 0 || id > (gint64)(VS_PICKLE_TOKEN_MAX >> 2))
    return;
  /* A frame or stack token stands for the value's content: later equal
   * frame dicts and frames lists then read as it while parsing. */
  if (kind == TOKEN_FRAME || kind == TOKEN_STACK)
    vs_pickle_set_token_shared (c->p, v, (guint32)(id << 2) | kind);
  else
    vs_pickle_set_token (c->p, v, (guint32)(id << 2) | kind);
}

/* The id a token of kind holds, or -1 when v is no such token. */
static gint64
token_id (Ctx *c, VsPickleRef v, guint kind)
{
  guint32 t;
  if (vs_pickle_get_token (c->p, v, &t) && (t & 3) == kind)
    return t >> 2;
  return -1;
}

/* The frame id of one snapshot frame dict {filename, line, name}. */
static gint64
frame_id (Ctx *c, VsPickleRef f)
{
  FrameKey k = { "", "", 0, 0, VS_UNKNOWN };
  VsPickleValue fv[3]; /* filename, name, line: see vs_import_snapshot */
  gint64 known = token_id (c, f, TOKEN_FRAME);
  if (known >= 0)
    return known;
  gsize nh = 0;
  const VsPickleRef *h
      = vs_pickle_type (c->p, f) == VS_PICKLE_DICT ? vs_pickle_items (c->p, f, &nh) : NULL;
  gboolean stable = h != NULL && nh == 6 && vs_pickle_stable (c->p, h, 6);
  const HandleSlot *hs = stable ? handle_table_find (&c->frame_handles, h) : NULL;
  if (hs != NULL)
    {
      known = hs->id;
      if (known > 0)
        {
          vs_import_give_token (c, f, known, TOKEN_FRAME);
          return known;
        }
    }
  if (!vs_pickle_dict_fetch (c->p, f, &c->frame_keys, fv))
    {
      vs_import_not_snapshot (c, "a stack frame is not a dict");
      return -1;
    }
  if (fv[0].s)
    k.file = fv[0].s, k.file_len = fv[0].len;
  if (fv[1].s)
    k.name = fv[1].s, k.name_len = fv[1].len;
  if (fv[2].type == VS_PICKLE_INT || fv[2].type == VS_PICKLE_BOOL)
    k.line = fv[2].i;
  gint64 found = frame_table_get (&c->frame_ptrs, &k);
  if (found == 0)
    {
      found = (gint64)GPOINTER_TO_SIZE (g_hash_table_lookup (c->frames, &k));
      if (found)
        frame_table_add (&c->frame_ptrs, &k, found);
    }
  if (found)
    {
      if (stable)
        handle_table_add (&c->frame_handles, h, found);
      vs_import_give_token (c, f, found, TOKEN_FRAME);
      return found;
    }

  g_autofree char *file = utf8_dup (k.file, k.file_len);
  g_autofree char *name = utf8_dup (k.name, k.name_len);
  gboolean python = g_str_has_suffix (file, ".py") || file[0] == '<';
  VsFrame vf = {
    .kind = python ? VS_FRAME_PYTHON : VS_FRAME_NATIVE,
    .module_id = VS_UNKNOWN,
    .address = VS_UNKNOWN,
    .function = name[0] ? name : NULL,
    .file = file[0] ? file : NULL,
    .line = k.line,
  };
  gint64 id = vs_writer_add_frame (c->w, &vf);
  if (id < 0)
    {
      vs_import_write_failed (c);
      return -1;
    }
  g_hash_table_insert (c->frames, g_memdup2 (&k, sizeof k), GSIZE_TO_POINTER ((gsize)id));
  frame_table_add (&c->frame_ptrs, &k, id);
  if (stable)
    handle_table_add (&c->frame_handles, h, id);
  vs_import_give_token (c, f, id, TOKEN_FRAME);
  return id;
}

/* The stack id of a snapshot frames list (innermost first), VS_UNKNOWN for
 * an empty or absent list, or -1 on error. */
gint64
vs_import_stack_id (Ctx *c, VsPickleRef frames)
{
  gint64 known = token_id (c, frames, TOKEN_STACK);
  if (known >= 0)
    return known;
  gsize n = vs_pickle_len (c->p, frames);
  if (vs_pickle_type (c->p, frames) != VS_PICKLE_LIST
      && vs_pickle_type (c->p, frames) != VS_PICKLE_TUPLE)
    return VS_UNKNOWN;
  if (n == 0)
    return VS_UNKNOWN;
  g_array_set_size (c->scratch, n);
  gint64 *ids = (gint64 *)(gpointer)c->scratch->data;
  gsize run;
  const VsPickleRef *items = vs_pickle_items (c->p, frames, &run);
  if (items != NULL)
    {
      for (gsize i = 0; i < n; i++)
        {
          gint64 id = frame_id (c, items[i]);
          if (id < 0)
            return -1;
          ids[n - 1 - i] = id; /* the writer wants the outermost first */
        }
    }
  else
    {
      VsPickleIter it;
      VsPickleRef f;
      gsize i = n;
      vs_pickle_iter_init (&it, c->p, frames);
      while (i > 0 && vs_pickle_iter_next (&it, &f))
        {
          gint64 id = frame_id (c, f);
          if (id < 0)
            return -1;
          ids[--i] = id;
        }
    }
  /* The writer keeps the innermost frames of a deeper stack: key it by
   * those, as readers will see it. */
  if (n > VS_TRACE_MAX_STACK_DEPTH)
    {
      ids += n - VS_TRACE_MAX_STACK_DEPTH;
      n = VS_TRACE_MAX_STACK_DEPTH;
    }
  guint64 h = 14695981039346656037u;
  for (gsize j = 0; j < n; j++)
    h = (h ^ (guint64)ids[j]) * 1099511628211u;
  StackKey probe = { (guint)(h ^ (h >> 32)), (guint)n, ids };
  gpointer found = g_hash_table_lookup (c->stacks, &probe);
  gint64 sid;
  if (found)
    sid = (gint64)GPOINTER_TO_SIZE (found);
  else
    {
      if ((sid = vs_writer_add_stack (c->w, ids, n)) < 0)
        {
          vs_import_write_failed (c);
          return -1;
        }
      StackKey *key = g_malloc (sizeof (StackKey) + n * sizeof (gint64));
      *key = probe;
      key->ids = memcpy (key + 1, ids, n * sizeof (gint64));
      g_hash_table_insert (c->stacks, key, GSIZE_TO_POINTER ((gsize)sid));
    }
  vs_import_give_token (c, frames, sid, TOKEN_STACK);
  return sid;
}

/* The stack of memory live before the history: a single label frame. */
gint64
vs_import_label_stack (Ctx *c)
{
  if (c->label_stack > 0)
    return c->label_stack;
  VsFrame vf = { .kind = VS_FRAME_LABEL,
                 .module_id = VS_UNKNOWN,
                 .address = VS_UNKNOWN,
                 .function = BEFORE_HISTORY_LABEL,
                 .line = VS_UNKNOWN };
  gint64 f = vs_writer_add_frame (c->w, &vf);
  if (f < 0 || (c->label_stack = vs_writer_add_stack (c->w, &f, 1)) < 0)
    {
      vs_import_write_failed (c);
      return -1;
    }
  return c->label_stack;
}
