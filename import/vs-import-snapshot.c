/* SPDX-License-Identifier: MIT */
/* vs-import-snapshot.c — decoding a PyTorch memory snapshot's history
 * entries and segments.
 *
 * History entries are decoded while the pickle is read (the append hook,
 * vs_import_on_append), into 48-byte records with their stacks already
 * interned (vs-import-stacks.c), and the reader frees their values, so
 * memory stays near the file's size.  The segments, the allocator's state
 * at the end, are read after parsing, one device at a time, for the
 * replay (vs-import-replay.c).
 */
#include "vs-import-private.h"

#include <string.h>

/* TRUE when k[0..kl) is the C string s. */
static gboolean
key_is (const char *k, gsize kl, const char *s)
{
  gsize sl = strlen (s);
  return kl == sl && memcmp (k, s, sl) == 0;
}

/* The Action named s[0..len), ACT_OTHER for any other name. */
static Action
parse_action (const char *s, gsize len)
{
  static const struct
  {
    const char *name;
    Action a;
  } names[] = {
    { "alloc", ACT_ALLOC },
    { "free_requested", ACT_FREE_REQUESTED },
    { "free_completed", ACT_FREE_COMPLETED },
    { "segment_alloc", ACT_SEGMENT_ALLOC },
    { "segment_free", ACT_SEGMENT_FREE },
    { "segment_map", ACT_SEGMENT_MAP },
    { "segment_unmap", ACT_SEGMENT_UNMAP },
    { "oom", ACT_OOM },
    { "snapshot", ACT_SNAPSHOT },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (key_is (s, len, names[i].name))
      return names[i].a;
  return ACT_OTHER; /* actions of other versions, user-defined entries */
}

/* See vs-import-private.h. */
void
vs_import_skip (Ctx *c, const char *name, gsize len)
{
  /* Names are few (actions); a hostile file's many names are capped. */
  g_autofree char *key = g_utf8_make_valid (name, (gssize)MIN (len, (gsize)64));
  gpointer n = g_hash_table_lookup (c->skipped, key);
  if (n != NULL || g_hash_table_size (c->skipped) < 64)
    g_hash_table_insert (c->skipped, g_steal_pointer (&key),
                         GSIZE_TO_POINTER (GPOINTER_TO_SIZE (n) + 1));
  else
    {
      gpointer o = g_hash_table_lookup (c->skipped, "(other)");
      g_hash_table_insert (c->skipped, g_strdup ("(other)"),
                           GSIZE_TO_POINTER (GPOINTER_TO_SIZE (o) + 1));
    }
  c->skipped_total++;
}

/* Decodes history item v into *e and resolves its stack.  Returns FALSE
 * with *why set to a phrase that follows "device_traces[D][I]" when v is
 * not a valid entry, or with *why NULL and c->error set when its frames are
 * not valid or writing failed. */
static gboolean
read_entry (Ctx *c, VsPickleRef v, Entry *e, const char **why)
{
  /* action, addr, size, stream, time_us, frames, device_free: see
   * vs_import_snapshot */
  VsPickleValue ev[7];
  memset (e, 0, sizeof *e);
  e->stream = VS_UNKNOWN;
  e->extra = VS_UNKNOWN;
  e->stack = -1;
  *why = NULL;
  if (!vs_pickle_dict_fetch (c->p, v, &c->entry_keys, ev))
    return *why = " is not a dict", FALSE;
#define IS_INT(x) ((x).type == VS_PICKLE_INT || (x).type == VS_PICKLE_BOOL)
  if (ev[0].s)
    e->action = parse_action (ev[0].s, ev[0].len);
  else
    e->action = ACT_OTHER;
  gboolean has_addr = IS_INT (ev[1]), has_size = IS_INT (ev[2]);
  gboolean has_time = IS_INT (ev[4]);
  e->addr = has_addr ? ev[1].i : 0;
  e->size = has_size ? ev[2].i : 0;
  /* A stream is a handle: its bits, even past 2^63. */
  e->stream = IS_INT (ev[3]) || ev[3].type == VS_PICKLE_UINT64 ? ev[3].i : VS_UNKNOWN;
  e->time_us = has_time ? ev[4].i : NO_TIME;
  VsPickleRef frames = ev[5].ref;
  e->extra = IS_INT (ev[6]) ? ev[6].i : VS_UNKNOWN;
#undef IS_INT
  if (e->action == ACT_OTHER)
    {
      if (ev[0].s)
        vs_import_skip (c, ev[0].s, ev[0].len);
      else
        vs_import_skip (c, "(no action)", 11);
      return TRUE;
    }
  if (e->action != ACT_OOM)
    e->extra = VS_UNKNOWN;
  if (has_time && (e->time_us < 0 || e->time_us > G_MAXINT64 / 1000))
    return *why = ": 'time_us' out of range", FALSE;
  if (e->action == ACT_SNAPSHOT)
    {
      /* A marker: only its time matters. */
      e->addr = e->size = 0;
      return TRUE;
    }
  if (!has_size || e->size < 0)
    return *why = ": 'size' missing or not a size", FALSE;
  if (e->action != ACT_OOM && !has_addr)
    return *why = ": 'addr' missing or not an integer", FALSE;
  if (e->addr > G_MAXINT64 - e->size)
    return *why = ": address range out of bounds", FALSE;
  gint64 sid = vs_import_stack_id (c, frames);
  if (sid == -1)
    return FALSE;
  if (sid > G_MAXINT32)
    return *why = ": more distinct stacks than the import handles", FALSE;
  e->stack = sid == VS_UNKNOWN ? -1 : (gint32)sid;
  return TRUE;
}

Stream *
vs_import_stream_new (void)
{
  Stream *s = g_new0 (Stream, 1);
  s->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  return s;
}

void
vs_import_stream_free (gpointer data)
{
  Stream *s = data;
  g_array_free (s->entries, TRUE);
  g_clear_error (&s->error);
  g_free (s);
}

/* Adds history item v to s.  After the first invalid item, items are only
 * counted: the problem is reported if s turns out to be a device's history.
 * Returns FALSE with *fatal set only when writing the trace failed. */
gboolean
vs_import_stream_item (Ctx *c, Stream *s, VsPickleRef v, const char **why, GError **fatal)
{
  if (s->count == 0)
    s->has_first_time
        = vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, v, "time_us"), &s->first_time_us);
  if (*why == NULL && s->error == NULL)
    {
      GError *local = NULL, **saved = c->error;
      Entry e;
      c->error = &local;
      gboolean ok = read_entry (c, v, &e, why);
      c->error = saved;
      if (ok && e.action != ACT_OTHER)
        {
          g_array_append_val (s->entries, e);
          s->missing_time += e.time_us == NO_TIME;
          s->memory_entries += e.action != ACT_SNAPSHOT;
        }
      else if (!ok && *why)
        s->error_idx = s->count;
      else if (!ok && g_error_matches (local, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE))
        {
          g_propagate_error (fatal, local);
          return FALSE;
        }
      else if (!ok)
        {
          s->error = local;
          s->error_idx = s->count;
        }
    }
  vs_import_give_token (c, v, 0, TOKEN_ENTRY);
  s->count++;
  return TRUE;
}

/* The pickle reader's append hook: the items of a list of history entries
 * (dicts with an 'action') are decoded as they are read and not kept, so
 * memory stays near the size of the decoded entries. */
VsPickleAppend
vs_import_on_append (VsPickle *p, VsPickleRef list, const VsPickleRef *items, gsize n,
                     gpointer data, GError **error)
{
  Ctx *c = data;
  c->p = p;
  /* Every list this hook took is a stream, and no other: most lists seen
   * here (each entry's frames) are neither, and are kept without a table
   * lookup. */
  Stream *s = NULL;
  if (vs_pickle_list_taken (p, list))
    s = g_hash_table_lookup (c->streams, GUINT_TO_POINTER (list));
  if (s == NULL)
    {
      VsPickleValue action;
      if (vs_pickle_len (p, list) > 0
          || !vs_pickle_dict_fetch (p, items[0], &c->action_key, &action)
          || action.type != VS_PICKLE_STR)
        return VS_PICKLE_APPEND_KEEP;
      s = vs_import_stream_new ();
      g_hash_table_insert (c->streams, GUINT_TO_POINTER (list), s);
    }
  for (gsize i = 0; i < n; i++)
    if (!vs_import_stream_item (c, s, items[i], &s->why, error))
      return VS_PICKLE_APPEND_ERROR;
  return VS_PICKLE_APPEND_TAKEN;
}

/* Reads the segments of device dev: reserved ranges into ranges and live
 * blocks into blocks. */
gboolean
vs_import_read_segments (Ctx *c, VsPickleRef segments, gint64 dev, GTree *ranges, BlockMap *blocks)
{
  VsPickleIter it, bit;
  VsPickleRef seg, b;
  gsize i = 0;
  vs_pickle_iter_init (&it, c->p, segments);
  for (; vs_pickle_iter_next (&it, &seg); i++)
    {
      gint64 d = 0, addr, size, x;
      if (vs_pickle_type (c->p, seg) != VS_PICKLE_DICT)
        return vs_import_not_snapshot (c, "segments[%" G_GSIZE_FORMAT "] is not a dict", i);
      if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "device"), &d))
        d = 0;
      if (d != dev)
        continue;
      if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "address"), &addr)
          || !vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "total_size"), &size)
          || size < 0 || addr > G_MAXINT64 - size)
        return vs_import_not_snapshot (c,
                                       "segments[%" G_GSIZE_FORMAT "]: "
                                       "'address' or 'total_size' missing "
                                       "or invalid",
                                       i);
      if (vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, seg, "is_expandable"), &x) && x)
        c->expandable = TRUE;
      if (vs_import_ranges_add (ranges, addr, size) != 0)
        c->inconsistencies++;
      gsize j = 0;
      vs_pickle_iter_init (&bit, c->p, vs_pickle_dict_get (c->p, seg, "blocks"));
      for (; vs_pickle_iter_next (&bit, &b); j++)
        {
          gint64 baddr, bsize, req;
          if (vs_pickle_type (c->p, b) != VS_PICKLE_DICT)
            return vs_import_not_snapshot (
                c, "segments[%" G_GSIZE_FORMAT "].blocks[%" G_GSIZE_FORMAT "] is not a dict", i, j);
          VsPickleRef st = vs_pickle_dict_get (c->p, b, "state");
          if (!vs_pickle_str_equal (c->p, st, "active_allocated")
              && !vs_pickle_str_equal (c->p, st, "active_pending_free"))
            continue;
          /* PyTorch 1.13 gives no requested_size and no frames: its
           * blocks have a 'history' whose last record holds the request
           * ('real_size') and its frames. */
          VsPickleRef last = VS_PICKLE_MISSING, frames = vs_pickle_dict_get (c->p, b, "frames");
          VsPickleRef hist = vs_pickle_dict_get (c->p, b, "history");
          gsize nh = vs_pickle_type (c->p, hist) == VS_PICKLE_LIST ? vs_pickle_len (c->p, hist) : 0;
          if (nh > 0)
            {
              VsPickleIter hit;
              vs_pickle_iter_init (&hit, c->p, hist);
              while (vs_pickle_iter_next (&hit, &last))
                ;
            }
          VsPickleRef reqv = vs_pickle_dict_get (c->p, b, "requested_size");
          if (reqv == VS_PICKLE_MISSING && last != VS_PICKLE_MISSING)
            reqv = vs_pickle_dict_get (c->p, last, "real_size");
          if (reqv == VS_PICKLE_MISSING)
            reqv = vs_pickle_dict_get (c->p, b, "size");
          if (frames == VS_PICKLE_MISSING && last != VS_PICKLE_MISSING)
            frames = vs_pickle_dict_get (c->p, last, "frames");
          if (!vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, b, "address"), &baddr)
              || !vs_pickle_get_int (c->p, vs_pickle_dict_get (c->p, b, "size"), &bsize)
              || !vs_pickle_get_int (c->p, reqv, &req) || req < 0 || bsize < 0)
            return vs_import_not_snapshot (c,
                                           "segments[%" G_GSIZE_FORMAT "].blocks[%" G_GSIZE_FORMAT
                                           "]: 'address', 'size' or "
                                           "'requested_size' missing or "
                                           "invalid",
                                           i, j);
          gboolean added;
          LiveBlock *lb = vs_import_blocks_put (blocks, baddr, &added);
          if (!added)
            c->inconsistencies++;
          lb->requested = req;
          lb->block_bytes = bsize;
          lb->frames = frames;
        }
    }
  return TRUE;
}
