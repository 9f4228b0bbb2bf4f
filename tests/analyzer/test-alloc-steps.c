/* SPDX-License-Identifier: MIT */
/* test-alloc-steps.c — the allocators' state event by event
 * (vs-alloc-steps.h) on real traces.
 *
 * For every committed PyTorch trace and every imported snapshot:
 *   - the state after each event, computed from its checkpoint, equals
 *     what the trace's own queries give for that step
 *     (vs_fragmentation_segments, vs_fragmentation_at with its gaps, the
 *     live blocks of vs_live_blocks) and each allocator's series — with
 *     the whole trace loaded, and loaded in short spans around many steps;
 *   - the same states equal those of the caching-allocator model
 *     (vs-caching-allocator.h) fed the trace's requests in order, following
 *     the recorded run as the what-if replay of a trace's own settings
 *     does: every block the model hands out lies at the address the trace
 *     recorded, and after each event the model's segments and blocks are
 *     the drawn ones, exactly (for allocators whose history begins with
 *     nothing reserved and without expandable segments: see below).
 */
#include <string.h>

#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-caching-allocator.h"
#include "vs-import.h"

#define WHOLE (G_MAXINT64 / 4)

static void
assert_segments_equal (const GArray *a, const GArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++)
    {
      const VsSegment *x = &g_array_index (a, VsSegment, i);
      const VsSegment *y = &g_array_index (b, VsSegment, i);
      g_assert_cmpint (x->id, ==, y->id);
      g_assert_cmpint (x->allocator_id, ==, y->allocator_id);
      g_assert_cmpint (x->address, ==, y->address);
      g_assert_cmpint (x->bytes, ==, y->bytes);
      g_assert_cmpint (x->pieces, ==, y->pieces);
      g_assert_cmpint (x->alloc_time_ns, ==, y->alloc_time_ns);
    }
}

static int
block_cmp (gconstpointer pa, gconstpointer pb)
{
  const VsBlock *a = pa, *b = pb;
  if (a->allocator_id != b->allocator_id)
    return a->allocator_id < b->allocator_id ? -1 : 1;
  if (a->address != b->address)
    return a->address < b->address ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

/* The state after step seq against the trace's own queries. */
static void
check_against_trace (VsTrace *trace, gint64 device_id, const VsAllocState *st)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) segs = vs_fragmentation_segments (trace, device_id, 0, st->seq, &error);
  g_autoptr (GArray) gaps = g_array_new (FALSE, FALSE, sizeof (VsFreeGap));
  g_autoptr (GArray) live = vs_live_blocks (trace, device_id, 0, st->seq, &error);
  g_autoptr (GArray) blocks = g_array_new (FALSE, FALSE, sizeof (VsBlock));
  const GPtrArray *allocators = vs_trace_get_allocators (trace);
  VsFragmentation f;

  g_assert_no_error (error);
  assert_segments_equal (st->segments, segs);
  g_assert_true (vs_fragmentation_at (trace, device_id, 0, st->seq, &f, gaps, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (st->gaps->len, ==, gaps->len);
  if (gaps->len > 0)
    g_assert_cmpmem (st->gaps->data, gaps->len * sizeof (VsFreeGap), gaps->data,
                     gaps->len * sizeof (VsFreeGap));
  g_assert_cmpint (st->frag.segment_count, ==, f.segment_count);
  g_assert_cmpint (st->frag.segment_free_bytes, ==, f.segment_free_bytes);
  if (f.largest_free_bytes != VS_UNKNOWN)
    g_assert_cmpint (st->frag.largest_free_bytes, ==, f.largest_free_bytes);

  for (guint i = 0; i < live->len; i++)
    if (g_array_index (live, VsBlock, i).level == 2)
      g_array_append_val (blocks, g_array_index (live, VsBlock, i));
  g_array_sort (blocks, block_cmp);
  g_assert_cmpuint (st->blocks->len, ==, blocks->len);
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *x = &g_array_index (st->blocks, VsBlock, i);
      const VsBlock *y = &g_array_index (blocks, VsBlock, i);
      g_assert_cmpint (x->id, ==, y->id);
      g_assert_cmpint (x->address, ==, y->address);
      g_assert_cmpint (x->bytes, ==, y->bytes);
      g_assert_cmpint (x->block_bytes, ==, y->block_bytes);
      g_assert_cmpint (x->stack_id, ==, y->stack_id);
      g_assert_cmpint (x->alloc_time_ns, ==, y->alloc_time_ns);
    }

  /* A PyTorch allocator's reserved and allocated series are its segments
   * and its blocks. */
  for (guint a = 0; a < allocators->len; a++)
    {
      const VsAllocatorInfo *info = g_ptr_array_index (allocators, a);
      gint64 reserved = 0, allocated = 0;
      VsSeriesPoint p;

      if (info->device_id != device_id || g_strcmp0 (info->kind, "pytorch") != 0)
        continue;
      for (guint i = 0; i < st->segments->len; i++)
        if (g_array_index (st->segments, VsSegment, i).allocator_id == info->id)
          reserved += g_array_index (st->segments, VsSegment, i).bytes;
      for (guint i = 0; i < st->blocks->len; i++)
        if (g_array_index (st->blocks, VsBlock, i).allocator_id == info->id)
          allocated += g_array_index (st->blocks, VsBlock, i).bytes;
      g_assert_true (vs_series_at_seq (trace, device_id, info->id, st->seq, &p, &error));
      g_assert_no_error (error);
      g_assert_cmpint (reserved, ==, p.reserved_bytes);
      g_assert_cmpint (allocated, ==, p.allocated_bytes);
    }
}

/* Every event of the whole trace, then short spans around every 97th
 * step, against the trace.  Returns the events checked. */
static guint
check_device_trace (VsTrace *trace, gint64 device_id)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (VsAllocSteps) all = vs_alloc_steps_load (trace, device_id, 0, WHOLE, &error);
  gint64 from, to;
  guint n, stride;

  g_assert_no_error (error);
  g_assert_nonnull (all);
  n = vs_alloc_steps_get_n (all);
  vs_alloc_steps_get_span (all, &from, &to);
  g_assert_cmpint (from, ==, 0);
  g_assert_false (vs_alloc_steps_has_before (all));
  g_assert_false (vs_alloc_steps_has_after (all));
  /* More than one checkpoint wherever there are more events than one
   * checkpoint's worth. */
  g_assert_cmpuint (vs_alloc_steps_get_n_checkpoints (all), ==,
                    (n + vs_alloc_steps_get_checkpoint_every (all) - 1)
                            / vs_alloc_steps_get_checkpoint_every (all)
                        + (n == 0));
  /* Every event of traces up to 1500 events; beyond, every stride-th
   * (each check runs the trace's queries). */
  stride = MAX (1, n / 1500);
  for (gint i = -1; i < (gint)n; i++)
    {
      g_autoptr (VsAllocState) st = NULL;

      if (i % stride != 0 && i != (gint)n - 1)
        continue;
      st = vs_alloc_steps_state (all, i);
      if (i >= 0)
        {
          const VsAllocStep *s = vs_alloc_steps_get (all, (guint)i);
          g_assert_cmpint (vs_alloc_steps_find (all, s->seq), >=, i);
          if (i > 0)
            g_assert_cmpint (s->seq, >=, vs_alloc_steps_get (all, (guint)i - 1)->seq);
        }
      check_against_trace (trace, device_id, st);
    }
  for (gint64 seq = 0; seq <= to; seq += 97)
    {
      g_autoptr (VsAllocSteps) part = vs_alloc_steps_load (trace, device_id, seq, 20, &error);
      gint64 pf, pt;

      g_assert_no_error (error);
      vs_alloc_steps_get_span (part, &pf, &pt);
      g_assert_cmpint (pf, ==, MAX (0, seq - 20));
      g_assert_cmpint (pt, ==, MIN (to, seq + 20));
      g_assert_cmpint (vs_alloc_steps_has_before (part), ==, pf > 0);
      g_assert_cmpint (vs_alloc_steps_has_after (part), ==, pt < to);
      for (gint i = -1; i < (gint)vs_alloc_steps_get_n (part); i++)
        {
          g_autoptr (VsAllocState) st = vs_alloc_steps_state (part, i);
          check_against_trace (trace, device_id, st);
        }
    }
  return n;
}

/* The model's side: segments as its segment function reports them, the
 * recorded segment addresses it is handed, its live blocks by address. */
typedef struct
{
  GArray *segments;     /* gint64 pairs (address, bytes) */
  GQueue *oracle_sizes; /* recorded segment allocations not yet taken */
  GQueue *oracle_addrs;
  GHashTable *live;      /* address -> VsCaBlock* */
  GHashTable *requested; /* address -> requested bytes */
} Model;

static void
on_segment (gpointer data, int op, gint64 address, gint64 bytes)
{
  Model *m = data;
  gint64 pair[2] = { address, bytes };

  if (op == VS_ALLOC_STEP_SEGMENT_ALLOC || op == VS_ALLOC_STEP_SEGMENT_MAP)
    {
      g_array_append_vals (m->segments, pair, 1);
      return;
    }
  for (guint i = 0; i < m->segments->len; i++)
    {
      gint64 *s = (gint64 *)(gpointer)(m->segments->data + i * 2 * sizeof (gint64));
      if (s[0] == address && s[1] == bytes)
        {
          g_array_remove_index (m->segments, i);
          return;
        }
    }
  g_assert_not_reached ();
}

static gint64
oracle (gpointer data, gint64 bytes)
{
  Model *m = data;

  for (GList *s = m->oracle_sizes->head, *a = m->oracle_addrs->head; s; s = s->next, a = a->next)
    if (*(gint64 *)s->data == bytes)
      {
        gint64 address = *(gint64 *)a->data;
        g_free (s->data);
        g_free (a->data);
        g_queue_delete_link (m->oracle_sizes, s);
        g_queue_delete_link (m->oracle_addrs, a);
        return address;
      }
  return VS_UNKNOWN;
}

static int
pair_cmp (gconstpointer pa, gconstpointer pb)
{
  const gint64 *a = pa, *b = pb;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The model's state against the drawn state of allocator_id. */
static void
check_against_model (Model *m, const VsAllocState *st, gint64 allocator_id)
{
  g_autoptr (GArray) ext = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  guint n = 0, blocks = 0;

  /* The model's segments, touching ones merged as the drawing merges. */
  g_array_sort (m->segments, pair_cmp);
  for (guint i = 0; i < m->segments->len; i++)
    {
      const gint64 *s
          = (const gint64 *)(gconstpointer)(m->segments->data + i * 2 * sizeof (gint64));
      gint64 *last = ext->len > 0
                         ? (gint64 *)(gpointer)(ext->data + (ext->len - 1) * 2 * sizeof (gint64))
                         : NULL;
      if (last != NULL && s[0] <= last[0] + last[1])
        last[1] = MAX (last[0] + last[1], s[0] + s[1]) - last[0];
      else
        g_array_append_vals (ext, s, 1);
    }
  /* The drawn segments merged the same way: the model places segments as
   * the recorded run did, and the extents they cover must be the same
   * (whether touching segments are drawn apart is the trace's rule,
   * checked against vs_fragmentation_segments above). */
  gint64 lo = VS_UNKNOWN, hi = VS_UNKNOWN;
  for (guint i = 0; i <= st->segments->len; i++)
    {
      const VsSegment *seg
          = i < st->segments->len ? &g_array_index (st->segments, VsSegment, i) : NULL;
      const gint64 *e;

      if (seg != NULL && seg->allocator_id != allocator_id)
        continue;
      if (seg != NULL && lo != VS_UNKNOWN && seg->address <= hi)
        {
          hi = MAX (hi, seg->address + seg->bytes);
          continue;
        }
      if (lo != VS_UNKNOWN)
        {
          g_assert_cmpuint (n, <, ext->len);
          e = (const gint64 *)(gconstpointer)(ext->data + n++ * 2 * sizeof (gint64));
          g_assert_cmpint (lo, ==, e[0]);
          g_assert_cmpint (hi - lo, ==, e[1]);
        }
      if (seg != NULL)
        {
          lo = seg->address;
          hi = seg->address + seg->bytes;
        }
    }
  g_assert_cmpuint (n, ==, ext->len);

  for (guint i = 0; i < st->blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (st->blocks, VsBlock, i);
      VsCaBlock *mb;

      if (b->allocator_id != allocator_id)
        continue;
      blocks++;
      mb = g_hash_table_lookup (m->live, &b->address);
      g_assert_nonnull (mb);
      g_assert_cmpint (vs_ca_block_get_address (mb), ==, b->address);
      g_assert_cmpint (GPOINTER_TO_SIZE (g_hash_table_lookup (m->requested, &b->address)), ==,
                       b->bytes);
      /* The block drawn (requested, or rounded where recorded) within the
       * model's block (rounded, or with a remainder not split off). */
      g_assert_cmpint (b->block_bytes != VS_UNKNOWN ? b->block_bytes : b->bytes, <=,
                       vs_ca_block_get_size (mb));
    }
  g_assert_cmpuint (blocks, ==, g_hash_table_size (m->live));
}

static gint64 *
dup64 (gint64 v)
{
  return g_memdup2 (&v, sizeof v);
}

/* Replays allocator_id's events through the model following the recorded
 * run; returns the events compared. */
static guint
check_allocator_model (VsTrace *trace, const VsAllocatorInfo *info, const VsAllocSteps *all)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *conf_text = vs_whatif_own_alloc_conf (trace, info->id, &error);
  const VsDeviceInfo *dev = vs_trace_lookup_device (trace, info->device_id);
  g_autoptr (VsAllocState) base = vs_alloc_steps_state (all, -1);
  g_autoptr (VsCachingAllocator) ca = NULL;
  gint64 stream = 0;
  VsAllocConf conf;
  Model m;
  guint checked = 0;
  gboolean in_prefix = TRUE;

  g_assert_no_error (error);
  g_assert_true (vs_alloc_conf_parse (conf_text, &conf, &error));
  g_assert_no_error (error);
  if (conf.expandable_segments)
    return 0; /* its address space is the model's own: pages land elsewhere */
  /* A history that begins with memory reserved (a snapshot's ring
   * buffer overflowed) does not say on which stream the free space was
   * freed nor what the allocator did before: the model's placements there
   * are its own, not the recorded run's. */
  for (guint i = 0; i < base->segments->len; i++)
    if (g_array_index (base->segments, VsSegment, i).allocator_id == info->id)
      return 0;
  ca = vs_caching_allocator_new (
      &conf, G_MAXINT64, FALSE,
      dev != NULL && dev->total_bytes > 0 ? dev->total_bytes : (G_GINT64_CONSTANT (80) << 30));
  m.segments = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  m.oracle_sizes = g_queue_new ();
  m.oracle_addrs = g_queue_new ();
  m.live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  m.requested = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  vs_caching_allocator_set_address_func (ca, oracle, &m);

  /* What was live before the history: its segments, then its blocks, on
   * the stream of the first allocation (as the what-if replay does); the
   * same for the events a snapshot's importer reconstructed before its
   * history (below). */
  for (guint i = 0; i < vs_alloc_steps_get_n (all); i++)
    {
      const VsAllocStep *s = vs_alloc_steps_get (all, i);
      if (s->allocator_id == info->id && s->kind == VS_ALLOC_STEP_ALLOC && s->stream != VS_UNKNOWN)
        {
          stream = s->stream;
          break;
        }
    }
  for (guint i = 0; i < base->segments->len; i++)
    {
      const VsSegment *seg = &g_array_index (base->segments, VsSegment, i);
      gint64 pair[2] = { seg->address, seg->bytes };
      if (seg->allocator_id != info->id)
        continue;
      vs_caching_allocator_add_segment (ca, seg->address, seg->bytes, stream,
                                        seg->bytes == 2 * 1024 * 1024);
      g_array_append_vals (m.segments, pair, 1);
    }
  for (guint i = 0; i < base->blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (base->blocks, VsBlock, i);
      VsCaBlock *mb;
      if (b->allocator_id != info->id)
        continue;
      mb = vs_caching_allocator_place_block (ca, b->address, b->bytes, b->block_bytes, stream);
      g_assert_nonnull (mb);
      g_hash_table_insert (m.live, dup64 (b->address), mb);
      g_hash_table_insert (m.requested, dup64 (b->address), GSIZE_TO_POINTER (b->bytes));
    }
  vs_caching_allocator_set_segment_func (ca, on_segment, &m);
  check_against_model (&m, base, info->id);

  for (guint i = 0; i < vs_alloc_steps_get_n (all); i++)
    {
      const VsAllocStep *s = vs_alloc_steps_get (all, i);
      VsCaBlock *mb;

      if (s->allocator_id != info->id)
        continue;
      /* The importer's reconstruction of what was live before a
       * snapshot's history: the events before the first with a stream
       * (the what-if reader's prefix). */
      if (s->kind == VS_ALLOC_STEP_ALLOC && s->stream != VS_UNKNOWN)
        in_prefix = FALSE;
      switch (s->kind)
        {
        case VS_ALLOC_STEP_SEGMENT_ALLOC:
          if (in_prefix)
            {
              /* Reconstructed from the snapshot: reserved as it stood. */
              gint64 pair[2] = { s->address, s->bytes };
              vs_caching_allocator_add_segment (ca, s->address, s->bytes, stream,
                                                s->bytes == 2 * 1024 * 1024);
              g_array_append_vals (m.segments, pair, 1);
              break;
            }
          g_queue_push_tail (m.oracle_sizes, dup64 (s->bytes));
          g_queue_push_tail (m.oracle_addrs, dup64 (s->address));
          continue; /* the model takes it with the request that needs it */
        case VS_ALLOC_STEP_SEGMENT_MAP:
          continue;
        case VS_ALLOC_STEP_SEGMENT_FREE:
        case VS_ALLOC_STEP_SEGMENT_UNMAP:
          g_assert_true (vs_caching_allocator_release_recorded (ca, s->kind, s->address, s->bytes));
          break;
        case VS_ALLOC_STEP_ALLOC:
          if (s->stream == VS_UNKNOWN)
            {
              mb = vs_caching_allocator_place_block (ca, s->address, s->bytes, s->block_bytes,
                                                     stream);
              g_assert_nonnull (mb);
              g_hash_table_insert (m.live, dup64 (s->address), mb);
              g_hash_table_insert (m.requested, dup64 (s->address), GSIZE_TO_POINTER (s->bytes));
              break;
            }
          mb = vs_caching_allocator_malloc (ca, s->bytes,
                                            s->stream != VS_UNKNOWN ? s->stream : stream);
          g_assert_nonnull (mb);
          g_assert_cmpint (vs_ca_block_get_address (mb), ==, s->address);
          g_hash_table_insert (m.live, dup64 (s->address), mb);
          g_hash_table_insert (m.requested, dup64 (s->address), GSIZE_TO_POINTER (s->bytes));
          break;
        case VS_ALLOC_STEP_FREE:
          mb = g_hash_table_lookup (m.live, &s->address);
          g_assert_nonnull (mb);
          vs_caching_allocator_release (ca, mb);
          g_hash_table_remove (m.live, &s->address);
          g_hash_table_remove (m.requested, &s->address);
          break;
        default:
          break; /* a recorded failure: as recorded, nothing changes */
        }
      /* Segments the model has not taken yet are the recorded ones just
       * before the request that takes them: compare once none is pending. */
      if (g_queue_is_empty (m.oracle_sizes))
        {
          g_autoptr (VsAllocState) st = vs_alloc_steps_state (all, (gint)i);
          check_against_model (&m, st, info->id);
          checked++;
        }
    }
  g_array_unref (m.segments);
  g_queue_free_full (m.oracle_sizes, g_free);
  g_queue_free_full (m.oracle_addrs, g_free);
  g_hash_table_unref (m.live);
  g_hash_table_unref (m.requested);
  return checked;
}

/* Both checks on every device of the trace at path; returns the events
 * checked against the model. */
static guint
check_trace (const char *path, guint *events)
{
  g_autoptr (GError) error = NULL;
  VsTrace *trace = vs_trace_open (path, &error);
  const GPtrArray *devices, *allocators;
  guint model = 0;

  g_assert_no_error (error);
  devices = vs_trace_get_devices (trace);
  allocators = vs_trace_get_allocators (trace);
  for (guint d = 0; d < devices->len; d++)
    {
      const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
      g_autoptr (VsAllocSteps) all = vs_alloc_steps_load (trace, dev->id, 0, WHOLE, &error);

      g_assert_no_error (error);
      *events += check_device_trace (trace, dev->id);
      for (guint a = 0; a < allocators->len; a++)
        {
          const VsAllocatorInfo *info = g_ptr_array_index (allocators, a);
          if (info->device_id == dev->id && g_strcmp0 (info->kind, "pytorch") == 0)
            model += check_allocator_model (trace, info, all);
        }
    }
  vs_trace_free (trace);
  return model;
}

static void
test_traces (void)
{
  const char *names[] = { "torch-allocator.db",    "torch-train.db",
                          "torch-eval-leak.db",    "sample-frag.db",
                          "whatif/default.db",     "whatif/default-tight.db",
                          "whatif/default-low.db", "whatif/expandable-tight.db" };
  guint events = 0, model = 0;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", names[i], NULL);
      guint m;

      g_test_message ("%s", names[i]);
      m = check_trace (path, &events);
      model += m;
    }
  g_test_message ("%u events against the trace, %u against the model", events, model);
  g_assert_cmpuint (events, >, 1000);
  g_assert_cmpuint (model, >, 500);
}

static void
test_snapshots (void)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "data", "snapshots", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree char *tmpdir = g_dir_make_tmp ("alloc-steps-XXXXXX", NULL);
  guint snapshots = 0, events = 0, model = 0;
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *pickle = NULL, *trace = NULL;

      if (!g_str_has_suffix (name, ".pickle"))
        continue;
      pickle = g_build_filename (dir, name, NULL);
      trace = g_build_filename (tmpdir, "snapshot.db", NULL);
      g_test_message ("%s", name);
      g_assert_true (vs_import_snapshot (pickle, trace, TRUE, NULL, NULL, NULL, &error));
      g_assert_no_error (error);
      model += check_trace (trace, &events);
      snapshots++;
      g_unlink (trace);
    }
  g_rmdir (tmpdir);
  g_test_message ("%u events against the trace, %u against the model", events, model);
  g_assert_cmpuint (snapshots, >=, 8);
  g_assert_cmpuint (model, >, 100);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/alloc-steps/traces", test_traces);
  g_test_add_func ("/alloc-steps/snapshots", test_snapshots);
  return g_test_run ();
}
