/* SPDX-License-Identifier: MIT */
/* vs-oom-pane.c — the failed allocations list.
 *
 * One expander row per failed request (from vs_oom_list); its rows spell
 * out the analyzer's state at that instant (vs-oom-text.c words it) and
 * end with the request's call stack.  The document is the
 * session's, through a binding in vs-oom-pane.ui.
 */
#include "vs-oom-pane.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "vs-detail-row.h"
#include "vs-oom-text.h"
#include "vs-session.h"
#include "vs-stack.h"
#include "vs-time-format.h"

struct _VsOomPane
{
  GtkBox parent_instance;

  VsSession *session;
  VsDocument *document;

  GtkStack *stack;
  GtkListBox *list_box;
  guint n_rows;
};

enum
{
  INSTANT_SELECTED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_SESSION,
  PROP_DOCUMENT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsOomPane, vs_oom_pane, GTK_TYPE_BOX)

/* A heading over body text (takes text). */
static void
add_detail (AdwExpanderRow *row, const char *title, char *text, const char *name)
{
  adw_expander_row_add_row (row, vs_detail_row_new (title, text, name));
  g_free (text);
}

/* The failed request's call stack, one frame a line, innermost first,
 * selectable so that a frame can be copied. */
static void
add_stack (AdwExpanderRow *row, const char *stack)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *title = gtk_label_new (_("Stack"));
  g_auto (GStrv) frames = g_strsplit (stack, VS_STACK_SEPARATOR, -1);
  g_autofree char *lines = g_strjoinv ("\n", frames);
  GtkWidget *label
      = vs_detail_label_new (*stack ? lines : _("The trace has no stack for this request."));

  gtk_widget_add_css_class (box, "stack-panel");
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_add_css_class (label, "monospace");
  gtk_widget_set_name (label, "failure-stack");
  gtk_box_append (GTK_BOX (box), title);
  gtk_box_append (GTK_BOX (box), label);
  adw_expander_row_add_row (row, box);
}

static void
on_show_clicked (GtkButton *button, VsOomPane *self)
{
  gint64 *t = g_object_get_data (G_OBJECT (button), "time");
  g_signal_emit (self, signals[INSTANT_SELECTED], 0, *t);
}

static GtkWidget *
make_row (VsOomPane *self, VsDocument *doc, guint index)
{
  const VsOom *o = g_ptr_array_index (vs_document_get_ooms (doc), index);
  GtkWidget *row = adw_expander_row_new ();
  GtkWidget *show = gtk_button_new_from_icon_name ("find-location-symbolic");
  g_autofree char *title = vs_oom_title (o);
  g_autofree char *when = vs_oom_when (doc, o);
  VsOomCause cause = vs_document_get_oom_cause (doc, index, NULL);
  g_autofree char *sub = cause != VS_OOM_CAUSE_UNKNOWN
                             ? g_strdup_printf ("%s · %s", when, vs_oom_cause_title (cause))
                             : g_strdup (when);
  gint64 *time = g_new (gint64, 1);

  {
    g_autofree char *esc_t = g_markup_escape_text (title, -1);
    g_autofree char *esc_s = g_markup_escape_text (sub, -1);
    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), esc_t);
    adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), esc_s);
  }
  *time = o->time_ns;
  g_object_set_data_full (G_OBJECT (show), "time", time, g_free);
  gtk_widget_set_tooltip_text (show, _("Show this instant on the timeline"));
  gtk_widget_set_valign (show, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (show, "flat");
  g_signal_connect (show, "clicked", G_CALLBACK (on_show_clicked), self);
  adw_expander_row_add_action (ADW_EXPANDER_ROW (row), show);

  {
    const char *evidence = NULL;

    /* The analyzer's cause and words (vs_oom_explain), as `report oom`
     * prints them. */
    vs_document_get_oom_cause (doc, index, &evidence);
    add_detail (ADW_EXPANDER_ROW (row), vs_oom_cause_title (cause),
                g_strdup (evidence != NULL ? evidence : ""), "failure-cause");
  }
  add_detail (ADW_EXPANDER_ROW (row),
              o->allocator_id == 0 ? _("Device memory of the process")
                                   : _("The allocator that failed"),
              vs_oom_state_text (&o->allocator), "failure-allocator");
  if (o->allocator_id != 0)
    add_detail (ADW_EXPANDER_ROW (row), _("Everything on the device"), vs_oom_state_text (&o->all),
                "failure-device");
  add_detail (ADW_EXPANDER_ROW (row), _("CUDA reported"),
              g_strdup (vs_document_get_oom_memory (doc, index)), "failure-memory");
  add_stack (ADW_EXPANDER_ROW (row), vs_document_get_oom_stack (doc, index));
  /* The first failure open: its cause answers for the run. */
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), index == 0);
  return row;
}

static void
vs_oom_pane_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsOomPane *self = VS_OOM_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, self->session);
      break;
    case PROP_DOCUMENT:
      g_value_set_object (value, self->document);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_oom_pane_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  VsOomPane *self = VS_OOM_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      if (g_set_object (&self->session, g_value_get_object (value)))
        g_object_notify_by_pspec (object, props[PROP_SESSION]);
      break;
    case PROP_DOCUMENT:
      vs_oom_pane_set_document (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_oom_pane_dispose (GObject *object)
{
  VsOomPane *self = VS_OOM_PANE (object);

  g_clear_object (&self->session);
  g_clear_object (&self->document);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_OOM_PANE);
  G_OBJECT_CLASS (vs_oom_pane_parent_class)->dispose (object);
}

static void
vs_oom_pane_class_init (VsOomPaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = vs_oom_pane_get_property;
  object_class->set_property = vs_oom_pane_set_property;
  object_class->dispose = vs_oom_pane_dispose;
  /* The session whose document is listed (bound in the .ui). */
  props[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, VS_TYPE_SESSION, rw);
  /* The document whose failures are listed; setting it (even the same
   * one, read again) lists them anew. */
  props[PROP_DOCUMENT] = g_param_spec_object ("document", NULL, NULL, VS_TYPE_DOCUMENT, rw);
  g_object_class_install_properties (object_class, N_PROPS, props);
  g_type_ensure (VS_TYPE_SESSION);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/vramscope/View/vs-oom-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsOomPane, stack);
  gtk_widget_class_bind_template_child (widget_class, VsOomPane, list_box);
  /* The user asked to see the failure at this time on the timeline. */
  signals[INSTANT_SELECTED]
      = g_signal_new ("instant-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
}

static void
vs_oom_pane_init (VsOomPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/* See vs-oom-pane.h. */
void
vs_oom_pane_set_document (VsOomPane *self, VsDocument *document)
{
  GtkWidget *child;
  GPtrArray *ooms;

  g_return_if_fail (VS_IS_OOM_PANE (self));
  g_return_if_fail (document == NULL || VS_IS_DOCUMENT (document));

  if (g_set_object (&self->document, document))
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DOCUMENT]);
  g_assert (self->list_box != NULL); /* the template is built */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list_box))))
    gtk_list_box_remove (self->list_box, child);
  self->n_rows = 0;
  ooms = document ? vs_document_get_ooms (document) : NULL;
  if (ooms != NULL)
    for (guint i = 0; i < ooms->len; i++)
      {
        gtk_list_box_append (self->list_box, make_row (self, document, i));
        self->n_rows++;
      }
  gtk_stack_set_visible_child_name (self->stack, self->n_rows ? "list" : "none");
}

/* See vs-oom-pane.h. */
guint
vs_oom_pane_get_n_rows (VsOomPane *self)
{
  g_return_val_if_fail (VS_IS_OOM_PANE (self), 0);
  return self->n_rows;
}
