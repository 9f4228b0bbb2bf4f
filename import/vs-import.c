/* SPDX-License-Identifier: MIT */
/* vs-import.c — PyTorch memory snapshot to vramscope trace (see vs-import.h).
 *
 * Workload: snapshots from a few KiB to several GiB with millions of
 * history entries.  The pickle is parsed once (vs-pickle.c); history
 * entries are decoded while it is read (vs-import-snapshot.c), into
 * 48-byte records with their stacks already interned (vs-import-stacks.c),
 * and the reader frees their values, so memory stays near the file's
 * size.  Then, per device (vs-import-replay.c):
 *
 *   1. the history entries are those decoded records;
 *   2. the state at the end — live blocks (active_allocated and
 *      active_pending_free, at their requested size) and reserved address
 *      ranges — is read from `segments`;
 *   3. the history is replayed backwards from that state: an alloc removes
 *      its block, a free_completed brings it back, a segment_alloc or
 *      segment_map removes its range, a segment_free or segment_unmap brings
 *      it back.  What remains was live before the first entry;
 *   4. that remainder is written as synthetic segment and block events at
 *      the first entry's time, then every entry is written in order.
 *
 * PyTorch's stats change exactly at these entries: requested_bytes rises at
 * alloc and falls at free_completed, reserved_bytes rises at segment_alloc /
 * segment_map and falls at segment_free / segment_unmap.  So the finalized
 * trace's peaks and finals equal memory_stats()' requested_bytes and
 * reserved_bytes whenever the history holds the peak.  When the ring buffer
 * overflowed (or recording started late) the trace says so in meta
 * 'history_overflow'.
 */
#include "vs-import-private.h"

#include <glib/gstdio.h>

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "vs-config.h"
#include "vs-timings.h"
#include "vs-trace-finalize.h"

/* ---------------------------------------------------------- the trace -- */

/* Writes allocator_settings as compact JSON.  Depth-limited: settings are
 * a flat dict with one level of nesting; anything deeper is written null. */
static void
settings_json (const VsPickle *p, VsPickleRef v, GString *out, int depth)
{
  gint64 i;
  double f;
  gsize len;
  const char *s;
  VsPickleIter it;
  VsPickleRef k, x;
  if (out->len > 65536 || depth > 4)
    {
      g_string_append (out, "null");
      return;
    }
  switch (vs_pickle_type (p, v))
    {
    case VS_PICKLE_BOOL:
      vs_pickle_get_int (p, v, &i);
      g_string_append (out, i ? "true" : "false");
      break;
    case VS_PICKLE_INT:
      vs_pickle_get_int (p, v, &i);
      g_string_append_printf (out, "%" G_GINT64_FORMAT, i);
      break;
    case VS_PICKLE_UINT64:
      {
        guint64 u = 0;
        vs_pickle_get_uint64 (p, v, &u);
        g_string_append_printf (out, "%" G_GUINT64_FORMAT, u);
      }
      break;
    case VS_PICKLE_FLOAT:
      vs_pickle_get_double (p, v, &f);
      if (isfinite (f))
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_string_append (out, g_ascii_dtostr (buf, sizeof buf, f));
        }
      else
        g_string_append (out, "null");
      break;
    case VS_PICKLE_STR:
    case VS_PICKLE_BYTES:
      {
        s = vs_pickle_get_str (p, v, &len);
        g_autofree char *u = g_utf8_make_valid (s, (gssize)len);
        g_string_append_c (out, '"');
        for (const char *q = u; *q; q++)
          {
            if (*q == '"' || *q == '\\')
              g_string_append_printf (out, "\\%c", *q);
            else if ((guchar)*q < 0x20)
              g_string_append_printf (out, "\\u%04x", (guchar)*q);
            else
              g_string_append_c (out, *q);
          }
        g_string_append_c (out, '"');
      }
      break;
    case VS_PICKLE_LIST:
    case VS_PICKLE_TUPLE:
      g_string_append_c (out, '[');
      vs_pickle_iter_init (&it, p, v);
      for (int n = 0; vs_pickle_iter_next (&it, &x); n++)
        {
          if (n)
            g_string_append_c (out, ',');
          settings_json (p, x, out, depth + 1);
        }
      g_string_append_c (out, ']');
      break;
    case VS_PICKLE_DICT:
      g_string_append_c (out, '{');
      vs_pickle_iter_init (&it, p, v);
      for (int n = 0; vs_pickle_iter_next_pair (&it, &k, &x); n++)
        {
          if (n)
            g_string_append_c (out, ',');
          if (vs_pickle_type (p, k) == VS_PICKLE_STR)
            settings_json (p, k, out, depth + 1);
          else
            {
              g_string_append_c (out, '"');
              settings_json (p, k, out, depth + 1);
              g_string_append_c (out, '"');
            }
          g_string_append_c (out, ':');
          settings_json (p, x, out, depth + 1);
        }
      g_string_append_c (out, '}');
      break;
    default:
      g_string_append (out, "null");
      break;
    }
}

/* The meta keys of the allocator's settings: pytorch.allocator_settings
 * (the dict as JSON), pytorch.alloc_conf (its PYTORCH_CUDA_ALLOC_CONF, when
 * it has one) and pytorch.expandable_segments ("1" when the settings, a
 * segment or the history says so). */
static gboolean
write_settings_meta (Ctx *c, VsPickleRef settings, const char *json, gboolean expandable)
{
  const VsPickle *p = c->p;
  gint64 x;
  gsize len;
  if (vs_pickle_get_int (p, vs_pickle_dict_get (p, settings, "expandable_segments"), &x) && x)
    expandable = TRUE;
  const char *conf
      = vs_pickle_get_str (p, vs_pickle_dict_get (p, settings, "PYTORCH_CUDA_ALLOC_CONF"), &len);
  g_autofree char *conf_s = conf ? g_utf8_make_valid (conf, (gssize)len) : NULL;
  if ((json[0] && vs_writer_set_meta (c->w, "pytorch.allocator_settings", json) < 0)
      || (conf_s && vs_writer_set_meta (c->w, "pytorch.alloc_conf", conf_s) < 0)
      || vs_writer_set_meta (c->w, "pytorch.expandable_segments", expandable ? "1" : "0") < 0)
    return vs_import_write_failed (c);
  return TRUE;
}

/* Meta import_skipped_entries (how many entries and annotations were not
 * imported) and import_skipped (their names and counts as a JSON object),
 * when there were any. */
static gboolean
write_skipped_meta (Ctx *c)
{
  if (c->skipped_total == 0)
    return TRUE;
  g_autoptr (GList) keys = g_hash_table_get_keys (c->skipped);
  keys = g_list_sort (keys, (GCompareFunc)strcmp);
  g_autoptr (GString) js = g_string_new ("{");
  for (GList *l = keys; l; l = l->next)
    {
      const char *k = l->data;
      if (js->len > 1)
        g_string_append_c (js, ',');
      g_string_append_c (js, '"');
      for (const char *q = k; *q; q++)
        if (*q == '"' || *q == '\\')
          g_string_append_printf (js, "\\%c", *q);
        else if ((guchar)*q < 0x20)
          g_string_append_printf (js, "\\u%04x", (guchar)*q);
        else
          g_string_append_c (js, *q);
      g_string_append_printf (js, "\":%" G_GSIZE_FORMAT,
                              GPOINTER_TO_SIZE (g_hash_table_lookup (c->skipped, k)));
    }
  g_string_append_c (js, '}');
  if (vs_writer_set_meta_int (c->w, "import_skipped_entries", c->skipped_total) < 0
      || vs_writer_set_meta (c->w, "import_skipped", js->str) < 0)
    return vs_import_write_failed (c);
  return TRUE;
}

static gboolean
pickle_progress (guint64 done, guint64 total, gpointer data)
{
  Ctx *c = data;
  return !c->progress
         || c->progress ("reading", 0.4 * (double)done / (double)MAX (total, 1), c->progress_data);
}

static bool
finalize_progress (uint64_t done, uint64_t total, void *data)
{
  Ctx *c = data;
  return !c->progress
         || c->progress ("finalizing", 0.8 + 0.2 * (double)done / (double)MAX (total, 1),
                         c->progress_data);
}

/* The time of the earliest first entry over all devices, or 0. */
static gint64
history_start (Ctx *c, GPtrArray *hists)
{
  gint64 start = G_MAXINT64;
  if (c->order_axis)
    return 0;
  for (guint i = 0; i < hists->len; i++)
    {
      const Stream *s = g_ptr_array_index (hists, i);
      gint64 t = s->first_time_us;
      if (s->count && s->has_first_time && t >= 0 && t <= G_MAXINT64 / 1000)
        start = MIN (start, t * 1000);
    }
  return start == G_MAXINT64 ? 0 : start;
}

/* The history of one device_traces list: the entries decoded while
 * reading when the list was taken (vs_import_on_append), else decoded now.  The
 * result belongs to *owned when made here.  NULL with c->error set when
 * writing failed. */
static Stream *
device_history (Ctx *c, VsPickleRef list, GPtrArray *owned)
{
  Stream *s = g_hash_table_lookup (c->streams, GUINT_TO_POINTER (list));
  if (s && vs_pickle_list_taken (c->p, list) && vs_pickle_len (c->p, list) == 0)
    return s;
  s = vs_import_stream_new ();
  g_ptr_array_add (owned, s);
  VsPickleIter it;
  VsPickleRef v;
  vs_pickle_iter_init (&it, c->p, list);
  while (vs_pickle_iter_next (&it, &v))
    if (!vs_import_stream_item (c, s, v, &s->why, c->error))
      return NULL;
  return s;
}

/* Meta import_file_size and import_file_mtime_us: the snapshot's size and
 * modification time, so that a cached import can tell whether the
 * snapshot changed since. */
static gboolean
write_source_meta (Ctx *c, const char *pickle_path)
{
  struct stat sb;
  if (stat (pickle_path, &sb) != 0)
    return TRUE;
  gint64 mtime_us = (gint64)sb.st_mtim.tv_sec * G_USEC_PER_SEC + sb.st_mtim.tv_nsec / 1000;
  if (vs_writer_set_meta_int (c->w, "import_file_size", (gint64)sb.st_size) < 0
      || vs_writer_set_meta_int (c->w, "import_file_mtime_us", mtime_us) < 0)
    return vs_import_write_failed (c);
  return TRUE;
}

/* TRUE when list is a non-empty list of segment dicts (each with an
 * 'address' and a 'blocks' list): how PyTorch 1.13 pickled its
 * memory_snapshot(). */
static gboolean
is_segment_list (const VsPickle *p, VsPickleRef list)
{
  VsPickleIter it;
  VsPickleRef v;
  if (vs_pickle_len (p, list) == 0)
    return FALSE;
  vs_pickle_iter_init (&it, p, list);
  while (vs_pickle_iter_next (&it, &v))
    if (vs_pickle_type (p, v) != VS_PICKLE_DICT
        || vs_pickle_dict_get (p, v, "address") == VS_PICKLE_MISSING
        || vs_pickle_type (p, vs_pickle_dict_get (p, v, "blocks")) != VS_PICKLE_LIST)
      return FALSE;
  return TRUE;
}

static gboolean
import_all (Ctx *c, const char *pickle_path)
{
  const VsPickle *p = c->p;
  VsPickleRef root = vs_pickle_root (p);
  VsPickleRef segments, traces = VS_PICKLE_MISSING, settings = VS_PICKLE_MISSING;
  if (vs_pickle_type (p, root) == VS_PICKLE_LIST && is_segment_list (p, root))
    segments = root; /* PyTorch 1.13: the segments alone */
  else if (vs_pickle_type (p, root) != VS_PICKLE_DICT)
    return vs_import_not_snapshot (c, "the pickle's top level is not a dict");
  else
    {
      segments = vs_pickle_dict_get (p, root, "segments");
      traces = vs_pickle_dict_get (p, root, "device_traces");
      settings = vs_pickle_dict_get (p, root, "allocator_settings");
    }
  VsPickleType st = vs_pickle_type (p, segments);
  if (st != VS_PICKLE_LIST && st != VS_PICKLE_TUPLE)
    return vs_import_not_snapshot (c, "no 'segments' list");
  if (traces != VS_PICKLE_MISSING && vs_pickle_type (p, traces) != VS_PICKLE_LIST
      && vs_pickle_type (p, traces) != VS_PICKLE_TUPLE)
    return vs_import_not_snapshot (c, "'device_traces' is not a list");

  /* Devices: every index of device_traces with entries, and every device
   * holding a segment. */
  gint64 ndev = (gint64)vs_pickle_len (p, traces);
  GStatBuf fst;
  guint64 file_size = g_stat (pickle_path, &fst) == 0 ? (guint64)fst.st_size : G_MAXUINT64;
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (vs_import_stream_free);
  g_autoptr (GPtrArray) dev_traces = g_ptr_array_new ();
  VsPickleIter it;
  VsPickleRef v;
  vs_pickle_iter_init (&it, p, traces);
  while (vs_pickle_iter_next (&it, &v))
    {
      if (vs_pickle_type (p, v) != VS_PICKLE_LIST && vs_pickle_type (p, v) != VS_PICKLE_TUPLE)
        return vs_import_not_snapshot (c, "device_traces[%u] is not a list", dev_traces->len);
      Stream *s = device_history (c, v, owned);
      if (s == NULL)
        return FALSE;
      /* One history read many times over through the memo would write a
       * trace far larger than the file: refused, as are more entries
       * than the file could hold (docs/import.md). */
      for (guint k = 0; k < dev_traces->len; k++)
        if (g_ptr_array_index (dev_traces, k) == s)
          return vs_import_not_snapshot (
              c, "device_traces[%u] is the same list as device_traces[%u]", dev_traces->len, k);
      g_ptr_array_add (dev_traces, s);
      c->total_entries += s->count;
      if (c->total_entries > file_size / VS_IMPORT_MIN_ENTRY_BYTES + 1)
        return vs_import_not_snapshot (c,
                                       "its history has more entries (%" G_GUINT64_FORMAT
                                       ") than a file of %" G_GUINT64_FORMAT
                                       " bytes can hold; entries are shared through the memo",
                                       c->total_entries, file_size);
    }
  g_autoptr (GHashTable) seg_devs
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  vs_pickle_iter_init (&it, p, segments);
  while (vs_pickle_iter_next (&it, &v))
    {
      gint64 d = 0;
      if (vs_pickle_type (p, v) != VS_PICKLE_DICT)
        return vs_import_not_snapshot (c, "a segment is not a dict");
      if (!vs_pickle_get_int (p, vs_pickle_dict_get (p, v, "device"), &d))
        d = 0;
      if (d < 0 || d > 65535)
        return vs_import_not_snapshot (c, "segment device index %" G_GINT64_FORMAT " out of range",
                                       d);
      g_hash_table_add (seg_devs, g_memdup2 (&d, sizeof d));
      ndev = MAX (ndev, d + 1);
    }

  /* Entries without time_us (PyTorch before 2.1 wrote none): the time
   * axis of every device is then the order of its events. */
  for (guint i = 0; i < dev_traces->len; i++)
    if (((Stream *)g_ptr_array_index (dev_traces, i))->missing_time > 0)
      c->order_axis = TRUE;
  gint64 start_ns = history_start (c, dev_traces);
  g_autofree char *base = g_path_get_basename (pickle_path);
  GString *js = g_string_new (NULL);
  if (settings != VS_PICKLE_MISSING)
    settings_json (p, settings, js, 0);
  g_autofree char *settings_str = g_string_free (js, FALSE);

  if (vs_writer_set_meta (c->w, "source", "import") < 0
      || vs_writer_set_meta (c->w, "clock", c->order_axis ? "event order" : "snapshot time_us") < 0
      || (c->order_axis && vs_writer_set_meta (c->w, "time_axis", "order") < 0)
      || vs_writer_set_meta_int (c->w, "start_ns", start_ns) < 0
      || vs_writer_set_meta (c->w, "import_file", base) < 0 || !write_source_meta (c, pickle_path)
      || vs_writer_set_meta (c->w, "tool_version", VS_VERSION) < 0)
    return vs_import_write_failed (c);

  if ((c->process_id = vs_writer_add_imported_process (c->w, 0, NULL, start_ns)) < 0)
    return vs_import_write_failed (c);

  gboolean any_expandable = FALSE;
  for (gint64 d = 0; d < ndev; d++)
    {
      Stream none = { 0 };
      Stream *tr = d < (gint64)dev_traces->len ? g_ptr_array_index (dev_traces, d) : &none;
      /* A device with no segments and no entry that changes memory (a
       * GPU the program never used can still get 'snapshot' markers) has
       * nothing to import, unless an entry is invalid: that is reported. */
      gboolean has_entries
          = tr->entries != NULL && (tr->memory_entries > 0 || tr->why != NULL || tr->error != NULL);
      if (!has_entries && !g_hash_table_contains (seg_devs, &d))
        continue;
      if (tr == &none)
        tr->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
      g_autoptr (GArray) none_entries = none.entries;
      VsDevice dv = { .idx = d, .uuid = NULL, .name = NULL, .total_bytes = VS_UNKNOWN };
      gint64 device_id = vs_writer_add_device (c->w, &dv);
      if (device_id < 0)
        return vs_import_write_failed (c);
      VsAllocator al = { .device_id = device_id,
                         .process_id = c->process_id,
                         .kind = "pytorch",
                         .name = "pytorch",
                         .handle = VS_UNKNOWN,
                         .settings = settings_str[0] ? settings_str : NULL };
      gint64 allocator_id = vs_writer_add_allocator (c->w, &al);
      if (allocator_id < 0)
        return vs_import_write_failed (c);
      c->expandable = FALSE;
      if (settings != VS_PICKLE_MISSING)
        {
          gint64 x;
          if (vs_pickle_get_int (p, vs_pickle_dict_get (p, settings, "expandable_segments"), &x)
              && x)
            c->expandable = TRUE;
        }
      if (!vs_import_device (c, d, tr, segments, start_ns, device_id, allocator_id))
        return FALSE;
      for (guint i = 0; i < tr->entries->len && !c->expandable; i++)
        if (g_array_index (tr->entries, Entry, i).action == ACT_SEGMENT_MAP)
          c->expandable = TRUE;
      any_expandable |= c->expandable;
      c->stats.devices++;
    }

  /* Top-level keys of other versions (e.g. host_segments, host_traces of
   * pinned host memory): not imported, counted. */
  if (vs_pickle_type (p, root) == VS_PICKLE_DICT)
    {
      static const char *const known[]
          = { "segments", "device_traces", "allocator_settings", "external_annotations" };
      VsPickleRef k, x;
      vs_pickle_iter_init (&it, p, root);
      while (vs_pickle_iter_next_pair (&it, &k, &x))
        {
          gsize len = 0;
          const char *name = vs_pickle_get_str (p, k, &len);
          gboolean is_known = FALSE;
          for (gsize i = 0; name && i < G_N_ELEMENTS (known); i++)
            is_known |= len == strlen (known[i]) && memcmp (name, known[i], len) == 0;
          if (!is_known)
            {
              g_autofree char *n = g_strdup_printf ("top-level key %.*s", (int)MIN (len, (gsize)40),
                                                    name ? name : "(not a str)");
              vs_import_skip (c, n, strlen (n));
            }
        }
    }
  if (!write_settings_meta (c, settings, settings_str, any_expandable)
      || !vs_import_annotations (c, vs_pickle_dict_get (p, root, "external_annotations"))
      || !write_skipped_meta (c))
    return FALSE;

  c->stats.event_order = c->order_axis;
  /* Memory live before the first entry: the history does not cover the
   * run (it wrapped, recording started late, or there is none). */
  if (c->stats.synthetic_events > 0)
    c->stats.history_overflow = TRUE;
  c->stats.skipped = (guint64)c->skipped_total;
  if (vs_writer_set_meta (c->w, "history_reconstructed", c->stats.synthetic_events ? "1" : "0") < 0
      || vs_writer_set_meta (c->w, "history_overflow", c->stats.history_overflow ? "1" : "0") < 0
      || vs_writer_set_meta_int (c->w, "history_entries", (gint64)c->stats.entries) < 0
      || (c->inconsistencies
          && vs_writer_set_meta_int (c->w, "import_inconsistencies", c->inconsistencies) < 0))
    return vs_import_write_failed (c);
  return TRUE;
}

gboolean
vs_import_snapshot (const char *pickle_path, const char *trace_path, gboolean finalize,
                    VsImportProgress progress, gpointer progress_data, VsImportStats *stats,
                    GError **error)
{
  return vs_import_snapshot_full (pickle_path, trace_path, finalize, NULL, NULL, progress,
                                  progress_data, stats, error);
}

/* Marks phase name into timings, if any. */
static void
import_phase (VsTimings *timings, const char *name)
{
  if (timings != NULL)
    vs_timings_mark (timings, name);
}

gboolean
vs_import_snapshot_full (const char *pickle_path, const char *trace_path, gboolean finalize,
                         VsRowSink *sink, VsTimings *timings, VsImportProgress progress,
                         gpointer progress_data, VsImportStats *stats, GError **error)
{
  g_return_val_if_fail (pickle_path != NULL && trace_path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  Ctx c = { .error = error, .progress = progress, .progress_data = progress_data };
  gint64 t0 = g_get_monotonic_time ();
  char err[512] = "";
  /* The writer comes first: history entries are decoded, their stacks
   * written, while the pickle is read.  The trace is a temporary file,
   * removed by the caller unless the import completes. */
  c.w = vs_writer_create (trace_path, err, sizeof err);
  if (c.w != NULL && vs_writer_set_bulk (c.w) < 0)
    {
      g_strlcpy (err, vs_writer_errmsg (c.w), sizeof err);
      vs_writer_close (c.w, false, NULL, NULL, NULL, 0);
      c.w = NULL;
    }
  if (c.w == NULL)
    {
      g_set_error (error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE, "cannot create the trace: %s",
                   err);
      return FALSE;
    }
  c.frames
      = g_hash_table_new_full (vs_import_frame_key_hash, vs_import_frame_key_equal, g_free, NULL);
  static const char *const entry_keys[] = {
    "action", "addr", "size", "stream", "time_us", "frames", "device_free",
  };
  static const char *const frame_keys[] = { "filename", "name", "line" };
  vs_pickle_keys_init (&c.entry_keys, entry_keys, G_N_ELEMENTS (entry_keys));
  vs_pickle_keys_init (&c.frame_keys, frame_keys, G_N_ELEMENTS (frame_keys));
  vs_pickle_keys_init (&c.action_key, entry_keys, 1);
  c.stacks
      = g_hash_table_new_full (vs_import_stack_key_hash, vs_import_stack_key_equal, g_free, NULL);
  c.streams = g_hash_table_new_full (NULL, NULL, NULL, vs_import_stream_free);
  c.scratch = g_array_new (FALSE, FALSE, sizeof (gint64));
  c.skipped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  c.markers = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  VsPickle *p
      = vs_pickle_load_file_full (pickle_path, pickle_progress, &c, vs_import_on_append, &c, error);
  gint64 t1 = g_get_monotonic_time ();
  c.stats.reading_us = t1 - t0;
  import_phase (timings, "reading the snapshot");
  gboolean ok = p != NULL;
  if (ok)
    {
      c.p = p;
      ok = import_all (&c, pickle_path);
    }
  /* Frames point into the pickle: drop the caches before it. */
  g_hash_table_destroy (c.frames);
  frame_table_clear (&c.frame_ptrs);
  handle_table_clear (&c.frame_handles);
  g_hash_table_destroy (c.stacks);
  g_hash_table_destroy (c.streams);
  g_array_free (c.scratch, TRUE);
  g_hash_table_destroy (c.skipped);
  g_hash_table_destroy (c.markers);
  vs_pickle_free (p);
  gint64 t2 = g_get_monotonic_time ();
  c.stats.importing_us = t2 - t1;
  import_phase (timings, "importing the history");

  if (ok)
    {
      VsFinalizeOptions fo = {
        .progress = finalize_progress, .progress_data = &c, .sink = sink, .timings = timings
      };
      ok = (finalize ? vs_trace_close_finalized (c.w, &fo, err, sizeof err)
                     : vs_writer_close (c.w, FALSE, NULL, NULL, err, sizeof err))
           == 0;
      if (!ok)
        {
          gboolean cancelled = strstr (err, "cancelled") != NULL;
          g_set_error (error, VS_IMPORT_ERROR,
                       cancelled ? VS_IMPORT_ERROR_CANCELLED : VS_IMPORT_ERROR_WRITE,
                       cancelled ? "cancelled" : "cannot finalize the trace: %s", err);
        }
    }
  else
    vs_writer_close (c.w, false, NULL, NULL, err, sizeof err);
  c.stats.finalizing_us = g_get_monotonic_time () - t2;
  if (ok && stats)
    *stats = c.stats;
  return ok;
}
