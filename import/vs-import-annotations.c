/* SPDX-License-Identifier: MIT */
/* vs-import-annotations.c — the phases and markers of a PyTorch memory
 * snapshot, written as ranges of the trace (domain "pytorch"):
 *
 *   - `external_annotations` (record_function and torch.compile phases,
 *     recorded with _record_memory_history(global_record_annotations=True)
 *     or compile_context=True): dicts with `name`, `stage` START or END,
 *     `device` and `time_us`.  A START opens a range and the next END of the
 *     same name on the same device closes it; ranges nest as they were
 *     opened.  A START never ended stays open (end_ns NULL); an END with no
 *     START, or an annotation without a name or time, is skipped and
 *     counted;
 *   - `snapshot` history entries (a snapshot was taken): a range of no
 *     length named "snapshot", once per instant.
 *
 * When the history has no times (the time axis is the order of events),
 * annotations cannot be placed on it: they are skipped and counted.
 */
#include "vs-import-private.h"

#include <string.h>

/* See vs-import-private.h. */
gboolean
vs_import_write_marker (Ctx *c, gint64 ts)
{
  if (g_hash_table_contains (c->markers, &ts))
    return TRUE;
  g_hash_table_add (c->markers, g_memdup2 (&ts, sizeof ts));
  VsRange r = {
    .process_id = c->process_id,
    .tid = VS_UNKNOWN,
    .domain = "pytorch",
    .name = "snapshot",
    .start_ns = ts,
    .end_ns = ts,
    .parent_id = VS_UNKNOWN,
    .depth = 0,
  };
  if (vs_writer_add_range (c->w, &r) < 0)
    return vs_import_write_failed (c);
  return TRUE;
}

/* An open annotation range. */
typedef struct
{
  gint64 device, id;
  char *name;
} Open;

static void
open_clear (gpointer p)
{
  g_free (((Open *)p)->name);
}

/* See vs-import-private.h. */
gboolean
vs_import_annotations (Ctx *c, VsPickleRef list)
{
  const VsPickle *p = c->p;
  VsPickleType t = vs_pickle_type (p, list);
  if (t != VS_PICKLE_LIST && t != VS_PICKLE_TUPLE)
    {
      if (list != VS_PICKLE_MISSING)
        vs_import_skip (c, "external_annotations (not a list)", 33);
      return TRUE;
    }
  /* Every device's open ranges, innermost last. */
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (Open));
  g_array_set_clear_func (open, open_clear);
  VsPickleIter it;
  VsPickleRef a;
  vs_pickle_iter_init (&it, p, list);
  while (vs_pickle_iter_next (&it, &a))
    {
      gint64 dev = 0, time_us;
      gsize nlen = 0;
      const char *name = vs_pickle_get_str (p, vs_pickle_dict_get (p, a, "name"), &nlen);
      VsPickleRef stage = vs_pickle_dict_get (p, a, "stage");
      gboolean start = vs_pickle_str_equal (p, stage, "START");
      gboolean end = vs_pickle_str_equal (p, stage, "END");
      if (!vs_pickle_get_int (p, vs_pickle_dict_get (p, a, "device"), &dev))
        dev = 0;
      if (name == NULL || (!start && !end)
          || !vs_pickle_get_int (p, vs_pickle_dict_get (p, a, "time_us"), &time_us) || time_us < 0
          || time_us > G_MAXINT64 / 1000)
        {
          vs_import_skip (c, "external_annotations (incomplete)", 33);
          continue;
        }
      if (c->order_axis)
        {
          vs_import_skip (c, "external_annotations (no event order)", 37);
          continue;
        }
      g_autofree char *nm = g_utf8_make_valid (name, (gssize)nlen);
      gint64 ts = time_us * 1000;
      if (start)
        {
          gint64 parent = VS_UNKNOWN, depth = 0;
          for (guint i = open->len; i-- > 0;)
            if (g_array_index (open, Open, i).device == dev)
              {
                parent = g_array_index (open, Open, i).id;
                depth++;
              }
          VsRange r = {
            .process_id = c->process_id,
            .tid = VS_UNKNOWN,
            .domain = "pytorch",
            .name = nm,
            .start_ns = ts,
            .end_ns = VS_UNKNOWN,
            .parent_id = parent,
            .depth = depth,
          };
          gint64 id = vs_writer_add_range (c->w, &r);
          if (id < 0)
            return vs_import_write_failed (c);
          Open o = { .device = dev, .id = id, .name = g_steal_pointer (&nm) };
          g_array_append_val (open, o);
          continue;
        }
      /* END: the innermost open range of that name on that device. */
      guint i = open->len;
      while (i-- > 0)
        {
          const Open *o = &g_array_index (open, Open, i);
          if (o->device == dev && strcmp (o->name, nm) == 0)
            break;
        }
      if (i == G_MAXUINT)
        {
          vs_import_skip (c, "external_annotations (END without START)", 40);
          continue;
        }
      if (vs_writer_end_range (c->w, g_array_index (open, Open, i).id, ts) < 0)
        return vs_import_write_failed (c);
      g_array_remove_index (open, i);
    }
  return TRUE;
}
