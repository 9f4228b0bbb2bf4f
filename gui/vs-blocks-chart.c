/* SPDX-License-Identifier: MIT */
/* vs-blocks-chart.c — the allocations-over-time widget: queries in a
 * worker, a cached image of the bands, hover, selection and keyboard
 * (see vs-blocks-chart.h). */
#include "vs-blocks-chart.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <pango/pangocairo.h>

#include "vs-blocks-draw.h"
#include "vs-chart-draw.h"
#include "vs-query-slot.h"
#include "vs-time-format.h"

/* Bands drawn at most: the largest blocks at each zoom. */
#define MAX_BANDS 2000

struct _VsBlocksChart
{
  GtkWidget parent_instance;

  VsSession *session;
  GCancellable *cancellable;
  VsQuerySlot query;
  guint generation;     /* a new document or session: late answers dropped */
  VsBlockBands *bands;  /* what is drawn */
  VsDocument *document; /* the document the bands come from (a reference) */
  /* What was asked last, to tell whether the bands are current. */
  gint64 asked_device, asked_t0, asked_t1;
  guint asked_columns;
  int asked_height;
  gboolean asked_dark;
  char *asked_site;

  /* The bands drawn at image_width × image_height in the worker, the
   * selected site's opaque and the others faded. */
  GdkTexture *image;
  int image_width, image_height;
  gboolean dark;

  int hovered, selected;
  gint64 selected_block; /* its block id, -1: none */
  char *selected_site;
};

enum
{
  BAND_SELECTED,
  BANDS_CHANGED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (VsBlocksChart, vs_blocks_chart, GTK_TYPE_WIDGET)

static void request_bands (VsBlocksChart *self);

typedef struct
{
  gint64 device_id, t0, t1;
  guint n_columns;
  int width, height; /* the picture's size */
  gboolean dark;
  char *site; /* the selected site, whose bands stay opaque (NULL: none) */
} BandsQuery;

static void
bands_query_free (gpointer p)
{
  BandsQuery *q = p;

  g_free (q->site);
  g_free (q);
}

/* A query's answer: the bands and their picture. */
typedef struct
{
  VsBlockBands *bands;
  cairo_surface_t *image;
  int width, height;
} BandsAnswer;

static void
bands_answer_free (gpointer p)
{
  BandsAnswer *a = p;

  if (a == NULL)
    return;
  vs_block_bands_free (a->bands);
  if (a->image != NULL)
    cairo_surface_destroy (a->image);
  g_free (a);
}

/* Runs in the document's worker thread: the bands, and their picture
 * drawn there too, so that the UI thread only shows it. */
static gpointer
bands_query (VsTrace *trace, gpointer data, GError **error)
{
  BandsQuery *q = data;
  BandsAnswer *a = g_new0 (BandsAnswer, 1);
  PangoContext *pango;
  cairo_t *cr;

  a->bands
      = vs_block_bands_query (trace, q->device_id, q->t0, q->t1, q->n_columns, MAX_BANDS, error);
  if (a->bands == NULL)
    {
      g_free (a);
      return NULL;
    }
  a->width = MAX (q->width, 1);
  a->height = MAX (q->height, 1);
  a->image = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, a->width, a->height);
  cr = cairo_create (a->image);
  pango = pango_cairo_create_context (cr);
  {
    /* The labels as the timelines write them (their widget's font is not
     * reachable from a worker thread). */
    PangoFontDescription *font = pango_font_description_from_string ("Sans 9");

    pango_context_set_font_description (pango, font);
    pango_font_description_free (font);
    pango_cairo_context_set_resolution (pango, 96);
  }
  vs_blocks_draw (cr, a->bands, a->width, a->height, q->site, q->dark, pango);
  g_object_unref (pango);
  cairo_destroy (cr);
  cairo_surface_flush (a->image);
  return a;
}

typedef struct
{
  VsBlocksChart *self;
  guint generation;
} BandsRequest;

static void
invalidate_image (VsBlocksChart *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A texture showing surface's pixels (taking the surface). */
static GdkTexture *
texture_of (cairo_surface_t *surface)
{
  int height = cairo_image_surface_get_height (surface);
  gsize stride = cairo_image_surface_get_stride (surface);
  g_autoptr (GBytes) bytes
      = g_bytes_new_with_free_func (cairo_image_surface_get_data (surface), stride * height,
                                    (GDestroyNotify)cairo_surface_destroy, surface);

  return gdk_memory_texture_new (cairo_image_surface_get_width (surface), height,
                                 GDK_MEMORY_DEFAULT, bytes, stride);
}

static void
on_bands_done (GObject *source, GAsyncResult *result, gpointer data)
{
  BandsRequest *req = data;
  VsBlocksChart *self = req->self;
  g_autoptr (GError) error = NULL;
  BandsAnswer *answer = vs_document_run_finish (VS_DOCUMENT (source), result, &error);

  if (req->generation == self->generation)
    {
      gboolean again = vs_query_slot_end (&self->query, answer != NULL);

      if (answer != NULL)
        {
          g_clear_pointer (&self->bands, vs_block_bands_free);
          self->bands = g_steal_pointer (&answer->bands);
          g_clear_object (&self->image);
          self->image = texture_of (answer->image);
          answer->image = NULL;
          self->image_width = answer->width;
          self->image_height = answer->height;
          g_set_object (&self->document, VS_DOCUMENT (source));
          self->hovered = -1;
          /* The selected block stays selected while it is drawn; its site
           * stays selected (its bands opaque) either way. */
          self->selected = -1;
          for (guint i = 0; self->selected_block >= 0 && i < self->bands->bands->len; i++)
            if (g_array_index (self->bands->bands, VsBand, i).block.id == self->selected_block)
              self->selected = (int)i;
          invalidate_image (self);
          g_signal_emit (self, signals[BANDS_CHANGED], 0);
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("allocations over time: %s", error->message);
      if (again)
        request_bands (self);
    }
  bands_answer_free (answer);
  g_object_unref (self);
  g_free (req);
}

/* What to ask for now; FALSE when nothing can be drawn. */
static gboolean
current_query (VsBlocksChart *self, BandsQuery *q)
{
  VsDocument *doc = self->session ? vs_session_get_document (self->session) : NULL;
  const VsTimeSpan *range;

  if (doc == NULL || vs_session_get_device (self->session) < 0)
    return FALSE;
  range = vs_session_get_visible_range (self->session);
  q->device_id = vs_session_get_device (self->session);
  q->t0 = range->begin;
  q->t1 = range->end;
  q->width = gtk_widget_get_width (GTK_WIDGET (self));
  q->height = gtk_widget_get_height (GTK_WIDGET (self));
  q->n_columns = vs_blocks_columns_for_width (q->width);
  q->dark = self->dark;
  q->site = self->selected_site; /* borrowed */
  return q->t0 < q->t1;
}

/* Asks for the bands of the current view; coalesced by the query slot.
 * Nothing is asked while the chart is not shown. */
static void
request_bands (VsBlocksChart *self)
{
  BandsQuery q, *copy;
  BandsRequest *req;

  if (!gtk_widget_get_mapped (GTK_WIDGET (self)) || !current_query (self, &q))
    return;
  if (self->bands != NULL && q.device_id == self->asked_device && q.t0 == self->asked_t0
      && q.t1 == self->asked_t1 && q.n_columns == self->asked_columns
      && q.height == self->asked_height && q.dark == self->asked_dark
      && g_strcmp0 (q.site, self->asked_site) == 0 && vs_query_slot_is_idle (&self->query))
    return;
  if (!vs_query_slot_begin (&self->query))
    return;
  self->asked_device = q.device_id;
  self->asked_t0 = q.t0;
  self->asked_t1 = q.t1;
  self->asked_columns = q.n_columns;
  self->asked_height = q.height;
  self->asked_dark = q.dark;
  g_free (self->asked_site);
  self->asked_site = g_strdup (q.site);
  copy = g_memdup2 (&q, sizeof q);
  copy->site = g_strdup (q.site);
  req = g_new0 (BandsRequest, 1);
  req->self = g_object_ref (self);
  req->generation = self->generation;
  vs_document_run_async (vs_session_get_document (self->session), bands_query, copy,
                         bands_query_free, bands_answer_free, self->cancellable, on_bands_done,
                         req);
}

/* A new document: what was drawn belongs to the old one. */
static void
reset (VsBlocksChart *self)
{
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++;
  vs_query_slot_reset (&self->query);
  g_clear_pointer (&self->bands, vs_block_bands_free);
  g_clear_object (&self->document);
  g_clear_object (&self->image);
  g_clear_pointer (&self->selected_site, g_free);
  self->hovered = self->selected = -1;
  self->selected_block = -1;
  invalidate_image (self);
}

static void
on_document (VsSession *session, GParamSpec *pspec, VsBlocksChart *self)
{
  reset (self);
  request_bands (self);
}

static void
on_view_changed (VsSession *session, GParamSpec *pspec, VsBlocksChart *self)
{
  request_bands (self);
}

/* See vs-blocks-chart.h. */
void
vs_blocks_chart_set_session (VsBlocksChart *self, VsSession *session)
{
  g_return_if_fail (VS_IS_BLOCKS_CHART (self));
  if (self->session == session)
    return;
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  reset (self);
  if (session != NULL)
    {
      g_signal_connect (session, "notify::document", G_CALLBACK (on_document), self);
      g_signal_connect (session, "notify::visible-range", G_CALLBACK (on_view_changed), self);
      g_signal_connect (session, "notify::instant", G_CALLBACK (on_view_changed), self);
      request_bands (self);
    }
}

static void
vs_blocks_chart_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  VsBlocksChart *self = VS_BLOCKS_CHART (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);

  if (width <= 0 || height <= 0)
    return;
  /* Until the next answer a resized chart shows the last picture
   * stretched. */
  if (self->image != NULL)
    gtk_snapshot_append_texture (snapshot, self->image, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (self->bands != NULL && (self->hovered >= 0 || self->selected >= 0))
    {
      VsBlocksLayout l;
      cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

      vs_blocks_layout (self->bands, width, height, &l);
      cairo_set_line_width (cr, 2.0);
      if (self->selected >= 0)
        {
          vs_blocks_band_path (cr, self->bands, &l, self->selected);
          cairo_set_source_rgb (cr, self->dark ? 1 : 0, self->dark ? 1 : 0, self->dark ? 1 : 0);
          cairo_stroke (cr);
        }
      if (self->hovered >= 0 && self->hovered != self->selected)
        {
          vs_blocks_band_path (cr, self->bands, &l, self->hovered);
          cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.9);
          cairo_stroke (cr);
        }
      cairo_destroy (cr);
    }
  if (gtk_widget_has_visible_focus (widget))
    {
      GdkRGBA focus = { 0.21f, 0.52f, 0.89f, 1.0f };
      GskRoundedRect outline;

      gsk_rounded_rect_init_from_rect (&outline, &GRAPHENE_RECT_INIT (1, 1, width - 2, height - 2),
                                       0);
      gtk_snapshot_append_border (snapshot, &outline, (float[4]){ 2, 2, 2, 2 },
                                  (GdkRGBA[4]){ focus, focus, focus, focus });
    }
}

static void
vs_blocks_chart_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  request_bands (VS_BLOCKS_CHART (widget));
}

static void
vs_blocks_chart_map (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (vs_blocks_chart_parent_class)->map (widget);
  request_bands (VS_BLOCKS_CHART (widget));
}

static void
vs_blocks_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                         int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 120;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 800 : 300;
}

static int
band_at (VsBlocksChart *self, double x, double y)
{
  VsBlocksLayout l;

  if (self->bands == NULL)
    return -1;
  vs_blocks_layout (self->bands, gtk_widget_get_width (GTK_WIDGET (self)),
                    gtk_widget_get_height (GTK_WIDGET (self)), &l);
  return vs_blocks_band_at (self->bands, &l, x, y);
}

static void
set_hovered (VsBlocksChart *self, int band)
{
  if (band == self->hovered)
    return;
  self->hovered = band;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, VsBlocksChart *self)
{
  set_hovered (self, band_at (self, x, y));
}

static void
on_leave (GtkEventControllerMotion *motion, VsBlocksChart *self)
{
  set_hovered (self, -1);
}

static void
on_pressed (GtkGestureClick *click, int n_press, double x, double y, VsBlocksChart *self)
{
  int band = band_at (self, x, y);

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (band >= 0)
    vs_blocks_chart_select (self, band);
}

/* See vs-blocks-chart.h. */
char *
vs_blocks_chart_describe (VsBlocksChart *self, int index)
{
  const VsBand *b;
  g_autofree char *size = NULL, *from = NULL, *to = NULL, *user = NULL, *all = NULL;
  g_auto (GStrv) frames = NULL;
  GString *text;

  g_return_val_if_fail (VS_IS_BLOCKS_CHART (self), NULL);
  g_return_val_if_fail (self->bands != NULL && index >= 0 && (guint)index < self->bands->bands->len,
                        NULL);
  b = &g_array_index (self->bands->bands, VsBand, index);
  size = vs_format_bytes (b->block.bytes);
  from = b->block.alloc_time_ns == VS_UNKNOWN ? g_strdup (_("before the trace"))
                                              : vs_format_time (b->block.alloc_time_ns);
  to = vs_format_time (b->block.free_time_ns);
  text = g_string_new (NULL);
  if (b->block.free_time_ns == VS_UNKNOWN)
    g_string_append_printf (text, _("%s allocated at %s, never freed"), size, from);
  else
    g_string_append_printf (text, _("%s allocated at %s, freed at %s"), size, from, to);
  if (*b->stack->site != '\0')
    g_string_append_printf (text, "\n%s %s", _("Site:"), b->stack->site);
  /* The user's own frames first, then every frame. */
  user = vs_stack_dup_user_text (b->stack);
  all = vs_stack_dup_text (b->stack);
  if (*user != '\0' && g_strcmp0 (user, all) != 0)
    {
      frames = g_strsplit (user, VS_STACK_SEPARATOR, 12);
      g_string_append_printf (text, "\n\n%s", _("Your frames:"));
      for (guint i = 0; frames[i] != NULL; i++)
        g_string_append_printf (text, "\n  %s", frames[i]);
      g_clear_pointer (&frames, g_strfreev);
    }
  if (*all != '\0')
    {
      frames = g_strsplit (all, VS_STACK_SEPARATOR, 13);
      g_string_append_printf (text, "\n\n%s", _("Stack:"));
      for (guint i = 0; frames[i] != NULL && i < 12; i++)
        g_string_append_printf (text, "\n  %s", frames[i]);
      if (g_strv_length (frames) > 12)
        g_string_append_printf (text, "\n  %s", _("…"));
    }
  return g_string_free (text, FALSE);
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  VsBlocksChart *self)
{
  int band = keyboard ? self->selected : band_at (self, x, y);
  g_autofree char *text = NULL;

  if (band < 0)
    {
      VsBlocksLayout l;

      if (self->bands == NULL || keyboard)
        return FALSE;
      vs_blocks_layout (self->bands, gtk_widget_get_width (widget), gtk_widget_get_height (widget),
                        &l);
      if (x < l.x || y < l.y)
        return FALSE;
      gtk_tooltip_set_text (tooltip, _("Other: allocations too small or too short-lived to draw "
                                       "at this zoom; zoom in to separate them"));
      return TRUE;
    }
  text = vs_blocks_chart_describe (self, band);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* Up/Down: the next band up or down the stack; Home/End: the first and
 * last; Escape clears the selection. */
static gboolean
on_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
        VsBlocksChart *self)
{
  int n = self->bands != NULL ? (int)self->bands->bands->len : 0;
  int s = self->selected;

  if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE;
  switch (keyval)
    {
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
      s = s < 0 ? 0 : MIN (s + 1, n - 1);
      break;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
      s = s < 0 ? n - 1 : MAX (s - 1, 0);
      break;
    case GDK_KEY_Home:
      s = 0;
      break;
    case GDK_KEY_End:
      s = n - 1;
      break;
    case GDK_KEY_Escape:
      if (self->selected < 0)
        return FALSE;
      vs_blocks_chart_select (self, -1);
      return TRUE;
    default:
      return FALSE;
    }
  if (n > 0)
    vs_blocks_chart_select (self, s);
  return TRUE;
}

/* See vs-blocks-chart.h. */
void
vs_blocks_chart_select (VsBlocksChart *self, int index)
{
  const VsBand *b = NULL;

  g_return_if_fail (VS_IS_BLOCKS_CHART (self));
  if (self->bands == NULL || index >= (int)self->bands->bands->len)
    index = -1;
  self->selected = index;
  if (index >= 0)
    b = &g_array_index (self->bands->bands, VsBand, index);
  g_free (self->selected_site);
  self->selected_site = b != NULL ? g_strdup (b->stack->site) : NULL;
  self->selected_block = b != NULL ? b->block.id : -1;
  invalidate_image (self);
  /* The picture with the other sites faded comes from the worker; the
   * selected band's outline shows at once. */
  request_bands (self);
  gtk_widget_trigger_tooltip_query (GTK_WIDGET (self));
  if (b != NULL)
    g_signal_emit (self, signals[BAND_SELECTED], 0, self->bands->device_id,
                   b->block.alloc_time_ns == VS_UNKNOWN ? 0 : b->block.alloc_time_ns,
                   b->stack->site);
}

static void
on_dark_changed (AdwStyleManager *sm, GParamSpec *pspec, VsBlocksChart *self)
{
  self->dark = adw_style_manager_get_dark (sm);
  invalidate_image (self);
  request_bands (self);
}

/* See vs-blocks-chart.h. */
const VsBlockBands *
vs_blocks_chart_get_bands (VsBlocksChart *self)
{
  g_return_val_if_fail (VS_IS_BLOCKS_CHART (self), NULL);
  return self->bands;
}

/* See vs-blocks-chart.h. */
gboolean
vs_blocks_chart_is_settled (VsBlocksChart *self)
{
  BandsQuery q;

  g_return_val_if_fail (VS_IS_BLOCKS_CHART (self), FALSE);
  return self->bands != NULL && vs_query_slot_is_idle (&self->query) && current_query (self, &q)
         && q.device_id == self->bands->device_id && q.t0 == self->bands->from_ns
         && q.t1 == self->bands->to_ns && q.n_columns == self->bands->n_columns
         && q.width == self->image_width && q.height == self->image_height
         && g_strcmp0 (q.site, self->asked_site) == 0;
}

/* See vs-blocks-chart.h. */
int
vs_blocks_chart_get_hovered (VsBlocksChart *self)
{
  g_return_val_if_fail (VS_IS_BLOCKS_CHART (self), -1);
  return self->hovered;
}

/* See vs-blocks-chart.h. */
int
vs_blocks_chart_get_selected (VsBlocksChart *self)
{
  g_return_val_if_fail (VS_IS_BLOCKS_CHART (self), -1);
  return self->selected;
}

static void
vs_blocks_chart_dispose (GObject *object)
{
  VsBlocksChart *self = VS_BLOCKS_CHART (object);

  g_signal_handlers_disconnect_by_data (adw_style_manager_get_default (), self);
  vs_blocks_chart_set_session (self, NULL);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->bands, vs_block_bands_free);
  g_clear_object (&self->document);
  g_clear_object (&self->image);
  g_clear_pointer (&self->asked_site, g_free);
  g_clear_pointer (&self->selected_site, g_free);
  G_OBJECT_CLASS (vs_blocks_chart_parent_class)->dispose (object);
}

static void
vs_blocks_chart_class_init (VsBlocksChartClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_blocks_chart_dispose;
  widget_class->snapshot = vs_blocks_chart_snapshot;
  widget_class->size_allocate = vs_blocks_chart_size_allocate;
  widget_class->measure = vs_blocks_chart_measure;
  widget_class->map = vs_blocks_chart_map;
  /* (device_id, time_ns, site): a band was selected; time_ns is its
   * allocation (0 for one allocated before the trace). */
  signals[BAND_SELECTED]
      = g_signal_new ("band-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 3, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_STRING);
  /* New bands are drawn (a query answered). */
  signals[BANDS_CHANGED] = g_signal_new ("bands-changed", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  gtk_widget_class_set_css_name (widget_class, "blockschart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
vs_blocks_chart_init (VsBlocksChart *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkGesture *click = gtk_gesture_click_new ();
  GtkEventController *key = gtk_event_controller_key_new ();
  AdwStyleManager *sm = adw_style_manager_get_default ();

  self->hovered = self->selected = -1;
  self->selected_block = -1;
  self->cancellable = g_cancellable_new ();
  self->dark = adw_style_manager_get_dark (sm);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), self);
  g_signal_connect (sm, "notify::dark", G_CALLBACK (on_dark_changed), self);
}
