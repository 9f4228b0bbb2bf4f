/* SPDX-License-Identifier: MIT */
/* vs-fragmentation-view.c — segment maps of reserved memory.
 *
 * One row per live segment (vs_fragmentation_segments), full ones included, drawn
 * as a bar of its whole extent scaled to the largest segment so sizes
 * compare at a glance: allocated memory filled, the free gaps
 * (vs_fragmentation_at) left open, the largest free block outlined, block
 * boundaries (vs_live_blocks) as thin separators.  This file only places
 * what the analyzer found.
 */
#include "vs-fragmentation-view.h"

#include <glib/gi18n.h>

#include <adwaita.h>

#include "vs-table.h"

#define HEADER_HEIGHT 76
#define ROW_HEIGHT 24
#define LABEL_WIDTH 200

struct _VsFragmentationView
{
  GtkWidget parent_instance;

  VsInstant *instant;
  GArray *block_row; /* gint: segment row of each block, -1 none */
  GArray *gap_row;   /* gint: segment row of each gap */
  /* Blocks and gaps grouped by row (counting sort): row r's are
   * *_order[*_start[r] .. *_start[r + 1]). */
  GArray *block_order, *block_start, *gap_order, *gap_start;
  gint largest_gap; /* index into instant->gaps, -1 none */
  gint64 max_segment;
  gint64 mark_address, mark_bytes; /* the range marked; bytes 0: none */
};

enum
{
  PROP_0,
  PROP_INSTANT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsFragmentationView, vs_fragmentation_view, GTK_TYPE_WIDGET)

static void
vs_fragmentation_view_get_property (GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_INSTANT:
      g_value_set_boxed (value, VS_FRAGMENTATION_VIEW (object)->instant);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_fragmentation_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                    GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_INSTANT:
      vs_fragmentation_view_set_instant (VS_FRAGMENTATION_VIEW (object), g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
text_at (GtkSnapshot *s, PangoLayout *l, const char *text, double x, double y, const GdkRGBA *c)
{
  pango_layout_set_text (l, text, -1);
  gtk_snapshot_save (s);
  gtk_snapshot_translate (s, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (s, l, c);
  gtk_snapshot_restore (s);
}

static void
vs_fragmentation_view_snapshot (GtkWidget *widget, GtkSnapshot *s)
{
  VsFragmentationView *self = VS_FRAGMENTATION_VIEW (widget);
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  GdkRGBA ink = dark ? (GdkRGBA){ 1, 1, 1, 0.9f } : (GdkRGBA){ 0.14f, 0.12f, 0.19f, 1 };
  GdkRGBA dim = ink;
  GdkRGBA free_c = dark ? (GdkRGBA){ 1, 1, 1, 0.10f } : (GdkRGBA){ 0, 0, 0, 0.07f };
  GdkRGBA block_c = { 0.21f, 0.52f, 0.89f, 0.85f };
  GdkRGBA bg_c = dark ? (GdkRGBA){ 0.14f, 0.14f, 0.14f, 1 } : (GdkRGBA){ 1, 1, 1, 1 };
  GdkRGBA largest_c = { 1.0f, 0.47f, 0.0f, 0.9f };
  int width = gtk_widget_get_width (widget);
  double bar_w = MAX (20, width - LABEL_WIDTH - 16);
  const VsInstant *in = self->instant;
  PangoLayout *l;
  g_autofree char *line1 = NULL;
  g_autofree char *line2 = NULL;

  if (in == NULL)
    return;
  dim.alpha = 0.65f;
  l = gtk_widget_create_pango_layout (widget, NULL);
  {
    g_autofree char *r = vs_format_bytes (in->frag.reserved_bytes);
    g_autofree char *a = vs_format_bytes (in->frag.allocated_bytes);
    g_autofree char *f = vs_format_bytes (in->frag.free_bytes);
    line1 = g_strdup_printf (_("Reserved %s · allocated %s · free inside "
                               "reserved %s"),
                             r, a, f);
    if (in->frag.segment_count == 0)
      line2 = g_strdup (_("No segment whose layout the trace knows is live at "
                          "this instant"));
    else if (in->frag.largest_free_bytes == VS_UNKNOWN)
      line2 = g_strdup (_("Largest free block: unknown (part of the free memory "
                          "lies outside segments whose layout the trace knows)"));
    else
      {
        g_autofree char *lg = vs_format_bytes (in->frag.largest_free_bytes);
        line2 = g_strdup_printf (ngettext ("Largest free block %s in %lld"
                                           " segment: a request above it needs new "
                                           "reserved memory",
                                           "Largest free block %s in %lld"
                                           " segments: a request above it needs new "
                                           "reserved memory",
                                           (gulong)in->frag.segment_count),
                                 lg, (long long)in->frag.segment_count);
      }
  }
  text_at (s, l, line1, 12, 8, &ink);
  text_at (s, l, line2, 12, 28, &dim);
  if (in->segments->len > 0)
    text_at (s, l,
             _("Each reserved segment: allocated blocks filled, free gaps "
               "open, the largest free block outlined"),
             12, 48, &dim);

  if (in->segments->len == 0)
    {
      text_at (s, l,
               _("Segment maps (blocks and free gaps) are drawn for "
                 "allocators whose segments the trace records, such as "
                 "PyTorch's caching allocator (recorded with its history, "
                 "or imported from a snapshot)."),
               12, HEADER_HEIGHT - 24, &dim);
      g_object_unref (l);
      return;
    }

  {
    PangoFontDescription *small = pango_font_description_from_string ("9");
    pango_layout_set_font_description (l, small);
    pango_font_description_free (small);
  }
  for (guint i = 0; i < in->segments->len; i++)
    {
      const VsSegment *seg = &g_array_index (in->segments, VsSegment, i);
      double y = HEADER_HEIGHT + i * ROW_HEIGHT;
      double w = bar_w * (double)seg->bytes / (double)self->max_segment;
      g_autofree char *sz = vs_format_bytes (seg->bytes);
      g_autofree char *label
          = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x  %s", (guint64)seg->address, sz);

      text_at (s, l, label, 12, y + 4, &dim);
      /* The whole segment as allocated, then its free gaps cut out. */
      gtk_snapshot_append_color (
          s, &block_c, &GRAPHENE_RECT_INIT (LABEL_WIDTH, y + 3, MAX (1, w), ROW_HEIGHT - 6));
      /* Gaps that touch or overlap once scaled to pixels are cut out as
       * one run: a segment with many thousand small gaps costs at most
       * one rectangle per pixel column. */
      {
        double run_x0 = -1, run_x1 = -1;

        for (guint k = g_array_index (self->gap_start, guint, i);
             k <= g_array_index (self->gap_start, guint, i + 1); k++)
          {
            gboolean last = k == g_array_index (self->gap_start, guint, i + 1);
            double x0 = 0, x1 = 0;

            if (!last)
              {
                const VsFreeGap *gap = &g_array_index (in->gaps, VsFreeGap,
                                                       g_array_index (self->gap_order, guint, k));
                x0 = LABEL_WIDTH + w * (double)(gap->address - seg->address) / seg->bytes;
                x1 = x0 + MAX (1, w * (double)gap->bytes / seg->bytes);
                if (run_x1 >= 0 && x0 <= run_x1)
                  {
                    run_x1 = MAX (run_x1, x1);
                    continue;
                  }
              }
            if (run_x1 >= 0)
              {
                graphene_rect_t r
                    = GRAPHENE_RECT_INIT (run_x0, y + 3, run_x1 - run_x0, ROW_HEIGHT - 6);
                gtk_snapshot_append_color (s, &bg_c, &r);
                gtk_snapshot_append_color (s, &free_c, &r);
              }
            run_x0 = x0;
            run_x1 = last ? -1 : x1;
          }
      }
      /* Block boundaries, where they are more than a few pixels apart. */
      for (guint k = g_array_index (self->block_start, guint, i);
           k < g_array_index (self->block_start, guint, i + 1); k++)
        {
          const VsBlock *blk
              = &g_array_index (in->blocks, VsBlock, g_array_index (self->block_order, guint, k));
          double x0;

          if (blk->address == seg->address)
            continue;
          x0 = LABEL_WIDTH + w * (double)(blk->address - seg->address) / seg->bytes;
          if (w * (double)blk->bytes / seg->bytes >= 4)
            gtk_snapshot_append_color (s, &bg_c,
                                       &GRAPHENE_RECT_INIT (x0, y + 3, 1, ROW_HEIGHT - 6));
        }
      /* The marked range, under the bar. */
      if (self->mark_bytes > 0 && self->mark_address < seg->address + seg->bytes
          && self->mark_address + self->mark_bytes > seg->address)
        {
          gint64 lo = MAX (self->mark_address, seg->address);
          gint64 hi = MIN (self->mark_address + self->mark_bytes, seg->address + seg->bytes);
          double x0 = LABEL_WIDTH + w * (double)(lo - seg->address) / seg->bytes;
          double mw = MAX (3, w * (double)(hi - lo) / seg->bytes);

          gtk_snapshot_append_color (s, &ink, &GRAPHENE_RECT_INIT (x0, y + ROW_HEIGHT - 3, mw, 3));
        }
      if (self->largest_gap >= 0
          && g_array_index (self->gap_row, gint, self->largest_gap) == (gint)i)
        {
          const VsFreeGap *g = &g_array_index (in->gaps, VsFreeGap, self->largest_gap);
          double x0 = LABEL_WIDTH + w * (double)(g->address - seg->address) / seg->bytes;
          double gw = MAX (2, w * (double)g->bytes / seg->bytes);
          GskRoundedRect outline;
          const float widths[4] = { 2, 2, 2, 2 };
          const GdkRGBA colors[4] = { largest_c, largest_c, largest_c, largest_c };
          GdkRGBA fill = largest_c;

          fill.alpha = 0.25f;
          gtk_snapshot_append_color (s, &fill, &GRAPHENE_RECT_INIT (x0, y + 3, gw, ROW_HEIGHT - 6));
          gsk_rounded_rect_init_from_rect (&outline,
                                           &GRAPHENE_RECT_INIT (x0, y + 2, gw, ROW_HEIGHT - 4), 0);
          gtk_snapshot_append_border (s, &outline, widths, colors);
        }
    }
  g_object_unref (l);
}

static void
vs_fragmentation_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                               int *minimum, int *natural, int *minimum_baseline,
                               int *natural_baseline)
{
  VsFragmentationView *self = VS_FRAGMENTATION_VIEW (widget);
  guint rows = self->instant ? MAX (1, self->instant->segments->len) : 1;

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = LABEL_WIDTH + 200;
  else
    *minimum = *natural = HEADER_HEIGHT + rows * ROW_HEIGHT + 8;
}

/* Drops the instant shown and the rows derived from it. */
static void
clear_instant (VsFragmentationView *self)
{
  g_clear_pointer (&self->instant, vs_instant_unref);
  g_clear_pointer (&self->block_row, g_array_unref);
  g_clear_pointer (&self->gap_row, g_array_unref);
  g_clear_pointer (&self->block_order, g_array_unref);
  g_clear_pointer (&self->block_start, g_array_unref);
  g_clear_pointer (&self->gap_order, g_array_unref);
  g_clear_pointer (&self->gap_start, g_array_unref);
}

static void
vs_fragmentation_view_dispose (GObject *object)
{
  VsFragmentationView *self = VS_FRAGMENTATION_VIEW (object);

  clear_instant (self);
  G_OBJECT_CLASS (vs_fragmentation_view_parent_class)->dispose (object);
}

static void
vs_fragmentation_view_class_init (VsFragmentationViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = vs_fragmentation_view_dispose;
  object_class->get_property = vs_fragmentation_view_get_property;
  object_class->set_property = vs_fragmentation_view_set_property;
  /* The instant drawn (NULL: none); the window binds the session's. */
  props[PROP_INSTANT]
      = g_param_spec_boxed ("instant", NULL, NULL, VS_TYPE_INSTANT,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  widget_class->snapshot = vs_fragmentation_view_snapshot;
  widget_class->measure = vs_fragmentation_view_measure;
  gtk_widget_class_set_css_name (widget_class, "fragmentation");
}

static void
vs_fragmentation_view_init (VsFragmentationView *self)
{
  self->largest_gap = -1;
}

static int
segment_address_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const GArray *segs = data;
  gint64 a = g_array_index (segs, VsSegment, *(const guint *)pa).address;
  gint64 b = g_array_index (segs, VsSegment, *(const guint *)pb).address;
  return (a > b) - (a < b);
}

/* The row of segments whose extent holds address, or -1; by_address
 * lists the rows by address. */
static gint
row_holding (const GArray *segments, const GArray *by_address, gint64 address)
{
  guint lo = 0, hi = by_address->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (segments, VsSegment, g_array_index (by_address, guint, mid)).address
          <= address)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* Extents of different allocators never overlap: the last one starting
   * at or below address is the only candidate. */
  if (lo > 0)
    {
      guint j = g_array_index (by_address, guint, lo - 1);
      const VsSegment *seg = &g_array_index (segments, VsSegment, j);
      if (address < seg->address + seg->bytes)
        return (gint)j;
    }
  return -1;
}

/* Item indices grouped by their row (rows[i], -1: none) into *order,
 * with *start[r] the first of row r and *start[n_rows] the end. */
static void
group_by_row (const GArray *rows, guint n_rows, GArray **order, GArray **start)
{
  g_autofree guint *fill = g_new0 (guint, n_rows + 1);

  *start = g_array_sized_new (FALSE, TRUE, sizeof (guint), n_rows + 1);
  g_array_set_size (*start, n_rows + 1);
  for (guint i = 0; i < rows->len; i++)
    if (g_array_index (rows, gint, i) >= 0)
      g_array_index (*start, guint, g_array_index (rows, gint, i) + 1)++;
  for (guint r = 0; r < n_rows; r++)
    g_array_index (*start, guint, r + 1) += g_array_index (*start, guint, r);
  *order = g_array_sized_new (FALSE, FALSE, sizeof (guint), rows->len);
  g_array_set_size (*order, g_array_index (*start, guint, n_rows));
  for (guint i = 0; i < rows->len; i++)
    {
      gint r = g_array_index (rows, gint, i);
      if (r >= 0)
        g_array_index (*order, guint, g_array_index (*start, guint, r) + fill[r]++) = i;
    }
}

/* The row of segment seg in instant->segments, or -1. */
static gint
row_of (GHashTable *rows, gint64 seg)
{
  gpointer v = g_hash_table_lookup (rows, &seg);
  return v ? GPOINTER_TO_INT (v) - 1 : -1;
}

/* See vs-fragmentation-view.h. */
void
vs_fragmentation_view_set_instant (VsFragmentationView *self, VsInstant *instant)
{
  g_autoptr (GHashTable) rows = NULL;
  guint old_rows, new_rows;

  g_return_if_fail (VS_IS_FRAGMENTATION_VIEW (self));

  if (instant == self->instant)
    return;
  /* The height follows the number of rows only (see measure): a state
   * with as many rows as the last one is drawn again without a new
   * layout of the window. */
  old_rows = self->instant != NULL ? MAX (1, self->instant->segments->len) : 1;
  new_rows = instant != NULL ? MAX (1, instant->segments->len) : 1;
  if (instant != NULL)
    vs_instant_ref (instant);
  clear_instant (self);
  self->instant = instant;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
  self->largest_gap = -1;
  self->max_segment = 1;
  if (new_rows != old_rows)
    gtk_widget_queue_resize (GTK_WIDGET (self));
  else
    gtk_widget_queue_draw (GTK_WIDGET (self));
  if (instant == NULL)
    return;

  rows = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < instant->segments->len; i++)
    {
      VsSegment *seg = &g_array_index (instant->segments, VsSegment, i);
      g_hash_table_insert (rows, &seg->id, GINT_TO_POINTER (i + 1));
      self->max_segment = MAX (self->max_segment, seg->bytes);
    }
  /* A block belongs to the row whose span holds its address: found by
   * bisecting the rows ordered by address. */
  {
    g_autoptr (GArray) by_address
        = g_array_sized_new (FALSE, FALSE, sizeof (guint), instant->segments->len);

    for (guint j = 0; j < instant->segments->len; j++)
      g_array_append_val (by_address, j);
    g_array_sort_with_data (by_address, segment_address_cmp, instant->segments);
    self->block_row = g_array_sized_new (FALSE, FALSE, sizeof (gint), instant->blocks->len);
    for (guint i = 0; i < instant->blocks->len; i++)
      {
        const VsBlock *b = &g_array_index (instant->blocks, VsBlock, i);
        gint r = row_holding (instant->segments, by_address, b->address);
        g_array_append_val (self->block_row, r);
      }
  }
  self->gap_row = g_array_sized_new (FALSE, FALSE, sizeof (gint), instant->gaps->len);
  for (guint i = 0; i < instant->gaps->len; i++)
    {
      const VsFreeGap *g = &g_array_index (instant->gaps, VsFreeGap, i);
      gint r = row_of (rows, g->segment_id);
      g_array_append_val (self->gap_row, r);
      /* The analyzer's largest free block: the first gap of that size. */
      if (self->largest_gap < 0 && g->bytes == instant->frag.largest_free_bytes && g->bytes > 0)
        self->largest_gap = (gint)i;
    }
  group_by_row (self->block_row, instant->segments->len, &self->block_order, &self->block_start);
  group_by_row (self->gap_row, instant->segments->len, &self->gap_order, &self->gap_start);
}

/* See vs-fragmentation-view.h. */
gboolean
vs_fragmentation_view_locate (VsFragmentationView *self, gint64 address, double *x, double *y)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  double bar_w = MAX (20, width - LABEL_WIDTH - 16);

  g_return_val_if_fail (VS_IS_FRAGMENTATION_VIEW (self), FALSE);
  for (guint i = 0; self->instant != NULL && i < self->instant->segments->len; i++)
    {
      const VsSegment *seg = &g_array_index (self->instant->segments, VsSegment, i);
      double w = bar_w * (double)seg->bytes / (double)self->max_segment;

      if (address < seg->address || address >= seg->address + seg->bytes)
        continue;
      *x = LABEL_WIDTH + w * (double)(address - seg->address) / (double)seg->bytes;
      *y = HEADER_HEIGHT + i * ROW_HEIGHT + ROW_HEIGHT / 2.0;
      return TRUE;
    }
  return FALSE;
}

/* See vs-fragmentation-view.h. */
void
vs_fragmentation_view_set_mark (VsFragmentationView *self, gint64 address, gint64 bytes)
{
  g_return_if_fail (VS_IS_FRAGMENTATION_VIEW (self));
  self->mark_address = address;
  self->mark_bytes = MAX (0, bytes);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
