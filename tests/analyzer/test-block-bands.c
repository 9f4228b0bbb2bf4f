/* SPDX-License-Identifier: MIT */
/* test-block-bands.c — allocations over time as stacked bands
 * (vs_block_bands_query), against the live blocks of vs_live_blocks() as
 * ground truth: at every column's centre the bands are exactly the blocks
 * live then (when every block is drawn), stacked in allocation order
 * without gaps or overlaps; with fewer bands, the largest are kept and
 * the rest is the other band; zoomed out, short-lived blocks fold into
 * the other band and come back as bands when zoomed in.
 */
#include <glib.h>
#include <glib/gstdio.h>

#include "vs-analyzer.h"
#include "vs-test-fixtures.h"

/* The first device of trace. */
static gint64
first_device (VsTrace *trace)
{
  const VsDeviceInfo *d = g_ptr_array_index (vs_trace_get_devices (trace), 0);

  return d->id;
}

static gint64
column_centre (const VsBlockBands *r, guint c)
{
  return r->from_ns + (gint64)(((double)c + 0.5) * (double)(r->to_ns - r->from_ns) / r->n_columns);
}

/* Every band's bottom in a column is the bytes of the bands allocated
 * before it and live there; their sum is the column's banded bytes. */
static void
check_stacking (const VsBlockBands *r)
{
  for (guint c = 0; c < r->n_columns; c++)
    {
      gint64 top = 0;

      for (guint i = 0; i < r->bands->len; i++)
        {
          const VsBand *b = &g_array_index (r->bands, VsBand, i);

          if (c < b->first_column || c >= b->first_column + b->n_columns)
            continue;
          g_assert_cmpint (g_array_index (r->bottoms, gint64, b->offset + c - b->first_column), ==,
                           top);
          g_assert_cmpint (vs_block_bands_find (r, c, top), ==, (int)i);
          top += b->block.bytes;
        }
      g_assert_cmpint (top, ==, g_array_index (r->banded, gint64, c));
      g_assert_cmpint (g_array_index (r->total, gint64, c), >=, top);
      g_assert_cmpint (vs_block_bands_other (r, c), ==, g_array_index (r->total, gint64, c) - top);
    }
}

/* With every block drawn, the bands live at each centre are the blocks
 * vs_live_blocks() gives for the state then. */
static void
check_against_live (VsTrace *trace, const VsBlockBands *r)
{
  for (guint c = 0; c < r->n_columns; c++)
    {
      g_autoptr (GError) error = NULL;
      gint64 seq = vs_trace_seq_at_time (trace, r->device_id, 0, column_centre (r, c), &error);
      g_autoptr (GArray) live = NULL;
      g_autoptr (GHashTable) ids = g_hash_table_new (g_int64_hash, g_int64_equal);
      guint n = 0;

      g_assert_no_error (error);
      live = vs_live_blocks (trace, r->device_id, 0, seq, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < live->len; i++)
        g_hash_table_add (ids, &g_array_index (live, VsBlock, i).id);
      for (guint i = 0; i < r->bands->len; i++)
        {
          const VsBand *b = &g_array_index (r->bands, VsBand, i);

          if (c >= b->first_column && c < b->first_column + b->n_columns)
            {
              g_assert_true (g_hash_table_contains (ids, &b->block.id));
              n++;
            }
        }
      g_assert_cmpuint (n, ==, live->len);
    }
}

static void
check_trace (VsTrace *trace)
{
  g_autoptr (GError) error = NULL;
  gint64 dev = first_device (trace);
  gint64 duration = vs_trace_get_duration_ns (trace);
  g_autoptr (VsBlockBands) all = NULL;
  g_autoptr (VsBlockBands) few = NULL;
  gint64 smallest_kept = G_MAXINT64;

  /* Many columns: every block spanning a step is a candidate. */
  all = vs_block_bands_query (trace, dev, 0, duration + 1, 500, 1000000, &error);
  g_assert_no_error (error);
  g_assert_cmpint (all->min_lifetime, ==, 0);
  g_assert_cmpuint (all->bands->len, >, 10);
  g_assert_cmpint (all->candidates, ==, all->bands->len);
  check_stacking (all);
  check_against_live (trace, all);

  /* Eight bands: the eight largest candidates, the rest in other. */
  few = vs_block_bands_query (trace, dev, 0, duration + 1, 500, 8, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (few->bands->len, ==, 8);
  check_stacking (few);
  for (guint i = 0; i < few->bands->len; i++)
    smallest_kept = MIN (smallest_kept, g_array_index (few->bands, VsBand, i).block.bytes);
  for (guint i = 0; i < all->bands->len; i++)
    {
      const VsBand *b = &g_array_index (all->bands, VsBand, i);
      gboolean kept = FALSE;

      for (guint j = 0; j < few->bands->len; j++)
        kept = kept || g_array_index (few->bands, VsBand, j).block.id == b->block.id;
      if (!kept)
        g_assert_cmpint (b->block.bytes, <=, smallest_kept);
    }
  /* Same totals whatever is drawn as bands. */
  for (guint c = 0; c < all->n_columns; c++)
    g_assert_cmpint (g_array_index (all->total, gint64, c), ==,
                     g_array_index (few->total, gint64, c));
}

/* A real PyTorch training run recorded with the collector. */
static void
test_torch_train (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "torch-train.db", NULL);
  VsTrace *trace = vs_trace_open (path, &error);

  g_assert_no_error (error);
  check_trace (trace);
  vs_trace_free (trace);
}

/* Random allocator traffic over more steps than are drawn exactly:
 * zoomed out, the short-lived blocks fold into the other band; zoomed in
 * on a twentieth of the trace, every block is a band again. */
static void
test_random_zoom (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("vs-bands-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "t.db", NULL);
  char err[256] = "";
  VsTrace *trace;
  g_autoptr (VsBlockBands) wide = NULL;
  g_autoptr (VsBlockBands) near = NULL;
  gint64 dev, duration;

  g_assert_true (vs_fixture_allocator_random (path, 150000, 7, false, err, sizeof err));
  trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  dev = first_device (trace);
  duration = vs_trace_get_duration_ns (trace);

  wide = vs_block_bands_query (trace, dev, 0, duration + 1, 20, 1000000, &error);
  g_assert_no_error (error);
  g_assert_cmpint (wide->min_lifetime, >, 0);
  check_stacking (wide);
  for (guint i = 0; i < wide->bands->len; i++)
    {
      const VsBand *b = &g_array_index (wide->bands, VsBand, i);
      gint64 a = b->block.alloc_seq == VS_UNKNOWN ? 0 : b->block.alloc_seq;
      gint64 f = b->block.free_seq == VS_UNKNOWN ? G_MAXINT64 : b->block.free_seq;

      g_assert_cmpint (f - a, >, wide->min_lifetime);
    }
  /* What is not drawn is in the other band. */
  {
    gint64 other = 0;

    for (guint c = 0; c < wide->n_columns; c++)
      other += vs_block_bands_other (wide, c);
    g_assert_cmpint (other, >, 0);
  }

  near = vs_block_bands_query (trace, dev, 0, duration / 20, 500, 1000000, &error);
  g_assert_no_error (error);
  g_assert_cmpint (near->min_lifetime, ==, 0);
  check_stacking (near);
  check_against_live (trace, near);
  vs_trace_free (trace);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/block-bands/torch-train", test_torch_train);
  g_test_add_func ("/block-bands/random-zoom", test_random_zoom);
  return g_test_run ();
}
