/* SPDX-License-Identifier: MIT */
/* vs-blocks-pane.c — the "Over Time" pane: the allocations-over-time chart
 * bound to the pane's session, and a line saying what it draws or what
 * is selected; copies the selected band's site, stack or description. */
#include "vs-blocks-pane.h"

#include <string.h>

#include <glib/gi18n.h>

struct _VsBlocksPane
{
  VsPane parent_instance;

  GtkLabel *status_label;
  VsBlocksChart *chart;
};

enum
{
  BAND_SELECTED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (VsBlocksPane, vs_blocks_pane, VS_TYPE_PANE)

/* The line above the chart: the selected band, else what is drawn. */
static void
update_status (VsBlocksPane *self)
{
  const VsBlockBands *bands = vs_blocks_chart_get_bands (self->chart);
  int selected = vs_blocks_chart_get_selected (self->chart);
  g_autofree char *text = NULL;

  if (selected >= 0)
    {
      g_autofree char *all = vs_blocks_chart_describe (self->chart, selected);
      char *nl = strchr (all, '\n');

      /* The first two lines: size, times and site. */
      if (nl != NULL && (nl = strchr (nl + 1, '\n')) != NULL)
        *nl = '\0';
      text = g_strdelimit (g_steal_pointer (&all), "\n", ' ');
    }
  else if (bands != NULL)
    text = g_strdup_printf (
        ngettext ("The largest allocation drawn as a band, the rest as Other (grey); zoom in "
                  "to separate them",
                  "The %u largest allocations drawn as bands, the rest as Other (grey); zoom "
                  "in to separate them",
                  bands->bands->len),
        bands->bands->len);
  gtk_label_set_text (self->status_label, text != NULL ? text : "");
}

/* The status line may be cut at the pane's width: its tooltip holds it
 * all.  Asked for when shown, so that a new line does not query the
 * tooltips under the pointer again. */
static gboolean
on_status_tooltip (GtkWidget *label, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                   gpointer data)
{
  const char *text = gtk_label_get_text (GTK_LABEL (label));

  if (*text == '\0')
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_band_selected (VsBlocksChart *chart, gint64 device_id, gint64 time_ns, const char *site,
                  VsBlocksPane *self)
{
  update_status (self);
  g_signal_emit (self, signals[BAND_SELECTED], 0, device_id, time_ns, site);
}

static void
on_session (VsBlocksPane *self, GParamSpec *pspec, gpointer data)
{
  vs_blocks_chart_set_session (self->chart, vs_pane_get_session (VS_PANE (self)));
}

/* VsPane's copy: the selected band's site, stack, or its description. */
static char *
copy_text (VsPane *pane, VsPaneCopy what)
{
  VsBlocksPane *self = VS_BLOCKS_PANE (pane);
  const VsBlockBands *bands = vs_blocks_chart_get_bands (self->chart);
  int selected = vs_blocks_chart_get_selected (self->chart);
  const VsBand *b;

  if (bands == NULL || selected < 0)
    return NULL;
  b = &g_array_index (bands->bands, VsBand, selected);
  switch (what)
    {
    case VS_PANE_COPY_FRAME:
      return g_strdup (b->stack->site);
    case VS_PANE_COPY_STACK:
      {
        g_autofree char *text = vs_stack_dup_text (b->stack);
        g_auto (GStrv) frames = g_strsplit (text, VS_STACK_SEPARATOR, -1);
        g_autofree char *joined = g_strjoinv ("\n", frames);
        return g_strconcat (joined, "\n", NULL);
      }
    case VS_PANE_COPY_ROW:
    default:
      {
        g_autofree char *text = vs_blocks_chart_describe (self->chart, selected);
        return g_strconcat (text, "\n", NULL);
      }
    }
}

static void
notify_bands (VsBlocksPane *self)
{
  update_status (self);
}

static void
vs_blocks_pane_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), VS_TYPE_BLOCKS_PANE);
  G_OBJECT_CLASS (vs_blocks_pane_parent_class)->dispose (object);
}

static void
vs_blocks_pane_class_init (VsBlocksPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = vs_blocks_pane_dispose;
  VS_PANE_CLASS (klass)->copy = copy_text;
  /* (device_id, time_ns, site): a band was selected. */
  signals[BAND_SELECTED]
      = g_signal_new ("band-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 3, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_STRING);
  g_type_ensure (VS_TYPE_BLOCKS_CHART);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-blocks-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsBlocksPane, status_label);
  gtk_widget_class_bind_template_child (widget_class, VsBlocksPane, chart);
  gtk_widget_class_bind_template_callback (widget_class, on_band_selected);
}

static void
vs_blocks_pane_init (VsBlocksPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_set_has_tooltip (GTK_WIDGET (self->status_label), TRUE);
  g_signal_connect (self->status_label, "query-tooltip", G_CALLBACK (on_status_tooltip), NULL);
  g_signal_connect (self, "notify::session", G_CALLBACK (on_session), NULL);
  g_signal_connect_swapped (self->chart, "bands-changed", G_CALLBACK (notify_bands), self);
}

/* See vs-blocks-pane.h. */
VsBlocksChart *
vs_blocks_pane_get_chart (VsBlocksPane *self)
{
  g_return_val_if_fail (VS_IS_BLOCKS_PANE (self), NULL);
  return self->chart;
}
